/**
 * Named prepared statements, named where knex hands a statement to the driver (issue 19).
 *
 * knex sends a statement unnamed, so PostgreSQL parses, analyses and plans it at every execution.
 * A statement marked with `PREPARE_OPTION` (readmodels/prepared.ts marks the read side's hot ones)
 * is sent under a name derived from its final SQL text instead: PostgreSQL parses it once per
 * connection and, after a few executions, keeps a generic plan when it costs no more than the
 * custom ones. The name is taken here, from the text knex has already compiled to run it; naming
 * it before running meant compiling every statement twice (5.8 µs a statement against 0.3 µs,
 * timed alone).
 *
 * The number of texts is bounded: past MAX_NAMED, a new text runs unnamed as before, so a misuse
 * (a statement whose text depends on its values) costs planning, never a connection's memory.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

/** The knex option that asks for a named prepared statement (`query.options({ [PREPARE_OPTION]: true })`). */
export const PREPARE_OPTION = 'preparedByText';

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

/** What knex's PostgreSQL client hands its `_query` (compiled SQL with `$n` placeholders). */
interface CompiledQuery {
  sql: string;
  options?: Record<string, unknown>;
}

type QueryMethod = (this: Knex.Client, connection: unknown, query: CompiledQuery) => Promise<unknown>;

// knex's own PostgreSQL client; knex takes a client class in place of a client's name.
const KnexPgClient = createRequire(import.meta.url)('knex/lib/dialects/postgres/index.js') as typeof Knex.Client;
const runQuery = (KnexPgClient.prototype as unknown as { _query: QueryMethod })._query;

/** knex's PostgreSQL client, which sends a statement marked with PREPARE_OPTION under its text's name. */
export class PreparingPgClient extends KnexPgClient {
  _query(connection: unknown, query: CompiledQuery): Promise<unknown> {
    const options = query.options;
    if (options?.[PREPARE_OPTION] === true) {
      const { [PREPARE_OPTION]: _marked, ...rest } = options;
      const name = statementName(query.sql);
      query.options = name === null ? rest : { ...rest, name };
    }
    return runQuery.call(this, connection, query);
  }
}
