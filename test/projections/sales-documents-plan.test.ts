/**
 * The documents projection's batched statements fetch the rows a batch changes by index, whatever
 * the size of the table: a recordset parameter hides its row count from the planner (it assumes
 * 100), which once made the update of `documents` hash the whole table for every batch (the
 * documents projection no longer updates that table: what counts read never changes).
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { insertSalesDocuments, updateSalesDocuments } from '../../readmodels/sales-documents.js';
import { openOwnTestDatabase } from '../support/db.js';
import { salesDocumentRow } from '../support/sales-documents.js';

const DOCUMENTS = 5_000;

const row = (i: number) => salesDocumentRow('plan', i);

describe('sales documents read model: batched statements on a large table', function () {
  this.timeout(120_000);
  let own: Awaited<ReturnType<typeof openOwnTestDatabase>>;

  before(async () => {
    own = await openOwnTestDatabase('salesplan');
    await own.db.knex.transaction(async (trx) => {
      for (let i = 0; i < DOCUMENTS; i += 1_000) {
        await insertSalesDocuments(trx, Array.from({ length: 1_000 }, (_, k) => row(i + k)));
      }
    });
    await own.db.knex.raw('analyze documents');
    await own.db.knex.raw('analyze sales_documents');
  });
  after(async () => {
    await own?.drop();
  });

  it('inserts both tables from one batch, sales_documents with the issue date and no copy of the document', async () => {
    const doc = await own.db.knex('documents').where({ document_id: 'doc_plan_7' }).first();
    expect(doc).to.include({ workspace_id: 'ws_plan', company_id: 'co_plan', country: 'AE', direction: 'sales', document_base: 'invoice', document_number: 'PLAN-7' });
    // What counts read, and no state: a change of the document does not touch its documents row.
    expect(doc).to.not.have.property('state');
    expect(doc).to.not.have.property('updated_at');
    const sales = await own.db.knex('sales_documents').where({ document_id: 'doc_plan_7' }).first();
    expect(sales).to.include({ company_id: 'co_plan', document_number: 'PLAN-7' });
    expect(sales.issue_date).to.equal('2026-01-01');
    expect(sales).to.not.have.property('core_document');
    expect(sales).to.not.have.property('validation');
  });

  it('updates a batch of documents by index, without a scan, and leaves their documents rows alone', async () => {
    const changes = [3, 2_500, 4_999].map((i) => ({ documentId: `doc_plan_${i}`, state: 'final_valid', updatedAt: '2026-02-01T00:00:00.000Z', attempts: 1 }));
    // The session's counters not flushed yet (they may hold earlier statements' too): read before and after.
    const counters = async (trx: Knex.Transaction) => {
      const { rows } = await trx.raw<{ rows: { relname: string; seq_scan: number; idx_scan: number; n_tup_upd: number }[] }>(
        `select relname, seq_scan::int, idx_scan::int, n_tup_upd::int from pg_stat_xact_user_tables where relname in ('documents', 'sales_documents') order by relname`,
      );
      return rows;
    };
    const scans = await own.db.knex.transaction(async (trx) => {
      const before = await counters(trx);
      await updateSalesDocuments(trx, changes);
      const after = await counters(trx);
      return after.map((a, i) => ({ relname: a.relname, seq: a.seq_scan - before[i]!.seq_scan, byIndex: a.idx_scan > before[i]!.idx_scan, updated: a.n_tup_upd - before[i]!.n_tup_upd }));
    });
    expect(scans).to.deep.equal([
      { relname: 'documents', seq: 0, byIndex: false, updated: 0 },
      { relname: 'sales_documents', seq: 0, byIndex: true, updated: 3 },
    ]);
    const states = await own.db.knex('sales_documents').whereIn('document_id', changes.map((c) => c.documentId)).orderBy('document_id').pluck('state');
    expect(states).to.deep.equal(['final_valid', 'final_valid', 'final_valid']);
    const attempts = await own.db.knex('sales_documents').whereIn('document_id', changes.map((c) => c.documentId)).pluck('attempts');
    expect(attempts).to.deep.equal([1, 1, 1]);
    expect(await own.db.knex('sales_documents').where({ document_id: 'doc_plan_4' }).first('state')).to.deep.equal({ state: 'processing' });
  });
});
