import { expect } from 'chai';
import { call, startTestService, type TestService } from '../support/http.js';
import { executions, testFamily } from '../support/test-routes.js';

describe('HTTP error envelopes, idempotency and rate limit (docs/api/http.md)', function () {
  this.timeout(60000);
  let t: TestService;
  let key: string;

  before(async () => {
    t = await startTestService({ extraFamilies: [testFamily()], config: (c) => ({ ...c, http: { ...c.http, bodyLimitBytes: 64 * 1024 } }) });
    key = (await t.tenant()).apiKey;
  });
  after(async () => t.close());

  const connect = () => ({ 'x-api-key': key });
  const unifyNew = () => ({ authorization: `Bearer ${key}`, 'new-api': 'true' });
  const unifyOld = () => ({ authorization: `Bearer ${key}` });

  it('sets X-Request-Id on every response and echoes a sane incoming one', async () => {
    const generated = await call(`${t.url}/healthz`);
    expect(generated.headers.get('x-request-id')).to.match(/^req_[0-9a-f-]{36}$/);
    const echoed = await call(`${t.url}/v3/connect/test/ping`, { headers: { ...connect(), 'x-request-id': 'client-123' } });
    expect(echoed.headers.get('x-request-id')).to.equal('client-123');
    const refused = await call(`${t.url}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(refused.headers.get('x-request-id')).to.match(/^req_/);
  });

  it('answers /healthz and /readyz, naming the workspace when a key is sent', async () => {
    expect((await call(`${t.url}/healthz`)).json).to.deep.equal({ status: 'ok' });
    const ready = await call(`${t.url}/readyz`, { headers: connect() });
    expect(ready.status).to.equal(200);
    expect(ready.json.status).to.equal('ready');
    expect(ready.json.checks.database).to.equal('ok');
    expect(ready.json.checks.eventStore).to.equal('ok');
    expect(ready.json.checks.projections.map((p: { name: string }) => p.name)).to.include('workspaces');
    expect(ready.json.workspaceId).to.be.a('string');
  });

  describe('malformed JSON becomes the family 400', () => {
    it('Connect: CONNECT_VALIDATION_ERROR in the Connect envelope', async () => {
      const r = await call(`${t.url}/v3/connect/test/things`, { headers: { ...connect(), 'content-type': 'application/json' }, rawBody: '{"a":' });
      expect(r.status).to.equal(400);
      expect(r.json.success).to.equal(false);
      expect(r.json.error).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path: [] });
      expect(r.json.meta.requestId).to.equal(r.headers.get('x-request-id'));
      expect(r.json.meta.workspaceId).to.be.a('string');
      expect(Date.parse(r.json.meta.timestamp)).to.be.a('number');
    });
    it('Unify new format: invalid_argument', async () => {
      const r = await call(`${t.url}/api/v3/unify`, { headers: { ...unifyNew(), 'content-type': 'application/json' }, rawBody: '[1,' });
      expect(r.status).to.equal(400);
      expect(r.json.code).to.equal('invalid_argument');
      expect(r.json.message).to.be.a('string');
    });
    it('Unify earlier format: VALIDATION_ERROR with REQ_INVALID_INPUT items', async () => {
      const r = await call(`${t.url}/api/v3/unify`, { headers: { ...unifyOld(), 'content-type': 'application/json' }, rawBody: 'nope' });
      expect(r.status).to.equal(400);
      expect(r.json).to.include({ status: 'error', code: 'VALIDATION_ERROR', data: null });
      expect(r.json.requestId).to.equal(r.headers.get('x-request-id'));
      expect(r.json.errors).to.deep.equal([{ code: 'REQ_INVALID_INPUT', message: 'the request body is not valid JSON', path: [] }]);
    });
    it('a body that is not JSON at all gets 415 in the family envelope', async () => {
      const r = await call(`${t.url}/v3/connect/test/things`, { headers: { ...connect(), 'content-type': 'text/plain' }, rawBody: 'hello' });
      expect(r.status).to.equal(415);
      expect(r.json.error.code).to.equal('CONNECT_UNSUPPORTED_MEDIA_TYPE');
    });
  });

  it('refuses an oversized body with 413 in the family envelope, without reading it all', async () => {
    const big = { blob: 'x'.repeat(200 * 1024) };
    const c = await call(`${t.url}/v3/connect/test/things`, { headers: connect(), body: big });
    expect(c.status).to.equal(413);
    expect(c.json.error.code).to.equal('CONNECT_PAYLOAD_TOO_LARGE');
    const u = await call(`${t.url}/api/v3/unify`, { headers: unifyNew(), body: big });
    expect(u.status).to.equal(413);
    expect(u.json.code).to.equal('payload_too_large');
  });

  it('answers an unknown route with a 404 and a wrong method with a 405, in the family shape', async () => {
    const c = await call(`${t.url}/v3/connect/nothing-here`, { headers: connect() });
    expect(c.status).to.equal(404);
    expect(c.json.error.code).to.equal('CONNECT_NOT_FOUND');
    const d = await call(`${t.url}/api/v3/documents/x/y/z`, { headers: { authorization: `Bearer ${key}` } });
    expect(d.status).to.equal(404);
    expect(d.json).to.include({ success: false, code: 'NOT_FOUND' });
    const m = await call(`${t.url}/v3/connect/test/ping`, { method: 'DELETE', headers: connect() });
    expect(m.status).to.equal(405);
    expect(m.json.error.code).to.equal('CONNECT_METHOD_NOT_ALLOWED');
    const s = await call(`${t.url}/somewhere`);
    expect(s.status).to.equal(404);
    expect(s.json.code).to.equal('not_found');
  });

  it('turns an unexpected exception into the family 500 with a request id and no stack trace', async () => {
    const r = await call(`${t.url}/v3/connect/test/boom`, { headers: connect() });
    expect(r.status).to.equal(500);
    expect(r.json.error).to.deep.equal({
      code: 'CONNECT_INTERNAL_ERROR',
      message: 'An internal error occurred; retry later or quote the request id.',
      retryable: true,
    });
    expect(r.text).not.to.contain('secret internal detail');
    expect(r.text).not.to.contain('at ');
    expect(r.json.meta.requestId).to.equal(r.headers.get('x-request-id'));
  });

  describe('Idempotency-Key', () => {
    it('returns the original status, body and ETag with replayed: true for the same key and payload', async () => {
      const headers = { ...connect(), 'idempotency-key': `k-${Date.now()}` };
      const first = await call(`${t.url}/v3/connect/test/things`, { headers, body: { size: 3, tags: ['a'] } });
      expect(first.status).to.equal(201);
      expect(first.json.data.replayed).to.equal(false);
      const again = await call(`${t.url}/v3/connect/test/things`, { headers, body: { tags: ['a'], size: 3 } });
      expect(again.status).to.equal(201);
      expect(again.json.data).to.deep.equal({ ...first.json.data, replayed: true });
      expect(again.headers.get('etag')).to.equal('"1"');
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
    });
    it('answers 409 in the family envelope when the key comes back with a different payload', async () => {
      const headers = { ...connect(), 'idempotency-key': `k2-${Date.now()}` };
      expect((await call(`${t.url}/v3/connect/test/things`, { headers, body: { size: 3 } })).status).to.equal(201);
      const other = await call(`${t.url}/v3/connect/test/things`, { headers, body: { size: 4 } });
      expect(other.status).to.equal(409);
      expect(other.json.error.code).to.equal('CONNECT_IDEMPOTENCY_CONFLICT');
      expect(other.json.error.path).to.deep.equal(['headers', 'Idempotency-Key']);
    });
    it('executes concurrent duplicates once, and they all get the one answer', async () => {
      const headers = { ...connect(), 'idempotency-key': `k3-${Date.now()}` };
      const before = executions.things;
      const answers = await Promise.all(Array.from({ length: 12 }, () => call(`${t.url}/v3/connect/test/things`, { headers, body: { n: 1 } })));
      expect(executions.things - before).to.equal(1);
      expect(new Set(answers.map((a) => a.json.data.id)).size).to.equal(1);
      expect(answers.every((a) => a.status === 201)).to.equal(true);
      expect(answers.filter((a) => a.json.data.replayed === false)).to.have.length(1);
    });
    it('scopes keys by workspace: another workspace may use the same key', async () => {
      const other = await t.tenant();
      const k = `shared-${Date.now()}`;
      const a = await call(`${t.url}/v3/connect/test/things`, { headers: { ...connect(), 'idempotency-key': k }, body: { n: 1 } });
      const b = await call(`${t.url}/v3/connect/test/things`, { headers: { 'x-api-key': other.apiKey, 'idempotency-key': k }, body: { n: 2 } });
      expect(a.status).to.equal(201);
      expect(b.status).to.equal(201);
      expect(b.json.data.replayed).to.equal(false);
    });
    it('replays a refusal (4xx) as it was first answered', async () => {
      const headers = { ...connect(), 'idempotency-key': `k4-${Date.now()}` };
      const first = await call(`${t.url}/v3/connect/test/refuse`, { headers, body: { thing: 1 } });
      expect(first.status).to.equal(400);
      expect(first.json.error.path).to.deep.equal(['thing', 'size']);
      const again = await call(`${t.url}/v3/connect/test/refuse`, { headers, body: { thing: 1 } });
      expect(again.status).to.equal(400);
      expect(again.json.error).to.deep.equal(first.json.error);
    });
    it('refuses a malformed key', async () => {
      const r = await call(`${t.url}/v3/connect/test/things`, { headers: { ...connect(), 'idempotency-key': 'x'.repeat(300) }, body: {} });
      expect(r.status).to.equal(400);
      expect(r.json.error.path).to.deep.equal(['headers', 'Idempotency-Key']);
    });
  });

  it('rate-limits a Connect workspace with 429, Retry-After and retryable: true', async () => {
    const limited = await startTestService({ extraFamilies: [testFamily()], config: (c) => ({ ...c, connectRateLimit: { perSecond: 2, burst: 3 } }) });
    try {
      const tenant = await limited.tenant();
      const other = await limited.tenant();
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 5; i++) {
        last = await call(`${limited.url}/v3/connect/test/ping`, { headers: { 'x-api-key': tenant.apiKey } });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 3)).to.deep.equal([200, 200, 200]);
      expect(statuses[4]).to.equal(429);
      expect(Number(last!.headers.get('retry-after'))).to.be.at.least(1);
      expect(last!.json.error).to.deep.include({ code: 'CONNECT_RATE_LIMITED', retryable: true });
      // The limit is per workspace.
      expect((await call(`${limited.url}/v3/connect/test/ping`, { headers: { 'x-api-key': other.apiKey } })).status).to.equal(200);
    } finally {
      await limited.close();
    }
  });
});
