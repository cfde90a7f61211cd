import { expect } from 'chai';
import { ManualClock } from '../../platform/clock.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { testFamily } from '../support/test-routes.js';

describe('HTTP authentication per API family (docs/api/http.md)', function () {
  this.timeout(30000);
  let t: TestService;
  let key: string;
  const clock = new ManualClock(new Date());

  before(async () => {
    t = await startTestService({ clock, extraFamilies: [testFamily()] });
    key = (await t.tenant()).apiKey;
  });
  after(async () => t.close());

  const bearer = (k: string) => ({ authorization: `Bearer ${k}` });

  describe('missing key', () => {
    it('Connect answers 401 with a plain-text "Authentication required"', async () => {
      const r = await call(`${t.url}/v3/connect/companies`);
      expect(r.status).to.equal(401);
      expect(r.headers.get('content-type')).to.match(/^text\/plain/);
      expect(r.text).to.equal('Authentication required');
    });
    it('documents list and single read answer JSON authentication_required; /status answers plain text', async () => {
      for (const path of ['/api/v3/documents?type=purchases&from=2026-01-01', '/api/v3/documents/doc_1?type=sales']) {
        const r = await call(`${t.url}${path}`);
        expect(r.status).to.equal(401);
        expect(r.json).to.deep.equal({ code: 'authentication_required', message: 'Authentication required.' });
      }
      const s = await call(`${t.url}/api/v3/documents/doc_1/status`);
      expect(s.status).to.equal(401);
      expect(s.headers.get('content-type')).to.match(/^text\/plain/);
      expect(s.text).to.equal('Authentication required');
    });
    it('Unify answers {"error":"Unauthorized"} in both request formats', async () => {
      for (const headers of [{ 'new-api': 'true' }, {}] as Record<string, string>[]) {
        const r = await call(`${t.url}/api/v3/unify`, { headers, body: {} });
        expect(r.status).to.equal(401);
        expect(r.json).to.deep.equal({ error: 'Unauthorized' });
      }
    });
    it('invoice query answers JSON authentication_required', async () => {
      const r = await call(`${t.url}/invoices/query`, { body: {} });
      expect(r.status).to.equal(401);
      expect(r.json.code).to.equal('authentication_required');
    });
  });

  describe('wrong key', () => {
    it('Connect and documents answer 401 JSON code + message without a success wrapper', async () => {
      for (const [path, headers] of [
        ['/v3/connect/companies', { 'x-api-key': 'eik_test_nope' }],
        ['/v3/connect/companies', bearer('eik_test_nope')],
        ['/api/v3/documents/doc_1?type=sales', bearer('eik_test_nope')],
        ['/api/v3/documents/doc_1/status', bearer('eik_test_nope')],
      ] as const) {
        const r = await call(`${t.url}${path}`, { headers });
        expect(r.status, path).to.equal(401);
        expect(r.json).to.deep.equal({ code: 'invalid_api_key', message: 'The API key is not valid.' });
      }
    });
    it('the purchase list answers 401 AUTHORIZATION_ERROR', async () => {
      const r = await call(`${t.url}/api/v3/documents?type=purchases&from=2026-01-01`, { headers: bearer('nope') });
      expect(r.status).to.equal(401);
      expect(r.json.code).to.equal('AUTHORIZATION_ERROR');
      expect(r.json).to.have.all.keys('code', 'message');
    });
    it('Unify answers {"error":"Unauthorized"}, also for a key sent as X-API-Key', async () => {
      expect((await call(`${t.url}/api/v3/unify`, { headers: bearer('nope'), body: {} })).json).to.deep.equal({ error: 'Unauthorized' });
      const viaHeader = await call(`${t.url}/api/v3/unify`, { headers: { 'x-api-key': key, 'new-api': 'true' }, body: {} });
      expect(viaHeader.status).to.equal(401);
      expect(viaHeader.json).to.deep.equal({ error: 'Unauthorized' });
    });
    it('Connect refuses both headers at once', async () => {
      const r = await call(`${t.url}/v3/connect/test/ping`, { headers: { 'x-api-key': key, ...bearer(key) } });
      expect(r.status).to.equal(401);
      expect(r.json.code).to.equal('invalid_api_key');
      expect(r.json.message).to.contain('not both');
    });
    it('a malformed Authorization header is an invalid key', async () => {
      const r = await call(`${t.url}/v3/connect/test/ping`, { headers: { authorization: `Basic ${key}` } });
      expect(r.status).to.equal(401);
      expect(r.json.code).to.equal('invalid_api_key');
    });
  });

  it('accepts a valid key in X-API-Key or as a bearer token on Connect', async () => {
    for (const headers of [{ 'x-api-key': key }, bearer(key)]) {
      const r = await call(`${t.url}/v3/connect/test/ping`, { headers });
      expect(r.status).to.equal(200);
      expect(r.json.success).to.equal(true);
    }
  });

  it('honours a revocation within a second', async () => {
    const tenant = await t.tenant();
    expect((await call(`${t.url}/v3/connect/test/ping`, { headers: { 'x-api-key': tenant.apiKey } })).status).to.equal(200);
    await t.revoke(tenant.keyId);
    const started = Date.now();
    let r;
    do {
      r = await call(`${t.url}/v3/connect/test/ping`, { headers: { 'x-api-key': tenant.apiKey } });
    } while (r.status === 200 && Date.now() - started < 3000);
    expect(Date.now() - started).to.be.lessThan(1500);
    expect(r.status).to.equal(401);
    expect(r.json).to.deep.equal({ code: 'key_revoked', message: 'The API key has been revoked.' });
    const u = await call(`${t.url}/api/v3/unify`, { headers: bearer(tenant.apiKey), body: {} });
    expect(u.json).to.deep.equal({ error: 'Unauthorized' });
  });

  it('refuses an expired key with key_expired (time from the injected clock)', async () => {
    const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
    const tenant = await t.tenant({ expiresAt });
    expect((await call(`${t.url}/v3/connect/test/ping`, { headers: { 'x-api-key': tenant.apiKey } })).status).to.equal(200);
    clock.advance(61_000);
    const r = await call(`${t.url}/v3/connect/test/ping`, { headers: { 'x-api-key': tenant.apiKey } });
    expect(r.status).to.equal(401);
    expect(r.json).to.deep.equal({ code: 'key_expired', message: 'The API key has expired.' });
  });

  it('answers CONNECT_AUTH_CONTEXT_MISSING in the Connect envelope once the workspace is deleted', async () => {
    const tenant = await t.tenant();
    await t.deleteWorkspace(tenant.workspaceId);
    await new Promise((r) => setTimeout(r, 1100)); // the key cache holds entries for at most a second
    const r = await call(`${t.url}/v3/connect/test/ping`, { headers: { 'x-api-key': tenant.apiKey } });
    expect(r.status).to.equal(401);
    expect(r.json.success).to.equal(false);
    expect(r.json.error.code).to.equal('CONNECT_AUTH_CONTEXT_MISSING');
    expect(r.json.meta).to.have.all.keys('requestId', 'timestamp', 'workspaceId');
    expect((await call(`${t.url}/api/v3/unify`, { headers: bearer(tenant.apiKey), body: {} })).json).to.deep.equal({ error: 'Unauthorized' });
  });

  it('refuses a request that names a workspace in a header, in the family envelope', async () => {
    const r = await call(`${t.url}/v3/connect/test/ping`, { headers: { 'x-api-key': key, 'X-Workspace-Id': 'ws_other' } });
    expect(r.status).to.equal(400);
    expect(r.json.error.code).to.equal('CONNECT_VALIDATION_ERROR');
    expect(r.json.error.path).to.deep.equal(['headers', 'x-workspace-id']);
    const u = await call(`${t.url}/api/v3/unify`, { headers: { ...bearer(key), 'new-api': 'true', 'workspace-id': 'x' }, body: {} });
    expect(u.status).to.equal(400);
    expect(u.json.code).to.equal('invalid_argument');
  });

  it('returns 403 insufficient_permission when a read-only key writes', async () => {
    const readOnly = await t.tenant({ permission: 'read' });
    const r = await call(`${t.url}/v3/connect/test/things`, { headers: { 'x-api-key': readOnly.apiKey }, body: { a: 1 } });
    expect(r.status).to.equal(403);
    expect(r.json.error.code).to.equal('CONNECT_INSUFFICIENT_PERMISSION');
  });
});
