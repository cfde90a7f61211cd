/**
 * Webhook redelivery (docs/api/webhooks.md) through the real server and a real receiver: one
 * delivery or every event since an instant is delivered again with the same event ids, as new
 * deliveries with their own entries in the delivery log; idempotent under Idempotency-Key,
 * authorised like subscription writes, rate limited, and every bad request refused precisely.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../platform/clock.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { webhookAttemptsProjection } from '../../projections/webhook-attempts.js';
import { webhooksProjection } from '../../projections/webhooks.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { WEBHOOKS, drive, startReceiver, subscribe, webhooksClient, type Receiver } from './support.js';

const TYPE = 'document.status.changed';

describe('webhooks: redelivery', function () {
  this.timeout(60000);
  let t: TestService;
  let hooks: Receiver;
  const clock = new ManualClock('2026-10-01T08:00:00Z');

  before(async () => {
    t = await startTestService({ clock, startWorkers: false, config: (c) => ({ ...c, webhooks: { ...c.webhooks, allowPrivateTargets: true } }) });
    hooks = await startReceiver(clock);
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  const redeliver = (apiKey: string, id: string, body: unknown, headers: Record<string, string> = {}) =>
    call(`${t.url}${WEBHOOKS}/${id}/redeliveries`, { method: 'POST', headers: { 'x-api-key': apiKey, ...headers }, body });
  /** One status change: a document refused by validation (one `rejected` event). */
  async function rejectedDocument(u: UnifyTenant): Promise<string> {
    const bad = uaeInvoice();
    delete bad.header.issueDate;
    const r = await u.submit(u.request(bad));
    expect(r.status, r.text).to.equal(422);
    return r.json.documentId as string;
  }
  const later = (ms: number) => drive(t, clock, clock.now().getTime() + ms);
  async function setup(secretKey?: string) {
    const u = await unifyTenant(t);
    const w = webhooksClient(t, u.apiKey);
    const route = hooks.route();
    const id = await subscribe(w, { webhookUrl: route.url, events: [TYPE], ...(secretKey ? { secretKey } : {}) });
    return { u, w, route, id };
  }

  it('redelivers one delivery: the same event id and body, signed, as a new delivery of its own in the log', async () => {
    const { u, w, route, id } = await setup('redeliver-secret');
    await rejectedDocument(u);
    await later(1000);
    expect(route.received).to.have.length(1);
    const log = await w.get(id, '/deliveries');
    const original = log.json.data.items[0];
    expect(original).to.deep.include({ outcome: 'delivered', attempts: 1, redeliveryOf: null, redeliveryId: null });

    await later(60_000);
    const r = await redeliver(u.apiKey, id, { deliveryId: original.deliveryId });
    expect(r.status, r.text).to.equal(202);
    const data = r.json.data;
    expect(data.redeliveryId).to.match(/^whr_[0-9a-f]{24}$/);
    expect(data).to.deep.include({ subscriptionId: id, requestedAt: clock.now().toISOString(), skipped: [] });
    expect(data.deliveries).to.have.length(1);
    expect(data.deliveries[0]).to.deep.include({ redeliveryOf: original.deliveryId, eventId: original.eventId, eventType: TYPE });
    expect(data.deliveries[0].deliveryId).to.not.equal(original.deliveryId);

    await later(1000);
    expect(route.received).to.have.length(2);
    const [first, again] = route.received;
    expect(again!.headers['x-webhook-id']).to.equal(first!.headers['x-webhook-id']);
    expect(again!.raw.toString('utf8')).to.equal(first!.raw.toString('utf8'));
    expect(again!.headers['x-webhook-signature']).to.equal(createHmac('sha256', 'redeliver-secret').update(again!.raw).digest('hex'));
    expect(again!.headers['x-webhook-timestamp']).to.not.equal(first!.headers['x-webhook-timestamp']);

    const after = await w.get(id, '/deliveries');
    expect(after.json.data.items).to.have.length(2);
    const [redelivered, originalAgain] = after.json.data.items;
    expect(redelivered).to.deep.include({ deliveryId: data.deliveries[0].deliveryId, eventId: original.eventId, outcome: 'delivered', attempts: 1, redeliveryOf: original.deliveryId, redeliveryId: data.redeliveryId });
    expect(originalAgain).to.deep.include({ deliveryId: original.deliveryId, attempts: 1, redeliveryOf: null });
    const only = await w.get(id, `/deliveries?redeliveryId=${data.redeliveryId}`);
    expect(only.json.data.items.map((d: { deliveryId: string }) => d.deliveryId)).to.deep.equal([data.deliveries[0].deliveryId]);

    // A redelivery's own id names its original: redelivering it redelivers the original event.
    const viaCopy = await redeliver(u.apiKey, id, { deliveryId: data.deliveries[0].deliveryId });
    expect(viaCopy.status, viaCopy.text).to.equal(202);
    expect(viaCopy.json.data.deliveries[0]).to.deep.include({ redeliveryOf: original.deliveryId, eventId: original.eventId });
    // …and while that delivery is pending, the event is not redelivered again.
    const pending = await redeliver(u.apiKey, id, { deliveryId: original.deliveryId });
    expect(pending.status, pending.text).to.equal(409);
    expect(pending.json.error).to.deep.include({ code: 'CONNECT_WEBHOOK_DELIVERY_PENDING', path: ['deliveryId'] });
    await later(1000);
    expect(route.received).to.have.length(3);
  });

  it('is idempotent under Idempotency-Key: the same answer, one redelivery', async () => {
    const { u, w, route, id } = await setup();
    await rejectedDocument(u);
    await later(1000);
    const original = (await w.get(id, '/deliveries')).json.data.items[0];
    const key = { 'idempotency-key': `redeliver-${original.deliveryId}` };
    const first = await redeliver(u.apiKey, id, { deliveryId: original.deliveryId }, key);
    expect(first.status, first.text).to.equal(202);
    const second = await redeliver(u.apiKey, id, { deliveryId: original.deliveryId }, key);
    expect(second.status, second.text).to.equal(202);
    expect(second.json.data).to.deep.equal(first.json.data);
    await later(1000);
    expect(route.received).to.have.length(2);
    expect((await w.get(id, '/deliveries')).json.data.items).to.have.length(2);
  });

  it('redelivers every event since an instant, oldest first, within until; skips events still being delivered', async () => {
    const { u, w, route, id } = await setup();
    const start = clock.now().getTime();
    const documents: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.set(new Date(start + i * 3_600_000));
      documents.push(await rejectedDocument(u));
      await later(1000);
    }
    expect(route.received).to.have.length(3);
    const since = new Date(start + 1_800_000).toISOString();
    const r = await redeliver(u.apiKey, id, { since });
    expect(r.status, r.text).to.equal(202);
    const eventIds = route.received.map((x) => x.body.eventId);
    expect(r.json.data.deliveries.map((d: { eventId: string }) => d.eventId)).to.deep.equal(eventIds.slice(1));
    await later(1000);
    expect(route.received.slice(3).map((x) => x.body.eventId).sort()).to.deep.equal(eventIds.slice(1).sort());
    expect(route.received.slice(3).map((x) => x.body.data.data.documentId).sort()).to.deep.equal(documents.slice(1).sort());

    // until bounds the range; an event whose delivery is pending is skipped.
    const until = new Date(start + 2 * 3_600_000).toISOString();
    const bounded = await redeliver(u.apiKey, id, { since, until });
    expect(bounded.status, bounded.text).to.equal(202);
    expect(bounded.json.data.deliveries.map((d: { eventId: string }) => d.eventId)).to.deep.equal([eventIds[1]]);
    const skipping = await redeliver(u.apiKey, id, { since: new Date(start).toISOString() });
    expect(skipping.status, skipping.text).to.equal(202);
    expect(skipping.json.data.skipped).to.deep.equal([{ deliveryId: bounded.json.data.deliveries[0].redeliveryOf, eventId: eventIds[1], reason: 'pending' }]);
    expect(skipping.json.data.deliveries.map((d: { eventId: string }) => d.eventId)).to.deep.equal([eventIds[0], eventIds[2]]);
    await later(1000);
    // A rebuild of both webhook projections recreates the same log: the same deliveries and
    // redeliveries with their ids, attempts and outcomes; nothing is sent again.
    const log = (await w.get(id, '/deliveries?limit=100')).json.data.items;
    expect(log).to.have.length(3 + 2 + 1 + 2);
    await rebuildProjection(t.service.deps.knex, t.service.runtime.store, webhooksProjection);
    await rebuildProjection(t.service.deps.knex, t.service.runtime.store, webhookAttemptsProjection);
    expect((await w.get(id, '/deliveries?limit=100')).json.data.items).to.deep.equal(log);
    const sent = route.received.length;
    await later(30 * 60_000);
    expect(route.received).to.have.length(sent);
    // Nothing in range: 200, nothing queued.
    const none = await redeliver(u.apiKey, id, { since: new Date(clock.now().getTime() - 1000).toISOString() });
    expect(none.status, none.text).to.equal(200);
    expect(none.json.data).to.deep.include({ redeliveryId: null, deliveries: [], skipped: [] });
  });

  it('refuses bad requests precisely: body, unknown ids, instants out of bounds, a ping, paused, deleted and foreign subscriptions, keys that may not write', async () => {
    const { u, w, id } = await setup();
    await rejectedDocument(u);
    await later(1000);
    const original = (await w.get(id, '/deliveries')).json.data.items[0];
    const expectError = async (body: unknown, status: number, code: string, path?: string[], subscription = id, apiKey = u.apiKey) => {
      const r = await redeliver(apiKey, subscription, body);
      expect(r.status, `${JSON.stringify(body)} ${r.text}`).to.equal(status);
      expect(r.json.success).to.equal(false);
      expect(r.json.error.code, r.text).to.equal(code);
      if (path) expect(r.json.error.path, r.text).to.deep.equal(path);
    };
    // A refusal of the whole body names no field.
    await expectError([1], 400, 'CONNECT_VALIDATION_ERROR');
    await expectError({}, 400, 'CONNECT_VALIDATION_ERROR');
    await expectError({ deliveryId: original.deliveryId, extra: true }, 400, 'CONNECT_VALIDATION_ERROR', ['extra']);
    await expectError({ deliveryId: 'whd_x' }, 400, 'CONNECT_VALIDATION_ERROR', ['deliveryId']);
    await expectError({ deliveryId: original.deliveryId, since: clock.now().toISOString() }, 400, 'CONNECT_VALIDATION_ERROR', ['since']);
    await expectError({ deliveryId: 'whd_000000000000000000000000' }, 404, 'CONNECT_WEBHOOK_DELIVERY_NOT_FOUND', ['deliveryId']);
    await expectError({ since: new Date(clock.now().getTime() - 8 * 86_400_000).toISOString() }, 400, 'CONNECT_VALIDATION_ERROR', ['since']);
    await expectError({ since: new Date(clock.now().getTime() + 60_000).toISOString() }, 400, 'CONNECT_VALIDATION_ERROR', ['since']);
    await expectError({ since: 'last tuesday' }, 400, 'CONNECT_VALIDATION_ERROR', ['since']);
    await expectError({ since: clock.now().toISOString(), until: '2020-01-01T00:00:00Z' }, 400, 'CONNECT_VALIDATION_ERROR', ['until']);
    await expectError({ deliveryId: original.deliveryId }, 404, 'CONNECT_WEBHOOK_NOT_FOUND', ['path', 'id'], 'whk_000000000000000000000000');
    await expectError({ deliveryId: original.deliveryId }, 404, 'CONNECT_WEBHOOK_NOT_FOUND', ['path', 'id'], 'not-an-id');
    const q = await call(`${t.url}${WEBHOOKS}/${id}/deliveries?redeliveryId=nope`, { headers: { 'x-api-key': u.apiKey } });
    expect(q.status).to.equal(400);
    expect(q.json.error.path).to.deep.equal(['query', 'redeliveryId']);

    // A ping is not redelivered.
    const ping = await w.test(id);
    expect(ping.status, ping.text).to.equal(200);
    await expectError({ deliveryId: ping.json.data.deliveryId }, 409, 'CONNECT_WEBHOOK_NOT_REDELIVERABLE', ['deliveryId']);

    // Keys that may not write subscriptions may not redeliver; another workspace's key does not see it.
    const member = await t.key((await w.get(id)).json.meta.workspaceId, { role: 'member' });
    await expectError({ deliveryId: original.deliveryId }, 403, 'CONNECT_INSUFFICIENT_PERMISSION', undefined, id, member.apiKey);
    const readOnly = await t.key((await w.get(id)).json.meta.workspaceId, { permission: 'read' });
    await expectError({ deliveryId: original.deliveryId }, 403, 'CONNECT_INSUFFICIENT_PERMISSION', undefined, id, readOnly.apiKey);
    const stranger = await t.tenant();
    await expectError({ deliveryId: original.deliveryId }, 404, 'CONNECT_WEBHOOK_NOT_FOUND', ['path', 'id'], id, stranger.apiKey);

    // Past the window.
    clock.set(new Date(clock.now().getTime() + 8 * 86_400_000));
    await expectError({ deliveryId: original.deliveryId }, 409, 'CONNECT_WEBHOOK_REDELIVERY_WINDOW', ['deliveryId']);

    // Paused, then deleted.
    expect((await w.patch(id, { active: false })).status).to.equal(200);
    await expectError({ since: new Date(clock.now().getTime() - 60_000).toISOString() }, 409, 'CONNECT_WEBHOOK_PAUSED');
    expect((await w.remove(id)).status).to.equal(200);
    await expectError({ since: new Date(clock.now().getTime() - 60_000).toISOString() }, 404, 'CONNECT_WEBHOOK_NOT_FOUND', ['path', 'id']);
  });

  it('has a rate limit of its own: 10 requests per workspace and minute, then 429 with Retry-After', async () => {
    const { u, w, id } = await setup();
    for (let i = 0; i < 10; i++) {
      const r = await redeliver(u.apiKey, id, { since: clock.now().toISOString() });
      expect(r.status, r.text).to.equal(200);
    }
    const refused = await redeliver(u.apiKey, id, { since: clock.now().toISOString() });
    expect(refused.status, refused.text).to.equal(429);
    expect(refused.json.error).to.deep.include({ code: 'CONNECT_RATE_LIMITED', retryable: true });
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    // Other webhook requests of the workspace are not affected.
    expect((await w.get(id)).status).to.equal(200);
  });
});
