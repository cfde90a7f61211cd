/** What the submit use case needs from the HTTP service, the same for both request formats. */
import type { SubmitUseCaseDeps } from '../../commands/submit.js';
import { SEARCH_PROJECTION } from '../../projections/search.js';
import type { HttpDeps } from '../app.js';

export const submitUseCaseDeps = (deps: HttpDeps): SubmitUseCaseDeps => ({
  store: deps.store,
  knex: deps.knex,
  readYourWrites: (position) => deps.runner.waitFor(position, { timeoutMs: deps.config.projections.waitTimeoutMs, projections: ['documents', SEARCH_PROJECTION] }),
});
