import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { clientFor, connectError, newClient, type Client } from './support.js';

const COUNTS = '/v3/connect/invoices/counts';

describe('Connect: GET /v3/connect/invoices/counts', function () {
  this.timeout(60000);
  let t: TestService;
  let c: Client;
  let prodCompany: Record<string, any>;
  let sandboxCompany: Record<string, any>;

  /** What the Unify and purchases capabilities will write into the shared documents read model. */
  async function document(d: { workspaceId: string; environment?: string; companyId?: string | null; country?: string; direction: 'sales' | 'purchase'; base?: string; createdAt: string }) {
    await testDb().knex('documents').insert({
      document_id: `doc_${randomUUID()}`,
      workspace_id: d.workspaceId,
      environment: d.environment ?? 'production',
      company_id: d.companyId ?? null,
      country: d.country ?? 'AE',
      direction: d.direction,
      document_base: d.base ?? 'tax_invoice',
      document_number: null,
      created_at: d.createdAt,
    });
  }

  before(async () => {
    t = await startTestService();
    c = await newClient(t);
    // A production company is onboarded with a production key of the same workspace (docs/api/http.md).
    const prodKey = await t.key(c.workspaceId, { environment: 'production' });
    prodCompany = await clientFor(t, { workspaceId: c.workspaceId, ...prodKey }).onboard({ platformEnvironment: 'production' });
    sandboxCompany = await c.onboard({ platformEnvironment: 'sandbox' });
  });
  after(async () => t.close());

  it('answers zeros while no documents exist, with the per-company breakdown and meta.filters', async () => {
    const r = await c.get(COUNTS);
    expect(r.status).to.equal(200);
    expect(r.json.data).to.deep.equal({
      totalCount: 0,
      salesCount: 0,
      purchaseCount: 0,
      companies: [{ companyId: prodCompany.companyId, totalCount: 0, salesCount: 0, purchaseCount: 0 }],
    });
    expect(r.json.meta.filters).to.deep.equal({ countryCode: null, environment: 'production', companyId: null, documentType: null, from: null, to: null });
    const sandbox = await c.get(COUNTS, { 'x-environment': 'sandbox' });
    expect(sandbox.json.data.companies.map((x: any) => x.companyId)).to.deep.equal([sandboxCompany.companyId]);
    expect(sandbox.json.meta.filters.environment).to.equal('sandbox');
  });

  describe('with documents in the read model', () => {
    before(async () => {
      const ws = c.workspaceId;
      const p = prodCompany.companyId;
      await document({ workspaceId: ws, companyId: p, direction: 'sales', createdAt: '2026-03-01T00:00:00Z' });
      await document({ workspaceId: ws, companyId: p, direction: 'sales', base: 'credit_note', createdAt: '2026-03-15T12:00:00Z' });
      await document({ workspaceId: ws, companyId: p, direction: 'purchase', createdAt: '2026-03-31T23:59:59.999Z' });
      await document({ workspaceId: ws, companyId: p, direction: 'purchase', createdAt: '2026-04-01T00:00:00Z' });
      await document({ workspaceId: ws, companyId: p, direction: 'sales', country: 'SA', createdAt: '2026-03-10T00:00:00Z' });
      await document({ workspaceId: ws, companyId: null, direction: 'purchase', createdAt: '2026-03-10T00:00:00Z' });
      await document({ workspaceId: ws, companyId: sandboxCompany.companyId, environment: 'sandbox', direction: 'sales', createdAt: '2026-03-10T00:00:00Z' });
      const other = await newClient(t);
      await document({ workspaceId: other.workspaceId, companyId: p, direction: 'sales', createdAt: '2026-03-10T00:00:00Z' });
    });

    it('counts sales and purchases of the workspace in the environment (production by default)', async () => {
      const r = await c.get(COUNTS);
      expect(r.json.data).to.deep.include({ totalCount: 6, salesCount: 3, purchaseCount: 3 });
      expect(r.json.data.companies).to.deep.equal([{ companyId: prodCompany.companyId, totalCount: 5, salesCount: 3, purchaseCount: 2 }]);
      const sandbox = await c.get(COUNTS, { 'x-environment': 'sandbox' });
      expect(sandbox.json.data).to.deep.include({ totalCount: 1, salesCount: 1, purchaseCount: 0 });
    });

    it('filters by countryCode, companyId, documentType and an inclusive UTC date range', async () => {
      const ae = await c.get(`${COUNTS}?countryCode=AE`);
      expect(ae.json.data).to.deep.include({ totalCount: 5, salesCount: 2, purchaseCount: 3 });
      const company = await c.get(`${COUNTS}?companyId=${prodCompany.companyId}&countryCode=AE`);
      expect(company.json.data).to.deep.include({ totalCount: 4, salesCount: 2, purchaseCount: 2 });
      expect(company.json.meta.filters).to.deep.equal({
        countryCode: 'AE',
        environment: 'production',
        companyId: prodCompany.companyId,
        documentType: null,
        from: null,
        to: null,
      });
      const march = await c.get(`${COUNTS}?countryCode=AE&from=2026-03-01&to=2026-03-31`);
      expect(march.json.data).to.deep.include({ totalCount: 4, salesCount: 2, purchaseCount: 2 });
      const oneDay = await c.get(`${COUNTS}?from=2026-04-01&to=2026-04-01`);
      expect(oneDay.json.data).to.deep.include({ totalCount: 1, purchaseCount: 1 });
      const sales = await c.get(`${COUNTS}?documentType=sales`);
      expect(sales.json.data).to.deep.include({ totalCount: 3, salesCount: 3, purchaseCount: 0 });
      expect(sales.json.meta.filters.documentType).to.equal('sales');
      const credit = await c.get(`${COUNTS}?documentType=credit_note`);
      expect(credit.json.data).to.deep.include({ totalCount: 1, salesCount: 1 });
    });
  });

  for (const [what, query, headers, status, code, path] of [
    ['an unknown X-Environment', '', { 'x-environment': 'staging' }, 400, 'CONNECT_INVALID_ENVIRONMENT', ['headers', 'X-Environment']],
    ['simulation as X-Environment', '', { 'x-environment': 'simulation' }, 400, 'CONNECT_INVALID_ENVIRONMENT', ['headers', 'X-Environment']],
    ['an unsupported countryCode', '?countryCode=FR', {}, 400, 'CONNECT_UNSUPPORTED_COUNTRY', ['query', 'countryCode']],
    ['a malformed countryCode', '?countryCode=A1', {}, 400, 'CONNECT_VALIDATION_ERROR', ['query', 'countryCode']],
    ['a malformed companyId', '?companyId=xyz', {}, 400, 'CONNECT_VALIDATION_ERROR', ['query', 'companyId']],
    ['an unknown documentType', '?documentType=receipt', {}, 400, 'CONNECT_VALIDATION_ERROR', ['query', 'documentType']],
    ['a malformed from', '?from=2026-02-30', {}, 400, 'CONNECT_VALIDATION_ERROR', ['query', 'from']],
    ['a date-time to', '?to=2026-02-01T00:00:00Z', {}, 400, 'CONNECT_VALIDATION_ERROR', ['query', 'to']],
    ['from after to', '?from=2026-03-02&to=2026-03-01', {}, 400, 'CONNECT_VALIDATION_ERROR', ['query', 'from']],
    ['an unknown parameter', '?environment=sandbox', {}, 400, 'CONNECT_VALIDATION_ERROR', ['query', 'environment']],
    ['an unknown company', `?companyId=${'f'.repeat(24)}`, {}, 404, 'CONNECT_COMPANY_NOT_FOUND', ['query', 'companyId']],
  ] as const) {
    it(`refuses ${what}`, async () => {
      const r = await c.get(`${COUNTS}${query}`, headers);
      expect(r.status).to.equal(status);
      expect(connectError(r)).to.deep.include({ code, path });
    });
  }
});
