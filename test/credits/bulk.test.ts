/** Bulk allowance jobs (docs/api/credits.md, docs/api/webhooks.md, docs/api/http.md) and concurrent writes with the same precondition. */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { bulkJobStream } from '../../domain/credits/values.js';
import { ManualClock } from '../../platform/clock.js';
import { startTestService, type TestService } from '../support/http.js';
import { DAY, allowanceBody, connectError, createCurrent, creditsTenant, iso, issue, type CreditsClient } from './support.js';

async function completed(c: CreditsClient, jobId: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await c.get(`/allowances/bulk/${jobId}`);
    expect(r.status, r.text).to.equal(200);
    if (['completed', 'completed_with_errors', 'failed'].includes(r.json.data.status) || Date.now() > deadline) return r.json.data;
    await new Promise((res) => setTimeout(res, 25));
  }
}

describe('credits: bulk allowance jobs and concurrency', function () {
  this.timeout(120000);
  let t: TestService;
  const clock = new ManualClock('2026-07-01T09:00:00Z');
  before(async () => {
    t = await startTestService({ clock, startWorkers: false });
  });
  after(async () => t.close());

  const replacement = (overrides: Record<string, unknown> = {}, kind: 'current' | 'scheduled' = 'current') => {
    const { reason: _r, ...body } = allowanceBody(clock.now(), {}, kind);
    return { ...body, ...overrides };
  };

  it('runs every row on its own: row results in request order, failed rows undo nothing, bulkJobId in the ledger, bulk.completed', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 1000);
    const ids = [c.companyId];
    for (let i = 0; i < 3; i++) ids.push((await c.client.onboard()).companyId);
    const [a, b, d, e] = ids as [string, string, string, string];
    await createCurrent({ ...c, companyId: d }, clock.now(), { limit: 5 });
    await createCurrent({ ...c, companyId: e }, clock.now(), { limit: 5 });
    const other = await creditsTenant(t);
    const operations = [
      { operationId: 'a-current', companyId: a, operation: 'replace_current', expectedVersion: 0, reason: 'onboarding', ...replacement({ limit: 40, planReference: 'P1' }) },
      { operationId: 'a-scheduled', companyId: a, operation: 'replace_scheduled', expectedVersion: 0, reason: 'renewal', ...replacement({ limit: 60 }, 'scheduled') },
      { operationId: 'b-stale', companyId: b, operation: 'replace_current', expectedVersion: 3, reason: 'x', ...replacement() },
      { operationId: 'd-pause', companyId: d, operation: 'pause', expectedVersion: 1, reason: 'unpaid invoice' },
      { operationId: 'e-replace', companyId: e, operation: 'replace_current', expectedVersion: 1, reason: 'upgrade', ...replacement({ limit: 50 }) },
      { operationId: 'e-cancel', companyId: e, operation: 'cancel_scheduled', expectedVersion: 1 },
      { operationId: 'stranger', companyId: other.companyId, operation: 'resume', expectedVersion: 1 },
      { operationId: 'in-past', companyId: b, operation: 'replace_scheduled', expectedVersion: 0, reason: 'x', ...replacement({ startAt: iso(clock.now().getTime() - DAY) }, 'scheduled') },
    ];
    const key = randomUUID();
    const r = await c.write('POST', '/allowances/bulk', { operations }, { 'idempotency-key': key, 'x-environment': 'prod' });
    expect(r.status, r.text).to.equal(202);
    const jobId = r.json.data.jobId;
    expect(jobId).to.match(/^cbj_[0-9a-f]{24}$/);
    expect(r.json.data).to.deep.include({ status: 'accepted', environment: 'production', totals: { total: 8, processed: 0, succeeded: 0, failed: 0 }, replayed: false });
    const replay = await c.write('POST', '/allowances/bulk', { operations }, { 'idempotency-key': key, 'x-environment': 'prod' });
    expect(replay.status).to.equal(202);
    expect(replay.json.data).to.include({ jobId, replayed: true });

    const job = await completed(c, jobId);
    expect(job).to.include({ jobId, status: 'completed_with_errors', environment: 'production' });
    expect(job.totals).to.deep.equal({ total: 8, processed: 8, succeeded: 4, failed: 4 });
    expect(job.completedAt).to.be.a('string');
    const results = job.results.map((x: any) => [x.operationId, x.status, x.version, x.error?.code ?? null]);
    expect(results).to.deep.equal([
      ['a-current', 'succeeded', 1, null],
      ['a-scheduled', 'succeeded', 1, null],
      ['b-stale', 'failed', null, 'CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED'],
      ['d-pause', 'succeeded', 2, null],
      ['e-replace', 'succeeded', 2, null],
      ['e-cancel', 'failed', null, 'CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED'],
      ['stranger', 'failed', null, 'CONNECT_COMPANY_NOT_FOUND'],
      ['in-past', 'failed', null, 'CONNECT_VALIDATION_ERROR'],
    ]);
    expect((await c.get(`/allowances/${a}`)).json.data.current).to.include({ limit: 40, planReference: 'P1', version: 1 });
    expect((await c.get(`/allowances/${d}`)).json.data.current).to.include({ status: 'paused' });
    const tx = (await c.get(`/transactions?bulkJobId=${jobId}`)).json.data.items;
    expect(tx.map((x: any) => x.eventType).sort()).to.deep.equal(['allowance.created', 'allowance.paused', 'allowance.replaced', 'allowance.scheduled']);
    expect(tx.every((x: any) => x.environment === 'production' && x.bulkJobId === jobId && x.idempotencyKey === key)).to.equal(true);
    const completion = (await t.service.runtime.store.readStream(bulkJobStream(jobId))).find((x) => x.type === 'CreditBulkJobCompleted');
    expect(completion!.data).to.deep.include({ jobId, status: 'completed_with_errors', totals: { total: 8, processed: 8, succeeded: 4, failed: 4 } });

    const all = await c.write('POST', '/allowances/bulk', { operations: [{ operationId: 'x', companyId: b, operation: 'pause', expectedVersion: 1, reason: 'x' }] });
    expect((await completed(c, all.json.data.jobId)).status).to.equal('failed');
    const good = await c.write('POST', '/allowances/bulk', { operations: [{ operationId: 'y', companyId: d, operation: 'resume', expectedVersion: 2 }] });
    expect((await completed(c, good.json.data.jobId)).status).to.equal('completed');
    // Another workspace cannot see the job.
    const hidden = await other.get(`/allowances/bulk/${jobId}`);
    expect(hidden.status).to.equal(404);
    expect(connectError(hidden).code).to.equal('CONNECT_CREDIT_BULK_JOB_NOT_FOUND');
    expect((await c.get('/allowances/bulk/cbj_000000000000000000000000')).status).to.equal(404);
    expect((await c.get('/allowances/bulk/nope')).status).to.equal(404);
  });

  it('refuses a malformed job as a whole (400) with the path of the problem, and needs write access, a key and a known environment', async () => {
    const c = await creditsTenant(t);
    const row = (o: Record<string, unknown> = {}) => ({ operationId: 'op', companyId: c.companyId, operation: 'pause', expectedVersion: 1, reason: 'r', ...o });
    const cases: [unknown, unknown[]][] = [
      [{}, ['operations']],
      [{ operations: [] }, ['operations']],
      [{ operations: Array.from({ length: 501 }, (_, i) => row({ operationId: `o${i}`, companyId: i.toString(16).padStart(24, '0') })) }, ['operations']],
      [{ operations: [row(), row({ operation: 'resume' })] }, ['operations', 1, 'operationId']],
      [{ operations: [row(), row({ operationId: 'op2', operation: 'replace_current', expectedVersion: 1, ...replacement() })] }, ['operations', 1, 'companyId']],
      [{ operations: [row({ expectedVersion: 0 })] }, ['operations', 0, 'expectedVersion']],
      [{ operations: [row({ expectedVersion: 1.5 })] }, ['operations', 0, 'expectedVersion']],
      [{ operations: [row({ reason: undefined })] }, ['operations', 0, 'reason']],
      [{ operations: [row({ limit: 5 })] }, ['operations', 0, 'limit']],
      [{ operations: [row({ operation: 'replace_scheduled', expectedVersion: 0, ...replacement({ startAt: '2026-08-01T00:00:00+04:00' }, 'scheduled') })] }, ['operations', 0, 'startAt']],
      [{ operations: [row({ operation: 'replace_current', expectedVersion: 0, ...replacement({ limit: -2 }) })] }, ['operations', 0, 'limit']],
      [{ operations: [row({ operationId: 'x'.repeat(201) })] }, ['operations', 0, 'operationId']],
      [{ operations: [row()], dryRun: true }, ['dryRun']],
    ];
    for (const [body, path] of cases) {
      const b = JSON.parse(JSON.stringify(body));
      const r = await c.write('POST', '/allowances/bulk', b);
      expect(r.status, `${JSON.stringify(path)}: ${r.text.slice(0, 200)}`).to.equal(400);
      expect(connectError(r).path, JSON.stringify(path)).to.deep.equal(path.map(String));
    }
    const ok = await c.write('POST', '/allowances/bulk', { operations: [row({ operationId: 'x'.repeat(200) })] });
    expect(ok.status).to.equal(202);
    expect((await c.write('POST', '/allowances/bulk', { operations: [row()] }, { 'idempotency-key': undefined })).status).to.equal(400);
    const env = await c.write('POST', '/allowances/bulk', { operations: [row()] }, { 'x-environment': 'moon' });
    expect(env.status).to.equal(400);
    expect(connectError(env).code).to.equal('CONNECT_INVALID_ENVIRONMENT');
  });

  it('50 parallel replaces with the same If-Match: exactly one 200, the others 412, the version goes up by one', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 100);
    await createCurrent(c, clock.now(), { limit: 10 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(clock.now(), { limit: 11 + i }), { 'if-match': '"1"' })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).to.have.length(1);
    expect(statuses.filter((s) => s === 412)).to.have.length(49);
    for (const a of answers.filter((x) => x.status === 412)) expect(connectError(a).code).to.equal('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
    const winner = answers.find((a) => a.status === 200)!;
    expect(winner.headers.get('etag')).to.equal('"2"');
    const read = await c.get(`/allowances/${c.companyId}`);
    expect(read.headers.get('etag')).to.equal('"2"');
    expect(read.json.data.current.limit).to.equal(winner.json.data.current.limit);
    expect((await c.get(`/transactions?companyId=${c.companyId}&eventType=allowance.replaced`)).json.data.items).to.have.length(1);
  });
});
