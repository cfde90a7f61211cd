/**
 * Regression tests of the outside sweep (issue 12): text PostgreSQL cannot store, deep nesting,
 * requests Node's parser refuses, duplicate credentials, environments that cross, keys used the
 * moment they are created, and onboarding with a key of the other environment.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createApiKey } from '../../commands/workspaces.js';
import { MAX_JSON_DEPTH, findInputFault } from '../../http/body.js';
import { connectError, freshName, newClient, type Client } from '../connect/support.js';
import { testDb } from '../support/db.js';
import { call, startTestService, withoutProcesses, type TestService } from '../support/http.js';
import { uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { rawRequest } from '../support/raw-http.js';
import { schemaErrors } from '../support/openapi-check.js';

const deepText = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deep = (depth: number) => JSON.parse(deepText(depth)) as unknown;
/** JSON text of `value` with "__DEEP__" replaced by arrays nested `depth` levels (JSON.stringify would overflow). */
const withDeep = (value: unknown, depth: number) => JSON.stringify(value).replace('"__DEEP__"', deepText(depth));
const jsonHeaders = (h: Record<string, string>) => ({ 'content-type': 'application/json', ...h });


describe('HTTP hardening (issue 12)', function () {
  this.timeout(120000);
  let t: TestService;
  let u: UnifyTenant;
  let c: Client;

  before(async () => {
    t = await startTestService({ processes: withoutProcesses });
    u = await unifyTenant(t);
    c = u.client;
  });
  after(async () => t.close());

  describe('text PostgreSQL cannot store (NUL, unpaired surrogates): the family 400 with the path', () => {
    it('finds faults in values and keys at any depth without recursion', () => {
      expect(findInputFault({ a: [{ b: 'x\u0000' }] })).to.deep.equal({ kind: 'text', path: ['a', 0, 'b'] });
      expect(findInputFault({ ok: '\ud83d\ude00', bad: '\ud800' })).to.deep.equal({ kind: 'text', path: ['bad'] });
      expect(findInputFault({ ['\udc00k']: 1 })).to.deep.equal({ kind: 'text', path: ['\udc00k'] });
      expect(findInputFault(deep(100_000))?.kind).to.equal('depth');
      expect(findInputFault(deep(MAX_JSON_DEPTH))).to.equal(null);
      expect(findInputFault(deep(MAX_JSON_DEPTH + 1))?.path).to.have.length(MAX_JSON_DEPTH);
    });

    it('Unify new format: a NUL in the document number', async () => {
      const payload = uaeInvoice({ documentNumber: 'INV\u00001' });
      const r = await u.submit(u.request(payload));
      expect(r.status, r.text).to.equal(400);
      expect(r.json).to.include({ code: 'invalid_argument' });
      expect(r.json.path).to.deep.equal(['payload', 'header', 'documentNumber']);
      expect(r.json.requestId).to.equal(r.headers.get('x-request-id'));
    });

    it('Unify new format: an unpaired surrogate in a party name', async () => {
      const payload = uaeInvoice();
      payload.parties.seller.name = 'Falcon \ud800 Trading';
      const r = await u.submit(u.request(payload));
      expect(r.status, r.text).to.equal(400);
      expect(r.json.path).to.deep.equal(['payload', 'parties', 'seller', 'name']);
    });

    it('Unify earlier format: externalId and filters.uuid', async () => {
      const [name, version] = [u.source.slice(0, u.source.lastIndexOf(':')), u.source.slice(u.source.lastIndexOf(':') + 1)];
      const submit = await u.legacy({
        action: 'submit',
        purpose: 'invoicing',
        env: 'sandbox',
        defaults: { country: 'AE', logicalDocumentType: 'TAX_INVOICE', source: { name, version } },
        invoices: [{ payload: uaeInvoice(), externalId: 'erp-\ud800' }],
      });
      expect(submit.status, submit.text).to.equal(400);
      expect(submit.json).to.include({ status: 'error', data: null });
      expect(submit.json.errors[0].path).to.deep.equal(['invoices', 0, 'externalId']);
      const list = await u.legacy({ action: 'list', env: 'sandbox', filters: { uuid: 'u\u0000', documentId: 'd' } });
      expect(list.status, list.text).to.equal(400);
      expect(list.json.errors[0].path).to.deep.equal(['filters', 'uuid']);
    });

    it('Documents: a NUL path id and a NUL query value', async () => {
      const auth = { authorization: `Bearer ${u.apiKey}` };
      for (const path of ['/api/v3/documents/%00?type=sales', '/api/v3/documents/%00/status', '/api/v3/documents/a%00b?type=sales']) {
        const r = await call(`${t.url}${path}`, { headers: auth });
        expect(r.status, `${path}: ${r.text}`).to.equal(400);
        expect(r.json).to.include({ success: false, code: 'VALIDATION_ERROR' });
        expect(r.json.path).to.deep.equal(['path', 4]);
      }
      const q = await call(`${t.url}/api/v3/documents?type=purchases&from=%00`, { headers: auth });
      expect(q.status, q.text).to.equal(400);
      expect(q.json.path).to.deep.equal(['query', 'from']);
    });

    it('Connect and credits: a surrogate in a field, a NUL in a key, a NUL in the path', async () => {
      const body = await c.newCompanyBody({ branchName: 'Head \udfff office' });
      const r = await c.post('/v3/connect/companies', body);
      expect(r.status, r.text).to.equal(400);
      expect(connectError(r)).to.include({ code: 'CONNECT_VALIDATION_ERROR' });
      expect(connectError(r).path).to.deep.equal(['branchName']);
      const key = await c.post('/v3/connect/credits/allowances/bulk', { ['op\u0000']: 1 }, { 'idempotency-key': 'k-nul', 'x-environment': 'sandbox' });
      expect(key.status, key.text).to.equal(400);
      expect(connectError(key).path).to.deep.equal(['op\u0000']);
      const path = await c.get('/v3/connect/companies/%00?sourceVersion=v1');
      expect(path.status, path.text).to.equal(400);
      expect(connectError(path).path).to.deep.equal(['path', 4]);
    });
  });

  describe('a __proto__ member: valid JSON, dropped at parse, never on a prototype', () => {
    it('Unify: the submission goes through without it; a value left empty by it is a 422 naming it', async () => {
      const text = JSON.stringify(u.request(uaeInvoice())).replace('"payload":{', '"payload":{"__proto__":{"polluted":true},');
      expect(text).to.contain('"__proto__"');
      const r = await call(`${t.url}/api/v3/unify`, { method: 'POST', headers: jsonHeaders({ authorization: `Bearer ${u.apiKey}`, 'new-api': 'true' }), rawBody: text });
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
      const emptied = JSON.stringify(u.request(uaeInvoice())).replace(/"issueDate":"[^"]*"/, '"issueDate":{"__proto__":null}');
      expect(emptied).to.contain('"issueDate":{"__proto__":null}');
      const bad = await call(`${t.url}/api/v3/unify`, { method: 'POST', headers: jsonHeaders({ authorization: `Bearer ${u.apiKey}`, 'new-api': 'true' }), rawBody: emptied });
      expect(bad.status, bad.text.slice(0, 300)).to.equal(422);
      expect(bad.json.errors[0]).to.include({ code: 'CORE-PRE-002' });
      expect(bad.json.errors[0].path).to.deep.equal(['header', 'issueDate']);
    });
  });

  describe('deep nesting: bounded at parse time, the family 400', () => {
    it('Connect and credit writes with an Idempotency-Key (the key hash never sees the deep body)', async () => {
      const connect = await call(`${t.url}/v3/connect/companies`, {
        method: 'POST',
        headers: jsonHeaders({ 'x-api-key': c.apiKey, 'idempotency-key': 'deep-1' }),
        rawBody: withDeep({ sourceName: 'x', extra: '__DEEP__' }, 10_000),
      });
      expect(connect.status, connect.text.slice(0, 300)).to.equal(400);
      expect(connectError(connect).code).to.equal('CONNECT_VALIDATION_ERROR');
      expect(connectError(connect).path!.slice(0, 2)).to.deep.equal(['extra', 0]);
      expect(connectError(connect).path).to.have.length(MAX_JSON_DEPTH);
      const credits = await call(`${t.url}/v3/connect/credits/allowances/bulk`, {
        method: 'POST',
        headers: jsonHeaders({ 'x-api-key': c.apiKey, 'idempotency-key': 'deep-2', 'x-environment': 'sandbox' }),
        rawBody: deepText(10_000),
      });
      expect(credits.status, credits.text.slice(0, 300)).to.equal(400);
      connectError(credits);
    });

    it('Unify: a deep array inside extensions, without a key', async () => {
      const payload = uaeInvoice();
      payload.extensions = { deep: '__DEEP__' };
      const r = await call(`${t.url}/api/v3/unify`, {
        method: 'POST',
        headers: jsonHeaders({ authorization: `Bearer ${u.apiKey}`, 'new-api': 'true' }),
        rawBody: withDeep(u.request(payload), 10_000),
      });
      expect(r.status, r.text.slice(0, 300)).to.equal(400);
      expect(r.json.code).to.equal('invalid_argument');
      expect(r.json.path.slice(0, 3)).to.deep.equal(['payload', 'extensions', 'deep']);
      const legacy = await call(`${t.url}/api/v3/unify`, {
        method: 'POST',
        headers: jsonHeaders({ authorization: `Bearer ${u.apiKey}` }),
        rawBody: withDeep({ action: 'submit', deep: '__DEEP__' }, 5000),
      });
      expect(legacy.status).to.equal(400);
      expect(legacy.json.status).to.equal('error');
    });

    it(`accepts nesting up to ${MAX_JSON_DEPTH} levels (then the route decides)`, async () => {
      const payload = uaeInvoice();
      payload.extensions = { deep: deep(MAX_JSON_DEPTH - 3) }; // body → payload → extensions → deep…
      const r = await u.submit(u.request(payload));
      expect(r.status, r.text.slice(0, 300)).to.not.equal(500);
      expect(r.json.message ?? '').to.not.match(/nested deeper/);
    });
  });

  describe("requests Node's HTTP parser refuses: JSON in the generic shape with a request id", () => {
    const expectGeneric = (r: { status: number; headers: Record<string, string>; body: string }, status: number) => {
      expect(r.status, r.body).to.equal(status);
      expect(r.headers['content-type']).to.contain('application/json');
      expect(r.headers['x-request-id']).to.match(/^req_/);
      const body = JSON.parse(r.body);
      expect(Object.keys(body).sort()).to.deep.equal(['code', 'message', 'requestId']);
      expect(body.requestId).to.equal(r.headers['x-request-id']);
      expect(schemaErrors({ $ref: '#/components/schemas/SystemError' }, body), 'the documented SystemError').to.deep.equal([]);
    };

    it('a control byte in a header value', async () => {
      expectGeneric(await rawRequest(t.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n'), 400);
    });

    it('raw non-ASCII bytes in the path and in the query', async () => {
      expectGeneric(await rawRequest(t.url, Buffer.concat([Buffer.from('GET /api/v3/documents/'), Buffer.from([0xe2, 0x82, 0xac]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])), 400);
      expectGeneric(await rawRequest(t.url, Buffer.concat([Buffer.from('GET /v3/connect/companies?q='), Buffer.from([0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])), 400);
    });

    it('headers over 16 KB', async () => {
      expectGeneric(await rawRequest(t.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431);
    });
  });

  describe('duplicate credentials are ambiguous: 401 in the family shape', () => {
    const twice = (path: string, header: string, value: string, extra = '') =>
      rawRequest(t.url, `GET ${path} HTTP/1.1\r\nHost: x\r\n${header}: ${value}\r\n${header}: ${value}\r\n${extra}Connection: close\r\n\r\n`);

    it('two Authorization headers, even with the same valid key', async () => {
      const unify = await twice('/api/v3/unify/requirements?country=AE&base=tax_invoice', 'Authorization', `Bearer ${u.apiKey}`);
      expect(unify.status).to.equal(401);
      expect(JSON.parse(unify.body)).to.deep.equal({ error: 'Unauthorized' });
      expect(unify.headers['x-request-id']).to.be.a('string');
      const docs = await twice('/api/v3/documents/doc_1?type=sales', 'Authorization', `Bearer ${u.apiKey}`);
      expect(docs.status).to.equal(401);
      expect(JSON.parse(docs.body).code).to.equal('invalid_api_key');
      const connect = await twice('/v3/connect/companies', 'Authorization', `Bearer ${u.apiKey}`);
      expect(connect.status).to.equal(401);
      expect(JSON.parse(connect.body).code).to.equal('invalid_api_key');
    });

    it('two X-API-Key headers on Connect', async () => {
      const r = await twice('/v3/connect/companies', 'X-API-Key', u.apiKey);
      expect(r.status).to.equal(401);
      expect(JSON.parse(r.body).code).to.equal('invalid_api_key');
      // One header still works.
      expect((await c.get('/v3/connect/companies')).status).to.equal(200);
    });
  });

  describe('environments never cross: a submission through a company of the other environment is 403', () => {
    let production: { apiKey: string };
    let productionSource: string;

    before(async () => {
      production = await t.key(c.workspaceId, { environment: 'production' });
      const prodClient = { ...c, apiKey: production.apiKey };
      const body = await c.newCompanyBody({ platformEnvironment: 'production' });
      const r = await call(`${t.url}/v3/connect/companies`, { method: 'POST', headers: { 'x-api-key': prodClient.apiKey }, body });
      expect(r.status, r.text).to.equal(201);
      productionSource = `${r.json.data.sourceName}:${r.json.data.sourceVersion}`;
    });

    const submitNew = (apiKey: string, environment: string, source: string) =>
      call(`${t.url}/api/v3/unify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'new-api': 'true' },
        body: { country: 'AE', environment, purpose: 'invoicing', source, documentType: { base: 'tax_invoice', modifiers: [] }, payload: uaeInvoice() },
      });

    it('new format: a production key through a sandbox company, and a sandbox key through a production company', async () => {
      const a = await submitNew(production.apiKey, 'production', u.source);
      expect(a.status, a.text).to.equal(403);
      expect(a.json).to.include({ code: 'permission_denied' });
      expect(a.json.path).to.deep.equal(['source']);
      expect(a.json.message).to.contain(u.source);
      const b = await submitNew(u.apiKey, 'sandbox', productionSource);
      expect(b.status, b.text).to.equal(403);
      expect(b.json).to.include({ code: 'permission_denied' });
      // Matching environments pass this check.
      expect((await submitNew(u.apiKey, 'sandbox', u.source)).status).to.equal(200);
    });

    it('earlier format: the same refusals in its envelope', async () => {
      const legacy = (apiKey: string, env: string, source: string) => {
        const i = source.lastIndexOf(':');
        return call(`${t.url}/api/v3/unify`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}` },
          body: {
            action: 'submit',
            purpose: 'invoicing',
            env,
            defaults: { country: 'AE', logicalDocumentType: 'TAX_INVOICE', source: { name: source.slice(0, i), version: source.slice(i + 1) } },
            invoices: [{ payload: uaeInvoice() }],
          },
        });
      };
      for (const r of [await legacy(production.apiKey, 'prod', u.source), await legacy(u.apiKey, 'simulation', productionSource)]) {
        expect(r.status, r.text).to.equal(403);
        expect(r.json).to.include({ status: 'error', code: 'PERMISSION_DENIED', data: null });
        expect(r.json.errors[0]).to.include({ code: 'PERMISSION_DENIED' });
        expect(r.json.errors[0].path).to.deep.equal(['defaults', 'source']);
      }
    });
  });

  describe('Connect onboarding: the key must serve the platform environment (docs/api/http.md)', () => {
    let prodKey: string;
    before(async () => {
      prodKey = (await t.key(c.workspaceId, { environment: 'production' })).apiKey;
    });
    const post = (apiKey: string, path: string, body: unknown) => call(`${t.url}${path}`, { method: 'POST', headers: { 'x-api-key': apiKey }, body });

    it('companies: a production key for sandbox, a sandbox key for production: 403, nothing onboarded', async () => {
      for (const [apiKey, environment] of [
        [prodKey, 'sandbox'],
        [prodKey, 'simulation'],
        [c.apiKey, 'production'],
      ] as const) {
        const body = await c.newCompanyBody({ platformEnvironment: environment });
        const r = await post(apiKey, '/v3/connect/companies', body);
        expect(r.status, r.text).to.equal(403);
        expect(connectError(r)).to.include({ code: 'CONNECT_ENVIRONMENT_MISMATCH', retryable: false });
        expect(connectError(r).path).to.deep.equal(['platformEnvironment']);
        const read = await call(`${t.url}/v3/connect/companies/${encodeURIComponent(body.sourceName)}?sourceVersion=v1`, { headers: { 'x-api-key': c.apiKey } });
        expect(read.status).to.equal(404);
      }
      const sim = await post(c.apiKey, '/v3/connect/companies', await c.newCompanyBody({ platformEnvironment: 'simulation' }));
      expect(sim.status, sim.text).to.equal(201);
    });

    it('onboarding jobs: the outer environment and each row', async () => {
      const row = async (environment?: string) => {
        const b = await c.newCompanyBody(environment ? { platformEnvironment: environment } : {});
        if (!environment) delete b.platformEnvironment;
        return b;
      };
      const outerProd = await post(prodKey, '/v3/connect/companies/onboarding-jobs', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: [await row()] });
      expect(outerProd.status, outerProd.text).to.equal(403);
      expect(connectError(outerProd).path).to.deep.equal(['platformEnvironment']);
      const outerSandbox = await post(c.apiKey, '/v3/connect/companies/onboarding-jobs', { countryCode: 'AE', platformEnvironment: 'production', rows: [await row()] });
      expect(outerSandbox.status, outerSandbox.text).to.equal(403);
      // A row naming an environment the key does not serve fails on its own; the other rows go on.
      const rows = [await row(), await row('production')];
      const rowProd = await post(c.apiKey, '/v3/connect/companies/onboarding-jobs', { countryCode: 'AE', platformEnvironment: 'sandbox', rows });
      expect(rowProd.status, rowProd.text).to.equal(200);
      expect(rowProd.json.data.rows.map((x: any) => x.errorCode ?? x.status)).to.deep.equal(['onboarded', 'CONNECT_ENVIRONMENT_MISMATCH']);
      expect(rowProd.json.data.rows[1].errorMessage).to.contain('production key is required');
      const prodRows = [await row('sandbox'), await row('simulation')];
      const rowSandbox = await post(prodKey, '/v3/connect/companies/onboarding-jobs', { countryCode: 'AE', platformEnvironment: 'production', rows: prodRows });
      expect(rowSandbox.status, rowSandbox.text).to.equal(200);
      expect(rowSandbox.json.data.rows.map((x: any) => x.errorCode)).to.deep.equal(['CONNECT_ENVIRONMENT_MISMATCH', 'CONNECT_ENVIRONMENT_MISMATCH']);
      for (const b of [rows[1]!, ...prodRows]) {
        const read = await call(`${t.url}/v3/connect/companies/${encodeURIComponent(b.sourceName)}?sourceVersion=v1`, { headers: { 'x-api-key': c.apiKey } });
        expect(read.status).to.equal(404);
      }
    });
  });

  describe('a key works on the very next request after it is created', () => {
    it('keys appended to the log and used at once, 30 times in a row', async () => {
      for (let i = 0; i < 30; i++) {
        const created = await createApiKey(
          t.service.runtime.store,
          { workspaceId: c.workspaceId, environment: 'sandbox', permission: 'read', role: 'member', expiresAt: null },
          { now: new Date(), actor: 'test' },
        );
        const r = await call(`${t.url}/v3/connect/companies`, { headers: { 'x-api-key': created.apiKey } });
        expect(r.status, `attempt ${i}: ${r.text}`).to.equal(200);
      }
    });

    it('keys made by the admin CLI (another process), used at once, 3 times in a row', async function () {
      this.timeout(300000); // each CLI run starts a Node process with the TypeScript loader
      for (let i = 0; i < 3; i++) {
        const out = await new Promise<string>((resolve, reject) =>
          execFile(
            process.execPath,
            ['--import', 'tsx', 'scripts/admin.ts', 'key', 'create', '--workspace', c.workspaceId, '--environment', 'sandbox', '--permission', 'read', '--role', 'member'],
            { env: { ...process.env, DATABASE_URL: testDb().url, EVENTSTORE_URL: '', LOG_LEVEL: 'silent' }, timeout: 90000 },
            (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout)),
          ),
        );
        const { apiKey } = JSON.parse(out) as { apiKey: string };
        const r = await call(`${t.url}/api/v3/documents/doc_unknown?type=sales`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect(r.status, `attempt ${i}: ${r.text}`).to.equal(404);
      }
    });

    it('an unknown key is still refused after the bounded wait', async () => {
      const r = await call(`${t.url}/v3/connect/companies`, { headers: { 'x-api-key': `eik_test_${freshName('nope').replace(/\W/g, '')}` } });
      expect(r.status).to.equal(401);
      expect(r.json.code).to.equal('invalid_api_key');
    });
  });
});
