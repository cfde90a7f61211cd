import { expect } from 'chai';
import { execute } from '../../commands/execute.js';
import { sourceClaimDecider, sourceClaimStream } from '../../domain/connect/source-claim.js';
import { ManualClock } from '../../platform/clock.js';
import { startTestService, type TestService } from '../support/http.js';
import { clientFor, connectError, freshName, freshTin, newClient, type Client } from './support.js';

const COMPANIES = '/v3/connect/companies';

describe('Connect: POST /v3/connect/companies (the Connect section of the OpenAPI document)', function () {
  this.timeout(60000);
  let t: TestService;
  let c: Client;

  before(async () => {
    t = await startTestService();
    c = await newClient(t);
  });
  after(async () => t.close());

  it('onboards a UAE company: 201 with data and meta exactly as the Connect section of the OpenAPI document', async () => {
    const body = await c.newCompanyBody();
    const r = await c.post(COMPANIES, body);
    expect(r.status).to.equal(201);
    expect(r.json.success).to.equal(true);
    expect(r.json.meta).to.have.all.keys('requestId', 'timestamp', 'workspaceId');
    expect(r.json.meta.workspaceId).to.equal(c.workspaceId);
    const d = r.json.data;
    expect(d).to.have.all.keys(
      'companyId', 'sourceId', 'branchId', 'peppolParticipantId', 'legalName', 'legalNameArabic', 'tin', 'vatTrn',
      'sourceName', 'sourceVersion', 'countryCode', 'branchName', 'contactPersonName', 'contactPersonEmail',
      'contactPersonMobile', 'platformEnvironment', 'userGivenBranchId', 'readyForInvoicing', 'mappingReadiness',
      'createdAt', 'updatedAt',
    );
    expect(d.companyId).to.match(/^[0-9a-f]{24}$/);
    expect(d.sourceId).to.not.equal(d.branchId);
    expect(d.sourceId).to.not.equal(d.companyId);
    expect(d.peppolParticipantId).to.equal(`0235:${body.tin}`);
    expect(d.tin).to.equal(body.tin);
    expect(d.legalName).to.equal(`Company ${body.tin} LLC`);
    expect(d.vatTrn).to.equal(`${body.tin}00003`);
    expect(d).to.include({
      sourceName: body.sourceName,
      sourceVersion: 'v1',
      countryCode: 'AE',
      branchName: 'Head office',
      contactPersonName: 'Aisha Khan',
      contactPersonEmail: body.contactPersonEmail,
      contactPersonMobile: '+971501234567',
      platformEnvironment: 'sandbox',
      readyForInvoicing: true,
    });
    expect(d.userGivenBranchId).to.be.a('string').and.not.empty;
    // A new workspace assigns the built-in identity template automatically.
    expect(d.mappingReadiness).to.deep.equal({ status: 'READY', templateId: 'core-identity-ae-1' });
    expect(Date.parse(d.createdAt)).to.not.be.NaN;
  });

  it('leaves the optional contact fields out when they are not sent', async () => {
    const body = await c.newCompanyBody();
    delete body.contactPersonName;
    delete body.contactPersonMobile;
    const r = await c.post(COMPANIES, body);
    expect(r.status).to.equal(201);
    expect(r.json.data).to.not.have.any.keys('contactPersonName', 'contactPersonMobile');
  });

  it('is visible to a read right after the write', async () => {
    const d = await c.onboard();
    const r = await c.get(`${COMPANIES}?search=${encodeURIComponent(d.sourceName)}`);
    expect(r.status).to.equal(200);
    expect(r.json.data.map((i: any) => i.sourceId)).to.deep.equal([d.sourceId]);
  });

  describe('body rules → 400 CONNECT_VALIDATION_ERROR with the field in error.path', () => {
    const cases: [string, (b: Record<string, any>) => void, string[]][] = [
      ['an unknown field', (b) => (b.favouriteColour = 'blue'), ['favouriteColour']],
      ['companyId (system-managed)', (b) => (b.companyId = 'a'.repeat(24)), ['companyId']],
      ['sourceId (system-managed)', (b) => (b.sourceId = 'src_1'), ['sourceId']],
      ['branchId (system-managed)', (b) => (b.branchId = 'br_1'), ['branchId']],
      ['peppolParticipantId (system-managed)', (b) => (b.peppolParticipantId = '0235:1'), ['peppolParticipantId']],
      ['workspaceId (system-managed)', (b) => (b.workspaceId = 'ws_x'), ['workspaceId']],
      ['a missing sourceName', (b) => delete b.sourceName, ['sourceName']],
      ['an empty sourceName', (b) => (b.sourceName = ''), ['sourceName']],
      ['a blank sourceVersion', (b) => (b.sourceVersion = '   '), ['sourceVersion']],
      ['a missing branchName', (b) => delete b.branchName, ['branchName']],
      ['a missing contactPersonEmail', (b) => delete b.contactPersonEmail, ['contactPersonEmail']],
      ['a malformed contactPersonEmail', (b) => (b.contactPersonEmail = 'not-an-email'), ['contactPersonEmail']],
      ['a 9-digit tin', (b) => (b.tin = '123456789'), ['tin']],
      ['an 11-digit tin', (b) => (b.tin = '12345678901'), ['tin']],
      ['a tin with a letter', (b) => (b.tin = '12345678x0'), ['tin']],
      ['a numeric tin', (b) => (b.tin = 1234567890), ['tin']],
      ['a mobile with a space', (b) => (b.contactPersonMobile = '+971 501234567'), ['contactPersonMobile']],
      ['a mobile with a plus inside', (b) => (b.contactPersonMobile = '971+501234567'), ['contactPersonMobile']],
      ['a mobile with letters', (b) => (b.contactPersonMobile = '+97150abc'), ['contactPersonMobile']],
      ['an unknown platformEnvironment', (b) => (b.platformEnvironment = 'staging'), ['platformEnvironment']],
      ['a missing platformEnvironment', (b) => delete b.platformEnvironment, ['platformEnvironment']],
      ['a missing countryCode', (b) => delete b.countryCode, ['countryCode']],
      ['a NUL character', (b) => (b.branchName = 'Head\u0000office'), ['branchName']],
      ['a 256-character source name', (b) => (b.sourceName = 'x'.repeat(256)), ['sourceName']],
    ];
    for (const [what, change, path] of cases) {
      it(`refuses ${what}`, async () => {
        const body = await c.newCompanyBody({}, { authorize: false });
        change(body);
        const r = await c.post(COMPANIES, body);
        expect(r.status, r.text).to.equal(400);
        const e = connectError(r);
        expect(e.code).to.equal('CONNECT_VALIDATION_ERROR');
        expect(e.path).to.deep.equal(path);
        expect(e.retryable).to.equal(false);
      });
    }

    it('accepts a mobile number without "+"', async () => {
      const r = await c.post(COMPANIES, await c.newCompanyBody({ contactPersonMobile: '0501234567' }));
      expect(r.status, r.text).to.equal(201);
    });

    for (const [what, raw] of [
      ['an array body', '[]'],
      ['a string body', '"company"'],
      ['a null body', 'null'],
      ['malformed JSON', '{"sourceName": '],
    ] as const) {
      it(`refuses ${what}`, async () => {
        const r = await fetch(`${t.url}${COMPANIES}`, {
          method: 'POST',
          headers: { 'x-api-key': c.apiKey, 'content-type': 'application/json' },
          body: raw,
        });
        expect(r.status).to.equal(400);
        const json = (await r.json()) as any;
        expect(json.success).to.equal(false);
        expect(json.error.code).to.equal('CONNECT_VALIDATION_ERROR');
      });
    }

    it('refuses a request without a body', async () => {
      const r = await c.post(COMPANIES);
      expect(r.status).to.equal(400);
      expect(connectError(r).code).to.equal('CONNECT_VALIDATION_ERROR');
    });
  });

  for (const country of ['SA', 'ae', 'MY', 'XX']) {
    it(`refuses countryCode ${country} with 400 CONNECT_UNSUPPORTED_COUNTRY`, async () => {
      const r = await c.post(COMPANIES, await c.newCompanyBody({ countryCode: country }, { authorize: false }));
      expect(r.status).to.equal(400);
      const e = connectError(r);
      expect(e.code).to.equal('CONNECT_UNSUPPORTED_COUNTRY');
      expect(e.path).to.deep.equal(['countryCode']);
    });
  }

  describe('ASP_LINKAGE_NOT_FOUND', () => {
    it('when no authorization exists for the tin', async () => {
      const r = await c.post(COMPANIES, await c.newCompanyBody({}, { authorize: false }));
      expect(r.status).to.equal(404);
      expect(connectError(r).code).to.equal('ASP_LINKAGE_NOT_FOUND');
    });
    it('when the contact email differs from the authorization (case-insensitive match is accepted)', async () => {
      const body = await c.newCompanyBody();
      const wrong = await c.post(COMPANIES, { ...body, contactPersonEmail: 'someone.else@example.ae' });
      expect(wrong.status).to.equal(404);
      expect(connectError(wrong).code).to.equal('ASP_LINKAGE_NOT_FOUND');
      const upper = await c.post(COMPANIES, { ...body, contactPersonEmail: body.contactPersonEmail.toUpperCase() });
      expect(upper.status, upper.text).to.equal(201);
    });
    it('when the authorization is for another environment', async () => {
      const body = await c.newCompanyBody({ platformEnvironment: 'production' });
      const r = await c.post(COMPANIES, { ...body, platformEnvironment: 'simulation' });
      expect(r.status).to.equal(404);
      expect(connectError(r).code).to.equal('ASP_LINKAGE_NOT_FOUND');
      const prodKey = await t.key(c.workspaceId, { environment: 'production' });
      const ok = await clientFor(t, { workspaceId: c.workspaceId, ...prodKey }).post(COMPANIES, body);
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.json.data.platformEnvironment).to.equal('production');
    });
    it('when the authorization belongs to another workspace', async () => {
      const other = await newClient(t);
      const body = await other.newCompanyBody();
      const r = await c.post(COMPANIES, body);
      expect(r.status).to.equal(404);
      expect(connectError(r).code).to.equal('ASP_LINKAGE_NOT_FOUND');
    });
  });

  it('answers 409 CONNECT_COMPANY_ALREADY_EXISTS for the same tin again (even with another source)', async () => {
    const body = await c.newCompanyBody();
    expect((await c.post(COMPANIES, body)).status).to.equal(201);
    const again = await c.post(COMPANIES, { ...body, sourceName: freshName() });
    expect(again.status).to.equal(409);
    const e = connectError(again);
    expect(e.code).to.equal('CONNECT_COMPANY_ALREADY_EXISTS');
    expect(e.retryable).to.equal(false);
  });

  it('answers 409 CONNECT_SOURCE_ALREADY_EXISTS for a source name and version in use; another version is fine', async () => {
    const first = await c.onboard();
    const body = await c.newCompanyBody({ sourceName: first.sourceName, sourceVersion: first.sourceVersion });
    const r = await c.post(COMPANIES, body);
    expect(r.status).to.equal(409);
    expect(connectError(r).code).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    // The refused onboarding released nothing it did not own, and left no company behind.
    const ok = await c.post(COMPANIES, { ...body, sourceVersion: 'v2' });
    expect(ok.status, ok.text).to.equal(201);
  });

  it('lets two workspaces onboard the same tin and source name independently', async () => {
    const tin = freshTin();
    const name = freshName();
    const a = await newClient(t);
    const b = await newClient(t);
    const ra = await a.post(COMPANIES, await a.newCompanyBody({ tin, sourceName: name }));
    const rb = await b.post(COMPANIES, await b.newCompanyBody({ tin, sourceName: name }));
    expect(ra.status).to.equal(201);
    expect(rb.status).to.equal(201);
    expect(ra.json.data.companyId).to.not.equal(rb.json.data.companyId);
  });

  it('lets exactly one of many concurrent identical onboardings win', async () => {
    const body = await c.newCompanyBody();
    const results = await Promise.all(Array.from({ length: 8 }, () => c.post(COMPANIES, body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).to.equal(409);
      expect(['CONNECT_COMPANY_ALREADY_EXISTS', 'CONNECT_SOURCE_ALREADY_EXISTS']).to.include(connectError(r).code);
    }
  });

  it('lets exactly one of concurrent onboardings of different companies with the same source win', async () => {
    const name = freshName();
    const bodies = await Promise.all(Array.from({ length: 6 }, () => c.newCompanyBody({ sourceName: name })));
    const results = await Promise.all(bodies.map((b) => c.post(COMPANIES, b)));
    expect(results.filter((r) => r.status === 201)).to.have.length(1);
    for (const r of results.filter((x) => x.status !== 201)) expect(connectError(r).code).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
  });

  it('refuses a read-only key with 403 CONNECT_INSUFFICIENT_PERMISSION, writing nothing', async () => {
    const ro = await newClient(t, { permission: 'read' });
    const body = await ro.newCompanyBody();
    const r = await ro.post(COMPANIES, body);
    expect(r.status).to.equal(403);
    expect(connectError(r).code).to.equal('CONNECT_INSUFFICIENT_PERMISSION');
    const list = await ro.get(COMPANIES);
    expect(list.status).to.equal(200);
    expect(list.json.meta.pagination.total).to.equal(0);
  });

  it('replays an Idempotency-Key retry with the original 201', async () => {
    const body = await c.newCompanyBody();
    const first = await c.post(COMPANIES, body, { 'idempotency-key': `k-${body.tin}` });
    const second = await c.post(COMPANIES, body, { 'idempotency-key': `k-${body.tin}` });
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.json.data.companyId).to.equal(first.json.data.companyId);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
  });
});

