import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { NewEvent } from '../../platform/eventstore/port.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { searchProjection } from '../../projections/search.js';
import { isStateChange, type IndexedStateChange, type IndexWrite, type SearchIndex, type SearchQuery } from '../../readmodels/search/port.js';
import { PostgresSearchIndex, SEARCH_STATES_TABLE, SEARCH_TABLE, SEARCH_TABLES } from '../../readmodels/search/postgres.js';
import { SALES_FACTS_TABLE } from '../../readmodels/search/sales-facts.js';
import { searchSalesFactsInFlightMigration } from '../../readmodels/migrations/0067_search_sales_facts_in_flight.js';
import { newEvent } from '../eventstore/contract.js';
import { NO_ELASTICSEARCH, openTestElasticsearch, requireElasticsearch } from '../search/support.js';
import { testDb } from '../support/db.js';
import { receivedDocumentData } from '../support/sales-documents.js';

/** The PostgreSQL index, recording each write it receives (the engine is the real one). */
class RecordingIndex implements SearchIndex {
  readonly engine = 'postgres' as const;
  readonly writes: IndexWrite[][] = [];
  constructor(private readonly inner: PostgresSearchIndex) {}
  async write(trx: Parameters<SearchIndex['write']>[0], documents: readonly IndexWrite[]) {
    this.writes.push([...documents]);
    await this.inner.write(trx, documents);
  }
  search(query: SearchQuery) {
    return this.inner.search(query);
  }
}

