/** What the submit use case needs from the HTTP service, the same for both request formats. */
import type { SubmitUseCaseDeps } from '../../commands/submit.js';
import { SEARCH_PROJECTION } from '../../projections/search.js';
import type { HttpDeps } from '../app.js';

export const submitUseCaseDeps = (deps: HttpDeps): SubmitUseCaseDeps => {
  // The answer waits for the documents read model and the search index (the invoice query reads
  // it), unless the service runs without the search projection (a benchmark's decomposition).
  const runsSearch = deps.runner.projections.some((p) => p.name === SEARCH_PROJECTION);
  const projections = runsSearch ? ['documents', SEARCH_PROJECTION] : ['documents'];
  return {
    store: deps.store,
    knex: deps.knex,
    readYourWrites: (position) => deps.runner.waitFor(position, { timeoutMs: deps.config.projections.waitTimeoutMs, projections }),
  };
};