describe('Connect: a source reservation left by a request that died', function () {
  this.timeout(60000);
  let t: TestService;
  const clock = new ManualClock(new Date());

  before(async () => {
    t = await startTestService({ clock });
  });
  after(async () => t.close());

  it('blocks the name while fresh, and is taken over once stale when its holder never recorded the source', async () => {
    const c = await newClient(t);
    const name = freshName('Orphan');
    // A request reserved the name, then died before recording its company.
    await execute(
      t.service.runtime.store,
      sourceClaimDecider,
      sourceClaimStream(c.workspaceId, name, 'v1'),
      { type: 'ClaimSource', workspaceId: c.workspaceId, sourceName: name, sourceVersion: 'v1', companyId: 'f'.repeat(24), sourceId: 'src_dead', at: clock.now().toISOString() },
      { now: clock.now() },
    );
    const body = await c.newCompanyBody({ sourceName: name });
    const blocked = await c.post(COMPANIES, body);
    expect(blocked.status).to.equal(409);
    expect(connectError(blocked).code).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    clock.advance(11 * 60_000);
    const taken = await c.post(COMPANIES, body);
    expect(taken.status, taken.text).to.equal(201);
    // A live source is never taken over, however old.
    clock.advance(60 * 60_000);
    const again = await c.post(COMPANIES, await c.newCompanyBody({ sourceName: name }));
    expect(connectError(again).code).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
  });
});
