/** The credit read models are projections of the log alone: rebuilt (with other batch boundaries) they equal the live tables. */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { runCreditLifecycle } from '../../commands/credits/lifecycle.js';
import { reserveForDocument, settleDocumentReservation } from '../../commands/credits/metering.js';
import { ManualClock } from '../../platform/clock.js';
import { creditsProjection } from '../../projections/credits.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { DAY, HOUR, allowanceBody, createCurrent, creditsTenant, engineOf, iso, issue } from './support.js';

describe('credits: read models rebuild from the event log into the same rows', function () {
  this.timeout(120000);
  let t: TestService;
  const clock = new ManualClock('2026-08-01T00:00:00Z');
  before(async () => {
    t = await startTestService({ clock, startWorkers: false });
  });
  after(async () => t.close());

  it('the ledger, balances, jobs and exports tables', async () => {
    const c = await creditsTenant(t);
    const second = { ...c, companyId: (await c.client.onboard()).companyId as string };
    const start = clock.now().getTime();
    await issue(t, c.workspaceId, 30, iso(start + 2 * DAY));
    await issue(t, c.workspaceId, 20);
    await createCurrent(c, clock.now(), { limit: 25 });
    await createCurrent(second, clock.now(), { limit: 8 });
    await c.write('PUT', `/allowances/${c.companyId}/scheduled`, allowanceBody(clock.now(), { startAt: iso(start + DAY), endAt: iso(start + 5 * DAY), limit: 40 }, 'scheduled'), { 'if-none-match': '*' });
    const docs: [string, string][] = [];
    for (let i = 0; i < 40; i++) {
      const target = i % 3 === 0 ? second : c;
      const documentId = randomUUID();
      docs.push([target.companyId, documentId]);
      await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: target.companyId, documentId }, { now: clock.now() });
    }
    for (const [i, [, documentId]] of docs.entries()) {
      if (i % 4 === 0) await settleDocumentReservation(engineOf(t), c.workspaceId, documentId, 'finalize', null, { now: clock.now() });
      if (i % 4 === 1) await settleDocumentReservation(engineOf(t), c.workspaceId, documentId, 'release', 'invalid', { now: clock.now() });
    }
    clock.set(iso(start + DAY + HOUR));
    await runCreditLifecycle(engineOf(t), t.service.deps.knex, clock.now());
    clock.set(iso(start + 3 * DAY));
    await runCreditLifecycle(engineOf(t), t.service.deps.knex, clock.now());
    for (const [i, [, documentId]] of docs.entries()) {
      if (i % 4 === 2) await settleDocumentReservation(engineOf(t), c.workspaceId, documentId, 'release', 'late', { now: clock.now() });
    }
    const bulk = await c.write('POST', '/allowances/bulk', { operations: [{ operationId: 'p', companyId: second.companyId, operation: 'pause', expectedVersion: 1, reason: 'r' }] });
    expect(bulk.status).to.equal(202);
    expect((await c.write('POST', '/exports', { format: 'csv' })).status).to.equal(202);
    const deadline = Date.now() + 10_000;
    while ((await c.get(`/allowances/bulk/${bulk.json.data.jobId}`)).json.data.status !== 'completed' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 300));
    await t.settleAll();

    const knex = testDb().knex;
    const snapshot = async () => ({
      pools: await knex('credit_pools').orderBy('workspace_id'),
      lots: await knex('credit_lots').orderBy('lot_id'),
      companies: await knex('credit_companies').orderBy(['workspace_id', 'company_id']),
      transactions: await knex('credit_transactions').orderBy(['workspace_id', 'log_commit', 'log_prepare']),
      jobs: await knex('credit_bulk_jobs').orderBy('job_id'),
      rows: await knex('credit_bulk_job_rows').orderBy(['job_id', 'row_index']),
      exports: await knex('credit_exports').orderBy('export_id'),
    });
    const live = await snapshot();
    expect(live.lots.filter((l: any) => l.workspace_id === c.workspaceId).map((l: any) => l.status).sort()).to.deep.equal(['active', 'expired']);
    // Other batch boundaries than the live runner's: the coalescing of reservations must not matter.
    for (const batchSize of [7, 500]) {
      await rebuildProjection(knex, t.service.runtime.store, creditsProjection, { batchSize });
      expect(await snapshot()).to.deep.equal(live);
    }
  });
});
