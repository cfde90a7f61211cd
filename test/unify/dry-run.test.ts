/**
 * The dry run of a new-format submission (docs/api/dry-run.md) through the real server: the same
 * 422 as a submit, or a 200 with the e-invoice XML and the warnings; nothing stored (the event
 * log's head and the read models are counted before and after), no number claimed, no credit
 * reserved; the request checks of a submit; a rate limit of its own.
 */
import { expect } from 'chai';
import { enforce, issue } from '../credits/support.js';
import { call, startTestService, withoutProcesses, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from './support.js';

const PER_MINUTE = 30;
const READ_MODELS = ['sales_documents', 'documents', 'search_documents', 'search_sales_facts', 'credit_transactions', 'credit_snapshots', 'webhook_deliveries', 'es_streams', 'es_artifacts'];

describe('Unify: dry run (POST /api/v3/unify/dry-run)', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;

  before(async () => {
    // No reactors or workers: nothing but the requests of this suite writes to the log.
    t = await startTestService({ processes: withoutProcesses, config: (c) => ({ ...c, dryRunRateLimit: { perMinute: PER_MINUTE } }) });
    u = await unifyTenant(t);
  });
  after(async () => t.close());

  const dryRun = (body: unknown, tenant: UnifyTenant = u, headers: Record<string, string> = {}) =>
    call(`${t.url}/api/v3/unify/dry-run`, { method: 'POST', headers: { authorization: `Bearer ${tenant.apiKey}`, ...headers }, body });

  /** The log's head and events, its streams (number claims) and artifacts (XML), and the rows of every read model a submission touches. */
  async function snapshot() {
    const knex = t.service.deps.knex;
    const counts: Record<string, number> = {};
    for (const table of READ_MODELS) {
      counts[table] = Number((await knex(table).count({ n: '*' }))[0]!.n);
    }
    const head = await t.service.runtime.store.committedHead();
    const events = Number((await knex('es_events').count({ n: '*' }))[0]!.n);
    return { head: `${head.commit}/${head.prepare}`, events, counts };
  }

  it('answers 200 with the XML and the warnings, and stores nothing: no event, no read-model row, no number claimed', async () => {
    const number = freshNumber('DRY');
    const payload = uaeInvoice({ documentNumber: number });
    payload.header.notAField = 'x';
    const before = await snapshot();
    const r = await dryRun(u.request(payload));
    expect(r.status, r.text).to.equal(200);
    expect(r.json).to.include({ kind: 'dry_run', dryRun: true, documentNumber: number });
    expect(r.json).not.to.have.property('documentId');
    const xml = Buffer.from(r.json.Base64XML, 'base64').toString('utf8');
    expect(xml).to.match(/^<\?xml/);
    expect(xml).to.contain(`<cbc:ID>${number}</cbc:ID>`);
    expect(r.json.warnings.map((w: { code: string; payloadField: string }) => [w.code, w.payloadField])).to.deep.include(['UNKNOWN_FIELD', 'header.notAField']);
    // Again: the same answer but the XML's UUID (a dry run reserves nothing, not even its number).
    const again = await dryRun(u.request(payload));
    expect(again.status).to.equal(200);
    expect(await snapshot()).to.deep.equal(before);

    // The number was not claimed: a real submission of it is accepted, with the same XML but its UUID.
    const real = await u.submit(u.request(payload));
    expect(real.status, real.text).to.equal(200);
    const realXml = Buffer.from(real.json.Base64XML, 'base64').toString('utf8');
    const withoutUuid = (x: string) => x.replace(/<cbc:UUID>[^<]*<\/cbc:UUID>/g, '');
    expect(withoutUuid(realXml)).to.equal(withoutUuid(xml));
    expect(await snapshot()).to.not.deep.equal(before);
  });

  it('answers the same 422 as a submit (errors, warnings, number), without a document id, and stores nothing', async () => {
    const payload = uaeInvoice();
    delete payload.header.issueDate;
    payload.parties.buyer.address.stateOrProvince = 'XYZ';
    const before = await snapshot();
    const dry = await dryRun(u.request(payload));
    expect(dry.status, dry.text).to.equal(422);
    expect(await snapshot()).to.deep.equal(before);
    const real = await u.submit(u.request(payload));
    expect(real.status, real.text).to.equal(422);
    expect(dry.json).to.include({ documentId: null, dryRun: true, documentNumber: real.json.documentNumber });
    expect(dry.json.errors).to.deep.equal(real.json.errors);
    expect(dry.json.warnings).to.deep.equal(real.json.warnings);
    expect(dry.json.errors.map((e: { field: string }) => e.field)).to.include.members(['header.issueDate', 'parties.buyer.address.stateOrProvince']);
  });

  it('finds a document number that is taken (CORE-HEAD-010), as a submit would', async () => {
    const number = freshNumber('DRY');
    expect((await u.submit(u.request(uaeInvoice({ documentNumber: number })))).status).to.equal(200);
    const before = await snapshot();
    const dry = await dryRun(u.request(uaeInvoice({ documentNumber: number })));
    expect(dry.status, dry.text).to.equal(422);
    expect(dry.json.errors.map((e: { code: string }) => e.code)).to.deep.equal(['CORE-HEAD-010']);
    expect(dry.json.errors[0].field).to.equal('header.documentNumber');
    expect(await snapshot()).to.deep.equal(before);
    const real = await u.submit(u.request(uaeInvoice({ documentNumber: number })));
    expect(real.status).to.equal(422);
    expect(dry.json.errors).to.deep.equal(real.json.errors);
  });

  it('refuses what a submit refuses: no body, bad envelope, unknown source, read-only or other-environment keys, a blocked company; a batch is not a dry run', async () => {
    const readOnly = await t.key(u.client.workspaceId, { permission: 'read' });
    const before = await snapshot();
    const expectProblem = async (r: Awaited<ReturnType<typeof dryRun>>, status: number, code: string, path?: unknown[]) => {
      expect(r.status, r.text).to.equal(status);
      expect(r.json.code, r.text).to.equal(code);
      if (path) expect(r.json.path, r.text).to.deep.equal(path);
    };
    await expectProblem(await dryRun(undefined), 400, 'invalid_argument');
    await expectProblem(await dryRun(u.request(uaeInvoice(), { country: 'XX' })), 400, 'invalid_argument', ['country']);
    await expectProblem(await dryRun(u.request(uaeInvoice(), { purpose: 'archiving' })), 400, 'invalid_argument', ['purpose']);
    await expectProblem(await dryRun(u.request(uaeInvoice(), { surprise: 1 })), 400, 'invalid_argument', ['surprise']);
    await expectProblem(await dryRun(u.request(uaeInvoice(), { source: 'nope' })), 400, 'invalid_argument', ['source']);
    await expectProblem(await dryRun(u.request(uaeInvoice(), { source: 'missing:1' })), 404, 'not_found', ['source']);
    await expectProblem(await dryRun({ invoices: [u.request(uaeInvoice())] }), 400, 'invalid_argument');
    await expectProblem(await dryRun(u.request(uaeInvoice(), { environment: 'production' })), 403, 'permission_denied', ['environment']);
    const refused = await dryRun(u.request(uaeInvoice()), { ...u, apiKey: readOnly.apiKey });
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.json.code).to.equal('insufficient_permission');
    expect(await snapshot()).to.deep.equal(before);

    // Credit enforcement on, no allowance: the company is blocked, as for a submit.
    const blocked = await unifyTenant(t);
    await issue(t, blocked.client.workspaceId, 100);
    await enforce(t, blocked.client.workspaceId, true);
    const mark = await snapshot();
    const r = await dryRun(blocked.request(uaeInvoice()), blocked);
    expect(r.status, r.text).to.equal(403);
    expect(r.json).to.include({ code: 'credits_blocked', blockReason: 'NO_ACTIVE_ALLOWANCE' });
    expect(r.json.path).to.deep.equal(['source']);
    expect(await snapshot()).to.deep.equal(mark);
  });

  it(`has a rate limit of its own: ${PER_MINUTE} dry runs per workspace and minute, then 429 resource_exhausted with Retry-After; submits are not affected`, async () => {
    const busy = await unifyTenant(t);
    for (let i = 0; i < PER_MINUTE; i++) {
      const r = await dryRun({}, busy);
      expect(r.status, r.text).to.equal(400);
    }
    const limited = await dryRun(busy.request(uaeInvoice()), busy);
    expect(limited.status, limited.text).to.equal(429);
    expect(limited.json.code).to.equal('resource_exhausted');
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
    // Another workspace, and the workspace's submissions, are not limited by it.
    expect((await dryRun(u.request(uaeInvoice()))).status).to.equal(200);
    expect((await busy.submit(busy.request(uaeInvoice()))).status).to.equal(200);
  });
});
