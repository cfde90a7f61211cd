import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sampleDocument } from '../../domain/validation/index.js';
import { ElasticsearchSearchIndex } from '../../readmodels/search/elasticsearch.js';
import { MAX_RESULT_WINDOW } from '../../readmodels/search/port.js';
import { elasticsearchReachable, NO_ELASTICSEARCH, requireElasticsearch } from '../search/support.js';
import { expectFamilyShape } from '../support/envelope-shapes.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber, unifyTenant, type UnifyTenant } from '../unify/support.js';

/**
 * POST /invoices/query against the real server (docs/api/invoice-query.md, docs/api/http.md): every rule, every
 * 400, authentication, environments, isolation, paging and read-your-writes after a submit.
 * Once on the PostgreSQL index and once on Elasticsearch (ELASTICSEARCH_URL; without it
 * "skipped: no Elasticsearch", and with CI=true a failure).
 */
querySuite('postgres');
querySuite('elasticsearch');

function querySuite(engine: 'postgres' | 'elasticsearch') {
describe(`POST /invoices/query (docs/api/invoice-query.md) on ${engine}`, function () {
  this.timeout(120000);
  let t: TestService;
  let a: UnifyTenant;
  let b: UnifyTenant;
  let keys: { readOnly: string; production: string };
  const docs: { id: string; number: string; issueDate: string; seller: string; amount: number; currency: string }[] = [];
  let rejectedId = '';
  let tag = '';

  const query = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${a.apiKey}` }) =>
    call(`${t.url}/invoices/query`, { method: 'POST', headers, body });
  const base = (extra: Record<string, unknown> = {}) => ({ country: 'AE', type: 'sales', environment: 'sandbox', ...extra });

  async function submit(u: UnifyTenant, o: { issueDate: string; seller: string; number?: string }) {
    const number = o.number ?? freshNumber(tag);
    const payload = sampleDocument('AE', { lines: 2, documentNumber: number, issueDate: o.issueDate }) as Record<string, any>;
    payload.parties.seller.name = o.seller;
    const r = await u.submit(u.request(payload));
    expect(r.status, r.text).to.equal(200);
    return { id: r.json.documentId as string, number, issueDate: o.issueDate, seller: o.seller, amount: payload.totals.totalAmountIncludingTax as number, currency: payload.header.currency as string };
  }

  const prefix = `test-q-${process.pid}-${randomUUID().slice(0, 8)}`;
  before(async function () {
    if (engine === 'elasticsearch') {
      const url = process.env.ELASTICSEARCH_URL;
      if (!url || !(await elasticsearchReachable(url))) {
        if (requireElasticsearch) throw new Error(`CI=true but no Elasticsearch answers at ELASTICSEARCH_URL (${url ?? 'unset'})`);
        console.log(`      skipped: ${NO_ELASTICSEARCH}`);
        this.skip();
      }
      t = await startTestService({ config: (c) => ({ ...c, search: { engine, elasticsearchUrl: url!, elasticsearchIndexPrefix: prefix } }) });
    } else {
      t = await startTestService();
    }
    a = await unifyTenant(t);
    b = await unifyTenant(t);
    tag = `Q${Date.now().toString(36)}`;
    keys = {
      readOnly: (await t.key(a.client.workspaceId, { permission: 'read' })).apiKey,
      production: (await t.key(a.client.workspaceId, { environment: 'production' })).apiKey,
    };
    const plan = [
      { issueDate: '2026-01-10', seller: 'Acme Trading LLC' },
      { issueDate: '2026-01-12', seller: 'Blue Dunes Supplies' },
      { issueDate: '2026-01-12', seller: 'ACME Logistics FZE' },
      { issueDate: '2026-01-15', seller: 'Creek Side Foods' },
      { issueDate: '2026-01-20', seller: 'Desert Rose 100% Co' },
    ];
    for (const p of plan) docs.push(await submit(a, p));
    // A rejected document (stored as needing correction, with its validation report).
    const bad = sampleDocument('AE', { lines: 1, documentNumber: freshNumber(tag), issueDate: '2026-01-05' }) as Record<string, any>;
    delete bad.header.currency;
    const r = await a.submit(a.request(bad));
    expect(r.status, r.text).to.equal(422);
    rejectedId = r.json.documentId;
    // Another workspace, same dates and names.
    await submit(b, { issueDate: '2026-01-10', seller: 'Acme Trading LLC' });
  });
  after(async () => {
    if (!t) return;
    await t.close();
    if (engine === 'elasticsearch') {
      const indices = ElasticsearchSearchIndex.connect(process.env.ELASTICSEARCH_URL!, { prefix });
      await indices.dropAll();
      await indices.close();
    }
  });

  describe('finding documents', () => {
    it('read-your-writes: a query right after a submit answer finds the document', async () => {
      const d = await submit(a, { issueDate: '2026-02-01', seller: 'Fresh Read LLC' });
      const r = await query(base({ filters: [{ id: 'documentId', value: [d.id] }] }));
      expect(r.status, r.text).to.equal(200);
      expect(r.json.data.documents.map((x: any) => x.documentId)).to.deep.equal([d.id]);
      docs.push(d);
    });

    it('default order: newest issue date first, documentId breaks ties; pagination', async () => {
      const r = await query(base({ limit: 100 }));
      expect(r.status, r.text).to.equal(200);
      expect(r.json.status).to.equal('success');
      const ids = r.json.data.documents.map((x: any) => x.documentId);
      const expected = [...docs.map((d) => ({ id: d.id, date: d.issueDate })), { id: rejectedId, date: '2026-01-05' }]
        .sort((x, y) => (x.date === y.date ? (x.id < y.id ? -1 : 1) : x.date < y.date ? 1 : -1))
        .map((x) => x.id);
      expect(ids).to.deep.equal(expected);
      expect(r.json.pagination).to.deep.equal({ page: 1, perPage: 100, total: expected.length, totalPages: 1 });
    });

    it('paging is stable: every page in turn gives the whole list once, in order', async () => {
      const all = (await query(base({ limit: 100 }))).json.data.documents.map((x: any) => x.documentId);
      const paged: string[] = [];
      for (let page = 1; ; page++) {
        const r = await query(base({ page, limit: 2 }));
        expect(r.json.pagination).to.include({ page, perPage: 2, total: all.length, totalPages: Math.ceil(all.length / 2) });
        paged.push(...r.json.data.documents.map((x: any) => x.documentId));
        if (page >= r.json.pagination.totalPages) break;
      }
      expect(paged).to.deep.equal(all);
      const beyond = await query(base({ page: 50, limit: 2 }));
      expect(beyond.status).to.equal(200);
      expect(beyond.json.data.documents).to.deep.equal([]);
      expect(beyond.json.pagination.total).to.equal(all.length);
    });

    it('filters: date range, currency any-of, amount range, status, modifiers (empty adds nothing), existence', async () => {
      const ids = async (filters: unknown[]) => {
        const r = await query(base({ filters, limit: 100 }));
        expect(r.status, r.text).to.equal(200);
        return new Set(r.json.data.documents.map((x: any) => x.documentId));
      };
      expect(await ids([{ id: 'coreDocument.header.issueDate', range: { gte: '2026-01-12', lte: '2026-01-15' } }])).to.deep.equal(new Set([docs[1]!.id, docs[2]!.id, docs[3]!.id]));
      expect((await ids([{ id: 'coreDocument.header.currency', value: ['aed', docs[0]!.currency] }])).has(docs[0]!.id)).to.equal(true);
      const amount = docs[0]!.amount;
      expect((await ids([{ id: 'coreDocument.totals.totalAmountIncludingTax', range: { gte: amount, lte: amount } }])).has(docs[0]!.id)).to.equal(true);
      expect(await ids([{ id: 'coreDocument.meta.statuses.document.current', value: ['NEEDS_CORRECTION'] }])).to.deep.equal(new Set([rejectedId]));
      expect(await ids([{ id: 'coreDocument.meta.statuses.userfacing', value: ['Needs Correction'] }])).to.deep.equal(new Set([rejectedId]));
      const every = await ids([]);
      expect(await ids([{ id: 'documentType.modifiers', value: [] }])).to.deep.equal(every);
      expect(await ids([{ id: 'documentType.base', value: ['tax_invoice'] }])).to.deep.equal(every);
      expect(await ids([{ id: 'documentType.variants', exists: true }])).to.deep.equal(new Set());
      expect(await ids([{ id: 'coreDocument.header.currency', exists: false }])).to.deep.equal(new Set([rejectedId]));
    });

    it('searches: case-insensitive substrings, every search must match, wildcard characters literal', async () => {
      const ids = async (searches: unknown[]) => new Set((await query(base({ searches, limit: 100 }))).json.data.documents.map((x: any) => x.documentId));
      expect(await ids([{ field: 'coreDocument.parties.seller.name', term: 'acme' }])).to.deep.equal(new Set([docs[0]!.id, docs[2]!.id]));
      expect(await ids([{ field: 'coreDocument.parties.seller.name', term: 'acme' }, { field: 'coreDocument.parties.seller.name', term: 'LOGISTICS' }])).to.deep.equal(new Set([docs[2]!.id]));
      expect(await ids([{ field: 'coreDocument.parties.seller.name', term: '100%' }])).to.deep.equal(new Set([docs[4]!.id]));
      expect(await ids([{ field: 'coreDocument.parties.seller.name', term: 'A%e' }])).to.deep.equal(new Set());
      expect(await ids([{ field: 'coreDocument.header.documentNumber', term: docs[3]!.number.slice(-8).toLowerCase() }])).to.deep.equal(new Set([docs[3]!.id]));
    });

    it('sort by an exact key, ascending and descending', async () => {
      const amounts = async (order: string) =>
        (await query(base({ sort: { field: 'coreDocument.totals.totalAmountIncludingTax', order }, limit: 100, columns: ['totals.totalAmountIncludingTax'] }))).json.data.documents
          .map((x: any) => x.coreDocument.totals?.totalAmountIncludingTax)
          .filter((x: unknown) => x !== undefined);
      const asc = await amounts('asc');
      expect(asc).to.deep.equal([...asc].sort((x, y) => x - y));
      const desc = await amounts('desc');
      expect(desc).to.deep.equal([...asc].reverse());
      const byId = (await query(base({ sort: { field: 'documentId', order: 'asc' }, limit: 100 }))).json.data.documents.map((x: any) => x.documentId);
      expect(byId).to.deep.equal([...byId].sort());
    });

    it('workspace and environment isolation', async () => {
      const mine = new Set(docs.map((d) => d.id).concat(rejectedId));
      const other = await query(base({ limit: 100 }), { authorization: `Bearer ${b.apiKey}` });
      expect(other.json.data.documents).to.have.length(1);
      expect(mine.has(other.json.data.documents[0].documentId)).to.equal(false);
      const byId = await query(base({ filters: [{ id: 'documentId', value: [docs[0]!.id] }] }), { authorization: `Bearer ${b.apiKey}` });
      expect(byId.json.data.documents).to.deep.equal([]);
      const production = await query(base({ environment: 'production' }), { 'x-api-key': keys.production });
      expect(production.status, production.text).to.equal(200);
      expect(production.json.data.documents).to.deep.equal([]);
      const simulation = await query(base({ environment: 'simulation' }));
      expect(simulation.status).to.equal(200);
      expect(simulation.json.pagination.total).to.equal(0);
    });
  });

  describe('country (the body\'s country narrows every query)', () => {
    it('a document of another country in the same workspace and environment is not returned', async () => {
      const number = freshNumber(`${tag}C`);
      const payload = sampleDocument('BE', { lines: 1, documentNumber: number, issueDate: '2026-01-14' });
      const r = await a.submit(a.request(payload, { country: 'BE' }));
      expect(r.status, r.text).to.equal(200);
      const id = r.json.documentId as string;
      const asAE = await query(base({ limit: 100 }));
      expect(asAE.status, asAE.text).to.equal(200);
      expect(asAE.json.data.documents.map((x: any) => x.documentId)).to.not.include(id);
      for (const d of asAE.json.data.documents) expect(d.country).to.equal('AE');
      expect((await query(base({ filters: [{ id: 'documentId', value: [id] }] }))).json.data.documents).to.deep.equal([]);
      const asBE = await query(base({ country: 'BE', limit: 100 }));
      expect(asBE.json.data.documents.map((x: any) => x.documentId)).to.deep.equal([id]);
      expect(asBE.json.data.documents[0].country).to.equal('BE');
      expect(asBE.json.pagination.total).to.equal(1);
      // A country nobody submitted in: nothing, and the field itself cannot be named.
      expect((await query(base({ country: 'DE' }))).json.pagination.total).to.equal(0);
      for (const [body, path] of [
        [base({ filters: [{ id: 'country', value: ['BE'] }] }), ['filters', 0, 'id']],
        [base({ sort: { field: 'country' } }), ['sort', 'field']],
      ] as const) {
        const bad = await query(body);
        expect(bad.status, bad.text).to.equal(400);
        expect(bad.json.path).to.deep.equal(path);
        expect(bad.json.message).to.match(/unsupported field "country"/);
      }
    });
  });

  describe('receipts (MY, variant receipt)', () => {
    it('are indexed as type receipts: flat paths, core fields at the root, countryDocumentStatus ISSUED', async () => {
      const number = freshNumber(`${tag}R`);
      const documentType = { base: 'tax_invoice', modifiers: [], variant: 'receipt' };
      const payload = sampleDocument('MY', { lines: 1, documentNumber: number, issueDate: '2026-01-18', documentType });
      const r = await a.submit(a.request(payload, { country: 'MY', documentType }));
      expect(r.status, r.text).to.equal(200);
      const sales = await query(base({ filters: [{ id: 'documentId', value: [r.json.documentId] }] }));
      expect(sales.json.data.documents).to.deep.equal([]);
      const found = await query(base({ country: 'MY', type: 'receipts', filters: [{ id: 'countryDocumentStatus', value: ['ISSUED'] }], searches: [{ field: 'header.documentNumber', term: number }] }));
      expect(found.status, found.text).to.equal(200);
      expect(found.json.data.documents).to.have.length(1);
      const [d] = found.json.data.documents;
      expect(d.documentId).to.equal(r.json.documentId);
      expect(d).to.not.have.property('coreDocument');
      expect(d.header.documentNumber).to.equal(number);
      expect(d.documentType).to.deep.equal({ base: 'tax_invoice', modifiers: [], variants: ['receipt'] });
      expect(d.countryDocumentStatus).to.equal('ISSUED');
      expect(d.meta.coreValidation.success).to.equal(true);
      expect(d).to.not.have.property('statusHistory');
      const shaped = await query(base({ country: 'MY', type: 'receipts', filters: [{ id: 'documentId', value: [r.json.documentId] }], columns: ['parties.buyer.name'] }));
      expect(shaped.json.data.documents[0]).to.have.all.keys('documentId', 'documentType', 'parties', 'meta', 'countryDocumentStatus');
    });
  });

  describe('returned documents (docs/api/invoice-query.md)', () => {
    it('no columns: the stored document, without statusHistory, internal statuses or histories', async () => {
      const r = await query(base({ filters: [{ id: 'documentId', value: [rejectedId] }] }));
      const [d] = r.json.data.documents;
      expect(d).to.have.all.keys('documentId', 'documentType', 'country', 'coreDocument');
      expect(d.country).to.equal('AE');
      expect(d.documentType).to.deep.equal({ base: 'tax_invoice', modifiers: [], variants: [] });
      expect(d.coreDocument).to.include.keys('header', 'parties', 'lineItems', 'totals', 'meta');
      expect(d.coreDocument.meta.statuses).to.deep.equal({
        document: { current: 'NEEDS_CORRECTION' },
        delivery: { current: 'NOT_STARTED' },
        business: { current: 'NOT_STARTED' },
        userfacing: 'Needs Correction',
      });
      const report = d.coreDocument.meta.coreValidation;
      expect(report).to.include.keys('success', 'errors', 'warnings', 'metadata', 'validatedAt');
      expect(report.success).to.equal(false);
      expect(report.errors.length).to.be.greaterThan(0);
      expect(d.coreDocument.meta.source).to.have.keys('name', 'version');
    });

    it('columns: the selected fields plus documentId, documentType, meta.source and current statuses', async () => {
      const r = await query(base({ filters: [{ id: 'documentId', value: [docs[0]!.id] }], columns: ['header.documentNumber', 'parties.seller.name', 'lineItems[].name'] }));
      expect(r.status, r.text).to.equal(200);
      const [d] = r.json.data.documents;
      expect(d).to.have.all.keys('documentId', 'documentType', 'coreDocument');
      expect(d.documentType).to.deep.equal({ base: 'tax_invoice', modifiers: [] });
      expect(d.coreDocument).to.have.all.keys('header', 'parties', 'lineItems', 'meta');
      expect(d.coreDocument.header).to.deep.equal({ documentNumber: docs[0]!.number });
      expect(d.coreDocument.parties).to.deep.equal({ seller: { name: 'Acme Trading LLC' } });
      expect(d.coreDocument.lineItems.every((l: any) => Object.keys(l).join() === 'name')).to.equal(true);
      expect(d.coreDocument.meta).to.have.all.keys('source', 'statuses');
      expect(d.coreDocument.meta.statuses).to.have.all.keys('document', 'delivery', 'business', 'userfacing');
      const wild = await query(base({ filters: [{ id: 'documentId', value: [docs[0]!.id] }], columns: ['meta.*', 'totals.*'] }));
      expect(wild.json.data.documents[0].coreDocument.meta).to.not.have.property('coreValidation');
      expect(wild.json.data.documents[0].coreDocument.totals).to.include.keys('totalAmountIncludingTax', 'totalTaxAmount');
      const report = await query(base({ filters: [{ id: 'documentId', value: [docs[0]!.id] }], columns: ['meta.coreValidation'] }));
      expect(report.json.data.documents[0].coreDocument.meta.coreValidation.success).to.equal(true);
    });

    it('a state change reaches the index: delivery moves the document to COMPLIANT', async () => {
      const d = docs[0]!;
      const deadline = Date.now() + 30000;
      for (;;) {
        const r = await query(base({ filters: [{ id: 'documentId', value: [d.id] }, { id: 'coreDocument.meta.statuses.document.current', value: ['COMPLIANT'] }] }));
        if (r.json.data.documents.length === 1) {
          expect(r.json.data.documents[0].coreDocument.meta.statuses).to.deep.equal({
            document: { current: 'COMPLIANT' },
            delivery: { current: 'DELIVERED' },
            business: { current: 'ACCEPTED' },
            userfacing: 'Compliant',
          });
          break;
        }
        if (Date.now() > deadline) throw new Error('the document never became COMPLIANT in the index');
        await new Promise((r) => setTimeout(r, 200));
      }
    });
  });

  describe('authentication and environments (docs/api/http.md)', () => {
    it('Bearer and X-API-Key both work; read-only keys may query', async () => {
      for (const headers of [{ authorization: `Bearer ${a.apiKey}` }, { 'x-api-key': a.apiKey }, { 'x-api-key': keys.readOnly }] as Record<string, string>[]) {
        const r = await query(base(), headers);
        expect(r.status, r.text).to.equal(200);
      }
    });
    it('missing, wrong or doubled keys answer 401 JSON', async () => {
      const missing = await query(base(), {});
      expect(missing.status).to.equal(401);
      expect(missing.json).to.deep.equal({ code: 'authentication_required', message: 'Authentication required.' });
      const wrong = await query(base(), { 'x-api-key': 'eik_test_nope' });
      expect(wrong.status).to.equal(401);
      expect(wrong.json.code).to.equal('invalid_api_key');
      const both = await query(base(), { 'x-api-key': a.apiKey, authorization: `Bearer ${a.apiKey}` });
      expect(both.status).to.equal(401);
    });
    it('an environment the key does not serve answers 403', async () => {
      const r = await query(base({ environment: 'production' }));
      expect(r.status).to.equal(403);
      expect(r.json).to.include({ success: false, code: 'permission_denied' });
      expect(r.json.path).to.deep.equal(['environment']);
      for (const environment of ['sandbox', 'simulation']) {
        const p = await query(base({ environment }), { 'x-api-key': keys.production });
        expect(p.status, environment).to.equal(403);
      }
    });
  });

  describe('bad input answers 400 naming the entry (never a 500)', () => {
    const expect400 = async (body: unknown, path: (string | number)[] | null, message?: RegExp) => {
      const r = await query(body);
      expectFamilyShape('/invoices/query', {}, r);
      expect(r.status, r.text).to.equal(400);
      expect(r.json).to.include({ success: false, code: 'VALIDATION_ERROR' });
      expect(r.json.requestId).to.be.a('string');
      if (path) expect(r.json.path, r.text).to.deep.equal(path);
      if (message) expect(r.json.message, r.text).to.match(message);
      return r;
    };

    it('page and limit', async () => {
      await expect400(base({ page: 0 }), ['page']);
      await expect400(base({ page: -1 }), ['page']);
      await expect400(base({ page: 1.5 }), ['page']);
      await expect400(base({ page: '2' }), ['page']);
      await expect400(base({ page: 1e300 }), ['page']);
      await expect400(base({ page: MAX_RESULT_WINDOW, limit: 20 }), ['page'], /deepest/);
      await expect400(base({ limit: 0 }), ['limit']);
      await expect400(base({ limit: 101 }), ['limit'], /at most 100/);
      await expect400(base({ limit: '20' }), ['limit']);
      await expect400(base({ limit: null }), ['limit']);
      const ok = await query(base({ page: MAX_RESULT_WINDOW / 100, limit: 100 }));
      expect(ok.status).to.equal(200);
    });

    it('bodies of the wrong type and missing or bad required fields', async () => {
      for (const body of [[], 'x', 5, null, true, {}]) await expect400(body, null);
      await expect400({ type: 'sales', environment: 'sandbox' }, ['country']);
      await expect400(base({ country: 'ae' }), ['country']);
      await expect400(base({ country: 'XX' }), ['country'], /not supported/);
      await expect400(base({ type: 'invoices' }), ['type']);
      await expect400(base({ environment: 'prod' }), ['environment']);
      await expect400(base({ filters: {} }), ['filters']);
      await expect400(base({ filters: [null] }), ['filters', 0]);
      await expect400(base({ searches: 'x' }), ['searches']);
      await expect400(base({ columns: [1] }), ['columns', 0]);
      await expect400(base({ sort: 'documentId' }), ['sort']);
      await expect400(base({ filter: [] }), ['filter'], /unknown field "filter"/);
      const raw = await call(`${t.url}/invoices/query`, { method: 'POST', headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' }, rawBody: '{"country":' });
      expect(raw.status).to.equal(400);
      expect(raw.json.success).to.equal(false);
    });

    const FILTERS: [string, unknown, (string | number)[], RegExp][] = [
      ['sales', { id: 'header.issueDate', value: ['2026-01-01'] }, ['filters', 0, 'id'], /coreDocument\.header\.issueDate/],
      ['receipts', { id: 'coreDocument.header.issueDate', value: ['2026-01-01'] }, ['filters', 0, 'id'], /flat paths/],
      ['sales', { id: 'coreDocument.header.*', value: ['x'] }, ['filters', 0, 'id'], /wildcards/],
      ['sales', { id: '*', exists: true }, ['filters', 0, 'id'], /wildcards/],
      ['sales', { id: 'coreDocument.header.dueDate', value: ['2026-01-01'] }, ['filters', 0, 'id'], /unsupported field/],
      ['sales', { id: 'countryDocumentStatus', value: ['ISSUED'] }, ['filters', 0, 'id'], /unsupported field/],
      ['sales', { id: 'coreDocument.header.issueDate', value: ['2026-13-01'] }, ['filters', 0, 'value', 0], /YYYY-MM-DD/],
      ['sales', { id: 'coreDocument.totals.totalAmountIncludingTax', range: { gte: 'ten' } }, ['filters', 0, 'range', 'gte'], /number/],
      ['sales', { id: 'coreDocument.header.currency', range: { gte: 'A' } }, ['filters', 0, 'range'], /dates and numbers/],
      ['sales', { id: 'documentId', value: 'doc' }, ['filters', 0, 'value'], /array/],
      ['sales', { id: 'documentId' }, ['filters', 0], /exactly one/],
      ['purchases', { id: 'parties.seller.name', value: ['x'] }, ['filters', 0, 'id'], /coreDocument\./],
    ];
    for (const [type, filter, path, message] of FILTERS) {
      it(`filter ${type} ${JSON.stringify(filter)}`, async () => {
        const r = await expect400(base({ type, filters: [filter] }), path, message);
        expect(r.json.message).to.contain('filters[0]');
      });
    }

    const SEARCHES: [string, unknown, (string | number)[], RegExp][] = [
      ['sales', { field: 'coreDocument.header.currency', term: 'AED' }, ['searches', 0, 'field'], /cannot be used in searches/],
      ['sales', { field: 'parties.buyer.name', term: 'x' }, ['searches', 0, 'field'], /coreDocument\.parties\.buyer\.name/],
      ['receipts', { field: 'coreDocument.parties.buyer.name', term: 'x' }, ['searches', 0, 'field'], /flat paths/],
      ['sales', { field: 'coreDocument.parties.*', term: 'x' }, ['searches', 0, 'field'], /wildcards/],
      ['sales', { field: 'coreDocument.parties.seller.name', term: '' }, ['searches', 0, 'term'], /non-empty/],
    ];
    for (const [type, search, path, message] of SEARCHES) {
      it(`search ${type} ${JSON.stringify(search)}`, async () => {
        const r = await expect400(base({ type, searches: [search] }), path, message);
        expect(r.json.message).to.contain('searches[0]');
      });
    }

    // Refused at the HTTP boundary every family shares (http/body.ts), with the entry's path.
    it('a NUL character in a filter value or a search term is a 400 naming its path', async () => {
      await expect400(base({ type: 'sales', filters: [{ id: 'documentId', value: ['a\u0000'] }] }), ['filters', 0, 'value', 0], /NUL/);
      await expect400(base({ type: 'sales', searches: [{ field: 'coreDocument.parties.seller.name', term: 'a\u0000b' }] }), ['searches', 0, 'term'], /NUL/);
    });

    const COLUMNS: [string, RegExp][] = [
      ['*', /bare/],
      ['header', /partial name/],
      ['header.issue', /partial name/],
      ['head*', /embedded wildcards/],
      ['header.*.documentNumber', /embedded wildcards/],
      ['foo.*', /unknown section/],
      ['meta.xmlValidation.*', /xmlValidation/],
      ['meta.coreValidation.errors', /sub-fields/],
      ['meta.coreValidation.metadata.*', /inside the validation report/],
      ['coreDocument.header.issueDate', /prefix/],
      ['header.unknownThing', /unsupported column/],
    ];
    for (const [column, message] of COLUMNS) {
      it(`column ${JSON.stringify(column)}`, async () => {
        const r = await expect400(base({ columns: ['header.documentNumber', column] }), ['columns', 1], message);
        expect(r.json.message).to.contain(`columns[1] ${JSON.stringify(column)}`);
      });
    }

    const SORTS: [unknown, (string | number)[], RegExp][] = [
      [{ field: 'coreDocument.header.*', order: 'asc' }, ['sort', 'field'], /wildcards/],
      [{ field: 'header.issueDate', order: 'asc' }, ['sort', 'field'], /coreDocument\.header\.issueDate/],
      [{ field: 'documentType.modifiers', order: 'asc' }, ['sort', 'field'], /cannot be used in sort/],
      [{ field: 'coreDocument.header.issueDate', order: 'sideways' }, ['sort', 'order'], /asc/],
    ];
    for (const [sort, path, message] of SORTS) {
      it(`sort ${JSON.stringify(sort)}`, async () => {
        await expect400(base({ sort }), path, message);
      });
    }

    it('several bad entries are all listed in errors[]', async () => {
      const r = await expect400(base({ filters: [{ id: 'x', value: [] }], columns: ['*'] }), ['filters', 0, 'id']);
      expect(r.json.errors.map((e: any) => e.path)).to.deep.equal([
        ['filters', 0, 'id'],
        ['columns', 0],
      ]);
    });
  });
});
}
