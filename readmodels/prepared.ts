/**
 * The read side's statements that run for every document (issue 19) go as named prepared
 * statements: PostgreSQL parses each once per connection and keeps a generic plan. Under a
 * submission load planning had been about a tenth of PostgreSQL's work on top of executing the
 * statements: planning the lookup of a submission's source and company (a join) took 0.22 ms and
 * running it 0.05 ms. The database's knex client names a marked statement after its SQL text
 * (platform/prepared-statements.ts); a change of a table or of the search path, as a rebuild sets
 * it, plans it again.
 *
 * Only for statements whose text does not depend on their values (no list spliced into the text:
 * an array goes as one parameter, `= any(?::text[])`) and that name their columns (a cached plan
 * refuses a changed row type).
 */
import type { Knex } from 'knex';
import { PREPARE_OPTION } from '../platform/prepared-statements.js';

/** Runs `query` as a prepared statement named after its SQL text (see above). */
export function prepared<Q extends Knex.QueryBuilder | Knex.Raw>(query: Q): Q {
  return query.options({ [PREPARE_OPTION]: true }) as Q;
}
