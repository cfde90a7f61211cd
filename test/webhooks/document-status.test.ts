/**
 * `document.status.changed` (docs/api/webhooks.md): every state change of a sales document is
 * pushed to the subscriptions of its workspace and environment that name the type, signed, with a
 * stable event id (a retry carries the same id); a subscription without it, another workspace and
 * another environment receive nothing.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { documentStream } from '../../domain/document/document.js';
import { documentStatusOccurrences } from '../../domain/webhooks/occurrences/documents.js';
import { ManualClock } from '../../platform/clock.js';
import { startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { drive, startReceiver, storeSubscriptionBehind, subscribe, webhooksClient, type Received, type Receiver } from './support.js';

const TYPE = 'document.status.changed';
const ORDER = ['submitted', 'rejected', 'processing', 'delivery_failed', 'delivery_success', 'final_valid', 'final_invalid'];

describe('webhooks: document.status.changed', function () {
  this.timeout(60000);
  let t: TestService;
  let hooks: Receiver;
  let u: UnifyTenant;
  const clock = new ManualClock('2026-09-01T08:00:00Z');

  before(async () => {
    t = await startTestService({
      clock,
      startWorkers: false,
      config: (c) => ({
        ...c,
        webhooks: { ...c.webhooks, allowPrivateTargets: true },
        delivery: { ...c.delivery, sandboxFinalResultAfterMs: 0 },
      }),
    });
    hooks = await startReceiver(clock);
    u = await unifyTenant(t);
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  async function settled(documentId: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await u.status(documentId, 'status');
      if (r.json.data.isTerminal || Date.now() > deadline) return r.json.data;
      await new Promise((res) => setTimeout(res, 25));
    }
  }
  const ofDocument = (received: Received[], documentId: string) =>
    received
      .filter((r) => r.body.data.data.documentId === documentId)
      .sort((a, b) => ORDER.indexOf(a.body.data.data.state) - ORDER.indexOf(b.body.data.data.state));
  /** The document's events that change its state, as the log holds them. */
  const stateEvents = async (documentId: string) => (await t.service.runtime.store.readStream(documentStream(documentId))).length;

  it('pushes each state change, signed, once per change, to the subscribed workspace and environment only', async () => {
    const w = webhooksClient(t, u.apiKey);
    const mine = hooks.route();
    await subscribe(w, { webhookUrl: mine.url, events: [TYPE], secretKey: 'status-secret' });
    // Same workspace, other event types: nothing.
    const purchasesOnly = hooks.route();
    await subscribe(w, { webhookUrl: purchasesOnly.url, events: ['purchase.invoice.stored', 'isv.credits.pool.low'] });
    // Same workspace and type, production: nothing from a sandbox document.
    const production = await w.create({ webhookUrl: 'https://hooks.example.com/status', events: [TYPE] }, 'production');
    expect(production.status, production.text).to.equal(201);
    // Another workspace subscribed to the type: nothing from this workspace's documents.
    const other = await unifyTenant(t);
    const elsewhere = hooks.route();
    await subscribe(webhooksClient(t, other.apiKey), { webhookUrl: elsewhere.url, events: [TYPE] });

    // Accepted and delivered: submitted, processing, delivery_success, final_valid.
    const ok = await u.submit(u.request(uaeInvoice()));
    expect(ok.status, ok.text).to.equal(200);
    const okId = ok.json.documentId as string;
    expect((await settled(okId)).state).to.equal('final_valid');
    // Refused by the receiving access point in the sandbox: final_invalid with the reason.
    const refused = await u.submit(u.request(uaeInvoice({ documentNumber: freshNumber('SBX-REJECT') })));
    expect(refused.status, refused.text).to.equal(200);
    const refusedId = refused.json.documentId as string;
    const refusedStatus = await settled(refusedId);
    expect(refusedStatus.state).to.equal('final_invalid');
    // Rejected by validation: one change, with the validation errors.
    const bad = uaeInvoice();
    delete bad.header.issueDate;
    const rejected = await u.submit(u.request(bad));
    expect(rejected.status, rejected.text).to.equal(422);
    const rejectedId = rejected.json.documentId as string;

    await t.settleAll();
    await drive(t, clock, '2026-09-01T08:00:01Z');

    // Every delivery signed, its id in the header and the body, the payload complete.
    for (const got of mine.received) {
      expect(got.headers['x-webhook-event']).to.equal(TYPE);
      expect(got.headers['x-webhook-id']).to.equal(got.body.eventId);
      expect(got.body.data.id).to.equal(got.body.eventId);
      expect(got.headers['x-webhook-signature']).to.equal(createHmac('sha256', 'status-secret').update(got.raw).digest('hex'));
      expect(got.body.data.type).to.equal(TYPE);
      expect(got.body.data.data).to.have.all.keys('schemaVersion', 'documentId', 'state', 'isTerminal', 'errors', 'step', 'environment', 'occurredAt');
      expect(got.body.data.data.schemaVersion).to.equal('1.0');
      expect(got.body.data.data.environment).to.equal('sandbox');
      expect(got.body.data.timestamp).to.equal(got.body.data.data.occurredAt);
    }
    // One event per change, distinct ids.
    expect(new Set(mine.received.map((r) => r.body.eventId)).size).to.equal(mine.received.length);

    const okChanges = ofDocument(mine.received, okId);
    expect(okChanges).to.have.length(await stateEvents(okId));
    expect(okChanges.map((r) => [r.body.data.data.state, r.body.data.data.isTerminal, r.body.data.data.step.name, r.body.data.data.step.status])).to.deep.equal([
      ['submitted', false, 'Queue Admitted', 'Valid'],
      ['processing', false, 'Delivery Processing Started', 'Valid'],
      ['delivery_success', false, 'Delivery Success', 'Valid'],
      ['final_valid', true, 'Final Valid', 'Valid'],
    ]);
    expect(okChanges.every((r) => r.body.data.data.errors.length === 0)).to.equal(true);

    const refusedChanges = ofDocument(mine.received, refusedId);
    expect(refusedChanges).to.have.length(await stateEvents(refusedId));
    const final = refusedChanges.at(-1)!.body.data.data;
    expect(final).to.deep.include({ state: 'final_invalid', isTerminal: true });
    expect(final.errors).to.deep.equal(refusedStatus.errors);
    expect(final.errors).to.have.length.greaterThan(0);
    expect(final.step).to.deep.equal({ name: 'Final Invalid', status: 'Invalid', error: { code: final.errors[0].code, message: final.errors[0].message } });

    const rejectedChanges = ofDocument(mine.received, rejectedId);
    expect(rejectedChanges).to.have.length(1);
    const r0 = rejectedChanges[0]!.body.data.data;
    expect(r0).to.deep.include({ state: 'rejected', isTerminal: true });
    expect(r0.step).to.deep.include({ name: 'Validation Failed', status: 'Invalid' });
    expect(r0.errors.map((e: { path: string[] }) => e.path.join('.'))).to.include('header.issueDate');
    expect(r0.errors.every((e: { source: string }) => e.source === 'validation')).to.equal(true);

    expect(mine.received).to.have.length(okChanges.length + refusedChanges.length + 1);
    expect(purchasesOnly.received).to.have.length(0);
    expect(elsewhere.received).to.have.length(0);
    const prodLog = await w.get(production.json.data.id, '/deliveries');
    expect(prodLog.status, prodLog.text).to.equal(200);
    expect(prodLog.json.data.items).to.deep.equal([]);
  });

  it('retries a failed delivery with the same event id, so the receiver de-duplicates', async () => {
    const w = webhooksClient(t, u.apiKey);
    const flaky = hooks.route([500, 200]);
    const id = await subscribe(w, { webhookUrl: flaky.url, events: [TYPE] });
    const bad = uaeInvoice();
    delete bad.header.currency;
    const rejected = await u.submit(u.request(bad));
    expect(rejected.status, rejected.text).to.equal(422);
    await t.settleAll();
    await drive(t, clock, clock.now().getTime() + 1000);
    expect(flaky.received).to.have.length(1);
    await drive(t, clock, clock.now().getTime() + 61_000);
    expect(flaky.received).to.have.length(2);
    expect(flaky.received[1]!.body.eventId).to.equal(flaky.received[0]!.body.eventId);
    expect(flaky.received[1]!.raw.toString('utf8')).to.equal(flaky.received[0]!.raw.toString('utf8'));
    const log = await w.get(id, '/deliveries');
    expect(log.status, log.text).to.equal(200);
    expect(log.json.data.items).to.have.length(1);
    expect(log.json.data.items[0]).to.deep.include({ eventType: TYPE, outcome: 'delivered', attempts: 2, eventId: flaky.received[0]!.body.eventId });
  });

  it('a workspace it remembers without subscriptions: its occurrences are not computed, and a subscription it did not see being written is found', async () => {
    const v = await unifyTenant(t);
    const deliveries = () => t.service.deps.knex('webhook_deliveries').where({ workspace_id: v.workspaceId }).select('subscription_id', 'event_type');
    const computed: string[] = [];
    const occurrencesOf = documentStatusOccurrences.occurrencesOf;
    documentStatusOccurrences.occurrencesOf = (event) => {
      if (event.metadata.workspaceId === v.workspaceId) computed.push(event.type);
      return occurrencesOf(event);
    };
    const submitted = async () => {
      const r = await v.submit(v.request(uaeInvoice()));
      expect(r.status, r.text).to.equal(200);
      await t.settleAll();
    };
    try {
      await submitted(); // read: the workspace has no subscription (remembered)
      computed.length = 0;
      await submitted(); // from memory: nothing to deliver, no occurrence computed
      expect(computed).to.deep.equal([]);
      expect(await deliveries()).to.have.length(0);
      // A subscription stored without this projection seeing its event (as another instance's batch would).
      const route = hooks.route();
      const subscriptionId = await storeSubscriptionBehind(t, v.workspaceId, route.url, [TYPE], clock.now().toISOString());
      await submitted(); // the remembered set is no longer stored: the batch reads the subscriptions
      const rows = await deliveries();
      expect(rows.length).to.be.greaterThan(0);
      expect(rows.every((r: { subscription_id: string; event_type: string }) => r.subscription_id === subscriptionId && r.event_type === TYPE)).to.equal(true);
    } finally {
      documentStatusOccurrences.occurrencesOf = occurrencesOf;
    }
  });
});

