/** A small projection used to test the runner and rebuilds: per-stream event count and sum. */
import type { Knex } from 'knex';
import { defineProjection } from '../../projections/projection.js';

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
