/**
 * Which webhook events occur (docs/api/webhooks.md), produced from the log: threshold and exhaustion
 * crossings with their precedence, pool.low at 20% and 10%, allowance lifecycle, bulk
 * completion, consumption reversal (admin), and isolation by workspace and environment.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { reverseConsumption } from '../../commands/credits/reversal.js';
import { transactionIdFor } from '../../domain/credits/values.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/values.js';
import { ManualClock } from '../../platform/clock.js';
import type { Worker } from '../../projections/reactors/reactor.js';
import { startTestService, type TestService } from '../support/http.js';
import { DAY, HOUR, allowanceBody, createCurrent, creditsTenant, engineOf, iso, issue } from '../credits/support.js';
import { drive, startReceiver, subscribe, webhooksClient, type Receiver } from './support.js';

const CREDIT_TYPES = WEBHOOK_EVENT_TYPES.filter((e) => e.startsWith('isv.credits.'));

describe('webhooks: occurrences', function () {
  this.timeout(60000);
  let t: TestService;
  let receiver: Receiver;
  const clock = new ManualClock('2026-07-01T00:00:00Z');

  before(async () => {
    t = await startTestService({ clock, startWorkers: false, config: (c) => ({ ...c, webhooks: { ...c.webhooks, allowPrivateTargets: true } }) });
    receiver = await startReceiver(clock);
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const reserve = async (workspaceId: string, companyId: string, amount: number) => {
    const reservationId = `res_${randomUUID()}`;
    const out = await engineOf(t).execute(workspaceId, { type: 'Reserve', reservationId, companyId, documentId: null, amount, now: clock.now().toISOString() }, { now: clock.now(), workspaceId, environment: 'sandbox' });
    return { reservationId, out };
  };
  const deliver = async () => {
    await t.settleAll();
    await drive(t, clock, clock.now().getTime());
  };
  const types = (received: { body: any }[]) => received.map((r) => r.body.data.type);

  it('threshold and exhaustion cross once each, exhausted beats threshold; pool.low at 20% and at 10%, pool.exhausted beats low; only to the matching workspace and environment', async () => {
    const c = await creditsTenant(t);
    const w = webhooksClient(t, c.apiKey);
    const all = receiver.route();
    await subscribe(w, { webhookUrl: all.url, events: CREDIT_TYPES });
    const second = receiver.route();
    await subscribe(w, { webhookUrl: second.url, events: CREDIT_TYPES }, 'development');
    const other = await creditsTenant(t);
    const elsewhere = receiver.route();
    await subscribe(webhooksClient(t, other.apiKey), { webhookUrl: elsewhere.url, events: CREDIT_TYPES });
    const prodOnly = receiver.route();
    const prodClient = webhooksClient(t, c.apiKey);
    const prodId = (await prodClient.create({ webhookUrl: prodOnly.url.replace('http://127.0.0.1', 'https://127.0.0.1'), events: CREDIT_TYPES }, 'production'));
    // A production subscription may not target a private address, whatever the operator allows.
    expect(prodId.status).to.equal(400);
    const prodPublic = await prodClient.create({ webhookUrl: 'https://hooks.example.com/prod', events: CREDIT_TYPES }, 'production');
    expect(prodPublic.status, prodPublic.text).to.equal(201);

    await issue(t, c.workspaceId, 1000);
    const A = c.companyId;
    const B = (await c.client.onboard()).companyId as string;
    const C = (await c.client.onboard()).companyId as string;
    await createCurrent(c, clock.now(), { limit: 100 });
    for (const [id, limit] of [[B, 10], [C, 1000]] as const) {
      const r = await c.write('PUT', `/allowances/${id}/current`, allowanceBody(clock.now(), { limit }), { 'if-none-match': '*' });
      expect(r.status, r.text).to.equal(201);
    }
    await reserve(c.workspaceId, A, 75); // A 75%
    await reserve(c.workspaceId, A, 6); // A 81%: threshold
    await reserve(c.workspaceId, A, 1); // nothing
    await reserve(c.workspaceId, B, 10); // B 0% → exhausted: exhausted only
    await reserve(c.workspaceId, A, 18); // A exhausted
    await reserve(c.workspaceId, C, 700); // pool 190/1000: low 20
    await reserve(c.workspaceId, C, 1); // nothing
    await reserve(c.workspaceId, C, 95); // pool 94: low 10
    await reserve(c.workspaceId, C, 94); // pool 0: pool exhausted only; C 89%: threshold
    await deliver();

    const got = types(all.received);
    expect(got.filter((x) => x === 'isv.credits.allowance.changed')).to.have.length(3);
    const notices = all.received.filter((r) => r.body.data.type !== 'isv.credits.allowance.changed').map((r) => [r.body.data.type, r.body.data.data.companyId ?? r.body.data.data.triggeringCompanyId, r.body.data.data.thresholdPercent ?? null]);
    // Order of delivery is not guaranteed (docs/api/webhooks.md): compare as sets.
    const sorted = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).sort();
    expect(sorted(notices)).to.deep.equal(sorted([
      ['isv.credits.company.threshold', A, 80],
      ['isv.credits.company.exhausted', B, null],
      ['isv.credits.company.exhausted', A, null],
      ['isv.credits.pool.low', C, 20],
      ['isv.credits.pool.low', C, 10],
      ['isv.credits.company.threshold', C, 80],
      ['isv.credits.pool.exhausted', C, null],
    ]));
    const byType = (type: string) => all.received.filter((r) => r.body.data.type === type).map((r) => r.body.data.data);
    const threshold = byType('isv.credits.company.threshold').find((x) => x.companyId === A);
    expect(threshold).to.include({ schemaVersion: '1.0', companyId: A, limit: 100, finalizedUsage: 0, reserved: 81, committedUsage: 81, available: 19, percentageUsed: 81, amount: 6, thresholdPercent: 80 });
    expect(threshold).to.include.keys('allowancePeriodId', 'reservationId');
    const exhaustedB = byType('isv.credits.company.exhausted').find((x) => x.companyId === B);
    expect(exhaustedB).to.not.have.property('thresholdPercent');
    expect(exhaustedB).to.include({ available: 0, committedUsage: 10, limit: 10 });
    const lows = byType('isv.credits.pool.low').sort((a, b) => b.thresholdPercent - a.thresholdPercent);
    expect(lows[0]).to.include({ schemaVersion: '1.0', triggeringCompanyId: C, totalCredits: 1000, availableCredits: 190, percentageAvailable: 19, amount: 700, thresholdPercent: 20 });
    expect(lows[1]).to.include({ availableCredits: 94, percentageAvailable: 9.4, thresholdPercent: 10 });
    expect(byType('isv.credits.pool.exhausted')[0]).to.include({ availableCredits: 0, percentageAvailable: 0, amount: 94 }).and.not.have.property('thresholdPercent');
    // Distinct, stable ids (the threshold is part of pool.low's identity).
    const ids = all.received.map((r) => r.body.eventId);
    expect(new Set(ids).size).to.equal(ids.length);

    // The second sandbox subscription of the workspace got the same events with the same ids.
    expect(second.received.map((r) => r.body.eventId).sort()).to.deep.equal([...ids].sort());
    // Another workspace's subscription got nothing.
    expect(elsewhere.received).to.have.length(0);
    // Nor did the production subscription (no delivery at all recorded for it).
    const prodLog = await prodClient.get(prodPublic.json.data.id, '/deliveries');
    expect(prodLog.json.data.items).to.deep.equal([]);
  });

  it('allowance paused, resumed and expired; bulk.completed with totals and bulkJobId on bulk-originated changes; consumption.reversed by the admin reversal', async () => {
    const c = await creditsTenant(t);
    const w = webhooksClient(t, c.apiKey);
    const route = receiver.route();
    await subscribe(w, { webhookUrl: route.url, events: CREDIT_TYPES });
    await issue(t, c.workspaceId, 100);
    const start = clock.now().getTime();
    await createCurrent(c, clock.now(), { limit: 10, endAt: iso(start + 2 * DAY) });
    expect((await c.write('POST', `/allowances/${c.companyId}/pause`, { reason: 'hold' }, { 'if-match': '"1"' })).status).to.equal(200);
    expect((await c.write('POST', `/allowances/${c.companyId}/resume`, undefined, { 'if-match': '"2"' })).status).to.equal(200);
    // A finalized consumption, reversed by an operator.
    const { reservationId } = await reserve(c.workspaceId, c.companyId, 1);
    const fin = await engineOf(t).execute(c.workspaceId, { type: 'Finalize', reservationId, reason: 'valid', now: clock.now().toISOString() }, { now: clock.now(), workspaceId: c.workspaceId, environment: 'sandbox' });
    await t.settleAll();
    const finalized = transactionIdFor(fin.events.length > 0 ? (await t.service.runtime.store.readStream(`credits-${c.workspaceId}`, { backwards: true, maxCount: 1 }))[0]!.id : '');
    const deps = { engine: engineOf(t), knex: t.service.deps.knex, store: t.service.runtime.store };
    const rev = await reverseConsumption(deps, { workspaceId: c.workspaceId, transactionId: finalized, reason: 'billing error', restorePool: true }, { now: clock.now(), actor: 'test' });
    expect(rev.alreadyReversed).to.equal(false);
    await t.settleAll();
    const again = await reverseConsumption(deps, { workspaceId: c.workspaceId, transactionId: finalized, reason: 'billing error', restorePool: true }, { now: clock.now(), actor: 'test' });
    expect(again.alreadyReversed).to.equal(true);
    await deliver();

    const bulk = await c.write('POST', '/allowances/bulk', { operations: [{ operationId: 'op-1', companyId: c.companyId, operation: 'pause', expectedVersion: 3, reason: 'bulk hold' }] });
    expect(bulk.status, bulk.text).to.equal(202);
    const jobId = bulk.json.data.jobId;
    for (let i = 0; i < 100 && !(await c.get(`/allowances/bulk/${jobId}`)).json.data.status.startsWith('completed'); i++) await new Promise((r) => setTimeout(r, 50));
    await deliver();

    // The period ends: the lifecycle worker expires the allowance.
    clock.set(iso(start + 2 * DAY + HOUR));
    const lifecycle = t.service.processes.workers.map((x) => x.worker).find((x) => x.name === 'credit_lifecycle') as Worker;
    await lifecycle.tick(clock.now());
    await deliver();

    const seen = route.received.map((r) => [r.body.data.type, r.body.data.data.action ?? null]);
    const sorted = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).sort();
    expect(sorted(seen)).to.deep.equal(
      sorted([
        ['isv.credits.allowance.changed', 'current.created'],
        ['isv.credits.allowance.paused', 'current.paused'],
        ['isv.credits.allowance.resumed', 'current.resumed'],
        ['isv.credits.consumption.reversed', null],
        ['isv.credits.allowance.paused', 'current.paused'],
        ['isv.credits.bulk.completed', null],
        ['isv.credits.allowance.expired', 'current.expired'],
      ]),
    );
    const of = (type: string) => route.received.filter((r) => r.body.data.type === type).map((r) => r.body.data.data);
    const paused = of('isv.credits.allowance.paused').sort((a, b) => a.allowance.version - b.allowance.version);
    const data = [of('isv.credits.allowance.changed')[0], paused[0], null, paused[1], of('isv.credits.bulk.completed')[0], of('isv.credits.consumption.reversed')[0]];
    expect(data[0]).to.not.have.property('bulkJobId');
    expect(data[1]).to.not.have.property('bulkJobId');
    expect(data[3]).to.include({ bulkJobId: jobId, reason: 'bulk hold' });
    expect(data[3].allowance).to.include({ status: 'paused', version: 4, target: 'current' });
    expect(data[4]).to.deep.include({ schemaVersion: '1.0', jobId, status: 'completed', totals: { total: 1, processed: 1, succeeded: 1, failed: 0 } });
    expect(data[4]).to.include.keys('completedAt');
    expect(data[5]).to.deep.include({
      schemaVersion: '1.0',
      companyId: c.companyId,
      reservationId,
      originalTransactionId: finalized,
      amount: 1,
      reason: 'billing error',
      restorePool: true,
      balanceBefore: { companyAvailable: 9, poolAvailable: 99 },
      balanceAfter: { companyAvailable: 10, poolAvailable: 100 },
      countryCode: null,
      documentType: null,
    });
    expect(data[5].transactionId).to.match(/^txn_[0-9a-f]{32}$/);
    expect(data[5]).to.include.keys('allowancePeriodId');
    // The ledger has the reversal once.
    const ledger = (await c.get('/transactions?eventType=consumption.reversed')).json.data.items;
    expect(ledger).to.have.length(1);
  });
});
