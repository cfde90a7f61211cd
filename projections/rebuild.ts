/**
 * Rebuilds a projection from the event log into fresh tables beside the live ones, then swaps
 * them in. The live tables keep answering (and the live runner keeps applying) until the swap,
 * which is one short transaction: it takes the projection's lock, applies the last events,
 * moves the live tables out and the rebuilt ones in, and hands the rebuilt checkpoint over.
 * The SQL of each step lives in readmodels/rebuild-tables.ts.
 */
import type { Knex } from 'knex';
import { pageMayContinue, type EventStore } from '../platform/eventstore/port.js';
import type { Projection, ProjectionRebuild } from './projection.js';
import { advanceCheckpoint, ensureCheckpoint, readCheckpoint } from '../readmodels/checkpoints.js';
import { createRebuildTables, dropSchemas, handOverCheckpoint, lockProjectionForSwap, swapInRebuiltTables, useSchema } from '../readmodels/rebuild-tables.js';
import { applyBatch, applyEvents, CheckpointMovedError, DEFAULT_BATCH_BYTES, lockKey } from './runner.js';

export interface RebuildProgress {
  projection: string;
  eventsRead: number;
  phase: 'copying' | 'swapping' | 'done';
}

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
  await createRebuildTables(knex, schema, projection.tables, checkpoint, projection.version);

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
    await lockProjectionForSwap(trx, lockKey(projection.name));
    await useSchema(trx, schema);
    for (;;) {
      const from = (await readCheckpoint(trx, checkpoint))!;
      const events = await store.readAll(from, batchSize, { maxBytes });
      if (events.length === 0) break;
      const applied = await applyEvents(trx, projection, events);
      const last = events[events.length - 1]!.position;
      if (!(await advanceCheckpoint(trx, checkpoint, from, last, applied))) throw new CheckpointMovedError(`checkpoint ${checkpoint} moved during the swap`);
      eventsRead += events.length;
    }
    await useSchema(trx, null);
    await swapInRebuiltTables(trx, schema, retired, projection.tables);
    if (outside) await outside.swap();
    await handOverCheckpoint(trx, checkpoint, projection.name, projection.version);
    await dropSchemas(trx, [retired, schema]);
  });
  report({ projection: projection.name, eventsRead, phase: 'done' });
  return { eventsRead };
}
