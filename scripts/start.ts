/** `npm start`: runs the service (embedded PostgreSQL unless DATABASE_URL is set). */
import { ConfigError, loadConfig } from '../platform/config.js';
import { DatabaseUnavailableError } from '../platform/database.js';
import { handleSignals, onShutdown } from '../platform/lifecycle.js';
import { createLogger } from '../platform/logger.js';
import { startService } from '../http/service.js';

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const service = await startService({ config, logger });
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
