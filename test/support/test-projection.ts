/** A small projection used to test the runner and rebuilds: per-stream event count and sum. */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../../platform/eventstore/port.js';
import { defineProjection } from '../../projections/projection.js';
import { runWrites, type BatchWrite } from '../../readmodels/batch-writes.js';

export const TEST_TABLE = 'test_stream_totals';

export async function createTestProjectionTable(knex: Knex): Promise<void> {
  await knex.raw(`
    create table if not exists ${TEST_TABLE} (
      stream_id text primary key,
      events integer not null,
      total bigint not null,
      last_revision bigint not null
    );
    create index if not exists ${TEST_TABLE}_total on ${TEST_TABLE} (total);
  `);
}

/** The batch's totals per stream as one write (Projection.writes). */
function totalsWrites(events: readonly RecordedEvent[]): BatchWrite[] {
  const totals = new Map<string, { stream_id: string; events: number; total: number; last_revision: string }>();
  for (const e of events) {
    const t = totals.get(e.streamId) ?? { stream_id: e.streamId, events: 0, total: 0, last_revision: '0' };
    t.events++;
    t.total += (e.data as { n: number }).n;
    t.last_revision = e.revision.toString();
    totals.set(e.streamId, t);
  }
  if (totals.size === 0) return [];
  return [
    {
      rows: JSON.stringify([...totals.values()]),
      rowsType: 'jsonb',
      bindings: [],
      sql: (rows) => `insert into ${TEST_TABLE} (stream_id, events, total, last_revision)
        select v.stream_id, v.events, v.total, v.last_revision from jsonb_to_recordset(${rows}) as v(stream_id text, events integer, total bigint, last_revision bigint)
        on conflict (stream_id) do update set events = ${TEST_TABLE}.events + excluded.events, total = ${TEST_TABLE}.total + excluded.total,
          last_revision = excluded.last_revision`,
    },
  ];
}

/**
 * The same projection with its batch's writes as statements (Projection.writes): the live runner
 * folds them into the statement that moves the checkpoint. `calls` counts how batches were applied.
 */
export function foldedTestProjection(calls = { writes: 0, applyMany: 0 }) {
  return defineProjection({
    ...testProjection(),
    async applyMany(trx, events) {
      calls.applyMany++;
      await runWrites(trx, totalsWrites(events));
    },
    writes(events) {
      calls.writes++;
      return totalsWrites(events);
    },
  });
}

export function testProjection(options: { failOn?: (n: number) => boolean } = {}) {
  return defineProjection({
    name: 'test_stream_totals',
    version: 1,
    tables: [TEST_TABLE],
    eventTypes: new Set(['Test.Added']),
    async apply(trx, event) {
      const { n } = event.data as { n: number };
      if (options.failOn?.(n)) throw new Error(`refusing n=${n}`);
      await trx.raw(
        `insert into ${TEST_TABLE} (stream_id, events, total, last_revision) values (?, 1, ?, ?)
         on conflict (stream_id) do update set events = ${TEST_TABLE}.events + 1, total = ${TEST_TABLE}.total + excluded.total,
           last_revision = excluded.last_revision`,
        [event.streamId, n, event.revision.toString()],
      );
    },
  });
}
