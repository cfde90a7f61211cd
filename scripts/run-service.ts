/**
 * Runs the service as an entry point does: configuration, logger, shutdown on SIGTERM/SIGINT, and
 * a one-line message (exit 1) for a configuration error, an unreachable database or a port in use.
 * `npm start` runs it whole; the benchmark's decomposition runs it with parts left out.
 */
import { ConfigError, loadConfig } from '../platform/config.js';
import { DatabaseUnavailableError } from '../platform/database.js';
import { handleSignals, onShutdown } from '../platform/lifecycle.js';
import { createLogger } from '../platform/logger.js';
import { startService, type ServiceOptions } from '../http/service.js';

export async function runService(options: Omit<ServiceOptions, 'config' | 'logger'> = {}): Promise<void> {
  try {
    const config = loadConfig();
    const logger = createLogger(config.logLevel);
    const service = await startService({ ...options, config, logger });
    onShutdown('service', () => service.close());
    handleSignals((msg, err) => (err ? logger.error({ err }, msg) : logger.info(msg)));
  } catch (err) {
    if (err instanceof DatabaseUnavailableError || err instanceof ConfigError) {
      process.stderr.write(`einvoicing: ${err.message}\n`);
      process.exit(1);
    }
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      process.stderr.write(`einvoicing: the HTTP port is already in use (set PORT to another one)\n`);
      process.exit(1);
    }
    throw err;
  }
}
