import { expect } from 'chai';
import { setMappingAutoAssign } from '../../commands/connect/settings.js';
import { startTestService, type TestService } from '../support/http.js';
import { connectError, freshName, newClient, sourcePath, type Client } from './support.js';

const COMPANIES = '/v3/connect/companies';
const branch = (n?: number | string) => ({ branchName: `Branch ${n ?? freshName('B')}`, sourceName: freshName('Branch source'), sourceVersion: '1' });

describe('Connect: branches (single and bulk)', function () {
  this.timeout(120000);
  let t: TestService;
  let c: Client;

  before(async () => {
    t = await startTestService();
    c = await newClient(t);
  });
  after(async () => t.close());

  describe('POST /v3/connect/companies/{companyId}/branches', () => {
    it('adds a branch (201) with its own source, in the company environment, with a buyer reference', async () => {
      const d = await c.onboard({ platformEnvironment: 'simulation' });
      const body = branch();
      const r = await c.post(`${COMPANIES}/${d.companyId}/branches`, body);
      expect(r.status, r.text).to.equal(201);
      expect(r.json.data).to.have.all.keys(
        'companyId', 'branchId', 'branchName', 'userGivenBranchId', 'sourceId', 'sourceName', 'sourceVersion',
        'platformEnvironment', 'readyForInvoicing', 'mappingReadiness',
      );
      expect(r.json.data).to.include({ companyId: d.companyId, branchName: body.branchName, sourceName: body.sourceName, sourceVersion: '1', platformEnvironment: 'simulation', readyForInvoicing: true });
      expect(r.json.data.userGivenBranchId).to.not.equal(d.userGivenBranchId);
      expect(r.json.data.branchId).to.not.equal(d.branchId);
      const list = await c.get(`${COMPANIES}?search=${d.tin}`);
      expect(list.json.data).to.have.length(2);
      expect(list.json.meta.pagination.total).to.equal(1);
      expect((await c.get(sourcePath(body.sourceName, '1'))).json.data.branchName).to.equal(body.branchName);
    });

    it('reports ACTION_REQUIRED once automatic mapping assignment is off (future sources only)', async () => {
      const other = await newClient(t);
      const d = await other.onboard();
      const off = await setMappingAutoAssign(t.service.runtime.store, { workspaceId: other.workspaceId, enabled: false, templateId: null }, { now: new Date() });
      expect(off.changed).to.equal(true);
      const r = await other.post(`${COMPANIES}/${d.companyId}/branches`, branch());
      expect(r.json.data.readyForInvoicing).to.equal(false);
      expect(r.json.data.mappingReadiness).to.deep.equal({ status: 'ACTION_REQUIRED', code: 'CONNECT_MAPPING_NOT_CONFIGURED' });
      // The first source keeps its mapping.
      expect((await other.get(sourcePath(d.sourceName, 'v1'))).json.data.readyForInvoicing).to.equal(true);
    });

    it('409 CONNECT_SOURCE_ALREADY_EXISTS for a source name/version in use', async () => {
      const d = await c.onboard();
      const r = await c.post(`${COMPANIES}/${d.companyId}/branches`, { branchName: 'x', sourceName: d.sourceName, sourceVersion: d.sourceVersion });
      expect(r.status).to.equal(409);
      expect(connectError(r)).to.include({ code: 'CONNECT_SOURCE_ALREADY_EXISTS', retryable: false });
    });

    it('400 for a malformed company id, 404 for an unknown one', async () => {
      for (const id of ['abc', 'A'.repeat(24), 'g'.repeat(24), 'a'.repeat(25)]) {
        const r = await c.post(`${COMPANIES}/${id}/branches`, branch());
        expect(r.status).to.equal(400);
        expect(connectError(r)).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path: ['path', 'companyId'] });
      }
      const r = await c.post(`${COMPANIES}/${'0'.repeat(24)}/branches`, branch());
      expect(r.status).to.equal(404);
      expect(connectError(r).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
    });

    for (const [what, body, path] of [
      ['a missing branchName', { sourceName: 'a', sourceVersion: '1' }, ['branchName']],
      ['an empty sourceName', { branchName: 'a', sourceName: '', sourceVersion: '1' }, ['sourceName']],
      ['a missing sourceVersion', { branchName: 'a', sourceName: 'b' }, ['sourceVersion']],
      ['an unknown field', { branchName: 'a', sourceName: 'b', sourceVersion: '1', platformEnvironment: 'production' }, ['platformEnvironment']],
      ['a branchId', { branchName: 'a', sourceName: 'b', sourceVersion: '1', branchId: 'br_1' }, ['branchId']],
    ] as const) {
      it(`400 for ${what}`, async () => {
        const d = await c.onboard();
        const r = await c.post(`${COMPANIES}/${d.companyId}/branches`, body);
        expect(r.status).to.equal(400);
        expect(connectError(r)).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path });
      });
    }

    it('404 once every source of the company is inactive, and again 201 after reactivation', async () => {
      const d = await c.onboard();
      await c.patch(sourcePath(d.sourceName, 'v1'), { status: 'inactive' });
      const refused = await c.post(`${COMPANIES}/${d.companyId}/branches`, branch());
      expect(refused.status).to.equal(404);
      expect(connectError(refused).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
      await c.patch(sourcePath(d.sourceName, 'v1'), { status: 'active' });
      expect((await c.post(`${COMPANIES}/${d.companyId}/branches`, branch())).status).to.equal(201);
    });
  });

  describe('POST /v3/connect/companies/{companyId}/branches/bulk', () => {
    let company: Record<string, any>;
    before(async () => {
      company = await c.onboard();
    });
    const bulk = (body: unknown) => c.post(`${COMPANIES}/${company.companyId}/branches/bulk`, body);

    it('refuses 0 branches', async () => {
      const r = await bulk({ branches: [] });
      expect(r.status).to.equal(400);
      expect(connectError(r)).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path: ['branches'] });
    });

    it('accepts 1 branch', async () => {
      const r = await bulk({ branches: [branch(1)] });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.data).to.deep.include({ companyId: company.companyId, processed: 1, succeeded: 1, failed: 0 });
    });

    it('accepts 100 branches, results in request order', async () => {
      const branches = Array.from({ length: 100 }, (_, i) => branch(`hundred-${i}`));
      const r = await bulk({ branches });
      expect(r.status, r.text.slice(0, 500)).to.equal(200);
      expect(r.json.data).to.deep.include({ processed: 100, succeeded: 100, failed: 0 });
      expect(r.json.data.results.map((x: any) => x.branchName)).to.deep.equal(branches.map((b) => b.branchName));
      expect(r.json.data.results.every((x: any) => x.success === true && x.data.companyId === company.companyId)).to.equal(true);
      const ids = new Set(r.json.data.results.map((x: any) => x.data.userGivenBranchId));
      expect(ids.size).to.equal(100);
    });

    it('refuses 101 branches, adding none', async () => {
      const branches = Array.from({ length: 101 }, (_, i) => branch(`too-many-${i}`));
      const r = await bulk({ branches });
      expect(r.status).to.equal(400);
      expect(connectError(r)).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path: ['branches'] });
      const list = await c.get(`/v3/connect/companies?search=${encodeURIComponent('too-many-')}`);
      expect(list.json.meta.pagination.total).to.equal(0);
    });

    it('processes each branch on its own: mixed results still 200, a failed branch undoes nothing', async () => {
      const good1 = branch('mixed-1');
      const good2 = branch('mixed-2');
      const r = await bulk({
        branches: [
          good1,
          { branchName: 'dup', sourceName: company.sourceName, sourceVersion: company.sourceVersion },
          { branchName: 'no source' },
          'not an object',
          { ...good1, branchName: 'same source as the first' },
          { ...branch('extra'), extra: true },
          good2,
        ],
      });
      expect(r.status, r.text).to.equal(200);
      const data = r.json.data;
      expect(data).to.deep.include({ processed: 7, succeeded: 2, failed: 5 });
      const results = data.results;
      expect(results.map((x: any) => x.success)).to.deep.equal([true, false, false, false, false, false, true]);
      expect(results[1].error).to.deep.equal({ code: 'CONNECT_SOURCE_ALREADY_EXISTS', message: results[1].error.message, retryable: false });
      expect(results[2].error.code).to.equal('CONNECT_VALIDATION_ERROR');
      expect(results[3]).to.deep.include({ branchName: null, sourceName: null, sourceVersion: null, success: false });
      expect(results[4].error.code).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
      expect(results[5].error.code).to.equal('CONNECT_VALIDATION_ERROR');
      for (const x of results) {
        expect(x).to.have.all.keys('branchName', 'sourceName', 'sourceVersion', 'success', x.success ? 'data' : 'error');
        if (!x.success) expect(x.error).to.have.all.keys('code', 'message', 'retryable');
      }
      expect((await c.get(sourcePath(good1.sourceName, '1'))).status).to.equal(200);
      expect((await c.get(sourcePath(good2.sourceName, '1'))).status).to.equal(200);
    });

    for (const [what, body] of [
      ['a missing branches array', {}],
      ['branches not an array', { branches: { a: 1 } }],
      ['an unknown top-level field', { branches: [branch()], companyId: 'x' }],
    ] as const) {
      it(`refuses ${what}`, async () => {
        const r = await bulk(body);
        expect(r.status).to.equal(400);
        expect(connectError(r).code).to.equal('CONNECT_VALIDATION_ERROR');
      });
    }

    it('404 for a company of another workspace or an inactive company', async () => {
      const other = await newClient(t);
      const r = await other.post(`${COMPANIES}/${company.companyId}/branches/bulk`, { branches: [branch()] });
      expect(r.status).to.equal(404);
      expect(connectError(r).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
    });
  });
});
