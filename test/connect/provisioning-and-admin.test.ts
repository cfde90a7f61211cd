import { expect } from 'chai';
import type { ParticipantProvisioning } from '../../commands/connect/provisioning.js';
import { setSandboxProvisioning } from '../../commands/connect/settings.js';
import { connectFamily } from '../../http/connect/routes.js';
import { startTestService, type TestService } from '../support/http.js';
import { connectError, freshTin, newClient, type Client } from './support.js';
import { admin } from '../support/cli.js';

const COMPANIES = '/v3/connect/companies';


describe('Connect: participant provisioning failures', function () {
  this.timeout(60000);
  let t: TestService;
  let c: Client;
  const simulate = (mode: 'normal' | 'timeout' | 'unavailable', tin: string | null = null) =>
    setSandboxProvisioning(t.service.runtime.store, { workspaceId: c.workspaceId, mode, tin }, { now: new Date() });

  before(async () => {
    t = await startTestService();
    c = await newClient(t);
  });
  after(async () => t.close());

  it('PEPPOL_PARTICIPANT_UNAVAILABLE (503, retryable) when the sandbox adapter is told to fail; nothing is recorded', async () => {
    await simulate('unavailable');
    const body = await c.newCompanyBody();
    const r = await c.post(COMPANIES, body);
    expect(r.status).to.equal(503);
    expect(connectError(r)).to.include({ code: 'PEPPOL_PARTICIPANT_UNAVAILABLE', retryable: true });
    await simulate('normal');
    const retry = await c.post(COMPANIES, body);
    expect(retry.status, retry.text).to.equal(201);
  });

  it('ONBOARDING_TIMEOUT (504, retryable) when the sandbox adapter is told to time out, for one TIN only', async () => {
    const body = await c.newCompanyBody();
    await simulate('timeout', body.tin);
    const r = await c.post(COMPANIES, body);
    expect(r.status).to.equal(504);
    const e = connectError(r);
    expect(e).to.include({ code: 'ONBOARDING_TIMEOUT', retryable: true });
    expect(e.message).to.match(/list companies/i);
    expect((await c.post(COMPANIES, await c.newCompanyBody())).status).to.equal(201);
    // Listing before retrying shows it was not created; the retry succeeds once provisioning answers.
    expect((await c.get(`${COMPANIES}?search=${body.tin}`)).json.meta.pagination.total).to.equal(0);
    await simulate('normal', body.tin);
    expect((await c.post(COMPANIES, body)).status).to.equal(201);
  });

  it('reports provisioning failures as row errors of an onboarding job', async () => {
    const ok = await c.newCompanyBody();
    const failing = await c.newCompanyBody();
    await simulate('unavailable', failing.tin);
    const r = await c.post(`${COMPANIES}/onboarding-jobs`, { countryCode: 'AE', platformEnvironment: 'sandbox', rows: [failing, ok] });
    expect(r.status).to.equal(200);
    expect(r.json.data.rows.map((x: any) => x.errorCode ?? x.status)).to.deep.equal(['PEPPOL_PARTICIPANT_UNAVAILABLE', 'onboarded']);
    expect(r.json.data.rows[0].nextAction).to.equal('RETRY_LATER');
  });

  it('ONBOARDING_TIMEOUT when a provisioning adapter does not answer within its deadline', async () => {
    const hanging: ParticipantProvisioning = {
      provision: (_req, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    };
    const slow = await startTestService({ extraFamilies: [connectFamily({ provisioning: hanging, provisioningTimeoutMs: 200 })] });
    try {
      const client = await newClient(slow);
      const started = Date.now();
      const r = await client.post(COMPANIES, await client.newCompanyBody());
      expect(r.status).to.equal(504);
      expect(connectError(r).code).to.equal('ONBOARDING_TIMEOUT');
      expect(Date.now() - started).to.be.lessThan(5000);
    } finally {
      await slow.close();
    }
  });
});

describe('admin CLI: authorization, mapping auto-assign, provisioning simulate', function () {
  this.timeout(120000);
  let t: TestService;
  let c: Client;

  before(async () => {
    t = await startTestService();
    c = await newClient(t);
  });
  after(async () => t.close());

  it('authorization create / list; onboarding then works with that tin and email', async () => {
    const tin = freshTin();
    const created = await admin([
      'authorization', 'create', '--workspace', c.workspaceId, '--environment', 'sandbox', '--tin', tin, '--email', 'ops@example.ae',
      '--legal-name', 'Desert Rose Trading LLC', '--vat-trn', `${tin}00003`,
    ]);
    expect(created.code, created.stderr).to.equal(0);
    const a = JSON.parse(created.stdout);
    expect(a).to.include({ workspaceId: c.workspaceId, environment: 'sandbox', tin, email: 'ops@example.ae', legalName: 'Desert Rose Trading LLC', created: true });
    expect(a.authorizationId).to.be.a('string');
    const again = await admin(['authorization', 'create', '--workspace', c.workspaceId, '--environment', 'sandbox', '--tin', tin, '--email', 'OPS@example.ae']);
    expect(again.code).to.equal(0);
    expect(JSON.parse(again.stdout)).to.include({ authorizationId: a.authorizationId, created: false });

    const list = await admin(['authorization', 'list', '--workspace', c.workspaceId]);
    expect(list.code, list.stderr).to.equal(0);
    expect(JSON.parse(list.stdout).map((x: any) => x.authorizationId)).to.include(a.authorizationId);

    const body = await c.newCompanyBody({ tin, contactPersonEmail: 'ops@example.ae' }, { authorize: false });
    const r = await c.post(COMPANIES, body);
    expect(r.status, r.text).to.equal(201);
    expect(r.json.data).to.include({ legalName: 'Desert Rose Trading LLC', vatTrn: `${tin}00003` });
  });

  it('authorization create refuses bad arguments with exit code 2', async () => {
    for (const args of [
      ['--environment', 'sandbox', '--tin', '123', '--email', 'a@b.ae'],
      ['--environment', 'staging', '--tin', '1234567890', '--email', 'a@b.ae'],
      ['--environment', 'sandbox', '--tin', '1234567890', '--email', 'nope'],
    ]) {
      const r = await admin(['authorization', 'create', '--workspace', c.workspaceId, ...args]);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stdout).to.equal('');
    }
    const unknown = await admin(['authorization', 'list', '--workspace', 'ws_nope']);
    expect(unknown.code).to.equal(2);
  });

  it('mapping auto-assign --off / --on --template changes the readiness of future sources only', async () => {
    const before = await c.onboard();
    const off = await admin(['mapping', 'auto-assign', '--workspace', c.workspaceId, '--off']);
    expect(off.code, off.stderr).to.equal(0);
    expect(JSON.parse(off.stdout)).to.include({ autoAssign: false, templateId: 'core-identity-ae-1', changed: true });
    const notReady = await c.onboard();
    expect(notReady.readyForInvoicing).to.equal(false);
    expect(notReady.mappingReadiness).to.deep.equal({ status: 'ACTION_REQUIRED', code: 'CONNECT_MAPPING_NOT_CONFIGURED' });
    const listed = await c.get(`${COMPANIES}?search=${before.tin}`);
    expect(listed.json.data[0].readyForInvoicing).to.equal(true);

    const on = await admin(['mapping', 'auto-assign', '--workspace', c.workspaceId, '--on', '--template', 'acme-erp-ae-2']);
    expect(on.code, on.stderr).to.equal(0);
    const ready = await c.onboard();
    expect(ready.mappingReadiness).to.deep.equal({ status: 'READY', templateId: 'acme-erp-ae-2' });

    const both = await admin(['mapping', 'auto-assign', '--workspace', c.workspaceId, '--on', '--off']);
    expect(both.code).to.equal(2);
  });

  it('provisioning simulate tells the sandbox adapter to fail, time out, or answer normally', async () => {
    const fail = await admin(['provisioning', 'simulate', '--workspace', c.workspaceId, '--mode', 'unavailable']);
    expect(fail.code, fail.stderr).to.equal(0);
    const body = await c.newCompanyBody();
    expect(connectError(await c.post(COMPANIES, body)).code).to.equal('PEPPOL_PARTICIPANT_UNAVAILABLE');
    await admin(['provisioning', 'simulate', '--workspace', c.workspaceId, '--mode', 'timeout']);
    expect(connectError(await c.post(COMPANIES, body)).code).to.equal('ONBOARDING_TIMEOUT');
    await admin(['provisioning', 'simulate', '--workspace', c.workspaceId, '--mode', 'normal']);
    expect((await c.post(COMPANIES, body)).status).to.equal(201);
  });
});
