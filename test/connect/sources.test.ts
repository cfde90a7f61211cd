import { expect } from 'chai';
import { companyStream } from '../../domain/connect/values.js';
import { startTestService, type TestService } from '../support/http.js';
import { connectError, enc, freshName, newClient, sourcePath, type Client } from './support.js';

const COMPANIES = '/v3/connect/companies';

describe('Connect: listing, reading, updating and archiving sources', function () {
  this.timeout(60000);
  let t: TestService;

  before(async () => {
    t = await startTestService();
  });
  after(async () => t.close());

  describe('GET /v3/connect/companies', () => {
    let c: Client;
    const onboarded: Record<string, any>[] = [];
    let multi: Record<string, any>;

    before(async () => {
      c = await newClient(t);
      for (let i = 0; i < 12; i++) onboarded.push(await c.onboard({ branchName: `Branch ${i}`, sourceVersion: i % 2 === 0 ? 'v1' : 'v2' }));
      multi = await c.onboard({ sourceName: 'Zeta Multi ERP', branchName: 'Zeta main' });
      for (const n of [2, 3]) {
        const r = await c.post(`${COMPANIES}/${multi.companyId}/branches`, { branchName: `Zeta branch ${n}`, sourceName: `Zeta Multi ERP ${n}`, sourceVersion: '1' });
        expect(r.status, r.text).to.equal(201);
      }
    });

    it('lists with the defaults: page 1, limit 10, most recently updated first, meta echoed', async () => {
      const r = await c.get(COMPANIES);
      expect(r.status).to.equal(200);
      expect(r.json.success).to.equal(true);
      expect(r.json.meta).to.have.all.keys('requestId', 'timestamp', 'workspaceId', 'pagination', 'filters', 'sort');
      expect(r.json.meta.pagination).to.deep.equal({ page: 1, limit: 10, total: 13, totalPages: 2, hasMore: true });
      expect(r.json.meta.filters).to.deep.equal({ countryCode: null, sourceVersion: null, status: null, search: null });
      expect(r.json.meta.sort).to.deep.equal({ field: 'updatedAt', order: 'desc' });
      // The company with three branches was updated last: it comes first, once per branch, so the page exceeds the limit.
      const items = r.json.data;
      expect(items).to.have.length(12);
      expect(items.slice(0, 3).map((i: any) => i.companyId)).to.deep.equal([multi.companyId, multi.companyId, multi.companyId]);
      expect(items.slice(0, 3).map((i: any) => i.branchName)).to.deep.equal(['Zeta main', 'Zeta branch 2', 'Zeta branch 3']);
      expect(items[3].companyId).to.equal(onboarded[11]!.companyId);
      expect(items[0]).to.have.all.keys(
        'companyId', 'sourceName', 'sourceVersion', 'legalName', 'legalIdentifier', 'countryCode', 'status', 'onboardingStatus',
        'peppolId', 'sourceId', 'branchId', 'branchName', 'tin', 'vatTrn', 'mappingReadiness', 'readyForInvoicing', 'createdAt', 'updatedAt',
      );
      expect(items[0]).to.include({ legalIdentifier: null, countryCode: 'AE', status: 'active', readyForInvoicing: true });
      const updated = items.map((i: any) => Date.parse(i.updatedAt));
      expect([...updated].sort((a, b) => b - a)).to.deep.equal(updated);
    });

    it('pages through every company exactly once', async () => {
      const seen: string[] = [];
      for (let page = 1; page <= 3; page++) {
        const r = await c.get(`${COMPANIES}?page=${page}&limit=5`);
        expect(r.json.meta.pagination).to.deep.include({ page, limit: 5, total: 13, totalPages: 3, hasMore: page < 3 });
        seen.push(...new Set<string>(r.json.data.map((i: any) => i.companyId)));
      }
      expect(seen).to.have.length(13);
      expect(new Set(seen).size).to.equal(13);
      const beyond = await c.get(`${COMPANIES}?page=4&limit=5`);
      expect(beyond.status).to.equal(200);
      expect(beyond.json.data).to.deep.equal([]);
      expect(beyond.json.meta.pagination).to.deep.equal({ page: 4, limit: 5, total: 13, totalPages: 3, hasMore: false });
    });

    for (const limit of [1, 100]) {
      it(`accepts limit=${limit}`, async () => {
        const r = await c.get(`${COMPANIES}?limit=${limit}`);
        expect(r.status).to.equal(200);
        expect(r.json.meta.pagination.limit).to.equal(limit);
        expect(new Set(r.json.data.map((i: any) => i.companyId)).size).to.equal(Math.min(limit, 13));
      });
    }

    for (const [query, path] of [
      ['limit=0', ['query', 'limit']],
      ['limit=101', ['query', 'limit']],
      ['limit=-1', ['query', 'limit']],
      ['limit=ten', ['query', 'limit']],
      ['limit=1.5', ['query', 'limit']],
      ['page=0', ['query', 'page']],
      ['page=abc', ['query', 'page']],
      ['limit=5&limit=6', ['query', 'limit']],
      ['status=archived', ['query', 'status']],
      ['countryCode=UAE', ['query', 'countryCode']],
      ['search=', ['query', 'search']],
      ['sort=name', ['query', 'sort']],
    ] as const) {
      it(`refuses ${query} with 400 CONNECT_VALIDATION_ERROR`, async () => {
        const r = await c.get(`${COMPANIES}?${query}`);
        expect(r.status).to.equal(400);
        const e = connectError(r);
        expect(e.code).to.equal('CONNECT_VALIDATION_ERROR');
        expect(e.path).to.deep.equal(path);
      });
    }

    it('filters by sourceVersion (exact), countryCode and status, and echoes the filters', async () => {
      const v2 = await c.get(`${COMPANIES}?sourceVersion=v2&limit=100`);
      expect(v2.json.meta.pagination.total).to.equal(6);
      expect(v2.json.data.every((i: any) => i.sourceVersion === 'v2')).to.equal(true);
      expect(v2.json.meta.filters).to.deep.equal({ countryCode: null, sourceVersion: 'v2', status: null, search: null });
      expect((await c.get(`${COMPANIES}?sourceVersion=V2`)).json.meta.pagination.total).to.equal(0);
      const ae = await c.get(`${COMPANIES}?countryCode=ae&status=active`);
      expect(ae.json.meta.pagination.total).to.equal(13);
      expect(ae.json.meta.filters).to.include({ countryCode: 'AE', status: 'active' });
      expect((await c.get(`${COMPANIES}?countryCode=SA`)).json.meta.pagination.total).to.equal(0);
      expect((await c.get(`${COMPANIES}?status=inactive`)).json.meta.pagination.total).to.equal(0);
    });

    it('searches case-insensitively over legal name, source name, tin and branch name', async () => {
      const byBranch = await c.get(`${COMPANIES}?search=${enc('zeta BRANCH 3')}`);
      expect(byBranch.json.meta.pagination.total).to.equal(1);
      expect(byBranch.json.data.map((i: any) => i.branchName)).to.deep.equal(['Zeta branch 3']);
      const bySource = await c.get(`${COMPANIES}?search=${enc(onboarded[3]!.sourceName.toUpperCase())}`);
      expect(bySource.json.data.map((i: any) => i.sourceId)).to.deep.equal([onboarded[3]!.sourceId]);
      const byTin = await c.get(`${COMPANIES}?search=${onboarded[5]!.tin}`);
      expect(byTin.json.data.map((i: any) => i.companyId)).to.deep.equal([onboarded[5]!.companyId]);
      const byLegalName = await c.get(`${COMPANIES}?search=${enc(`company ${multi.tin} llc`)}`);
      expect(byLegalName.json.data).to.have.length(3);
      expect(byLegalName.json.meta.pagination.total).to.equal(1);
      const wildcard = await c.get(`${COMPANIES}?search=${enc('%')}`);
      expect(wildcard.json.meta.pagination.total).to.equal(0);
    });
  });

  describe('GET / PATCH / DELETE /v3/connect/companies/{sourceName}?sourceVersion=', () => {
    let c: Client;
    before(async () => {
      c = await newClient(t);
    });

    for (const name of ['Sales Ledger 2025', 'ERP/Finance/AE', 'a b/c?d&e=f#g%h+i', 'Ünïcødé — فاتورة']) {
      it(`reads, updates and archives a source named ${JSON.stringify(name)} (URL-encoded)`, async () => {
        const d = await c.onboard({ sourceName: name, sourceVersion: '1.0 beta/2' });
        const path = sourcePath(name, '1.0 beta/2');
        const got = await c.get(path);
        expect(got.status, got.text).to.equal(200);
        expect(got.json.data).to.include({ companyId: d.companyId, sourceName: name, sourceVersion: '1.0 beta/2', status: 'active' });
        expect(got.json.data.metadata).to.deep.equal({});

        const patched = await c.patch(path, { metadata: { erp: 'x' } });
        expect(patched.status, patched.text).to.equal(200);
        expect(patched.json.data.metadata).to.deep.equal({ erp: 'x' });

        const deleted = await c.del(path);
        expect(deleted.status, deleted.text).to.equal(200);
        expect(deleted.json.data).to.deep.equal({ archived: true, companyId: d.companyId, sourceName: name });
        expect((await c.get(path)).json.data.status).to.equal('inactive');
      });
    }

    it('404 CONNECT_COMPANY_NOT_FOUND for an unknown name or version', async () => {
      const d = await c.onboard();
      for (const path of [sourcePath('no such source', 'v1'), sourcePath(d.sourceName, 'v9')]) {
        for (const r of [await c.get(path), await c.patch(path, { status: 'inactive' }), await c.del(path)]) {
          expect(r.status).to.equal(404);
          expect(connectError(r).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
        }
      }
    });

    it('400 without sourceVersion', async () => {
      const r = await c.get(`${COMPANIES}/${enc('Some source')}`);
      expect(r.status).to.equal(400);
      expect(connectError(r).path).to.deep.equal(['query', 'sourceVersion']);
    });

    it('PATCH changes only the fields sent', async () => {
      const d = await c.onboard();
      const path = sourcePath(d.sourceName, 'v1');
      const r = await c.patch(path, { legalName: 'Renamed Trading LLC', legalIdentifier: 'CN-123456' });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.data).to.include({ legalName: 'Renamed Trading LLC', legalIdentifier: 'CN-123456', status: 'active', sourceVersion: 'v1' });
      const got = (await c.get(path)).json.data;
      expect(got).to.include({ legalName: 'Renamed Trading LLC', legalIdentifier: 'CN-123456', branchName: 'Head office' });
      const found = await c.get(`${COMPANIES}?search=${enc('renamed trading')}`);
      expect(found.json.data.map((i: any) => i.sourceId)).to.deep.equal([d.sourceId]);
      const cleared = await c.patch(path, { legalIdentifier: null, countryCode: 'AE' });
      expect(cleared.json.data.legalIdentifier).to.equal(null);
    });

    it('PATCH sourceVersion moves the source; the old version is free again and a taken one is refused', async () => {
      const d = await c.onboard();
      const other = await c.onboard({ sourceName: d.sourceName, sourceVersion: 'v3' });
      const moved = await c.patch(sourcePath(d.sourceName, 'v1'), { sourceVersion: 'v2' });
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.json.data.sourceVersion).to.equal('v2');
      expect((await c.get(sourcePath(d.sourceName, 'v1'))).status).to.equal(404);
      expect((await c.get(sourcePath(d.sourceName, 'v2'))).json.data.sourceId).to.equal(d.sourceId);
      const taken = await c.patch(sourcePath(d.sourceName, 'v2'), { sourceVersion: 'v3' });
      expect(taken.status).to.equal(409);
      expect(connectError(taken).code).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
      expect((await c.get(sourcePath(d.sourceName, 'v3'))).json.data.sourceId).to.equal(other.sourceId);
      // v1 is free again: another company may take it.
      const reuse = await c.post(COMPANIES, await c.newCompanyBody({ sourceName: d.sourceName, sourceVersion: 'v1' }));
      expect(reuse.status, reuse.text).to.equal(201);
    });

    it('PATCH status inactive, then active again', async () => {
      const d = await c.onboard();
      const path = sourcePath(d.sourceName, 'v1');
      expect((await c.patch(path, { status: 'inactive' })).json.data.status).to.equal('inactive');
      expect((await c.get(`${COMPANIES}?status=inactive&search=${enc(d.sourceName)}`)).json.meta.pagination.total).to.equal(1);
      expect((await c.patch(path, { status: 'active' })).json.data.status).to.equal('active');
    });

    for (const [what, body, code, path] of [
      ['an empty body', {}, 'CONNECT_VALIDATION_ERROR', []],
      ['an unknown field', { branchName: 'x' }, 'CONNECT_VALIDATION_ERROR', ['branchName']],
      ['sourceName (it is the address)', { sourceName: 'x' }, 'CONNECT_VALIDATION_ERROR', ['sourceName']],
      ['a companyId', { companyId: 'a'.repeat(24) }, 'CONNECT_VALIDATION_ERROR', ['companyId']],
      ['an unknown status', { status: 'archived' }, 'CONNECT_VALIDATION_ERROR', ['status']],
      ['a metadata array', { metadata: [1] }, 'CONNECT_VALIDATION_ERROR', ['metadata']],
      ['an empty sourceVersion', { sourceVersion: '' }, 'CONNECT_VALIDATION_ERROR', ['sourceVersion']],
      ['countryCode SA', { countryCode: 'SA' }, 'CONNECT_UNSUPPORTED_COUNTRY', ['countryCode']],
    ] as const) {
      it(`PATCH refuses ${what}`, async () => {
        const d = await c.onboard();
        const r = await c.patch(sourcePath(d.sourceName, 'v1'), body);
        expect(r.status).to.equal(400);
        const e = connectError(r);
        expect(e.code).to.equal(code);
        if (path.length === 0) expect(e.path).to.equal(undefined);
        else expect(e.path).to.deep.equal(path);
      });
    }

    it('DELETE archives, emits CompanySourceArchived for the credits capability, and is idempotent', async () => {
      const d = await c.onboard();
      const path = sourcePath(d.sourceName, 'v1');
      const first = await c.del(path);
      expect(first.json.data).to.deep.equal({ archived: true, companyId: d.companyId, sourceName: d.sourceName });
      const second = await c.del(path);
      expect(second.status).to.equal(200);
      expect(second.json.data.archived).to.equal(true);
      const events = await t.service.runtime.store.readStream(companyStream(d.companyId));
      const archived = events.filter((e) => e.type === 'CompanySourceArchived');
      expect(archived).to.have.length(1);
      expect(archived[0]!.data).to.deep.include({ companyId: d.companyId, workspaceId: c.workspaceId, sourceId: d.sourceId, cancelScheduledAllowance: true });
      // Archived is inactive, and the company (its only source archived) takes no branches.
      const branch = await c.post(`${COMPANIES}/${d.companyId}/branches`, { branchName: 'b', sourceName: freshName(), sourceVersion: '1' });
      expect(branch.status).to.equal(404);
      expect(connectError(branch).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
    });

    it('DELETE refuses a body with fields', async () => {
      const d = await c.onboard();
      const r = await c.del(sourcePath(d.sourceName, 'v1'), { reason: 'x' });
      expect(r.status).to.equal(400);
      expect(connectError(r).path).to.deep.equal(['reason']);
    });
  });

  describe('workspaces and permissions', () => {
    it("a key of workspace A never sees or touches workspace B's companies", async () => {
      const a = await newClient(t);
      const b = await newClient(t);
      const d = await b.onboard({ sourceName: freshName('Secret') });
      const path = sourcePath(d.sourceName, 'v1');
      for (const r of [
        await a.get(path),
        await a.patch(path, { status: 'inactive' }),
        await a.del(path),
        await a.post(`${COMPANIES}/${d.companyId}/branches`, { branchName: 'x', sourceName: freshName(), sourceVersion: '1' }),
        await a.post(`${COMPANIES}/${d.companyId}/branches/bulk`, { branches: [{ branchName: 'x', sourceName: freshName(), sourceVersion: '1' }] }),
        await a.get(`/v3/connect/invoices/counts?companyId=${d.companyId}`),
      ]) {
        expect(r.status, r.text).to.equal(404);
        expect(connectError(r).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
      }
      const list = await a.get(`${COMPANIES}?search=${enc(d.sourceName)}`);
      expect(list.json.meta.pagination.total).to.equal(0);
      expect((await b.get(path)).json.data.status).to.equal('active');
    });

    it('a read-only key reads but gets 403 on every write', async () => {
      const rw = await newClient(t);
      const d = await rw.onboard();
      const ro = await newClient(t, { permission: 'read' });
      const roSame = (await t.key(rw.workspaceId, { permission: 'read' })).apiKey;
      const { clientFor } = await import('./support.js');
      const reader = clientFor(t, { workspaceId: rw.workspaceId, apiKey: roSame, keyId: '' });
      expect((await reader.get(sourcePath(d.sourceName, 'v1'))).status).to.equal(200);
      expect((await reader.get(COMPANIES)).json.meta.pagination.total).to.equal(1);
      expect((await reader.get('/v3/connect/invoices/counts')).status).to.equal(200);
      for (const r of [
        await reader.post(COMPANIES, await ro.newCompanyBody()),
        await reader.patch(sourcePath(d.sourceName, 'v1'), { status: 'inactive' }),
        await reader.del(sourcePath(d.sourceName, 'v1')),
        await reader.post(`${COMPANIES}/${d.companyId}/branches`, { branchName: 'x', sourceName: 'y', sourceVersion: '1' }),
        await reader.post(`${COMPANIES}/${d.companyId}/branches/bulk`, { branches: [] }),
        await reader.post(`${COMPANIES}/onboarding-jobs`, { countryCode: 'AE', platformEnvironment: 'sandbox', rows: [] }),
      ]) {
        expect(r.status).to.equal(403);
        expect(connectError(r).code).to.equal('CONNECT_INSUFFICIENT_PERMISSION');
      }
      expect((await rw.get(sourcePath(d.sourceName, 'v1'))).json.data.status).to.equal('active');
    });
  });
});
