/**
 * Issue 37's closing test, with the service running as deployed (system clock, every worker): a
 * buyer's rejection sent over the sandbox network (POST …/responses from the buyer's workspace)
 * moves the seller's document to final_invalid with the buyer's reason, and the seller's
 * subscribed `document.status.changed` receiver gets the change within seconds.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../platform/clock.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant } from '../unify/support.js';
import { startReceiver, subscribe, webhooksClient, type Receiver as Hooks } from '../webhooks/support.js';
import { receiver } from './support.js';

describe('issue 37: a buyer\'s rejection over the sandbox network reaches the seller\'s document and its status webhook', function () {
  this.timeout(120000);
  let t: TestService;
  let hooks: Hooks;

  before(async () => {
    t = await startTestService({
      config: (c) => ({
        ...c,
        webhooks: { ...c.webhooks, allowPrivateTargets: true, workerIntervalMs: 100 },
        // The buyer-response window: a delivered Peppol document awaits the buyer's answer.
        delivery: { ...c.delivery, sandboxFinalResultAfterMs: 10 * 60_000 },
      }),
    });
    hooks = await startReceiver(new ManualClock(new Date()));
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  it('final_invalid with BUYER_REJECTED and the buyer\'s reason, pushed to the seller\'s receiver within seconds', async () => {
    const seller = await unifyTenant(t);
    const buyer = await receiver(t);
    const route = hooks.route();
    await subscribe(webhooksClient(t, seller.apiKey), { webhookUrl: route.url, events: ['document.status.changed'], secretKey: 'seller-secret' });

    const payload = uaeInvoice({ documentNumber: freshNumber('ISSUE37') });
    payload.parties.buyer.peppolId = buyer.tin;
    const submitted = await seller.submit(seller.request(payload));
    expect(submitted.status, submitted.text).to.equal(200);
    const documentId = submitted.json.documentId as string;

    // The buyer sees the purchase, the seller's document awaits the answer.
    const today = new Date().toISOString().slice(0, 10);
    let purchaseId: string | undefined;
    const arrival = Date.now() + 20_000;
    while (!purchaseId && Date.now() < arrival) {
      const list = await buyer.list(`?type=purchases&from=${today}`);
      purchaseId = (list.json.data.items as any[]).find((i) => i.invoiceNumber === payload.header.documentNumber)?.documentId;
      if (!purchaseId) await new Promise((r) => setTimeout(r, 25));
    }
    expect(purchaseId, 'the buyer received the purchase').to.be.a('string');
    const waitDelivered = Date.now() + 10_000;
    while ((await seller.status(documentId, 'read')).json.data.state !== 'delivery_success' && Date.now() < waitDelivered) await new Promise((r) => setTimeout(r, 25));
    expect((await seller.status(documentId, 'read')).json.data).to.include({ state: 'delivery_success', isTerminal: false });

    const started = Date.now();
    const answer = await call(`${t.url}/api/v3/documents/${purchaseId}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${buyer.apiKey}`, 'idempotency-key': `reject-${documentId}` },
      body: { code: 'RE', message: 'Goods not received', reasons: [{ code: 'DEL', text: 'Nothing delivered to our warehouse' }], actions: [{ code: 'CNF' }] },
    });
    expect(answer.status, answer.text).to.equal(201);
    expect(answer.json.data.transmission.status).to.equal('delivered');

    const final = () => route.received.find((x) => x.body.data.data.documentId === documentId && x.body.data.data.isTerminal);
    const deadline = started + 10_000;
    while (!final() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const got = final();
    expect(got, `received: ${JSON.stringify(route.received.map((x) => x.body.data.data.state))}`).to.not.equal(undefined);
    const elapsed = Date.now() - started;
    console.log(`      buyer's answer → final_invalid at the seller's receiver: ${elapsed} ms`);
    expect(elapsed).to.be.below(10_000);
    expect(got!.headers['x-webhook-signature']).to.equal(createHmac('sha256', 'seller-secret').update(got!.raw).digest('hex'));
    const data = got!.body.data.data;
    expect(data).to.deep.include({ documentId, state: 'final_invalid', isTerminal: true, environment: 'sandbox' });
    expect(data.errors[0]).to.include({ code: 'BUYER_REJECTED', source: 'delivery' });
    expect(data.errors[0].message).to.contain('Goods not received').and.contain('DEL');

    const status = (await seller.status(documentId, 'read')).json.data;
    expect(status).to.include({ state: 'final_invalid', isTerminal: true });
    expect(data.errors).to.deep.equal(status.errors);
    expect(status.buyerResponse).to.include({ code: 'RE', message: 'Goods not received', responseId: answer.json.data.responseId });
  });
});
