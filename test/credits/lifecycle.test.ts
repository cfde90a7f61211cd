/** The allowance lifecycle worker (docs/api/credits.md, docs/api/http.md), driven by a manual clock: activation, supersession, expiry, lot expiry, exactly once across instances. */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { CreditsEngine } from '../../commands/credits/engine.js';
import { runCreditLifecycle } from '../../commands/credits/lifecycle.js';
import { reserveForDocument } from '../../commands/credits/metering.js';
import { creditsStream } from '../../domain/credits/values.js';
import { ManualClock } from '../../platform/clock.js';
import type { Worker } from '../../projections/reactors/reactor.js';
import { startTestService, type TestService } from '../support/http.js';
import { DAY, HOUR, allowanceBody, createCurrent, creditsTenant, engineOf, iso, issue } from './support.js';

describe('credits: allowance lifecycle worker', function () {
  this.timeout(60000);
  let t: TestService;
  let worker: Worker;
  const clock = new ManualClock('2026-05-01T00:00:00Z');

  before(async () => {
    t = await startTestService({ clock, startWorkers: false });
    worker = t.service.processes.workers.map((w) => w.worker).find((w) => w.name === 'credit_lifecycle')!;
    expect(t.service.processes.workers.find((w) => w.worker === worker)!.intervalMs).to.equal(60_000);
  });
  after(async () => t.close());

  async function tick(): Promise<number> {
    const n = await worker.tick(clock.now());
    // Let the read models catch up with what the tick wrote.
    await t.settleAll();
    return n;
  }

  it('activates the scheduled allowance at its startAt with a new period and supersedes the current; expires it at its endAt', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 100);
    const start = clock.now().getTime();
    const current = (await createCurrent(c, clock.now(), { limit: 10, endAt: iso(start + 30 * DAY) })).json.data.current;
    await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: clock.now() });
    const put = await c.write('PUT', `/allowances/${c.companyId}/scheduled`, allowanceBody(clock.now(), { limit: 25, startAt: iso(start + DAY), endAt: iso(start + 2 * DAY) }, 'scheduled'), {
      'if-none-match': '*',
      'x-environment': 'production',
    });
    expect(put.status).to.equal(201);

    // The worker serves every workspace of the database: count this company's transitions only.
    const transitions = async () => (await c.get(`/transactions?companyId=${c.companyId}&limit=100`)).json.data.items.length;
    const before = await transitions();
    clock.set(iso(start + DAY - 1));
    await tick();
    expect(await transitions()).to.equal(before);
    clock.set(iso(start + DAY + 30_000));
    await tick();
    expect(await transitions()).to.equal(before + 2);
    await tick();
    expect(await transitions()).to.equal(before + 2);
    const after = (await c.get(`/allowances/${c.companyId}`)).json.data;
    expect(after.scheduled).to.equal(null);
    expect(after.scheduledEtag).to.equal(null);
    expect(after.current).to.include({ status: 'active', limit: 25, version: 2, startAt: iso(start + DAY), finalizedUsage: 0, reserved: 0 });
    expect(after.current.allowancePeriodId).to.not.equal(current.allowancePeriodId);
    expect(after).to.include({ available: 25, blockReason: null });
    const tx = (await c.get(`/transactions?companyId=${c.companyId}&limit=2`)).json.data.items;
    expect(tx.map((x: any) => x.eventType)).to.deep.equal(['allowance.activated', 'allowance.superseded']);
    expect(tx[1].details.allowance).to.include({ status: 'superseded', allowancePeriodId: current.allowancePeriodId });
    // Lifecycle events are produced in the environment of the allowance they concern.
    expect(tx[0].environment).to.equal('production');
    expect(tx[1].environment).to.equal('sandbox');

    clock.set(iso(start + 2 * DAY));
    await tick();
    expect(await transitions()).to.equal(before + 3);
    const expired = (await c.get(`/allowances/${c.companyId}`)).json.data;
    expect(expired.current).to.include({ status: 'expired', version: 2 });
    expect(expired).to.include({ blockReason: 'ALLOWANCE_INACTIVE', available: 0, effectiveAvailability: 0 });
    expect((await c.get(`/transactions?companyId=${c.companyId}&limit=1`)).json.data.items[0].eventType).to.equal('allowance.expired');
    // A new current can follow the expired one.
    const next = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(clock.now()), { 'if-none-match': '*' });
    expect(next.status).to.equal(201);
    expect(next.headers.get('etag')).to.equal('"3"');
  });

  it('blocks consumption once endAt has passed even before the worker records the expiry', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 100);
    const start = clock.now().getTime();
    await createCurrent(c, clock.now(), { endAt: iso(start + HOUR) });
    clock.set(iso(start + HOUR));
    expect((await c.get(`/allowances/${c.companyId}`)).json.data.blockReason).to.equal('ALLOWANCE_INACTIVE');
    const r = await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: clock.now() });
    expect(r).to.include({ outcome: 'refused', blockReason: 'ALLOWANCE_INACTIVE' });
    await tick();
    expect((await c.get(`/allowances/${c.companyId}`)).json.data.current.status).to.equal('expired');
  });

  it('expires a credit lot at its expiresAt, giving up what is neither consumed nor reserved', async () => {
    const c = await creditsTenant(t);
    const start = clock.now().getTime();
    const { lotId } = await issue(t, c.workspaceId, 10, iso(start + DAY));
    await issue(t, c.workspaceId, 5);
    await createCurrent(c, clock.now(), { limit: 100, endAt: iso(start + 60 * DAY) });
    for (let i = 0; i < 3; i++) await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: clock.now() });
    clock.set(iso(start + DAY));
    await tick();
    const pool = (await c.get('/pool')).json.data;
    expect(pool).to.include({ expired: 7, reserved: 3, active: 8, available: 5 });
    expect(pool.lots.find((l: any) => l.lotId === lotId)).to.include({ status: 'expired', expired: 7, reserved: 3, available: 0 });
    const tx = (await c.get('/transactions?eventType=credit.expired')).json.data.items;
    expect(tx).to.have.length(1);
    expect(tx[0]).to.include({ lotId, amount: 7, companyId: null, environment: 'sandbox' });
    expect(tx[0].balanceAfter).to.include({ poolExpired: 7, poolAvailable: 5 });
  });

  it('activates exactly once when two service instances run the lifecycle at the same instant', async () => {
    const companies = [];
    for (let i = 0; i < 3; i++) {
      const c = await creditsTenant(t);
      await issue(t, c.workspaceId, 10);
      await createCurrent(c, clock.now());
      const s = clock.now().getTime();
      await c.write('PUT', `/allowances/${c.companyId}/scheduled`, allowanceBody(clock.now(), { startAt: iso(s + HOUR), endAt: iso(s + 10 * DAY) }, 'scheduled'), { 'if-none-match': '*' });
      companies.push(c);
    }
    clock.set(iso(clock.now().getTime() + HOUR));
    const store = t.service.runtime.store;
    const instances = [new CreditsEngine(store), new CreditsEngine(store), new CreditsEngine(store)];
    const counts = await Promise.all([...instances.map((e) => runCreditLifecycle(e, t.service.deps.knex, clock.now())), worker.tick(clock.now())]);
    expect(counts.reduce((a, b) => a + b, 0)).to.be.at.least(6);
    for (const c of companies) {
      const events = (await store.readStream(creditsStream(c.workspaceId))).map((e) => e.type);
      expect(events.filter((x) => x === 'AllowanceActivated')).to.have.length(1);
      expect(events.filter((x) => x === 'AllowanceSuperseded')).to.have.length(1);
    }
  });
});
