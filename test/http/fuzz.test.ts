import { expect } from 'chai';
import fc from 'fast-check';
import { registeredRoutes, type RegisteredRoute } from '../../http/app.js';
import { call, startTestService, withoutProcesses, type TestService } from '../support/http.js';
import { expectFamilyShape } from '../support/envelope-shapes.js';
import { rawRequest } from '../support/raw-http.js';

/**
 * Random requests to every route the application registered — found by walking its routers at
 * run time, so routes added later are covered without editing this file: random JSON values,
 * strings with control characters and lone surrogates (in bodies, queries and path
 * parameters), deep nesting, random methods, keys and headers. Asserted: never a 5xx, always
 * the family's envelope, always an X-Request-Id.
 */

/** Characters that break naive code: controls (NUL included), lone surrogates, RTL marks, emoji, wildcards. */
const nastyChar = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\u007f', '\u200f', '\u202e', '\ufeff', '😀', '%', '_', '*', '"', '\\', '/', '?', '#', '..', 'é', '٣'),
  fc.string({ minLength: 1, maxLength: 1 }),
);
const nastyString = fc.array(nastyChar, { maxLength: 24 }).map((cs) => cs.join(''));

/** A value for a path parameter: plausible ids, and hostile text. */
const paramValue = fc.oneof(
  fc.constantFrom('0123456789abcdef01234567', 'doc_123', 'cbj_000000000000000000000000', 'cex_000000000000000000000000', 'My Source', 'x'.repeat(300)),
  nastyString.filter((s) => s.length > 0),
);

/** Percent-encodes every UTF-8 byte (lone surrogates become U+FFFD; raw bytes are tried separately). */
const encode = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('');
/** Percent-encodes each UTF-16 unit of a lone surrogate as its (invalid) three UTF-8-style bytes. */
const encodeRaw = (s: string) =>
  [...s]
    .map((ch) => {
      const c = ch.charCodeAt(0);
      if (ch.length === 1 && c >= 0xd800 && c <= 0xdfff) return `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`;
      return encode(ch);
    })
    .join('');

function fillPath(route: RegisteredRoute, values: string[], raw: boolean): string {
  let i = 0;
  return route.path.replace(/:(\w+)\??/g, () => (raw ? encodeRaw : encode)(values[i++ % values.length] ?? 'x'));
}

