/**
 * Failures schemathesis found (npm run fuzz), each kept as a regression test. Every response
 * here also goes through the OpenAPI response check of `call`.
 */
import { expect } from 'chai';
import { call, startTestService, withoutProcesses, type TestService } from '../support/http.js';
import { unifyTenant, type UnifyTenant } from '../unify/support.js';
import { companyStream } from '../../domain/connect/values.js';

describe('schemathesis findings (regressions)', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;

  before(async () => {
    t = await startTestService({ processes: withoutProcesses, startWorkers: false });
    u = await unifyTenant(t);
  });
  after(async () => t.close());

  describe('a NUL character (U+0000) in a JSON body was a 500 when the answer was recorded (Idempotency-Key) or the input stored', () => {
    it('Unify new format: 400 invalid_argument with the path, also with an Idempotency-Key', async () => {
      const r = await u.submit({ ...u.request({}), country: 'A\u0000E' }, { 'idempotency-key': 'nul-1' });
      expect(r.status, r.text).to.equal(400);
      expect(r.json.code).to.equal('invalid_argument');
      expect(r.json.path).to.deep.equal(['country']);
      const payload = await u.submit(u.request({ header: { documentNumber: 'X\u0000' } }));
      expect(payload.status, payload.text).to.equal(400);
      expect(payload.json.path).to.deep.equal(['payload', 'header', 'documentNumber']);
    });

    it('Unify earlier format: 400 VALIDATION_ERROR with the path', async () => {
      const r = await u.legacy({ action: 'list', env: 'sandbox', filters: { uuid: '\u0000', documentId: 'x' } });
      expect(r.status, r.text).to.equal(400);
      expect(r.json.code).to.equal('VALIDATION_ERROR');
      expect(r.json.errors[0].path).to.deep.equal(['filters', 'uuid']);
    });

    it('Connect and credits: 400 CONNECT_VALIDATION_ERROR with the path, also in an object key', async () => {
      const company = await u.client.post('/v3/connect/companies', { sourceName: 'a\u0000b' }, { 'idempotency-key': 'nul-2' });
      expect(company.status, company.text).to.equal(400);
      expect(company.json.error.code).to.equal('CONNECT_VALIDATION_ERROR');
      expect(company.json.error.path).to.deep.equal(['sourceName']);
      const key = await call(`${t.url}/v3/connect/credits/exports`, {
        headers: { authorization: `Bearer ${u.apiKey}`, 'idempotency-key': 'nul-3' },
        body: { format: 'csv', filters: { 'company\u0000Id': 'x' } },
      });
      expect(key.status, key.text).to.equal(400);
      // The path names the key exactly as sent (http/body.ts refuses it before any handler or record).
      expect(key.json.error.path).to.deep.equal(['filters', 'company\u0000Id']);
    });
  });

  it('GET /api/v3/unify/requirements answered officialRule and officialRules (PINT AE rules) that the document did not name', async () => {
    const r = await call(`${t.url}/api/v3/unify/requirements?country=AE&base=tax_invoice&modifiers=export`, { headers: { authorization: `Bearer ${u.apiKey}` } });
    expect(r.status, r.text).to.equal(200);
    const fields = r.json.fields as { officialRules: string[]; constraints: { officialRule: string | null }[] }[];
    expect(fields.every((f) => Array.isArray(f.officialRules))).to.equal(true);
    expect(fields.some((f) => f.officialRules.length > 0), 'some PINT AE rule is named').to.equal(true);
    expect(fields.flatMap((f) => f.constraints).some((c) => typeof c.officialRule === 'string')).to.equal(true);
  });

  it('POST /v3/connect/webhooks/{id}/test with a body that is not JSON answered 415, a status the document did not list', async () => {
    const r = await call(`${t.url}/v3/connect/webhooks/whk_0/test`, { method: 'POST', headers: { authorization: `Bearer ${u.apiKey}`, 'content-type': 'text/plain' }, rawBody: '""' });
    expect(r.status, r.text).to.equal(415);
    expect(r.json.error.path).to.deep.equal(['headers', 'content-type']);
  });

  it('bulk branches took over 2 s for 15 branches under load (each branch read and appended to the company stream on its own): the branches of a request are now recorded in one append', async () => {
    const company = await u.client.onboard();
    const branches = Array.from({ length: 30 }, (_, i) => ({ branchName: `Branch ${i}`, sourceName: `${company.sourceName} B${i}`, sourceVersion: 'v1' }));
    // One name twice: the first in request order wins, the second fails on its own.
    branches.push({ ...branches[0]!, branchName: 'Again' });
    const r = await u.client.post(`/v3/connect/companies/${company.companyId}/branches/bulk`, { branches });
    expect(r.status, r.text).to.equal(200);
    expect(r.json.data).to.include({ processed: 31, succeeded: 30, failed: 1 });
    expect(r.json.data.results[0].success).to.equal(true);
    expect(r.json.data.results[30].error.code).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    const events = await t.service.runtime.store.readStream(companyStream(company.companyId));
    const added = events.filter((e) => e.type === 'CompanyBranchAdded' && /^Branch /.test((e.data as { branchName: string }).branchName));
    expect(added).to.have.length(30);
    expect(new Set(added.map((e) => String(e.position.commit))).size, 'one transaction for the request').to.equal(1);
    expect(added.map((e) => (e.data as { branchName: string }).branchName)).to.deep.equal(branches.slice(0, 30).map((b) => b.branchName));
  });
});
