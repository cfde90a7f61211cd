/**
 * Rebuilds a projection from the event log into fresh tables beside the live ones, then swaps
 * them in. The live tables keep answering (and the live runner keeps applying) until the swap,
 * which is one short transaction: it takes the projection's lock, applies the last events,
 * moves the live tables out and the rebuilt ones in, and hands the rebuilt checkpoint over.
 *
 * Fresh tables are created with CREATE TABLE … (LIKE live INCLUDING ALL): columns, defaults,
 * identity, constraints and indexes, but not foreign keys or triggers, which read models avoid.
 */
import type { Knex } from 'knex';
import { pageMayContinue, type EventStore } from '../platform/eventstore/port.js';
import type { Projection, ProjectionRebuild } from './projection.js';
import { advanceCheckpoint, ensureCheckpoint, readCheckpoint } from '../readmodels/checkpoints.js';
import { applyBatch, applyEvents, CheckpointMovedError, DEFAULT_BATCH_BYTES, lockKey } from './runner.js';

export interface RebuildProgress {
  projection: string;
  eventsRead: number;
  phase: 'copying' | 'swapping' | 'done';
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function rebuildProjection(
  knex: Knex,
  store: EventStore,
  live: Projection,
  options: { batchSize?: number; batchBytes?: number; onProgress?: (p: RebuildProgress) => void } = {},
): Promise<{ eventsRead: number }> {
  // A read model outside PostgreSQL is rebuilt into a fresh copy there, swapped in with the tables.
  const began = live.beginRebuild ? await live.beginRebuild() : null;
  // Once swapped, the copy is live: a failure after that (the commit) must not drop it; the
  // live runner then goes on from its own checkpoint, and versioned writes ignore what it repeats.
  let swapped = false;
  const outside = began && {
    ...began,
    swap: async () => {
      await began.swap();
      swapped = true;
    },
  };
  try {
    return await rebuildTables(knex, store, outside?.projection ?? live, options, outside);
  } catch (err) {
    if (began && !swapped) await began.abandon().catch(() => {});
    throw err;
  }
}

async function rebuildTables(
  knex: Knex,
  store: EventStore,
  projection: Projection,
  options: { batchSize?: number; batchBytes?: number; onProgress?: (p: RebuildProgress) => void },
  outside: ProjectionRebuild | null,
): Promise<{ eventsRead: number }> {
  const batchSize = options.batchSize ?? 1000;
  const maxBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES;
  const report = options.onProgress ?? (() => {});
  const schema = `rebuild_${projection.name}`;
  const retired = `retired_${projection.name}`;
  const checkpoint = `${projection.name}#rebuild`;

  await ensureCheckpoint(knex, projection.name, projection.version);
  await knex.transaction(async (trx) => {
    await trx.raw(`drop schema if exists ${quote(schema)} cascade`);
    await trx.raw(`create schema ${quote(schema)}`);
    for (const table of projection.tables) {
      await trx.raw(`create table ${quote(schema)}.${quote(table)} (like public.${quote(table)} including all)`);
    }
    await trx('projection_checkpoints').where({ projection: checkpoint }).delete();
    await trx('projection_checkpoints').insert({ projection: checkpoint, version: projection.version });
  });

  let eventsRead = 0;
  for (;;) {
    const result = await applyBatch(knex, store, projection, batchSize, { checkpoint, schema, maxBytes }, { persist: true });
    // Only a rebuild writes the rebuild's checkpoint: locked or moved, another one runs.
    if (result === 'locked' || result === 'moved') throw new Error(`another rebuild of ${projection.name} is running`);
    eventsRead += result.read;
    report({ projection: projection.name, eventsRead, phase: 'copying' });
    if (!result.more) break;
  }

  report({ projection: projection.name, eventsRead, phase: 'swapping' });
  await knex.transaction(async (trx) => {
    // Blocks the live runner (it skips a batch when the lock is taken) for the swap.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [lockKey(projection.name)]);
    await trx.raw(`set local search_path to ${quote(schema)}, public`);
    for (;;) {
      const from = (await readCheckpoint(trx, checkpoint))!;
      const events = await store.readAll(from, batchSize, { maxBytes });
      if (events.length === 0) break;
      const applied = await applyEvents(trx, projection, events);
      const last = events[events.length - 1]!.position;
      if (!(await advanceCheckpoint(trx, checkpoint, from, last, applied))) throw new CheckpointMovedError(`checkpoint ${checkpoint} moved during the swap`);
      eventsRead += events.length;
    }
    await trx.raw('set local search_path to public');
    await trx.raw(`drop schema if exists ${quote(retired)} cascade`);
    await trx.raw(`create schema ${quote(retired)}`);
    for (const table of projection.tables) {
      await trx.raw(`alter table public.${quote(table)} set schema ${quote(retired)}`);
      await trx.raw(`alter table ${quote(schema)}.${quote(table)} set schema public`);
      await restoreIndexNames(trx, retired, table);
    }
    if (outside) await outside.swap();
    const rebuilt = await trx('projection_checkpoints').where({ projection: checkpoint }).first();
    await trx('projection_checkpoints').where({ projection: projection.name }).update({
      commit_position: rebuilt.commit_position,
      prepare_position: rebuilt.prepare_position,
      events_applied: rebuilt.events_applied,
      version: projection.version,
      updated_at: trx.fn.now(),
    });
    await trx('projection_checkpoints').where({ projection: checkpoint }).delete();
    await trx.raw(`drop schema ${quote(retired)} cascade`);
    await trx.raw(`drop schema ${quote(schema)} cascade`);
  });
  report({ projection: projection.name, eventsRead, phase: 'done' });
  return { eventsRead };
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
