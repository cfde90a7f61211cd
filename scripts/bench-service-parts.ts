/**
 * The service for `bench:submit`'s decomposition: `scripts/start.ts` with parts left out, so that
 * the benchmark can measure what the rest costs. Without the search projection (the search index
 * is not fed) and without reactors and workers (no delivery, no webhooks, no purchase network):
 * submitted documents stay `submitted`, and the read models other than the search index are
 * projected as usual. Not for operation: it serves the benchmark only.
 */
import { ConfigError, loadConfig } from '../platform/config.js';
import { DatabaseUnavailableError } from '../platform/database.js';
import { handleSignals, onShutdown } from '../platform/lifecycle.js';
import { createLogger } from '../platform/logger.js';
import { startService } from '../http/service.js';

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const service = await startService({
    config,
    logger,
    searchProjection: false,
    processes: () => ({ reactors: [], workers: [], connectors: { connectorFor: () => null, missing: () => [] } }),
  });
  onShutdown('service', () => service.close());
  handleSignals((msg, err) => (err ? logger.error({ err }, msg) : logger.info(msg)));
} catch (err) {
  if (err instanceof DatabaseUnavailableError || err instanceof ConfigError) {
    process.stderr.write(`einvoicing: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