describe('search projection (sales documents and receipts into the index)', function () {
  this.timeout(120000);
  let store: PostgresEventStore;
  const workspaceId = `ws-search-${randomUUID().slice(0, 8)}`;
  const ev = (type: string, data: unknown, at: string): NewEvent => {
    const e = newEvent(type, data);
    return { ...e, metadata: { ...e.metadata, workspaceId, occurredAt: at } };
  };
  const received = (id: string, n: number, variant: string | null) =>
    receivedDocumentData(id, {
      number: `SP-${n}`,
      variant,
      coreDocument: { header: { documentNumber: `SP-${n}`, issueDate: `2026-03-${String(1 + (n % 28)).padStart(2, '0')}`, currency: 'AED' }, totals: { totalAmountIncludingTax: n } },
      validation: { success: true, errors: [], warnings: [], metadata: { n }, validatedAt: '2026-03-01T00:00:00.000Z' },
    });
  const query = (type: 'sales' | 'receipts', filters: SearchQuery['filters'] = []): SearchQuery => ({
    workspaceId,
    environment: 'sandbox',
    type,
    filters,
    searches: [],
    sort: null,
    offset: 0,
    limit: 100,
  });

  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    // 12 delivered and finalized, 6 rejected, 3 receipts left submitted.
    for (let n = 0; n < 21; n++) {
      const id = `doc_sp_${workspaceId}_${n}`;
      const at = (s: number) => `2026-03-01T00:00:${String(s).padStart(2, '0')}.000Z`;
      if (n < 12) {
        await store.append(`document-${id}`, [
          ev('DocumentSubmitted', { ...received(id, n, null), xmlBase64: null }, at(0)),
          ev('DocumentDeliveryStarted', { attempt: 1, destination: 'TAX_AUTHORITY' }, at(1)),
          ev('DocumentDelivered', { attempt: 1, government: null }, at(2)),
          ev('DocumentFinalized', { outcome: n % 2 === 0 ? 'valid' : 'invalid', government: null, errors: [] }, at(3)),
        ], 'no_stream');
      } else if (n < 18) {
        await store.append(`document-${id}`, [ev('DocumentRejected', { ...received(id, n, null), errors: [] }, at(0))], 'no_stream');
      } else {
        await store.append(`document-${id}`, [ev('DocumentSubmitted', { ...received(id, n, 'receipt'), xmlBase64: null }, at(0))], 'no_stream');
      }
    }
  });
  after(async () => store.close());

  it('writes one batch per write, the newest state of each document once, and derives the statuses', async () => {
    const index = new RecordingIndex(new PostgresSearchIndex(testDb().knex));
    await new ProjectionRunner(testDb().knex, store, [searchProjection(index)], { batchSize: 20 }).catchUp();
    for (const batch of index.writes) {
      const keys = batch.map((d) => `${d.type}/${d.documentId}`);
      expect(new Set(keys).size, 'one write per document per batch').to.equal(keys.length);
    }
    const mine = index.writes.flat().filter((d) => d.workspaceId === workspaceId);
    expect(new Set(mine.map((d) => d.documentId)).size).to.equal(21);

    const sales = await index.search(query('sales'));
    expect(sales.total).to.equal(18);
    const compliant = await index.search(query('sales', [{ field: 'coreDocument.meta.statuses.document.current', values: ['COMPLIANT'] }]));
    expect(compliant.total).to.equal(6);
    const refused = await index.search(query('sales', [{ field: 'coreDocument.meta.statuses.business.current', values: ['REJECTED'] }]));
    expect(refused.total).to.equal(6);
    const rejected = await index.search(query('sales', [{ field: 'coreDocument.meta.statuses.document.current', values: ['NEEDS_CORRECTION'] }]));
    expect(rejected.total).to.equal(6);
    const receipts = await index.search(query('receipts', [{ field: 'countryDocumentStatus', values: ['ISSUED'] }]));
    expect(receipts.total).to.equal(3);
    const [r] = receipts.documents as any[];
    expect(r.header.documentNumber).to.match(/^SP-/);
    expect(r.meta.coreValidation.success).to.equal(true);
    // The state row holds the statuses, at the stream revision of the last event; the body row the rest.
    const key = { workspace_id: workspaceId, document_id: `doc_sp_${workspaceId}_0` };
    const stateRow = await testDb().knex(SEARCH_STATES_TABLE).where(key).first();
    const state = { ...stateRow, state: JSON.parse(stateRow.state) };
    expect(state.version).to.equal('3');
    expect(state.state.coreDocument.meta.statuses.document.history.map((h: any) => h.value)).to.deep.equal(['VALIDATED', 'COMPLIANT']);
    expect(Object.keys(state.state).sort()).to.deep.equal(['coreDocument', 'statusHistory']);
    const bodyRow = await testDb().knex(SEARCH_TABLE).where(key).first();
    const body = { ...bodyRow, document: JSON.parse(bodyRow.document) };
    expect(body.document.coreDocument.meta.statuses).to.equal(undefined);
    expect(body.document.statusHistory).to.equal(undefined);
    expect(body.document.coreDocument.meta.source).to.be.an('object');
  });

  it('a state change after the batch updates the document; a replayed batch changes nothing', async () => {
    const id = `doc_sp_${workspaceId}_18`;
    const bodyRow = () => testDb().knex(SEARCH_TABLE).where({ workspace_id: workspaceId, document_id: id }).first('document', testDb().knex.raw('xmin::text as xmin'));
    const bodyBefore = await bodyRow();
    await store.append(`document-${id}`, [ev('DocumentDeliveryStarted', { attempt: 1, destination: 'TAX_AUTHORITY' }, '2026-03-02T00:00:00.000Z')], 0n);
    const index = new RecordingIndex(new PostgresSearchIndex(testDb().knex));
    const projection = searchProjection(index);
    await new ProjectionRunner(testDb().knex, store, [projection]).catchUp();
    const processing = await index.search(query('receipts', [{ field: 'documentId', values: [id] }]));
    expect((processing.documents[0] as any).meta.statuses.delivery.current).to.equal('IN_PROGRESS');
    expect((processing.documents[0] as any).header.documentNumber).to.equal('SP-18');
    // Only the new state was written: the body row is the same row version, untouched.
    const written = index.writes.flat().filter((w) => w.documentId === id);
    expect(written).to.have.length(1);
    expect(isStateChange(written[0]!)).to.equal(true);
    expect(Object.keys((written[0] as IndexedStateChange).state).sort()).to.deep.equal(['countryDocumentStatus', 'meta', 'statusHistory']);
    expect(await bodyRow()).to.deep.equal(bodyBefore);
    // Replay the whole stream through the projection: versions and the facts' revisions ignore it.
    const writes = index.writes.length;
    const events = await store.readStream(`document-${id}`);
    await testDb().knex.transaction((trx) => projection.applyMany!(trx, events));
    const again = await index.search(query('receipts', [{ field: 'documentId', values: [id] }]));
    expect(again.documents).to.deep.equal(processing.documents);
    expect(index.writes.length, 'nothing newer: no write').to.equal(writes);
  });

  it('keeps the facts of documents in flight only, dropping them when a document becomes final', async () => {
    const facts = async () =>
      (await testDb().knex(SALES_FACTS_TABLE).where({ workspace_id: workspaceId }).select('document_id')).map((r: { document_id: string }) => r.document_id).sort();
    const id = (n: number) => `doc_sp_${workspaceId}_${n}`;
    // Finalized and rejected documents (0–17) have none; the receipts in flight (18–20) have theirs.
    expect(await facts()).to.deep.equal([id(18), id(19), id(20)]);
    // What a later state change needs, not the submission's content (its body is indexed).
    const stored = await testDb().knex(SALES_FACTS_TABLE).where({ document_id: id(20) }).first('facts');
    expect(Object.keys(stored.facts).sort()).to.deep.equal(['documentId', 'documentType', 'environment', 'transitions', 'workspaceId']);
    await store.append(`document-${id(18)}`, [
      ev('DocumentDelivered', { attempt: 1, government: null }, '2026-03-02T00:00:01.000Z'),
      ev('DocumentFinalized', { outcome: 'valid', government: null, errors: [] }, '2026-03-02T00:00:02.000Z'),
    ], 1n);
    await store.append(`document-${id(19)}`, [ev('DocumentDeliveryStarted', { attempt: 1, destination: 'TAX_AUTHORITY' }, '2026-03-02T00:00:03.000Z')], 0n);
    const index = new PostgresSearchIndex(testDb().knex);
    await new ProjectionRunner(testDb().knex, store, [searchProjection(index)]).catchUp();
    expect(await facts()).to.deep.equal([id(19), id(20)]);
    const final = await index.search(query('receipts', [{ field: 'documentId', values: [id(18)] }]));
    expect((final.documents[0] as any).meta.statuses.document.current).to.equal('COMPLIANT');
    const inFlight = await index.search(query('receipts', [{ field: 'documentId', values: [id(19)] }]));
    expect((inFlight.documents[0] as any).meta.statuses.delivery.current).to.equal('IN_PROGRESS');
  });

  it('remembers the facts of documents in flight: their next batch reads nothing and goes with its checkpoint as one statement; facts another instance moved on are read again', async () => {
    const knex = testDb().knex;
    const id = `doc_sp_${workspaceId}_memo`;
    const stream = `document-${id}`;
    const at = (s: number) => `2026-03-03T00:00:${String(s).padStart(2, '0')}.000Z`;
    // A projection whose reads of the facts (applyMany, the batch as a transaction) are counted.
    const live = searchProjection(new PostgresSearchIndex(knex));
    let read = 0;
    const counted = { ...live, applyMany: async (...args: Parameters<NonNullable<typeof live.applyMany>>) => (read++, live.applyMany!(...args)) };
    const catchUp = (p: typeof live) => new ProjectionRunner(knex, store, [p]).catchUp();
    const factsRow = () => knex(SALES_FACTS_TABLE).where({ document_id: id }).first('revision', 'facts');
    const current = async () => (await new PostgresSearchIndex(knex).search(query('sales', [{ field: 'documentId', values: [id] }]))).documents[0] as any;
    await catchUp(counted); // whatever earlier tests left in the log
    read = 0;

    await store.append(stream, [ev('DocumentSubmitted', { ...received(id, 40, null), xmlBase64: null }, at(0))], 'no_stream');
    await catchUp(counted);
    await store.append(stream, [ev('DocumentDeliveryStarted', { attempt: 1, destination: 'TAX_AUTHORITY' }, at(1))], 0n);
    await catchUp(counted);
    expect(read, 'received in the batch, then remembered: no read').to.equal(0);
    expect((await factsRow()).revision).to.equal('1');
    expect((await current()).coreDocument.meta.statuses.delivery.current).to.equal('IN_PROGRESS');

    // Another instance (its own memory) applies the next event: the stored facts move past what `live` remembers.
    await store.append(stream, [ev('DocumentDelivered', { attempt: 1, government: null }, at(2))], 1n);
    await catchUp(searchProjection(new PostgresSearchIndex(knex)));
    expect((await factsRow()).revision).to.equal('2');
    // Back on `live` (say the other instance stopped): its remembered facts are not the stored ones,
    // so its one-statement batch is refused and the batch reads them.
    await store.append(stream, [ev('DocumentFinalized', { outcome: 'valid', government: null, errors: [] }, at(3))], 2n);
    await catchUp(counted);
    expect(read, 'the remembered facts were stale: read').to.equal(1);
    expect(await factsRow(), 'final: no facts kept').to.equal(undefined);
    const final = await current();
    expect(final.coreDocument.meta.statuses.document.current).to.equal('COMPLIANT');
    expect(final.coreDocument.meta.statuses.delivery.current).to.not.equal('IN_PROGRESS');
    expect(final.statusHistory.map((h: any) => h.at)).to.include(at(2));
    expect((await knex(SEARCH_STATES_TABLE).where({ workspace_id: workspaceId, document_id: id }).first('version')).version).to.equal('3');
  });

  it('migration 0067 drops the stored facts of documents already final, keeping those in flight', async () => {
    const row = (n: number, state: string) => ({
      document_id: `doc_mig_${workspaceId}_${n}`,
      workspace_id: workspaceId,
      environment: 'sandbox',
      revision: 1,
      facts: JSON.stringify({ transitions: [{ state: 'submitted', at: '2026-03-01T00:00:00Z' }, { state, at: '2026-03-01T00:00:01Z' }] }),
    });
    const states = ['processing', 'final_valid', 'final_invalid', 'rejected', 'delivery_failed'];
    await testDb().knex(SALES_FACTS_TABLE).insert(states.map((state, n) => row(n, state)));
    await searchSalesFactsInFlightMigration.up(testDb().knex);
    const left = await testDb().knex(SALES_FACTS_TABLE).where('document_id', 'like', `doc_mig_${workspaceId}_%`).orderBy('document_id').select('document_id');
    expect(left.map((r: { document_id: string }) => r.document_id)).to.deep.equal([`doc_mig_${workspaceId}_0`, `doc_mig_${workspaceId}_4`]);
    await testDb().knex(SALES_FACTS_TABLE).where('document_id', 'like', `doc_mig_${workspaceId}_%`).delete();
  });

  it('npm run rebuild -- search: fresh facts and index tables, same answers, swapped in', async () => {
    const index = new PostgresSearchIndex(testDb().knex);
    const before = await index.search(query('sales'));
    const indexNames = async () =>
      (await testDb().knex.raw(`select indexname from pg_indexes where schemaname = 'public' and tablename in (?, ?, 'search_sales_facts') order by 1`, [SEARCH_TABLE, SEARCH_STATES_TABLE])).rows.map(
        (r: { indexname: string }) => r.indexname,
      );
    const namesBefore = await indexNames();
    await rebuildProjection(testDb().knex, store, searchProjection(index, { indexTables: SEARCH_TABLES }), { batchSize: 500 });
    const after = await index.search(query('sales'));
    expect(after).to.deep.equal(before);
    expect((await index.search(query('receipts'))).total).to.equal(3);
    // The swapped-in tables carry the live tables' index names.
    expect(await indexNames()).to.deep.equal(namesBefore);
  });

  it('rebuild on Elasticsearch: fresh indices filled from the log and swapped in with the facts', async function () {
    const es = await openTestElasticsearch();
    if (!es) {
      if (requireElasticsearch) throw new Error('CI=true but no Elasticsearch');
      console.log(`      skipped: ${NO_ELASTICSEARCH}`);
      this.skip();
    }
    try {
      const before = await es!.liveIndices();
      await rebuildProjection(testDb().knex, store, searchProjection(es!), { batchSize: 500 });
      const after = await es!.liveIndices();
      expect(after.sales).to.have.length(1);
      expect(after.sales).to.not.deep.equal(before.sales);
      const pg = new PostgresSearchIndex(testDb().knex);
      for (const type of ['sales', 'receipts'] as const) {
        const [fromEs, fromPg] = await Promise.all([es!.search(query(type)), pg.search(query(type))]);
        expect(fromEs.total, type).to.equal(fromPg.total);
        expect(fromEs.documents, type).to.deep.equal(fromPg.documents);
      }
    } finally {
      await es!.dropAll();
      await es!.close();
    }
  });
});
