/**
 * Named prepared statements for the read side's statements that run for every document (issue 19).
 *
 * knex sends a statement unnamed, so PostgreSQL parses, analyses and plans it at every execution.
 * Under a submission load that was about a tenth of PostgreSQL's work on top of executing the
 * statements: planning the lookup of a submission's source and company (a join) took 0.22 ms and
 * running it 0.05 ms. Named after its SQL text, a statement is parsed once per connection, and
 * after a few executions PostgreSQL keeps a generic plan when it costs no more than the custom
 * ones (its plan cache; a change of a table or of the search path, as a rebuild sets it, plans it
 * again).
 *
 * Only for statements whose text does not depend on their values (no list spliced into the text:
 * an array goes as one parameter, `= any(?::text[])`) and that name their columns (a cached plan
 * refuses a changed row type). The number of texts is bounded: past MAX_NAMED, a new text runs
 * unnamed as before, so a misuse costs planning, never a connection's memory.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

const MAX_NAMED = 256;
const names = new Map<string, string>();

/** The prepared statement's name of an SQL text (null past MAX_NAMED texts). */
export function statementName(sql: string): string | null {
  let name = names.get(sql);
  if (name === undefined) {
    if (names.size >= MAX_NAMED) return null;
    name = `rm_${createHash('sha256').update(sql).digest('base64url').slice(0, 32)}`;
    names.set(sql, name);
  }
  return name;
}

/** Runs `query` as a prepared statement named after its SQL text (see above). */
export function prepared<Q extends Knex.QueryBuilder | Knex.Raw>(query: Q): Q {
  const name = statementName(query.toSQL().sql);
  return name === null ? query : (query.options({ name }) as Q);
}
