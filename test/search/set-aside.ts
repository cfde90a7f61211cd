/**
 * Rebuild tests of the PostgreSQL search index: the rebuilt tables hold only what the log gives,
 * so the rows other suites of the process wrote straight into the index (no events) are set
 * aside first and put back afterwards, in both of the index's tables.
 */
import type { Knex } from 'knex';
import { SEARCH_ROW_COLUMNS, SEARCH_STATE_COLUMNS, SEARCH_STATES_TABLE, SEARCH_TABLE } from '../../readmodels/search/postgres.js';

const TABLES = [
  { table: SEARCH_TABLE, columns: SEARCH_ROW_COLUMNS },
  { table: SEARCH_STATES_TABLE, columns: SEARCH_STATE_COLUMNS },
] as const;

/** Copies the index's rows (except `workspaceId`'s, when given) aside; the answer puts them back. */
export async function setAsideSearchRows(knex: Knex, name: string, options: { exceptWorkspace?: string } = {}): Promise<() => Promise<void>> {
  const kept = TABLES.map((t, i) => ({ ...t, keep: `${name}_${i}` }));
  for (const { table, keep } of kept) {
    await knex.raw(`drop table if exists ${keep}`);
    if (options.exceptWorkspace) await knex.raw(`create table ${keep} as select * from ${table} where workspace_id <> ?`, [options.exceptWorkspace]);
    else await knex.raw(`create table ${keep} as select * from ${table}`);
  }
  return async () => {
    for (const { table, columns, keep } of kept) {
      await knex.raw(`insert into ${table} (${columns}) select ${columns} from ${keep} on conflict do nothing`);
      await knex.raw(`drop table ${keep}`);
    }
  };
}
