/**
 * The service for `bench:submit`'s decomposition: `scripts/start.ts` with parts left out, so that
 * the benchmark can measure what the rest costs. Without the search projection (the search index
 * is not fed) and without reactors and workers (no delivery, no webhooks, no purchase network):
 * submitted documents stay `submitted`, and the read models other than the search index are
 * projected as usual. Not for operation: it serves the benchmark only.
 */
import { runService } from './run-service.js';

await runService({
  searchProjection: false,
  processes: () => ({ reactors: [], workers: [], connectors: { connectorFor: () => null, missing: () => [] } }),
});
