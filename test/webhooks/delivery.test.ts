/**
 * Webhook delivery (docs/api/webhooks.md) against a real receiver on an ephemeral port, the worker
 * driven by a manual clock: body, headers and signatures, the retry schedule, permanent
 * failures, time-outs, the fifth failure, restarts, two instances, the delivery log, the test
 * ping, and the same event id across retries and after a rebuild.
 */
import { secretBox } from '../../commands/webhooks/secrets.js';
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../platform/clock.js';
import { metricsText } from '../../platform/metrics.js';
import { webhookDeliveryWorker } from '../../projections/reactors/webhook-delivery.js';
import { claimAttempts } from '../../readmodels/webhooks.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { webhookAttemptsProjection } from '../../projections/webhook-attempts.js';
import { webhooksProjection } from '../../projections/webhooks.js';
import { startTestService, type TestService } from '../support/http.js';
import { createCurrent, creditsTenant, iso } from '../credits/support.js';
import { drive, startReceiver, storeSubscriptionBehind, subscribe, webhooksClient, webhookWorker, type Receiver } from './support.js';

const MIN = 60_000;

describe('webhooks: delivery', function () {
  this.timeout(60000);
  let t: TestService;
  let receiver: Receiver;
  const clock = new ManualClock('2026-06-01T00:00:00Z');

  before(async () => {
    t = await startTestService({
      clock,
      startWorkers: false,
      config: (c) => ({ ...c, webhooks: { ...c.webhooks, allowPrivateTargets: true, timeoutMs: 400 } }),
    });
    receiver = await startReceiver(clock);
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** A tenant with a company and subscriptions; `trigger` makes one isv.credits.allowance.changed occurrence. */
  async function setup(subscriptions: { answers?: (number | 'hang')[]; secretKey?: string; signatureAlgorithm?: string }[]) {
    const c = await creditsTenant(t);
    const w = webhooksClient(t, c.apiKey);
    const subs = [];
    for (const s of subscriptions) {
      const route = receiver.route(s.answers);
      const id = await subscribe(w, {
        webhookUrl: route.url,
        events: ['isv.credits.allowance.changed'],
        ...(s.secretKey ? { secretKey: s.secretKey } : {}),
        ...(s.signatureAlgorithm ? { signatureAlgorithm: s.signatureAlgorithm } : {}),
      });
      subs.push({ id, ...route });
    }
    const trigger = async () => {
      await createCurrent(c, clock.now(), { limit: 50 });
      await t.settleAll();
    };
    return { c, w, subs, trigger };
  }

  it('POSTs the exact body and headers, signed with HMAC-SHA256 (default) and HMAC-SHA512 over the raw body', async () => {
    const { c, subs, trigger } = await setup([{ secretKey: 's3cret-256' }, { secretKey: 's3cret-512', signatureAlgorithm: 'sha512' }, {}]);
    const t0 = clock.now().getTime();
    await trigger();
    await drive(t, clock, t0);
    for (const [i, s] of subs.entries()) {
      expect(s.received, `subscription ${i}`).to.have.length(1);
      const r = s.received[0]!;
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers['x-webhook-event']).to.equal('isv.credits.allowance.changed');
      expect(r.headers['x-webhook-timestamp']).to.equal(iso(t0));
      expect(r.body).to.have.all.keys('eventId', 'data');
      expect(r.body.data).to.have.all.keys('id', 'type', 'timestamp', 'data');
      expect(r.headers['x-webhook-id']).to.equal(r.body.eventId);
      expect(r.body.data.id).to.equal(r.body.eventId);
      expect(r.body.data.type).to.equal('isv.credits.allowance.changed');
      const p = r.body.data.data;
      expect(p).to.include({ schemaVersion: '1.0', companyId: c.companyId, action: 'current.created', reason: 'plan change' });
      expect(p).to.not.have.property('bulkJobId');
      expect(p.allowance).to.include({ target: 'current', status: 'active', limit: 50, version: 1 });
      expect(p.allowance).to.include.keys('allowancePeriodId', 'periodType', 'planReference', 'metadata', 'startAt', 'endAt', 'finalizedUsage', 'reserved', 'updatedAt');
    }
    const [a, b, unsigned] = subs;
    expect(a!.received[0]!.headers['x-webhook-signature']).to.equal(createHmac('sha256', 's3cret-256').update(a!.received[0]!.raw).digest('hex'));
    expect(b!.received[0]!.headers['x-webhook-signature']).to.equal(createHmac('sha512', 's3cret-512').update(b!.received[0]!.raw).digest('hex'));
    expect(unsigned!.received[0]!.headers).to.not.have.property('x-webhook-signature');
    // One event, one id for every subscription.
    expect(a!.received[0]!.body.eventId).to.equal(b!.received[0]!.body.eventId);
  });

  it('retries 500, 500, 200 exactly three times: at t, t+60 s and t+6 min, with the same event id', async () => {
    const { w, subs, trigger } = await setup([{ answers: [500, 500, 200] }]);
    const s = subs[0]!;
    const attemptsCounted = async (outcome: string) => {
      const line = (await metricsText()).split('\n').find((l) => l.startsWith(`webhook_delivery_attempts_total{event="isv.credits.allowance.changed",outcome="${outcome}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const [retriesBefore, successesBefore] = [await attemptsCounted('retry'), await attemptsCounted('success')];
    const t0 = clock.now().getTime();
    await trigger();
    await drive(t, clock, t0);
    await drive(t, clock, t0 + MIN - 1000);
    expect(s.received).to.have.length(1);
    await drive(t, clock, t0 + MIN);
    expect(s.received).to.have.length(2);
    await drive(t, clock, t0 + 6 * MIN - 1000);
    expect(s.received).to.have.length(2);
    await drive(t, clock, t0 + 6 * MIN);
    await drive(t, clock, t0 + 60 * MIN);
    expect(s.received.map((r) => r.headers['x-webhook-timestamp'])).to.deep.equal([iso(t0), iso(t0 + MIN), iso(t0 + 6 * MIN)]);
    expect(new Set(s.received.map((r) => r.headers['x-webhook-id'])).size).to.equal(1);

    const log = await w.get(s.id, '/deliveries');
    expect(log.status, log.text).to.equal(200);
    const d = log.json.data.items[0];
    expect(d).to.include({ outcome: 'delivered', attempts: 3, eventType: 'isv.credits.allowance.changed', eventId: s.received[0]!.body.eventId });
    expect(d.attemptLog.map((a: any) => [a.attempt, a.statusCode, a.outcome, a.nextAttemptAt])).to.deep.equal([
      [1, 500, 'retry', iso(t0 + MIN)],
      [2, 500, 'retry', iso(t0 + 6 * MIN)],
      [3, 200, 'delivered', null],
    ]);
    // Each attempt is counted in /metrics by its outcome.
    expect(await attemptsCounted('retry')).to.equal(retriesBefore + 2);
    expect(await attemptsCounted('success')).to.equal(successesBefore + 1);
  });

  it('never retries a 4xx', async () => {
    const { w, subs, trigger } = await setup([{ answers: [404, 200] }]);
    const t0 = clock.now().getTime();
    await trigger();
    await drive(t, clock, t0);
    await drive(t, clock, t0 + MIN);
    await drive(t, clock, t0 + 120 * MIN);
    expect(subs[0]!.received).to.have.length(1);
    const d = (await w.get(subs[0]!.id, '/deliveries')).json.data.items[0];
    expect(d).to.include({ outcome: 'failed', attempts: 1, lastStatusCode: 404, nextAttemptAt: null });
  });

  it('marks the delivery failed after the fifth failure (60 s, 5 min, 15 min, 15 min apart) and never sends it again', async () => {
    const { w, subs, trigger } = await setup([{ answers: [503] }]);
    const t0 = clock.now().getTime();
    await trigger();
    for (const at of [0, 1, 6, 21, 36, 51, 300]) await drive(t, clock, t0 + at * MIN);
    const s = subs[0]!;
    expect(s.received.map((r) => r.headers['x-webhook-timestamp'])).to.deep.equal([0, 1, 6, 21, 36].map((m) => iso(t0 + m * MIN)));
    const d = (await w.get(s.id, '/deliveries')).json.data.items[0];
    expect(d).to.include({ outcome: 'failed', attempts: 5, nextAttemptAt: null, lastStatusCode: 503 });
    expect(d.attemptLog.map((a: any) => a.outcome)).to.deep.equal(['retry', 'retry', 'retry', 'retry', 'failed']);
  });

  it('retries a time-out and a refused connection like a 5xx', async () => {
    const { w, subs, trigger } = await setup([{ answers: ['hang', 200] }]);
    const t0 = clock.now().getTime();
    await trigger();
    await drive(t, clock, t0);
    let d = (await w.get(subs[0]!.id, '/deliveries')).json.data.items[0];
    expect(d).to.include({ outcome: 'pending', attempts: 1, lastError: 'TIMEOUT', lastStatusCode: null, nextAttemptAt: iso(t0 + MIN) });
    await drive(t, clock, t0 + MIN);
    d = (await w.get(subs[0]!.id, '/deliveries')).json.data.items[0];
    expect(d).to.include({ outcome: 'delivered', attempts: 2 });

    // Nobody listens on the URL: a network failure, retried.
    const dead = await setup([]);
    const id = await subscribe(dead.w, { webhookUrl: 'http://127.0.0.1:9/nobody', events: ['isv.credits.allowance.changed'] });
    const t1 = clock.now().getTime();
    await dead.trigger();
    await drive(t, clock, t1);
    const x = (await dead.w.get(id, '/deliveries')).json.data.items[0];
    expect(x).to.include({ outcome: 'pending', attempts: 1, nextAttemptAt: iso(t1 + MIN) });
    expect(x.lastError).to.equal('ECONNREFUSED');
  });

  it('survives a worker restart mid-schedule and makes each attempt once with two workers', async () => {
    const { subs, trigger } = await setup([{ answers: [500, 500, 200] }]);
    const s = subs[0]!;
    const t0 = clock.now().getTime();
    await trigger();
    await drive(t, clock, t0);
    expect(s.received).to.have.length(1);
    // A new worker (a restarted process) knows nothing but the log; a second one competes with it.
    const deps = { store: t.service.runtime.store, clock, knex: t.service.deps.knex, sender: { allowPrivateTargets: true, timeoutMs: 400 }, secrets: secretBox(null) };
    const a = webhookDeliveryWorker(deps);
    const b = webhookDeliveryWorker(deps);
    clock.set(iso(t0 + MIN));
    await Promise.all([a.tick(clock.now()), b.tick(clock.now()), webhookWorker(t).tick(clock.now())]);
    await Promise.all([a.idle(), b.idle(), webhookWorker(t).idle()]);
    await t.settleAll();
    expect(s.received).to.have.length(2);
    clock.set(iso(t0 + 6 * MIN));
    await Promise.all([a.tick(clock.now()), b.tick(clock.now())]);
    await Promise.all([a.idle(), b.idle()]);
    await t.settleAll();
    await drive(t, clock, t0 + 7 * MIN);
    expect(s.received.map((r) => r.headers['x-webhook-timestamp'])).to.deep.equal([iso(t0), iso(t0 + MIN), iso(t0 + 6 * MIN)]);
    await a.stop();
    await b.stop();
  });

  it('a first attempt whose claim lapsed unrecorded is made by a restarted worker, behind later deliveries already recorded', async () => {
    const { c, subs, trigger } = await setup([{}]);
    const s = subs[0]!;
    const deps = { store: t.service.runtime.store, clock, knex: t.service.deps.knex, sender: { allowPrivateTargets: true, timeoutMs: 400 }, secrets: secretBox(null) };
    const t0 = clock.now().getTime();
    await trigger();
    const [first] = (await t.service.deps.knex('webhook_deliveries').where({ subscription_id: s.id }).select('delivery_id')) as { delivery_id: string }[];
    // Another instance claimed the first delivery's attempt and died before recording it.
    expect(await claimAttempts(t.service.deps.knex, [{ deliveryId: first!.delivery_id, attempt: 1 }], 'dead-instance', clock.now(), new Date(t0 + MIN))).to.have.property('size', 1);
    for (const limit of [60, 70]) {
      await c.write('PUT', `/allowances/${c.companyId}/current`, { limit, periodType: 'monthly', startAt: iso(t0 - 3600_000), endAt: iso(t0 + 86400_000), reason: 'more' }, { 'if-match': `"${limit === 60 ? 1 : 2}"` });
    }
    await t.settleAll();
    const one = webhookDeliveryWorker(deps);
    await one.tick(clock.now());
    await one.idle();
    await one.stop();
    await t.settleAll();
    expect(s.received).to.have.length(2); // the later two; the first is held by the dead claim
    // A restarted worker, once the claim has lapsed: the first delivery is still due, and only it.
    clock.set(iso(t0 + 2 * MIN));
    const two = webhookDeliveryWorker(deps);
    await two.tick(clock.now());
    await two.idle();
    await t.settleAll();
    await two.tick(clock.now());
    await two.idle();
    await two.stop();
    expect(s.received).to.have.length(3);
    expect(new Set(s.received.map((r) => r.body.eventId)).size).to.equal(3);
    const items = (await webhooksClient(t, c.apiKey).get(s.id, '/deliveries')).json.data.items;
    expect(items.map((d: any) => [d.outcome, d.attempts])).to.deep.equal([['delivered', 1], ['delivered', 1], ['delivered', 1]]);
  });

  it('a started worker sends a new delivery as soon as the projection commits it, without a tick, beside a receiver that never answers', async () => {
    const { subs, trigger } = await setup([{}, { answers: ['hang'] }]);
    const [fast, hanging] = subs as [(typeof subs)[0], (typeof subs)[0]];
    const deps = { store: t.service.runtime.store, clock, knex: t.service.deps.knex, sender: { allowPrivateTargets: true, timeoutMs: 400 }, secrets: secretBox(null) };
    const worker = webhookDeliveryWorker(deps);
    try {
      await worker.tick(clock.now()); // the full round: the worker learns the subscriptions
      await worker.idle();
      worker.start();
      await trigger(); // commits the deliveries; no tick from here on
      const deadline = Date.now() + 10_000;
      while ((fast.received.length < 1 || hanging.received.length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(fast.received).to.have.length(1);
      expect(hanging.received).to.have.length(1);
    } finally {
      await worker.stop();
    }
  });

  it('matches occurrences against the subscriptions it remembers only while they are still stored so: a subscription it did not see being written is found', async () => {
    const { c } = await setup([]);
    // Each trigger an allowance of a new company of the workspace: one occurrence each.
    const trigger = async () => {
      const company = await c.client.onboard();
      await createCurrent({ ...c, companyId: company.companyId as string }, clock.now(), { limit: 50 });
      await t.settleAll();
    };
    await trigger(); // read: the workspace has no subscription (remembered)
    await trigger(); // from memory, one statement with the checkpoint: nothing to deliver
    const deliveries = () => t.service.deps.knex('webhook_deliveries').where({ workspace_id: c.workspaceId }).select('subscription_id');
    expect(await deliveries()).to.have.length(0);
    // A subscription stored without this projection seeing its event (as another instance's batch would).
    const route = receiver.route();
    await storeSubscriptionBehind(t, c.workspaceId, route.url, ['isv.credits.allowance.changed'], clock.now().toISOString());
    await trigger(); // the remembered set is no longer stored: the batch reads the subscriptions
    expect((await deliveries()).map((d: { subscription_id: string }) => d.subscription_id)).to.deep.equal([`sub_${c.workspaceId}_behind`]);
  });

  it('keeps event ids, outcomes and attempts through a rebuild, and sends nothing again', async () => {
    const { w, subs, trigger } = await setup([{ answers: [500, 200] }]);
    const s = subs[0]!;
    const t0 = clock.now().getTime();
    await trigger();
    await drive(t, clock, t0);
    await drive(t, clock, t0 + MIN);
    expect(s.received).to.have.length(2);
    const before = (await w.get(s.id, '/deliveries')).json.data.items;
    await rebuildProjection(t.service.deps.knex, t.service.runtime.store, webhooksProjection);
    expect((await w.get(s.id, '/deliveries')).json.data.items).to.deep.equal(before);
    await rebuildProjection(t.service.deps.knex, t.service.runtime.store, webhookAttemptsProjection);
    const after = (await w.get(s.id, '/deliveries')).json.data.items;
    expect(after).to.deep.equal(before);
    expect(after[0].eventId).to.equal(s.received[0]!.body.eventId);
    await drive(t, clock, t0 + 30 * MIN);
    expect(s.received).to.have.length(2);
  });

  it('sends a signed webhook.test ping through the same path and answers with the outcome; lists deliveries with filters and paging', async () => {
    const { c, w, subs, trigger } = await setup([{ secretKey: 'ping-secret', answers: [200] }]);
    const s = subs[0]!;
    const r = await w.test(s.id);
    expect(r.status, r.text).to.equal(200);
    expect(r.json.data).to.include({ outcome: 'delivered', statusCode: 200, eventType: 'webhook.test', error: null });
    const ping = s.received[0]!;
    expect(ping.headers['x-webhook-event']).to.equal('webhook.test');
    expect(ping.headers['x-webhook-id']).to.equal(r.json.data.eventId);
    expect(ping.headers['x-webhook-signature']).to.equal(createHmac('sha256', 'ping-secret').update(ping.raw).digest('hex'));
    expect(ping.body.data.data.schemaVersion).to.equal('1.0');

    await trigger();
    await drive(t, clock, clock.now().getTime());
    await c.write('PUT', `/allowances/${c.companyId}/current`, { limit: 60, periodType: 'monthly', startAt: iso(clock.now().getTime() - 3600_000), endAt: iso(clock.now().getTime() + 86400_000), reason: 'more' }, { 'if-match': '"1"' });
    await t.settleAll();
    await drive(t, clock, clock.now().getTime());
    const all = (await w.get(s.id, '/deliveries')).json.data;
    expect(all.items.map((d: any) => d.eventType)).to.deep.equal(['isv.credits.allowance.changed', 'isv.credits.allowance.changed', 'webhook.test']);
    const p1 = (await w.get(s.id, '/deliveries?limit=2')).json.data;
    expect(p1.items).to.have.length(2);
    const p2 = (await w.get(s.id, `/deliveries?limit=2&cursor=${p1.nextCursor}`)).json.data;
    expect(p2.items.map((d: any) => d.eventType)).to.deep.equal(['webhook.test']);
    expect(p2.nextCursor).to.equal(null);
    const byType = (await w.get(s.id, '/deliveries?eventType=webhook.test')).json.data.items;
    expect(byType).to.have.length(1);
    const byId = (await w.get(s.id, `/deliveries?eventId=${all.items[0].eventId}`)).json.data.items;
    expect(byId.map((d: any) => d.deliveryId)).to.deep.equal([all.items[0].deliveryId]);
    expect((await w.get(s.id, '/deliveries?outcome=failed')).json.data.items).to.have.length(0);
    for (const q of ['?outcome=nope', '?eventType=isv.nope', '?eventId=x', '?limit=0', '?cursor=zzz', '?other=1', `?limit=2&outcome=delivered&cursor=${p1.nextCursor}`]) {
      const bad = await w.get(s.id, `/deliveries${q}`);
      expect(bad.status, q).to.equal(400);
      expect(bad.json.error.code).to.equal('CONNECT_VALIDATION_ERROR');
    }
  });
});
