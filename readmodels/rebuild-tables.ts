/**
 * The SQL of a projection rebuild (projections/rebuild.ts): fresh tables in a side schema,
 * the swap of the rebuilt tables for the live ones, and the hand-over of the checkpoint.
 *
 * Fresh tables are created with CREATE TABLE … (LIKE live INCLUDING ALL): columns, defaults,
 * identity, constraints and indexes, but not foreign keys or triggers, which read models avoid.
 */
import type { Knex } from 'knex';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Empty copies of `tables` in `schema` (dropped first if a rebuild left it), and a fresh rebuild checkpoint. */
export async function createRebuildTables(knex: Knex, schema: string, tables: readonly string[], checkpoint: string, version: number): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.raw(`drop schema if exists ${quote(schema)} cascade`);
    await trx.raw(`create schema ${quote(schema)}`);
    for (const table of tables) {
      await trx.raw(`create table ${quote(schema)}.${quote(table)} (like public.${quote(table)} including all)`);
    }
    await trx('projection_checkpoints').where({ projection: checkpoint }).delete();
    await trx('projection_checkpoints').insert({ projection: checkpoint, version });
  });
}

/** Takes the projection's lock for the rest of the transaction (the live runner skips its batches meanwhile). */
export async function lockProjectionForSwap(trx: Knex.Transaction, lockKey: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [lockKey]);
}

/** Unqualified table names resolve in `schema` first (null: back to public only). */
export async function useSchema(trx: Knex.Transaction, schema: string | null): Promise<void> {
  await trx.raw(schema === null ? 'set local search_path to public' : `set local search_path to ${quote(schema)}, public`);
}

/** Moves the live tables out to `retired` and the rebuilt ones from `schema` in, keeping the live index names. */
export async function swapInRebuiltTables(trx: Knex.Transaction, schema: string, retired: string, tables: readonly string[]): Promise<void> {
  await trx.raw(`drop schema if exists ${quote(retired)} cascade`);
  await trx.raw(`create schema ${quote(retired)}`);
  for (const table of tables) {
    await trx.raw(`alter table public.${quote(table)} set schema ${quote(retired)}`);
    await trx.raw(`alter table ${quote(schema)}.${quote(table)} set schema public`);
    await restoreIndexNames(trx, retired, table);
  }
}

/** The rebuilt checkpoint becomes the projection's own (the rebuild's row is removed). */
export async function handOverCheckpoint(trx: Knex.Transaction, from: string, to: string, version: number): Promise<void> {
  const rebuilt = await trx('projection_checkpoints').where({ projection: from }).first();
  await trx('projection_checkpoints').where({ projection: to }).update({
    commit_position: rebuilt.commit_position,
    prepare_position: rebuilt.prepare_position,
    events_applied: rebuilt.events_applied,
    version,
    updated_at: trx.fn.now(),
  });
  await trx('projection_checkpoints').where({ projection: from }).delete();
}

/** Drops the schemas a finished rebuild leaves behind. */
export async function dropSchemas(trx: Knex.Transaction, schemas: readonly string[]): Promise<void> {
  for (const schema of schemas) await trx.raw(`drop schema ${quote(schema)} cascade`);
}

/**
 * CREATE TABLE … LIKE … INCLUDING ALL gives the copied indexes generated names; the swapped-in
 * table takes back the live table's index names (matched by definition), so migrations and
 * tools that name an index keep finding it after a rebuild.
 */
async function restoreIndexNames(trx: Knex.Transaction, retired: string, table: string): Promise<void> {
  const { rows } = await trx.raw(
    `select n.nspname as schema, i.relname as name, pg_get_indexdef(i.oid) as definition
       from pg_index x
       join pg_class i on i.oid = x.indexrelid
       join pg_class t on t.oid = x.indrelid
       join pg_namespace n on n.oid = t.relnamespace
      where t.relname = ? and n.nspname in (?, 'public')
      order by i.relname`,
    [table, retired],
  );
  // The definition without the index's own name and the table's schema.
  const shape = (definition: string) => definition.replace(/^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ /, 'CREATE $1INDEX ON ');
  const old = new Map<string, string[]>();
  for (const r of rows as { schema: string; name: string; definition: string }[]) {
    if (r.schema !== retired) continue;
    const list = old.get(shape(r.definition)) ?? [];
    list.push(r.name);
    old.set(shape(r.definition), list);
  }
  for (const r of rows as { schema: string; name: string; definition: string }[]) {
    if (r.schema !== 'public') continue;
    const name = old.get(shape(r.definition))?.shift();
    if (name && name !== r.name) await trx.raw(`alter index public.${quote(r.name)} rename to ${quote(name)}`);
  }
}
