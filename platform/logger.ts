/** Structured JSON logs (pino) on stdout. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'einvoicing' }, timestamp: pino.stdTimeFunctions.isoTime });
}