const deepText = (depth: number, open: '[' | '{"a":') => (open === '[' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`);


describe('HTTP fuzz: random requests to every registered route', function () {
  this.timeout(240000);
  let t: TestService;
  let routes: RegisteredRoute[];
  let keys: Record<string, string>;

  before(async () => {
    t = await startTestService({ processes: withoutProcesses });
    routes = registeredRoutes(t.service.app);
    const tenant = await t.tenant();
    keys = {
      rw: tenant.apiKey,
      ro: (await t.key(tenant.workspaceId, { permission: 'read' })).apiKey,
      prod: (await t.key(tenant.workspaceId, { environment: 'production' })).apiKey,
      bogus: 'eik_test_bogus',
      empty: '',
      long: 'x'.repeat(300),
    };
  });
  after(async () => t.close());

  it('finds the routes of every family on the routers', () => {
    const families = new Set(routes.map((r) => r.family));
    for (const f of ['system', 'connect', 'unify', 'documents']) expect(families, f).to.include(f);
    expect(routes.length).to.be.greaterThan(20);
    expect(routes.some((r) => r.path.includes(':'))).to.equal(true);
  });

  it('never a 5xx, always the family envelope and an X-Request-Id (1,200 requests)', async () => {
    const body = fc.oneof(
      { weight: 1, arbitrary: fc.constant<{ kind: 'none' }>({ kind: 'none' }) },
      { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ kind: 'json' as const, text: JSON.stringify(v) ?? 'null' })) },
      {
        weight: 3,
        arbitrary: fc.dictionary(fc.oneof(nastyString, fc.constantFrom('sourceName', 'payload', 'invoices', 'rows', 'operations', 'action', 'env', 'legalName')), fc.oneof(nastyString, fc.jsonValue({ maxDepth: 2 })), { maxKeys: 6 })
          .map((v) => ({ kind: 'json' as const, text: JSON.stringify(v) })),
      },
      { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 50, max: 3000 }), fc.constantFrom('[' as const, '{"a":' as const)).map(([d, open]) => ({ kind: 'json' as const, text: deepText(d, open) })) },
      { weight: 1, arbitrary: nastyString.map((s) => ({ kind: 'json' as const, text: s })) },
    );
    const request = fc.record({
      route: fc.integer({ min: 0, max: routes.length - 1 }),
      params: fc.array(paramValue, { minLength: 1, maxLength: 3 }),
      rawParams: fc.boolean(),
      method: fc.oneof(fc.constant('route' as const), fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
      query: fc.array(fc.tuple(fc.oneof(fc.constantFrom('type', 'from', 'to', 'limit', 'page', 'cursor', 'sourceVersion', 'search', 'country', 'base', 'modifiers'), nastyString), fc.oneof(nastyString, fc.constantFrom('sales', 'purchases', '2026-01-01', '101', '-1', 'v1'))), { maxLength: 3 }),
      key: fc.constantFrom('rw', 'rw', 'rw', 'ro', 'prod', 'bogus', 'empty', 'long'),
      scheme: fc.constantFrom('bearer', 'x-api-key', 'both'),
      newApi: fc.constantFrom(undefined, 'true', 'false'),
      contentType: fc.constantFrom('application/json', 'application/json', 'text/plain', undefined),
      extraHeader: fc.constantFrom(undefined, ['x-environment', 'sandbox'], ['x-environment', 'mars'], ['idempotency-key', 'fuzz-key'], ['if-match', '"1"'], ['if-none-match', '*'], ['x-client-id', 'c']),
      body,
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const route = routes[r.route]!;
        const method = r.method === 'route' ? (route.methods[0] ?? 'GET') : r.method;
        const query = r.query.map(([k, v]) => `${encode(k)}=${r.rawParams ? encodeRaw(v) : encode(v)}`).join('&');
        const path = `${fillPath(route, r.params, r.rawParams)}${query ? `?${query}` : ''}`;
        const apiKey = keys[r.key]!;
        const headers: Record<string, string> = {};
        if (apiKey) {
          if (r.scheme !== 'x-api-key') headers.authorization = `Bearer ${apiKey}`;
          if (r.scheme !== 'bearer') headers['x-api-key'] = apiKey;
        }
        if (r.newApi) headers['new-api'] = r.newApi;
        if (r.extraHeader) headers[r.extraHeader[0]] = r.extraHeader[1];
        let rawBody: string | undefined;
        if (r.body.kind === 'json' && method !== 'GET') {
          rawBody = r.body.text;
          if (r.contentType) headers['content-type'] = r.contentType;
        }
        const res = await call(`${t.url}${path}`, { method, headers, rawBody });
        // The client resolves dot segments (`/api/v3/documents/..` is sent as `/api/v3/`): the
        // family is the one of the path actually sent.
        const sent = new URL(path, t.url);
        expectFamilyShape(`${sent.pathname}${sent.search}`, headers, res);
      }),
      { numRuns: 1200 },
    );
  });

  it('requests with raw bytes the HTTP parser may refuse: never a 5xx, always JSON and an X-Request-Id (150 requests)', async () => {
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: routes.length - 1 }), bytes, fc.constantFrom('path', 'query', 'header'), async (i, junk, where) => {
        const route = routes[i]!;
        const path = Buffer.from(fillPath(route, ['0123456789abcdef01234567'], false));
        const junkBuf = Buffer.from(junk);
        const target = where === 'path' ? Buffer.concat([path, junkBuf]) : where === 'query' ? Buffer.concat([path, Buffer.from('?q='), junkBuf]) : path;
        const header = where === 'header' ? Buffer.concat([Buffer.from('X-Junk: a'), junkBuf, Buffer.from('\r\n')]) : Buffer.alloc(0);
        const res = await rawRequest(
          t.url,
          Buffer.concat([Buffer.from('GET '), target, Buffer.from(' HTTP/1.1\r\nHost: x\r\n'), header, Buffer.from(`Authorization: Bearer ${keys.rw}\r\nConnection: close\r\n\r\n`)]),
        );
        const where_ = `${res.status} ${route.path} ${where} ${Buffer.from(junk).toString('hex')}: ${res.body.slice(0, 200)}`;
        expect(res.status, where_).to.be.within(200, 499);
        expect(res.headers['x-request-id'], where_).to.be.a('string');
        if (res.status >= 400 && !(res.status === 401 && res.headers['content-type']?.startsWith('text/plain'))) {
          expect(res.headers['content-type'], where_).to.contain('application/json');
          expect(() => JSON.parse(res.body), where_).to.not.throw();
        }
      }),
      { numRuns: 150 },
    );
  });
});
