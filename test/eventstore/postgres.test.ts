import { expect } from 'chai';
import { HEAD_POSITION_SQL, PostgresEventStore, READ_ALL_SQL } from '../../commands/eventstore/postgres.js';
import { eventStoreContract } from './contract.js';
import { testDb } from '../support/db.js';

eventStoreContract('postgres', async () => PostgresEventStore.connect(testDb().url, { poolSize: 30 }), 'never skipped');
eventStoreContract(
  'postgres (serialized appends)',
  async () => PostgresEventStore.connect(testDb().url, { poolSize: 30, serializeAppends: true }),
  'never skipped',
);

describe('PostgreSQL event store queries', () => {
  // Ordering by a text rendering of the transaction id sorts '10000' before '9999', which skips
  // and repeats events whenever transaction ids gain a digit, and forces a sort of the whole
  // table on every read. The reads must walk the (transaction_id, global_position) index.
  for (const [name, sql, params] of [
    ['readAll', READ_ALL_SQL, ['0', '0', 100]],
    ['headPosition', HEAD_POSITION_SQL, []],
  ] as const) {
    it(`${name} walks the (transaction_id, global_position) index with no sort`, async () => {
      const plan = await testDb().knex.transaction(async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        await trx.raw('set local enable_bitmapscan = off');
        const sqlWithKnexParams = sql.replace(/\$(\d)/g, '?');
        const { rows } = await trx.raw(`explain (format json) ${sqlWithKnexParams}`, [...params]);
        return JSON.stringify(rows[0]['QUERY PLAN']);
      });
      expect(plan).to.contain('es_events_tx_position');
      expect(plan).not.to.contain('"Node Type":"Sort"');
    });
  }

  it('lets no NOTIFY run inside an append (it would serialise commits)', async () => {
    const { rows } = await testDb().knex.raw(`select prosrc from pg_proc where proname = 'es_append'`);
    expect(rows).to.have.length(1);
    expect(rows[0].prosrc).not.to.contain('pg_notify');
  });
});
