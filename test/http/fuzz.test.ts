import fc from 'fast-check';
import { call, startTestService, type TestService } from '../support/http.js';
import { expectFamilyShape } from '../support/envelope-shapes.js';

/**
 * Random headers, methods and bodies against every route family: never a 5xx, always the
 * family's envelope. Later capabilities add their routes to ROUTES.
 */
export const ROUTES = [
  '/healthz',
  '/readyz',
  '/api/v3/unify',
  '/api/v3/unify/requirements',
  '/api/v3/documents',
  '/api/v3/documents/doc_123',
  '/api/v3/documents/doc_123/status',
  '/invoices/query',
  '/v3/connect/companies',
  '/v3/connect/companies/My%20Source',
  '/v3/connect/companies/0123456789abcdef01234567/branches',
  '/v3/connect/companies/0123456789abcdef01234567/branches/bulk',
  '/v3/connect/companies/onboarding-jobs',
  '/v3/connect/invoices/counts',
  '/v3/connect/credits/pool',
  '/v3/connect/credits/allowances',
  '/v3/connect/credits/allowances/0123456789abcdef01234567',
  '/v3/connect/credits/allowances/0123456789abcdef01234567/current',
  '/v3/connect/credits/allowances/0123456789abcdef01234567/scheduled',
  '/v3/connect/credits/allowances/0123456789abcdef01234567/pause',
  '/v3/connect/credits/allowances/0123456789abcdef01234567/resume',
  '/v3/connect/credits/allowances/bulk',
  '/v3/connect/credits/allowances/bulk/cbj_000000000000000000000000',
  '/v3/connect/credits/transactions',
  '/v3/connect/credits/exports',
  '/v3/connect/credits/exports/cex_000000000000000000000000',
  '/v3/connect/credits/exports/cex_000000000000000000000000/download',
  '/v3/connect/nowhere',
  '/nowhere',
];

describe('HTTP fuzz: random requests to every route', function () {
  this.timeout(180000);
  let t: TestService;
  let keys: { readWrite: string; readOnly: string; production: string };

  before(async () => {
    t = await startTestService();
    const tenant = await t.tenant();
    keys = {
      readWrite: tenant.apiKey,
      readOnly: (await t.key(tenant.workspaceId, { permission: 'read' })).apiKey,
      production: (await t.key(tenant.workspaceId, { environment: 'production' })).apiKey,
    };
  });
  after(async () => t.close());

  it('never answers 5xx and always answers in the family envelope (3,000 requests)', async () => {
    const key = fc.constantFrom('rw', 'ro', 'prod', 'bogus', '', 'x'.repeat(300));
    const jsonValue = fc.jsonValue({ maxDepth: 4 });
    const body = fc.oneof(
      fc.constant(undefined),
      jsonValue.map((v) => ({ json: v })),
      fc.string({ maxLength: 200 }).map((s) => ({ raw: s })),
      fc.record({ invoices: fc.array(jsonValue, { maxLength: 12 }), action: fc.constantFrom('submit', 'list', 'x') }).map((v) => ({ json: v })),
    );
    const request = fc.record({
      route: fc.constantFrom(...ROUTES),
      suffix: fc.constantFrom('', '?type=sales', '?type=purchases&from=2026-01-01', '?limit=101', '?page=-1', '?x=%ZZ', '/extra'),
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
      key,
      scheme: fc.constantFrom('bearer', 'x-api-key', 'both', 'basic'),
      newApi: fc.constantFrom(undefined, 'true', 'false', 'TRUE'),
      contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined),
      extraHeader: fc.constantFrom(undefined, ['x-environment', 'sandbox'], ['x-environment', 'mars'], ['idempotency-key', 'k1'], ['if-match', '"1"'], ['if-none-match', '*'], ['x-client-id', 'c']),
      body,
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const apiKey = { rw: keys.readWrite, ro: keys.readOnly, prod: keys.production }[r.key] ?? r.key;
        const headers: Record<string, string> = {};
        if (apiKey) {
          if (r.scheme === 'bearer' || r.scheme === 'both') headers.authorization = `Bearer ${apiKey}`;
          if (r.scheme === 'x-api-key' || r.scheme === 'both') headers['x-api-key'] = apiKey;
          if (r.scheme === 'basic') headers.authorization = `Basic ${apiKey}`;
        }
        if (r.newApi) headers['new-api'] = r.newApi;
        if (r.extraHeader) headers[r.extraHeader[0]] = r.extraHeader[1];
        let rawBody: string | undefined;
        if (r.body && r.method !== 'GET') {
          rawBody = 'json' in r.body ? JSON.stringify(r.body.json) : r.body.raw;
          if (r.contentType) headers['content-type'] = r.contentType;
        }
        const path = `${r.route}${r.suffix}`;
        const res = await call(`${t.url}${path}`, { method: r.method, headers, rawBody });
        expectFamilyShape(path, headers, res);
      }),
      { numRuns: 3000 },
    );
  });
});
