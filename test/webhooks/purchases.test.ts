/**
 * `purchase.invoice.stored` (docs/api/webhooks.md): a received purchase invoice, stored once, is announced
 * to the matching subscriptions of its workspace and environment only, signed, with the
 * payload of the README's table.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../platform/clock.js';
import { startTestService, type TestService } from '../support/http.js';
import { receiver as purchaseReceiver, storePurchase } from '../purchases/support.js';
import { drive, startReceiver, subscribe, webhooksClient, type Receiver } from './support.js';

const TYPE = 'purchase.invoice.stored';

describe('webhooks: purchase.invoice.stored', function () {
  this.timeout(60000);
  let t: TestService;
  let hooks: Receiver;
  const clock = new ManualClock('2026-08-01T00:00:00Z');

  before(async () => {
    t = await startTestService({ clock, startWorkers: false, config: (c) => ({ ...c, webhooks: { ...c.webhooks, allowPrivateTargets: true } }) });
    hooks = await startReceiver(clock);
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  it('announces a stored purchase once, signed, with the exact payload, to its workspace and environment only', async () => {
    const r = await purchaseReceiver(t);
    const w = webhooksClient(t, r.apiKey);
    const mine = hooks.route();
    await subscribe(w, { webhookUrl: mine.url, events: [TYPE], secretKey: 'purchase-secret' });
    // Same workspace: credit events only (sandbox), and purchases in production.
    const credits = hooks.route();
    await subscribe(w, { webhookUrl: credits.url, events: ['isv.credits.pool.low'] });
    const production = await w.create({ webhookUrl: 'https://hooks.example.com/purchases', events: [TYPE] }, 'production');
    expect(production.status, production.text).to.equal(201);
    // Another workspace, same environment and event type.
    const other = await purchaseReceiver(t);
    const elsewhere = hooks.route();
    await subscribe(webhooksClient(t, other.apiKey), { webhookUrl: elsewhere.url, events: [TYPE] });

    const storedAt = new Date('2026-08-01T09:30:00.000Z');
    const stored = await storePurchase(t, r, { number: 'PUR-HOOK-1', storedAt });
    expect(stored.duplicate).to.equal(false);
    // The same transmission again stores nothing and announces nothing.
    const again = await storePurchase(t, r, { number: 'PUR-HOOK-1', storedAt: new Date('2026-08-01T09:31:00.000Z') });
    expect(again.duplicate).to.equal(true);
    await t.settleAll();
    await drive(t, clock, '2026-08-01T09:35:00Z');
    await drive(t, clock, '2026-08-01T12:00:00Z');

    expect(mine.received).to.have.length(1);
    const got = mine.received[0]!;
    expect(got.body.data.type).to.equal(TYPE);
    expect(got.body.eventId).to.equal(got.body.data.id);
    expect(got.headers['x-webhook-id']).to.equal(got.body.eventId);
    expect(got.headers['x-webhook-event']).to.equal(TYPE);
    expect(got.headers['x-webhook-signature']).to.equal(createHmac('sha256', 'purchase-secret').update(got.raw).digest('hex'));
    expect(got.body.data.timestamp).to.equal(storedAt.toISOString());
    expect(got.body.data.data).to.deep.equal({
      schemaVersion: '1.0',
      documentId: stored.documentId,
      receivedAt: storedAt.toISOString(),
      storedAt: storedAt.toISOString(),
      invoiceNumber: 'PUR-HOOK-1',
      supplierName: got.body.data.data.supplierName,
      companyId: r.company.companyId,
      probableResendOf: [],
    });
    expect(got.body.data.data.supplierName).to.be.a('string').and.not.equal('');
    const read = await r.read(stored.documentId);
    expect(read.status, read.text).to.equal(200);
    expect(got.body.data.data.supplierName).to.equal(read.json.data.supplierName);

    expect(credits.received).to.have.length(0);
    expect(elsewhere.received).to.have.length(0);
    const prodLog = await w.get(production.json.data.id, '/deliveries');
    expect(prodLog.status, prodLog.text).to.equal(200);
    expect(prodLog.json.data.items).to.deep.equal([]);
  });
});
