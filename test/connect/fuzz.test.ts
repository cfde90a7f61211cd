import { expect } from 'chai';
import fc from 'fast-check';
import { startTestService, type TestService } from '../support/http.js';
import { clientFor, freshName, newClient, type Client } from './support.js';

/**
 * Random bodies, queries and path segments against every Connect endpoint: never a 5xx, and
 * always the Connect envelope ({success:true, data, meta} or {success:false, error, meta}).
 */
describe('Connect fuzz: every body, query and path', function () {
  this.timeout(300000);
  let t: TestService;
  let c: Client;
  let readOnly: Client;
  let company: Record<string, any>;
  const tins: { tin: string; email: string }[] = [];

  before(async () => {
    t = await startTestService();
    c = await newClient(t);
    readOnly = clientFor(t, { workspaceId: c.workspaceId, keyId: '', apiKey: (await t.key(c.workspaceId, { permission: 'read' })).apiKey });
    company = await c.onboard({ sourceName: 'Fuzz Source' });
    for (let i = 0; i < 20; i++) {
      const body = await c.newCompanyBody();
      tins.push({ tin: body.tin, email: body.contactPersonEmail });
    }
  });
  after(async () => t.close());

  // Strings with the characters that break naive code: NUL, lone surrogates, RTL, emoji, wildcards.
  const nasty = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.string({ maxLength: 30, unit: 'binary' }),
    fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '%', '_', '\\', "'; drop table documents; --", 'فاتورة', '😀', 'a/b', '..', 'AE', 'ae', 'SA'),
    fc.stringMatching(/^\d{8,12}$/),
  );
  const scalar = fc.oneof(nasty, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
  const value = fc.oneof({ weight: 4, arbitrary: scalar }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });

  const companyField = fc.constantFrom(
    'sourceName', 'sourceVersion', 'countryCode', 'tin', 'contactPersonEmail', 'contactPersonName', 'contactPersonMobile',
    'branchName', 'platformEnvironment', 'companyId', 'workspaceId', 'metadata', 'status', 'legalName', 'legalIdentifier', 'extra',
  );
  /** A valid-looking company body (authorized tin) with some fields replaced, removed or added. */
  const companyBody = fc
    .record({
      who: fc.integer({ min: 0, max: 19 }),
      edits: fc.array(fc.tuple(companyField, fc.option(value, { nil: undefined })), { maxLength: 3 }),
      env: fc.constantFrom('sandbox', 'simulation', 'production', 'prod'),
    })
    .map(({ who, edits, env }) => {
      const body: Record<string, unknown> = {
        sourceName: freshName('Fuzz'),
        sourceVersion: 'v1',
        countryCode: 'AE',
        tin: tins[who]!.tin,
        contactPersonEmail: tins[who]!.email,
        branchName: 'HQ',
        platformEnvironment: env,
      };
      for (const [field, v] of edits) {
        if (v === undefined) delete body[field];
        else body[field] = v;
      }
      return body;
    });
  const anyBody = fc.oneof(
    { weight: 3, arbitrary: companyBody },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(companyField, value, { maxKeys: 6 }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const branchBody = fc.oneof(
    fc.record({ branchName: nasty, sourceName: nasty, sourceVersion: nasty }),
    fc.dictionary(fc.constantFrom('branchName', 'sourceName', 'sourceVersion', 'branchId', 'x'), value, { maxKeys: 4 }),
    fc.jsonValue({ maxDepth: 3 }),
  );
  const pathName = fc.oneof(nasty, fc.constant('Fuzz Source'), fc.constant('onboarding-jobs'));
  const queryValue = fc.oneof(nasty, fc.constantFrom('0', '1', '100', '101', '-1', '1e3', 'v1', 'active', 'inactive', '2026-01-01', '2026-13-01'));
  const query = fc.dictionary(
    fc.constantFrom('page', 'limit', 'countryCode', 'sourceVersion', 'status', 'search', 'companyId', 'documentType', 'from', 'to', 'x'),
    queryValue,
    { maxKeys: 4 },
  );
  const qs = (q: Record<string, string>) => {
    const s = Object.entries(q).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return s ? `?${s}` : '';
  };
  const safeEncode = (s: string) => {
    try {
      return encodeURIComponent(s);
    } catch {
      return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x'));
    }
  };
  const qsSafe = (q: Record<string, string>) => qs(Object.fromEntries(Object.entries(q).map(([k, v]) => [k, v.replace(/[\ud800-\udfff]/g, '\ufffd')])));

  const request = fc.oneof(
    anyBody.map((body) => ({ method: 'POST', path: '/v3/connect/companies', body })),
    fc.record({ rows: fc.array(fc.oneof(companyBody, fc.jsonValue({ maxDepth: 2 })), { maxLength: 5 }), env: fc.constantFrom('sandbox', 'production', 'x'), country: fc.constantFrom('AE', 'SA', 1), extra: fc.option(fc.dictionary(fc.constantFrom('filename', 'jobId'), value, { maxKeys: 2 }), { nil: undefined }) }).map((j) => ({
      method: 'POST',
      path: '/v3/connect/companies/onboarding-jobs',
      body: { countryCode: j.country, platformEnvironment: j.env, rows: j.rows, ...(j.extra ?? {}) },
    })),
    fc.tuple(fc.oneof(fc.constant('own'), nasty), branchBody).map(([id, body]) => ({
      method: 'POST',
      path: `/v3/connect/companies/${id === 'own' ? company.companyId : safeEncode(id)}/branches`,
      body,
    })),
    fc.tuple(fc.oneof(fc.constant('own'), nasty), fc.oneof(fc.array(branchBody, { maxLength: 4 }).map((b) => ({ branches: b })), fc.jsonValue({ maxDepth: 3 }))).map(([id, body]) => ({
      method: 'POST',
      path: `/v3/connect/companies/${id === 'own' ? company.companyId : safeEncode(id)}/branches/bulk`,
      body,
    })),
    fc.tuple(pathName, query, fc.constantFrom('GET', 'DELETE')).map(([name, q, method]) => ({ method, path: `/v3/connect/companies/${safeEncode(name)}${qsSafe(q)}`, body: undefined })),
    fc.tuple(pathName, fc.oneof(fc.constant({ sourceVersion: 'v1' } as Record<string, string>), query), fc.oneof(fc.dictionary(fc.constantFrom('sourceVersion', 'legalName', 'legalIdentifier', 'countryCode', 'status', 'metadata', 'x'), value, { maxKeys: 4 }), fc.jsonValue({ maxDepth: 3 }))).map(([name, q, body]) => ({
      method: 'PATCH',
      path: `/v3/connect/companies/${safeEncode(name)}${qsSafe(q)}`,
      body,
    })),
    query.map((q) => ({ method: 'GET', path: `/v3/connect/companies${qsSafe(q)}`, body: undefined })),
    fc.tuple(query, fc.constantFrom(undefined, 'sandbox', 'production', 'PRODUCTION', 'x', '')).map(([q, env]) => ({
      method: 'GET',
      path: `/v3/connect/invoices/counts${qsSafe(q)}`,
      body: undefined,
      headers: env === undefined ? {} : { 'x-environment': env },
    })),
  );

  it('never answers 5xx and always answers in the Connect envelope (400 requests)', async () => {
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(request, fc.boolean(), async (req, useReadOnly) => {
        const who = useReadOnly ? readOnly : c;
        const headers: Record<string, string> = { 'x-api-key': who.apiKey, ...((req as { headers?: Record<string, string> }).headers ?? {}) };
        const init: RequestInit = { method: req.method, headers };
        if (req.body !== undefined) {
          init.body = JSON.stringify(req.body);
          headers['content-type'] = 'application/json';
        }
        const res = await fetch(`${t.url}${req.path}`, init);
        const text = await res.text();
        const where = `${req.method} ${req.path} ${String(init.body).slice(0, 300)} → ${res.status} ${text.slice(0, 300)}`;
        expect(res.status, where).to.be.below(500);
        expect(res.headers.get('content-type') ?? '', where).to.match(/^application\/json/);
        const json = JSON.parse(text);
        expect(json.meta, where).to.be.an('object');
        expect(json.meta, where).to.include.keys('requestId', 'timestamp', 'workspaceId');
        if (res.status < 400) {
          expect(json.success, where).to.equal(true);
          expect(json, where).to.have.property('data');
          ok++;
        } else {
          expect(json.success, where).to.equal(false);
          expect(json.error.code, where).to.be.a('string');
          expect(json.error.message, where).to.be.a('string');
        }
      }),
      { numRuns: 400 },
    );
    expect(ok).to.be.greaterThan(0);
  });
});