describe('webhooks: document.status.changed with the service running (system clock, every worker)', function () {
  this.timeout(60000);
  let t: TestService;
  let hooks: Receiver;

  before(async () => {
    t = await startTestService({
      config: (c) => ({ ...c, webhooks: { ...c.webhooks, allowPrivateTargets: true, workerIntervalMs: 100 }, delivery: { ...c.delivery, sandboxFinalResultAfterMs: 0 } }),
    });
    hooks = await startReceiver(new ManualClock(new Date()));
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  it("a buyer's rejection in the sandbox reaches the seller's receiver as final_invalid with BUYER_REJECTED, with no one driving the worker", async () => {
    const u = await unifyTenant(t);
    const route = hooks.route();
    await subscribe(webhooksClient(t, u.apiKey), { webhookUrl: route.url, events: [TYPE], secretKey: 'live-secret' });
    const r = await u.submit(u.request(uaeInvoice({ documentNumber: freshNumber('SBX-BUYER-REJECT') })));
    expect(r.status, r.text).to.equal(200);
    const documentId = r.json.documentId as string;
    const started = Date.now();
    const deadline = started + 30_000;
    const final = () => route.received.find((x) => x.body.data.data.documentId === documentId && x.body.data.data.isTerminal);
    while (!final() && Date.now() < deadline) await new Promise((res) => setTimeout(res, 25));
    const got = final();
    expect(got, `received: ${JSON.stringify(route.received.map((x) => x.body.data.data.state))}`).to.not.equal(undefined);
    // The time from the submit's answer to the final change at the receiver (a figure, not a bound).
    console.log(`      submit → final_invalid at the receiver: ${Date.now() - started} ms`);
    expect(got!.headers['x-webhook-signature']).to.equal(createHmac('sha256', 'live-secret').update(got!.raw).digest('hex'));
    const data = got!.body.data.data;
    expect(data).to.deep.include({ documentId, state: 'final_invalid', isTerminal: true, environment: 'sandbox' });
    expect(data.errors[0]).to.include({ code: 'BUYER_REJECTED', source: 'government' });
    expect(data.step).to.deep.include({ name: 'Final Invalid', status: 'Invalid' });
    const status = await u.status(documentId, 'status');
    expect(status.json.data.state).to.equal('final_invalid');
    expect(data.errors).to.deep.equal(status.json.data.errors);
  });
});
