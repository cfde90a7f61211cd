/**
 * Migration 0152: `sales_documents` loses the two indexes no read of the service uses
 * (`sales_documents_workspace`, `sales_documents_country_uuid`). Every read of the read model
 * (readmodels/sales-documents.ts) still finds its rows by an index, without a scan of the table;
 * down puts both indexes back.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { salesDocumentsUnreadIndexesMigration } from '../../readmodels/migrations/0152_sales_documents_unread_indexes.js';
import { migrateToLatest } from '../../readmodels/migrations/index.js';
import {
  deliveredDocumentsByNumber,
  dueDeliveryRetries,
  dueFinalResults,
  findSalesDocument,
  insertSalesDocuments,
  interruptedDeliveries,
  listMalaysianDocuments,
  updateSalesDocuments,
} from '../../readmodels/sales-documents.js';
import { openDatabaseBefore } from '../support/db.js';
import { salesDocumentRow } from '../support/sales-documents.js';

const DOCUMENTS = 4_000;
const DROPPED = ['sales_documents_country_uuid', 'sales_documents_workspace'];

describe('sales documents without the indexes no read uses (migration 0152)', function () {
  this.timeout(120_000);
  let own: Awaited<ReturnType<typeof openDatabaseBefore>>;
  let knex: Knex;

  before(async () => {
    own = await openDatabaseBefore('salesidx', salesDocumentsUnreadIndexesMigration);
    knex = own.knex;
    // Most documents final; a few of each state the delivery worker looks for; a Malaysian one.
    const row = (i: number) => {
      const r = salesDocumentRow('idx', i);
      if (i % 100 === 1) return { ...r, state: 'delivery_failed', nextAttemptAt: '2026-01-01T00:00:00.000Z' };
      if (i % 100 === 2) return { ...r, state: 'delivery_success', finalResultDueAt: '2026-01-01T00:00:00.000Z' };
      if (i % 100 === 3) return r;
      if (i === 4) return { ...r, state: 'final_valid', country: 'MY' };
      return { ...r, state: 'final_valid' };
    };
    await knex.transaction(async (trx) => {
      for (let i = 0; i < DOCUMENTS; i += 1_000) await insertSalesDocuments(trx, Array.from({ length: 1_000 }, (_, k) => row(i + k)));
    });
  });
  after(() => own?.drop());

  const indexes = async () =>
    (await knex.raw(`select indexname from pg_indexes where schemaname = 'public' and tablename = 'sales_documents' order by 1`)).rows.map((r: { indexname: string }) => r.indexname) as string[];

  /** Sequential scans of sales_documents by `read` (its own transaction's counters). */
  const scans = (read: (trx: Knex.Transaction) => Promise<unknown>) =>
    knex.transaction(async (trx) => {
      const count = async () => (await trx.raw(`select seq_scan::int as n from pg_stat_xact_user_tables where relname = 'sales_documents'`)).rows[0].n as number;
      const before = await count();
      const result = await read(trx);
      return { seq: (await count()) - before, result };
    });

  it('drops both, every read of the read model still goes by an index, and down restores them', async () => {
    const all = await indexes();
    for (const name of DROPPED) expect(all).to.include(name);
    await migrateToLatest(knex);
    await knex.raw('analyze sales_documents');
    const left = await indexes();
    for (const name of DROPPED) expect(left).to.not.include(name);
    expect(left).to.deep.equal(all.filter((n) => !DROPPED.includes(n)));

    const now = new Date('2026-06-01T00:00:00.000Z');
    const reads: [string, (trx: Knex.Transaction) => Promise<unknown>, (result: unknown) => void][] = [
      ['the status object', (trx) => findSalesDocument(trx, 'ws_idx', 'doc_idx_7'), (r) => expect((r as { documentId: string }).documentId).to.equal('doc_idx_7')],
      [
        'the Malaysian listing',
        (trx) => listMalaysianDocuments(trx, { workspaceId: 'ws_idx', environment: 'sandbox', uuid: salesDocumentRow('idx', 4).uuid!, documentId: 'doc_idx_4', page: 1, limit: 10, order: 'desc' }),
        (r) => expect((r as { total: number }).total).to.equal(1),
      ],
      ['the retries due', (trx) => dueDeliveryRetries(trx, now, 200), (r) => expect(r).to.have.length(DOCUMENTS / 100)],
      ['the interrupted deliveries', (trx) => interruptedDeliveries(trx, now, 200), (r) => expect(r).to.have.length(DOCUMENTS / 100)],
      ['the final results due', (trx) => dueFinalResults(trx, now, 200), (r) => expect(r).to.have.length(DOCUMENTS / 100)],
      ['the lookup by number', (trx) => deliveredDocumentsByNumber(trx, 'sandbox', 'IDX-7'), (r) => expect(r).to.deep.equal([{ documentId: 'doc_idx_7', workspaceId: 'ws_idx' }])],
      ['the projection\'s update', (trx) => updateSalesDocuments(trx, [{ documentId: 'doc_idx_9', state: 'final_invalid', updatedAt: now.toISOString() }]), () => {}],
    ];
    for (const [name, read, check] of reads) {
      const { seq, result } = await scans(read);
      expect(seq, name).to.equal(0);
      check(result);
    }

    await salesDocumentsUnreadIndexesMigration.down(knex);
    expect(await indexes()).to.deep.equal(all);
  });
});
