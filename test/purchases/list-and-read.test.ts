import { expect } from 'chai';
import { testDb } from '../support/db.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { purchasesProjection } from '../../projections/purchases.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { unifyTenant, uaeInvoice, type UnifyTenant } from '../unify/support.js';
import { receiver, storePurchase, type Receiver } from './support.js';
import { newEvent } from '../eventstore/contract.js';

const LIST_ITEM_FIELDS = ['documentId', 'receivedAt', 'storedAt', 'status', 'country', 'environment', 'invoiceNumber', 'supplierName', 'issueDate'];

describe('purchases: GET /api/v3/documents?type=purchases and GET /api/v3/documents/{id}?type=purchases', function () {
  this.timeout(120000);
  let t: TestService;
  let r: Receiver;
  let other: Receiver;
  const day = (d: string, hh = 10, extraMs = 0) => new Date(Date.parse(`${d}T${String(hh).padStart(2, '0')}:00:00Z`) + extraMs);
  const ids: string[] = [];

  before(async () => {
    t = await startTestService();
    r = await receiver(t);
    other = await receiver(t);
    // 25 purchases over 2026-03-01..03 (and 2 the day after), 5 sharing one storedAt instant.
    for (let i = 0; i < 25; i++) {
      const d = i < 10 ? '2026-03-01' : i < 20 ? '2026-03-02' : '2026-03-03';
      const at = i >= 20 ? day(d, 12) : day(d, 8, i * 1000);
      ids.push((await storePurchase(t, r, { number: `P-${i}`, storedAt: at })).documentId);
    }
    await storePurchase(t, r, { number: 'P-late-1', storedAt: day('2026-03-04', 0) });
    await storePurchase(t, r, { number: 'P-late-2', storedAt: day('2026-03-04', 23) });
    await storePurchase(t, other, { number: 'O-1', storedAt: day('2026-03-01') });
  });
  after(async () => t.close());

  const errorOf = (res: { status: number; json: any }, status: number, code: string) => {
    expect(res.status, JSON.stringify(res.json)).to.equal(status);
    expect(res.json).to.include({ success: false, code });
    expect(res.json.message).to.be.a('string').and.not.equal('');
    return res.json;
  };

  it('lists a range on storage time with items of docs/api/purchases.md and the page wrapper', async () => {
    const res = await r.list('?type=purchases&from=2026-03-01&to=2026-03-01');
    expect(res.status).to.equal(200);
    expect(res.json.success).to.equal(true);
    expect(Object.keys(res.json.data).sort()).to.deep.equal(['hasMore', 'items', 'nextCursor']);
    expect(res.json.data.items).to.have.length(10);
    expect(res.json.data.hasMore).to.equal(false);
    expect(res.json.data.nextCursor).to.equal(null);
    const item = res.json.data.items[0];
    expect(Object.keys(item).sort()).to.deep.equal([...LIST_ITEM_FIELDS].sort());
    expect(item).to.include({ status: 'purchase.invoice.stored', country: 'AE', environment: 'sandbox', invoiceNumber: 'P-0', supplierName: 'Falcon Trading LLC', issueDate: '2026-01-15' });
    expect(item.storedAt).to.equal('2026-03-01T08:00:00.000Z');
  });

  it('`to` defaults to `from`; days are inclusive UTC days (00:00 and 23:00 of the last day are in)', async () => {
    const one = await r.list('?type=purchases&from=2026-03-04');
    expect(one.json.data.items.map((i: any) => i.invoiceNumber)).to.deep.equal(['P-late-1', 'P-late-2']);
    const all = await r.list('?type=purchases&from=2026-03-01&to=2026-03-04&limit=100');
    expect(all.json.data.items).to.have.length(27);
    const none = await r.list('?type=purchases&from=2026-02-28');
    expect(none.json.data).to.deep.equal({ items: [], hasMore: false, nextCursor: null });
  });

  it('a cursor walk returns each purchase exactly once in (storedAt, documentId) order, ties included', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await r.list(`?type=purchases&from=2026-03-01&to=2026-03-03&limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, res.text).to.equal(200);
      seen.push(...res.json.data.items.map((i: any) => i.documentId));
      expect(res.json.data.items.length).to.be.at.most(4);
      cursor = res.json.data.nextCursor;
      expect(cursor === null).to.equal(!res.json.data.hasMore);
      pages++;
    } while (cursor);
    expect(pages).to.equal(7);
    expect(seen).to.have.length(25);
    expect(new Set(seen).size).to.equal(25);
    expect(new Set(seen)).to.deep.equal(new Set(ids));
  });

  it('a walk sees purchases that arrive meanwhile, without repeating or skipping', async () => {
    const first = await r.list('?type=purchases&from=2026-03-04&limit=1');
    expect(first.json.data.hasMore).to.equal(true);
    // Stored "earlier" by its own clock than the page already read: still after it in the list.
    const late = await storePurchase(t, r, { number: 'P-arrives', storedAt: day('2026-03-04', 0) });
    const rest: string[] = [];
    let cursor: string | null = first.json.data.nextCursor;
    while (cursor) {
      const res = await r.list(`?type=purchases&from=2026-03-04&limit=1&cursor=${encodeURIComponent(cursor)}`);
      rest.push(...res.json.data.items.map((i: any) => i.invoiceNumber));
      cursor = res.json.data.nextCursor;
    }
    expect([first.json.data.items[0].invoiceNumber, ...rest]).to.deep.equal(['P-late-1', 'P-late-2', 'P-arrives']);
    expect(late.duplicate).to.equal(false);
  });

  it('errors of the purchase list table, each in the documents envelope with its path', async () => {
    // Missing from: 400 VALIDATION_ERROR (the README's choice).
    expect(errorOf(await r.list('?type=purchases'), 400, 'VALIDATION_ERROR').path).to.deep.equal(['query', 'from']);
    errorOf(await r.list('?type=sales&from=2026-03-01'), 400, 'NOT_SUPPORTED');
    errorOf(await r.list('?from=2026-03-01'), 422, 'VALIDATION_ERROR');
    errorOf(await r.list('?type=receipts&from=2026-03-01'), 422, 'VALIDATION_ERROR');
    errorOf(await r.list('?type=purchases&type=purchases&from=2026-03-01'), 400, 'VALIDATION_ERROR');
    for (const bad of ['2026-02-30', '2026-13-01', '2026-3-1', '01-03-2026', '2026-03-01T00:00:00Z', 'yesterday']) {
      expect(errorOf(await r.list(`?type=purchases&from=${bad}`), 400, 'VALIDATION_ERROR').path, bad).to.deep.equal(['query', 'from']);
      expect(errorOf(await r.list(`?type=purchases&from=2026-03-01&to=${bad}`), 400, 'VALIDATION_ERROR').path, bad).to.deep.equal(['query', 'to']);
    }
    errorOf(await r.list('?type=purchases&from=2026-03-02&to=2026-03-01'), 400, 'VALIDATION_ERROR');
    for (const bad of ['0', 'abc', '-1', '1.5', '', '1e2']) {
      expect(errorOf(await r.list(`?type=purchases&from=2026-03-01&limit=${bad}`), 400, 'VALIDATION_ERROR').path, bad).to.deep.equal(['query', 'limit']);
    }
    const above = errorOf(await r.list('?type=purchases&from=2026-03-01&limit=101'), 422, 'VALIDATION_ERROR');
    expect(above.errors[0].path).to.deep.equal(['query', 'limit']);
    errorOf(await r.list('?type=purchases&from=2026-03-01&cursor=nonsense'), 400, 'VALIDATION_ERROR');
    errorOf(await r.list('?type=purchases&from=2026-03-01&cursor='), 400, 'VALIDATION_ERROR');
    errorOf(await r.list('?type=purchases&from=2026-03-01&page=2'), 400, 'VALIDATION_ERROR');
    const ok100 = await r.list('?type=purchases&from=2026-03-01&limit=100');
    expect(ok100.status).to.equal(200);
  });

  it('authentication failures: 401 AUTHORIZATION_ERROR for a wrong key, authentication_required without one', async () => {
    const wrong = await r.list('?type=purchases&from=2026-03-01', 'eik_test_not_a_key');
    expect(wrong.status).to.equal(401);
    expect(wrong.json).to.have.property('code', 'AUTHORIZATION_ERROR');
    expect(wrong.json).to.not.have.property('success');
    const missing = await call(`${t.url}/api/v3/documents?type=purchases&from=2026-03-01`);
    expect(missing.status).to.equal(401);
    expect(missing.json.code).to.equal('authentication_required');
  });

  it('cursors are bound to range, limit, workspace and environment, and refuse a one-byte edit', async () => {
    const first = await r.list('?type=purchases&from=2026-03-01&to=2026-03-03&limit=5');
    const cursor: string = first.json.data.nextCursor;
    const next = (q: string, c: string, key?: string) => r.list(`${q}&cursor=${encodeURIComponent(c)}`, key);
    expect((await next('?type=purchases&from=2026-03-01&to=2026-03-03&limit=5', cursor)).status).to.equal(200);
    errorOf(await next('?type=purchases&from=2026-03-01&to=2026-03-04&limit=5', cursor), 400, 'VALIDATION_ERROR');
    errorOf(await next('?type=purchases&from=2026-03-02&to=2026-03-03&limit=5', cursor), 400, 'VALIDATION_ERROR');
    errorOf(await next('?type=purchases&from=2026-03-01&to=2026-03-03&limit=6', cursor), 400, 'VALIDATION_ERROR');
    errorOf(await next('?type=purchases&from=2026-03-01&to=2026-03-03', cursor), 400, 'VALIDATION_ERROR');
    errorOf(await next('?type=purchases&from=2026-03-01&to=2026-03-03&limit=5', cursor, other.apiKey), 400, 'VALIDATION_ERROR');
    const prodKey = await t.key(r.workspaceId, { environment: 'production' });
    errorOf(await next('?type=purchases&from=2026-03-01&to=2026-03-03&limit=5', cursor, prodKey.apiKey), 400, 'VALIDATION_ERROR');
    // Every one-byte edit is refused.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < cursor.length; i += Math.max(1, Math.floor(cursor.length / 25))) {
      const replacement = alphabet[(alphabet.indexOf(cursor[i]!) + 1) % alphabet.length] ?? 'A';
      const edited = cursor.slice(0, i) + (cursor[i] === '.' ? 'x' : replacement) + cursor.slice(i + 1);
      errorOf(await next('?type=purchases&from=2026-03-01&to=2026-03-03&limit=5', edited), 400, 'VALIDATION_ERROR');
    }
  });

  it("the key's environment selects purchases: a production key sees none of the sandbox ones", async () => {
    const prodKey = await t.key(r.workspaceId, { environment: 'production' });
    const res = await r.list('?type=purchases&from=2026-03-01&to=2026-03-04', prodKey.apiKey);
    expect(res.status).to.equal(200);
    expect(res.json.data.items).to.deep.equal([]);
    expect((await r.read(ids[0]!, 'purchases', prodKey.apiKey)).status).to.equal(404);
  });

  it('the single read: list fields, core document, attribution, participants and the exact XML', async () => {
    const res = await r.read(ids[0]!);
    expect(res.status, res.text).to.equal(200);
    expect(res.json.success).to.equal(true);
    const d = res.json.data;
    for (const f of LIST_ITEM_FIELDS) expect(d).to.have.property(f);
    expect(d).to.include({ documentId: ids[0], invoiceNumber: 'P-0', channel: 'ubl_import', senderParticipantId: '0235:1002345678', receiverParticipantId: `0235:${r.tin}` });
    expect(d.attribution).to.deep.equal({
      companyId: r.company.companyId,
      sourceName: r.company.sourceName,
      sourceVersion: r.company.sourceVersion,
      branchId: r.company.branchId,
      userGivenBranchId: null,
    });
    expect(d.coreDocument.header.documentNumber).to.equal('P-0');
    expect(d.coreDocument.parties.buyer.peppolId).to.equal(r.tin);
    expect(d.artifacts.invoiceXmlEncoding).to.equal('base64');
    const xml = Buffer.from(d.artifacts.invoiceXmlBase64, 'base64');
    expect(xml.toString()).to.contain('<cbc:ID>P-0</cbc:ID>');
    expect(d.artifacts.invoiceXmlBytes).to.equal(xml.byteLength);
  });

  it('the single read answers 404 NOT_FOUND for unknown, malformed, foreign and sales ids; 422 without type', async () => {
    errorOf(await r.read('pur_00000000000000000000000000000000'), 404, 'NOT_FOUND');
    errorOf(await r.read('not-an-id'), 404, 'NOT_FOUND');
    errorOf(await r.read(`${ids[0]}x`), 404, 'NOT_FOUND');
    errorOf(await other.read(ids[0]!), 404, 'NOT_FOUND');
    errorOf(await r.read(ids[0]!, ''), 422, 'VALIDATION_ERROR');
    errorOf(await r.read(ids[0]!, 'receipts'), 422, 'VALIDATION_ERROR');
    // A sales document of the same workspace is no purchase.
    const u: UnifyTenant = await unifyTenant(t);
    const submitted = await u.submit(u.request(uaeInvoice()));
    expect(submitted.status).to.equal(200);
    const salesId: string = submitted.json.documentId;
    expect((await u.status(salesId, 'read', 'sales')).status).to.equal(200);
    errorOf(await u.status(salesId, 'read', 'purchases'), 404, 'NOT_FOUND');
    // And a purchase id is no sales document.
    errorOf(await r.read(ids[0]!, 'sales'), 404, 'NOT_FOUND');
  });

  it('the same transmission received twice is stored once', async () => {
    const again = await storePurchase(t, r, { number: 'P-0', storedAt: new Date() });
    expect(again.duplicate).to.equal(true);
    expect(again.documentId).to.equal(ids[0]);
    const [row] = await testDb().knex('purchase_invoices').where({ workspace_id: r.workspaceId, invoice_number: 'P-0' }).count({ n: '*' });
    expect(Number(row!.n)).to.equal(1);
    const events = await t.service.runtime.store.readStream(`purchase-${ids[0]}`);
    expect(events.map((e) => e.type)).to.deep.equal(['PurchaseInvoiceReceived', 'PurchaseInvoiceStored']);
    // Another sender with the same number is another document.
    const otherSender = await storePurchase(t, r, { number: 'P-0', storedAt: day('2026-03-05'), sellerTin: '1002345679' });
    expect(otherSender.duplicate).to.equal(false);
    expect(otherSender.documentId).to.not.equal(ids[0]);
  });

  it('counts: purchaseCount per company in GET /v3/connect/invoices/counts, on storage days', async () => {
    const counts = (q: string) => call(`${t.url}/v3/connect/invoices/counts${q}`, { headers: { 'x-api-key': r.apiKey, 'x-environment': 'sandbox' } });
    const res = await counts('?from=2026-03-01&to=2026-03-03');
    expect(res.status, res.text).to.equal(200);
    expect(res.json.data).to.include({ purchaseCount: 25, salesCount: 0, totalCount: 25 });
    expect(res.json.data.companies).to.deep.equal([{ companyId: r.company.companyId, totalCount: 25, salesCount: 0, purchaseCount: 25 }]);
    const onlyPurchases = await counts('?documentType=purchases');
    expect(onlyPurchases.json.data.purchaseCount).to.be.at.least(29);
    const onlySales = await counts('?documentType=sales');
    expect(onlySales.json.data.purchaseCount).to.equal(0);
  });

  it('the purchases read model rebuilds from the log into the same rows, storedAt included (any batch size)', async () => {
    const knex = testDb().knex;
    const snapshot = async () => ({
      rows: await knex('purchase_invoices').orderBy('document_id').select('*', knex.raw('(extract(epoch from stored_at) * 1000000)::bigint::text as us')),
      clock: await knex('purchase_store_clock').orderBy(['workspace_id', 'environment']).select('workspace_id', 'environment', knex.raw('(extract(epoch from last_stored_at) * 1000000)::bigint::text as us')),
    });
    const live = await snapshot();
    expect(live.rows.length).to.be.at.least(30);
    await rebuildProjection(knex, t.service.runtime.store, purchasesProjection, { batchSize: 7 });
    expect(await snapshot()).to.deep.equal(live);
    const page = await r.list('?type=purchases&from=2026-03-01&to=2026-03-03&limit=100');
    expect(page.json.data.items.map((i: any) => i.documentId).sort()).to.deep.equal([...ids].sort());
  });

  it('the exact XML is stored once as an artifact beside the log; a purchase received before (v1: the bytes inline in the event) reads the same', async () => {
    const store = t.service.runtime.store;
    const [received, stored] = await store.readStream(`purchase-${ids[1]}`);
    expect(received!.schemaVersion).to.equal(2);
    const data = received!.data as { xml: { sha256: string; inlineBase64?: string }; xmlSha256: string; xmlBytes: number };
    expect(data).to.not.have.property('xmlBase64');
    expect(data.xml).to.deep.equal({ sha256: data.xmlSha256 });
    const bytes = (await store.readArtifacts([data.xmlSha256])).get(data.xmlSha256)!;
    expect(bytes.byteLength).to.equal(data.xmlBytes);
    expect(bytes.toString()).to.contain('<cbc:ID>P-1</cbc:ID>');
    // The same purchase as an older service wrote it, under another id (in 2027, outside the other tests' days).
    const documentId = `pur_${'e'.repeat(32)}`;
    const at = '2027-01-05T10:00:00.000Z';
    const { xml: _xml, ...rest } = data;
    const v1 = { ...rest, documentId, xmlBase64: bytes.toString('base64'), receivedAt: at };
    const metadata = { ...stored!.metadata, occurredAt: at };
    const position = (
      await store.append(
        `purchase-${documentId}`,
        [
          { ...newEvent('PurchaseInvoiceReceived', v1), schemaVersion: 1, metadata },
          { ...newEvent('PurchaseInvoiceStored', { ...(stored!.data as object), documentId, receivedAt: at, storedAt: at }), schemaVersion: stored!.schemaVersion, metadata },
        ],
        'no_stream',
      )
    ).position;
    await t.settle(position);
    const old = await r.read(documentId);
    expect(old.status, old.text).to.equal(200);
    const now = await r.read(ids[1]!);
    expect(old.json.data.artifacts).to.deep.equal(now.json.data.artifacts);
    expect(Buffer.from(old.json.data.artifacts.invoiceXmlBase64, 'base64').equals(bytes)).to.equal(true);
  });
});
