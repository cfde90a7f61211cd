/**
 * The OpenAPI document is held true: it passes an OpenAPI 3.1 validator, every route the Koa
 * routers register is documented and every documented operation exists, every example
 * validates against its schema, and it is served at /openapi.json without authentication.
 * (Every response of every HTTP suite is checked against it in test/support/openapi-check.ts.)
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { registeredRoutes } from '../../http/app.js';
import { openApiDocument } from '../../http/openapi/index.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/values.js';
import { call, startTestService, withoutProcesses, type TestService } from '../support/http.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `/v3/connect/companies/:sourceName` → `/v3/connect/companies/{sourceName}`, without a trailing slash. */
function toTemplate(path: string): string {
  const t = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  return t.length > 1 ? t.replace(/\/+$/, '') : t;
}

describe('OpenAPI 3.1 document', function () {
  this.timeout(60000);
  let t: TestService;
  const doc = openApiDocument() as { paths: Record<string, Record<string, any>>; webhooks: Record<string, unknown>; components: any };

  before(async () => {
    t = await startTestService({ processes: withoutProcesses, startWorkers: false });
  });
  after(async () => t.close());

  it('passes an OpenAPI 3.1 validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)?.slice(0, 3000)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('documents every route the routers register, and nothing else', () => {
    const registered = new Set<string>();
    for (const route of registeredRoutes(t.service.app)) {
      for (const m of route.methods) if (METHODS.includes(m.toLowerCase())) registered.add(`${m.toUpperCase()} ${toTemplate(route.path)}`);
    }
    expect(registered.size).to.be.greaterThan(20);
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) for (const m of METHODS) if (item[m]) documented.add(`${m.toUpperCase()} ${path}`);
    expect([...registered].filter((r) => !documented.has(r)), 'registered but not documented').to.deep.equal([]);
    // The AS4 endpoint exists only on an instance configured as a Peppol access point (this one is
    // not; test/peppol/access-point.test.ts checks it is registered there).
    expect([...documented].filter((d) => !registered.has(d)), 'documented but not registered').to.deep.equal(['POST /as4']);
  });

  it('documents POST /as4 for other access points: its own tag, no key, multipart/related or SOAP 1.2 in, a signed SOAP answer out, 503 with Retry-After when its worker threads are busy, 404 here without an access point', async () => {
    const op = doc.paths['/as4']!.post;
    expect(op.tags).to.deep.equal(['Peppol AS4']);
    expect(op.security).to.deep.equal([]);
    expect(Object.keys(op.requestBody.content)).to.deep.equal(['multipart/related', 'application/soap+xml']);
    expect(Object.keys(op.responses)).to.have.members(['200', '400', '404', '413', '500', '503']);
    expect(Object.keys(op.responses['200'].content)).to.deep.equal(['application/soap+xml']);
    expect(Object.keys(op.responses['503'].headers)).to.include('Retry-After');
    expect(op.responses['200'].description).to.contain('eb:Receipt').and.contain('eb:Error').and.contain('EBMS:0102');
    // Through the response check of `call`: the 404 of an instance without an access point is the documented one.
    const r = await call(`${t.url}/as4`, { method: 'POST', headers: { 'content-type': 'multipart/related; boundary=b' }, rawBody: '--b--' });
    expect(r.status, r.text).to.equal(404);
    expect(r.json.code).to.equal('not_found');
  });

  it('gives every operation an id, a tag, its family\'s security and its error statuses', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        const op = item[m];
        if (!op) continue;
        expect(ids.has(op.operationId), op.operationId).to.equal(false);
        ids.add(op.operationId);
        expect(op.tags, path).to.have.length(1);
        const statuses = Object.keys(op.responses);
        expect(statuses.some((s) => s.startsWith('2')), `${m} ${path}`).to.equal(true);
        expect(statuses, `${m} ${path}`).to.include('500');
        if (path.startsWith('/v3/connect')) {
          expect(op.security, path).to.deep.equal([{ apiKeyAuth: [] }, { bearerAuth: [] }]);
          expect(statuses, path).to.include.members(['400', '401', '429']);
        } else if (path.startsWith('/api/v3/')) {
          expect(op.security, path).to.deep.equal([{ bearerAuth: [] }]);
          expect(statuses, path).to.include.members(['400', '401']);
        }
      }
    }
  });

  it('has examples (recorded from real responses), each valid against its schema', async () => {
    const { schemaErrors } = await import('../support/openapi-check.js');
    let examples = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        for (const [status, res] of Object.entries((item[m]?.responses ?? {}) as Record<string, { content?: Record<string, { schema: unknown; example?: unknown }> }>)) {
          for (const [type, media] of Object.entries(res.content ?? {})) {
            if (media.example === undefined) continue;
            examples++;
            expect(schemaErrors(media.schema, media.example), `${m} ${path} ${status} ${type}`).to.deep.equal([]);
          }
        }
      }
    }
    expect(examples).to.be.greaterThan(10);
  });

  it('describes every event a webhook subscription can name (the credit events of docs/api/webhooks.md and purchase.invoice.stored) under webhooks', () => {
    expect(Object.keys(doc.webhooks)).to.have.members([...WEBHOOK_EVENT_TYPES]);
    expect(WEBHOOK_EVENT_TYPES.filter((e) => e.startsWith('isv.credits.'))).to.have.length(10);
  });

  it('is served at GET /openapi.json without authentication', async () => {
    const r = await call(`${t.url}/openapi.json`);
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal(JSON.parse(JSON.stringify(doc)));
  });

  it('refuses, through the response check, a field or a status the document does not name', async () => {
    const { checkResponseAgainstDocument } = await import('../support/openapi-check.js');
    const headers = new Headers({ 'content-type': 'application/json' });
    expect(() => checkResponseAgainstDocument('GET', `${t.url}/healthz`, { status: 200, headers, text: '{"status":"ok","extra":1}', json: { status: 'ok', extra: 1 } })).to.throw(/extra/);
    expect(() => checkResponseAgainstDocument('GET', `${t.url}/healthz`, { status: 201, headers, text: '{"status":"ok"}', json: { status: 'ok' } })).to.throw(/not documented/);
    expect(() => checkResponseAgainstDocument('GET', `${t.url}/nowhere`, { status: 200, headers, text: '{}', json: {} })).to.throw(/not a documented operation/);
  });

  it('checks response headers: a declared required one must be sent, a watched one must be declared', async () => {
    const { checkResponseAgainstDocument } = await import('../support/openapi-check.js');
    const ok = { status: 200, text: '{"status":"ok"}', json: { status: 'ok' } };
    expect(() => checkResponseAgainstDocument('GET', `${t.url}/healthz`, { ...ok, headers: new Headers({ 'content-type': 'application/json' }) })).to.throw(/X-Request-Id is missing/);
    expect(() => checkResponseAgainstDocument('GET', `${t.url}/healthz`, { ...ok, headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'r1', location: '/x' }) })).to.throw(/Location is not declared/);
    expect(() => checkResponseAgainstDocument('GET', `${t.url}/healthz`, { ...ok, headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'r1' }) })).to.not.throw();
    const unauthorized = doc.paths['/api/v3/unify']!.post.responses['401'];
    expect(unauthorized.headers['WWW-Authenticate'].schema).to.deep.equal({ type: 'string', pattern: '^Bearer ' });
  });

  it('has real request examples (examples/), each valid against its request schema', async () => {
    const { schemaErrors } = await import('../support/openapi-check.js');
    let examples = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        const media = item[m]?.requestBody?.content?.['application/json'] as { schema: unknown; examples?: Record<string, { value: unknown }> } | undefined;
        for (const [name, example] of Object.entries(media?.examples ?? {})) {
          examples++;
          expect(schemaErrors(media!.schema, example.value), `${m} ${path} ${name}`).to.deep.equal([]);
        }
      }
    }
    expect(examples).to.be.at.least(5);
    const typo = structuredClone(doc.paths['/api/v3/unify']!.post.requestBody.content['application/json'].examples.aeTaxInvoice.value);
    typo.payload.header.documentNumbr = typo.payload.header.documentNumber;
    expect(schemaErrors({ $ref: '#/components/schemas/UnifySubmission' }, typo).join(' ')).to.contain('must NOT have additional properties');
  });
});
