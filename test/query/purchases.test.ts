/**
 * Received purchase invoices in the invoice query (docs/api/invoice-query.md): indexed from
 * `PurchaseInvoiceStored` as type `purchases`, found with `coreDocument.`-prefixed filters and
 * searches, never as sales, scoped to the workspace, environment and country, with their
 * attribution; a rebuild of the search projection gives the same documents.
 */
import { expect } from 'chai';
import { rebuildProjection } from '../../projections/rebuild.js';
import { searchProjection } from '../../projections/search.js';
import { PostgresSearchIndex, SEARCH_STATES_TABLE, SEARCH_TABLE, SEARCH_TABLES } from '../../readmodels/search/postgres.js';
import { setAsideSearchRows } from '../search/set-aside.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { receiver, storePurchase, type Receiver } from '../purchases/support.js';

describe('invoice query: purchases (received invoices)', function () {
  this.timeout(120000);
  let t: TestService;
  let r: Receiver;
  let other: Receiver;
  let documentId = '';
  const storedAt = new Date('2026-04-02T10:00:00.000Z');

  const query = (apiKey: string, body: Record<string, unknown>) =>
    call(`${t.url}/invoices/query`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: { country: 'AE', type: 'purchases', environment: 'sandbox', ...body } });

  before(async () => {
    t = await startTestService();
    r = await receiver(t);
    other = await receiver(t);
    documentId = (await storePurchase(t, r, { number: 'PQ-1', storedAt })).documentId;
    await storePurchase(t, other, { number: 'PQ-1', storedAt });
  });
  after(async () => {
    if (t) await t.close();
  });

  it('is found as type purchases with coreDocument. filters and searches, with its attribution and statuses', async () => {
    const found = await query(r.apiKey, {
      filters: [
        { id: 'coreDocument.header.documentNumber', value: ['pq-1'] },
        { id: 'coreDocument.header.issueDate', range: { gte: '2026-01-01', lte: '2026-12-31' } },
        { id: 'coreDocument.meta.statuses.document.current', value: ['VALIDATED'] },
        { id: 'coreDocument.meta.statuses.delivery.current', value: ['DELIVERED'] },
      ],
      searches: [{ field: 'coreDocument.parties.seller.name', term: 'falcon' }],
    });
    expect(found.status, found.text).to.equal(200);
    expect(found.json.pagination.total).to.equal(1);
    const [d] = found.json.data.documents;
    expect(d.documentId).to.equal(documentId);
    expect(d.country).to.equal('AE');
    expect(d.documentType).to.deep.equal({ base: 'tax_invoice', modifiers: [], variants: [] });
    expect(d.coreDocument.header.documentNumber).to.equal('PQ-1');
    expect(d.coreDocument.parties.seller.name).to.equal('Falcon Trading LLC');
    expect(d.attribution).to.include({ companyId: r.company.companyId });
    expect(d.attribution).to.have.all.keys('companyId', 'sourceName', 'sourceVersion', 'branchId', 'userGivenBranchId');
    // API keys never see the status histories, the internal state or statusHistory.
    expect(d.coreDocument.meta.statuses).to.deep.equal({
      document: { current: 'VALIDATED' },
      delivery: { current: 'DELIVERED' },
      business: { current: 'NOT_STARTED' },
      userfacing: 'Received',
    });
    expect(d).to.not.have.property('statusHistory');
    const read = await r.read(documentId);
    expect(d.attribution).to.deep.equal(read.json.data.attribution);
  });

  it('columns: the selection plus the fixed fields and the attribution', async () => {
    const shaped = await query(r.apiKey, { filters: [{ id: 'documentId', value: [documentId] }], columns: ['header.documentNumber'] });
    expect(shaped.status, shaped.text).to.equal(200);
    const [d] = shaped.json.data.documents;
    expect(d).to.have.all.keys('documentId', 'documentType', 'coreDocument', 'attribution');
    expect(d.coreDocument.header).to.deep.equal({ documentNumber: 'PQ-1' });
    expect(d.coreDocument.meta).to.have.all.keys('source', 'statuses');
    expect(d.attribution.companyId).to.equal(r.company.companyId);
  });

  it('is never a sales document, and stays in its workspace, environment and country', async () => {
    const asSales = await query(r.apiKey, { type: 'sales', filters: [{ id: 'documentId', value: [documentId] }] });
    expect(asSales.status, asSales.text).to.equal(200);
    expect(asSales.json.data.documents).to.deep.equal([]);
    const mine = await query(r.apiKey, { limit: 100 });
    expect(mine.json.data.documents.map((x: any) => x.documentId)).to.deep.equal([documentId]);
    const theirs = await query(other.apiKey, { limit: 100 });
    expect(theirs.json.data.documents).to.have.length(1);
    expect(theirs.json.data.documents[0].documentId).to.not.equal(documentId);
    expect(theirs.json.data.documents[0].attribution.companyId).to.equal(other.company.companyId);
    const production = (await t.key(r.workspaceId, { environment: 'production' })).apiKey;
    const prod = await query(production, { environment: 'production' });
    expect(prod.status, prod.text).to.equal(200);
    expect(prod.json.pagination.total).to.equal(0);
    const de = await query(r.apiKey, { country: 'DE' });
    expect(de.json.pagination.total).to.equal(0);
    // Receipts' flat paths are refused for purchases.
    const flat = await query(r.apiKey, { filters: [{ id: 'header.documentNumber', value: ['PQ-1'] }] });
    expect(flat.status).to.equal(400);
    expect(flat.json.path).to.deep.equal(['filters', 0, 'id']);
  });

  it('npm run rebuild -- search reproduces it', async () => {
    const knex = t.service.runtime.db.knex;
    const before = await query(r.apiKey, { filters: [{ id: 'documentId', value: [documentId] }] });
    const key = { workspace_id: r.workspaceId, type: 'purchases', document_id: documentId };
    const rows = async () => ({ body: await knex(SEARCH_TABLE).where(key).first('document'), state: await knex(SEARCH_STATES_TABLE).where(key).first('version', 'state') });
    const row = await rows();
    expect(row.state.version).to.equal('1'); // the purchase stream's revision of PurchaseInvoiceStored
    const restore = await setAsideSearchRows(knex, 'search_purchases_test_keep');
    try {
      const index = new PostgresSearchIndex(knex);
      await rebuildProjection(knex, t.service.runtime.store, searchProjection(index, { indexTables: SEARCH_TABLES }), { batchSize: 50 });
      expect(await rows()).to.deep.equal(row);
      const after = await query(r.apiKey, { filters: [{ id: 'documentId', value: [documentId] }] });
      expect(after.json).to.deep.equal(before.json);
    } finally {
      await restore();
    }
  });
});
