/** Every projection of the service, in the order they are started and rebuilt. */
import { aspAuthorizationsProjection, companiesProjection } from './connect.js';
import { creditProjections } from './credits.js';
import { documentsProjection } from './documents.js';
import type { SearchIndex } from '../readmodels/search/port.js';
import { SEARCH_TABLES } from '../readmodels/search/postgres.js';
import type { Projection } from './projection.js';
import { purchasesProjection } from './purchases.js';
import { peppolResponsesProjection } from './peppol-responses.js';
import { searchProjection } from './search.js';
import { webhookAttemptsProjection } from './webhook-attempts.js';
import { webhooksProjection } from './webhooks.js';
import { workspacesProjection } from './workspaces.js';

/** With `search`, also the search projection that feeds that index. */
export function allProjections(search?: SearchIndex): Projection[] {
  return [
    workspacesProjection,
    aspAuthorizationsProjection,
    companiesProjection,
    documentsProjection,
    purchasesProjection,
    peppolResponsesProjection,
    ...creditProjections,
    webhooksProjection,
    webhookAttemptsProjection,
    // PostgreSQL keeps the index in the service's database: rebuilt with the projection's tables.
    ...(search ? [searchProjection(search, { indexTables: search.engine === 'postgres' ? SEARCH_TABLES : [] })] : []),
  ];
}

export function projectionByName(name: string): Projection | undefined {
  return allProjections().find((p) => p.name === name);
}
