/**
 * The buyer's answer (Peppol BIS 3.0 Invoice Response) between two workspaces over the sandbox
 * network, through the real server (docs/api/invoice-response.md): the buyer answers a received
 * purchase; the seller's sales document records it, and a document awaiting the buyer (the
 * buyer-response window) ends with it.
 */
import { expect } from 'chai';
import { ublSchemaErrors } from '../../commands/purchases/xsd.js';
import { receiveInvoiceResponse } from '../../commands/peppol/invoice-response-inbound.js';
import { buildInvoiceResponseXml, readInvoiceResponse } from '../../domain/peppol/invoice-response.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { receiver, storePurchase, type Receiver } from './support.js';
import { admin } from '../support/cli.js';

const WINDOW_MS = 10 * 60_000;

describe('the buyer\'s answer over the sandbox network (Peppol Invoice Response)', function () {
  this.timeout(120000);
  let t: TestService;
  let seller: UnifyTenant;
  let buyer: Receiver;

  before(async () => {
    // Peppol documents await the buyer's answer for a window before they are final.
    t = await startTestService({ config: (c) => ({ ...c, delivery: { ...c.delivery, sandboxFinalResultAfterMs: WINDOW_MS } }) });
    seller = await unifyTenant(t);
    buyer = await receiver(t);
  });
  after(async () => t.close());

  const auth = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });
  const respond = (purchaseId: string, body: unknown, headers: Record<string, string> = {}, apiKey = buyer.apiKey) =>
    call(`${t.url}/api/v3/documents/${purchaseId}/responses`, { method: 'POST', headers: { ...auth(apiKey), ...headers }, body });

  async function statusUntil(documentId: string, done: (d: any) => boolean) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await seller.status(documentId, 'read');
      expect(r.status, r.text).to.equal(200);
      if (done(r.json.data) || Date.now() > deadline) return r.json.data;
      await new Promise((res) => setTimeout(res, 25));
    }
  }

  /** Sends an AE invoice to the buyer; waits until it is delivered and stored as the buyer's purchase. */
  async function delivered(prefix: string): Promise<{ salesId: string; purchaseId: string; number: string }> {
    const payload = uaeInvoice({ documentNumber: freshNumber(prefix) });
    payload.parties.buyer.peppolId = buyer.tin;
    const res = await seller.submit(seller.request(payload));
    expect(res.status, res.text).to.equal(200);
    const salesId = res.json.documentId as string;
    const sales = await statusUntil(salesId, (d) => d.state !== 'submitted' && d.state !== 'processing');
    expect(sales.state).to.equal('delivery_success');
    const today = new Date().toISOString().slice(0, 10);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const list = await buyer.list(`?type=purchases&from=${today}`);
      const item = list.json.data.items.find((i: any) => i.invoiceNumber === payload.header.documentNumber);
      if (item) return { salesId, purchaseId: item.documentId, number: payload.header.documentNumber };
      if (Date.now() > deadline) throw new Error('the purchase never arrived');
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('a rejection moves the seller\'s document to final_invalid with BUYER_REJECTED and the buyer\'s reason', async () => {
    const { salesId, purchaseId, number } = await delivered('RE');
    const before = (await seller.status(salesId, 'read')).json.data;
    expect(before).to.include({ state: 'delivery_success', isTerminal: false });
    expect(before).to.not.have.property('buyerResponse');

    const res = await respond(purchaseId, { code: 'RE', message: 'No purchase order matches this invoice', reasons: [{ code: 'REF' }], actions: [{ code: 'NIN', text: 'Send a new invoice with our order number' }] });
    expect(res.status, res.text).to.equal(201);
    const sent = res.json.data;
    expect(sent).to.include({ code: 'RE', businessStatus: 'REJECTED', invoiceNumber: number, channel: 'peppol_sandbox', senderParticipantId: `0235:${buyer.tin}` });
    expect(sent.transmission).to.include({ status: 'delivered', detail: null });
    expect(sent.reasons).to.deep.equal([{ code: 'REF', text: null }]);
    expect(sent.actions).to.deep.equal([{ code: 'NIN', text: 'Send a new invoice with our order number' }]);
    expect(res.headers.get('location')).to.equal(`/api/v3/documents/${purchaseId}/responses/${sent.responseId}`);

    const after = await statusUntil(salesId, (d) => d.state === 'final_invalid');
    expect(after).to.include({ state: 'final_invalid', isTerminal: true });
    expect(after.errors).to.have.length(1);
    expect(after.errors[0]).to.include({ code: 'BUYER_REJECTED', source: 'delivery' });
    expect(after.errors[0].message).to.contain('No purchase order matches this invoice').and.contain('REF');
    expect(after.buyerResponse).to.include({ responseId: sent.responseId, code: 'RE', businessStatus: 'REJECTED', invoiceNumber: number, receiverParticipantId: sent.receiverParticipantId });
    expect(after.validationResults.status).to.equal('Invalid');
    expect(after.compliance.ftaApprovedStatus).to.equal('REJECTED');

    // The query's business status.
    await t.settleAll();
    const q = await call(`${t.url}/invoices/query`, { method: 'POST', headers: auth(seller.apiKey), body: { country: 'AE', type: 'sales', environment: 'sandbox', filters: [{ id: 'documentId', value: [salesId] }], columns: ['documentId', 'meta.statuses.business.current'] } });
    expect(q.status, q.text).to.equal(200);
    expect(q.json.data.documents[0].coreDocument.meta.statuses.business.current).to.equal('REJECTED');

    // The buyer's list of answers and the XML sent: a valid Invoice Response naming the invoice.
    const list = await call(`${t.url}/api/v3/documents/${purchaseId}/responses`, { headers: auth(buyer.apiKey) });
    expect(list.status, list.text).to.equal(200);
    expect(list.json.data.items.map((i: any) => i.responseId)).to.deep.equal([sent.responseId]);
    const one = await call(`${t.url}/api/v3/documents/${purchaseId}/responses/${sent.responseId}`, { headers: auth(buyer.apiKey) });
    expect(one.status, one.text).to.equal(200);
    const xml = Buffer.from(one.json.data.responseXmlBase64, 'base64').toString('utf8');
    expect(await ublSchemaErrors(xml, 'ApplicationResponse')).to.deep.equal([]);
    const read = readInvoiceResponse(xml);
    expect(read).to.include({ code: 'RE', responseId: sent.responseId, receiverParticipantId: sent.receiverParticipantId });
    expect(read.invoice.id).to.equal(number);
    expect(read.invoice.typeCode).to.equal('380');

    // Nothing may follow a rejection.
    const again = await respond(purchaseId, { code: 'AP' });
    expect(again.status, again.text).to.equal(409);
    expect(again.json).to.include({ success: false, code: 'RESPONSE_NOT_ALLOWED' });
  });

  it('other answers show on the status object and the business status without ending the document; AP ends it final_valid, PD may follow', async () => {
    const { salesId, purchaseId } = await delivered('UQ');
    const uq = await respond(purchaseId, { code: 'UQ', reasons: [{ code: 'PRI', text: 'Unit price differs from the contract' }], actions: [{ code: 'PIN' }] });
    expect(uq.status, uq.text).to.equal(201);
    const queried = await statusUntil(salesId, (d) => d.buyerResponse?.code === 'UQ');
    expect(queried).to.include({ state: 'delivery_success', isTerminal: false });
    expect(queried.buyerResponse).to.include({ code: 'UQ', businessStatus: 'UNDER_QUERY' });
    expect(queried.buyerResponse.reasons).to.deep.equal([{ code: 'PRI', text: 'Unit price differs from the contract' }]);
    expect(queried.errors).to.deep.equal([]);
    await t.settleAll();
    const q = await call(`${t.url}/invoices/query`, { method: 'POST', headers: auth(seller.apiKey), body: { country: 'AE', type: 'sales', environment: 'sandbox', filters: [{ id: 'documentId', value: [salesId] }], columns: ['documentId', 'meta.statuses.business.current'] } });
    expect(q.json.data.documents[0].coreDocument.meta.statuses.business.current).to.equal('UNDER_QUERY');

    const ap = await respond(purchaseId, { code: 'AP' });
    expect(ap.status, ap.text).to.equal(201);
    const accepted = await statusUntil(salesId, (d) => d.state === 'final_valid');
    expect(accepted).to.include({ state: 'final_valid', isTerminal: true });
    expect(accepted.buyerResponse).to.include({ code: 'AP', businessStatus: 'ACCEPTED' });
    // After AP only PD.
    const re = await respond(purchaseId, { code: 'RE', message: 'changed our mind', reasons: [{ code: 'OTH' }] });
    expect(re.status, re.text).to.equal(409);
    expect(re.json.code).to.equal('RESPONSE_NOT_ALLOWED');
    const pd = await respond(purchaseId, { code: 'PD' });
    expect(pd.status, pd.text).to.equal(201);
    // The terminal state stays; the status object shows the latest answer.
    const paid = await statusUntil(salesId, (d) => d.buyerResponse?.code === 'PD');
    expect(paid).to.include({ state: 'final_valid' });
    expect(paid.buyerResponse.businessStatus).to.equal('PAID');
  });

  it('an Idempotency-Key sends one answer: the retry is answered with the same one', async () => {
    const { purchaseId } = await delivered('IDEM');
    const key = `ir-${Date.now()}`;
    const first = await respond(purchaseId, { code: 'AB' }, { 'idempotency-key': key });
    expect(first.status, first.text).to.equal(201);
    const second = await respond(purchaseId, { code: 'AB' }, { 'idempotency-key': key });
    expect(second.status, second.text).to.equal(201);
    expect(second.json.data.responseId).to.equal(first.json.data.responseId);
    const other = await respond(purchaseId, { code: 'IP' }, { 'idempotency-key': key });
    expect(other.status, other.text).to.equal(409);
    const list = await call(`${t.url}/api/v3/documents/${purchaseId}/responses`, { headers: auth(buyer.apiKey) });
    expect(list.json.data.items).to.have.length(1);
  });

  it('bad answers get precise 4xx with the path; nothing is sent', async () => {
    const { purchaseId, salesId } = await delivered('BAD');
    const cases: [unknown, number, string, (string | number)[]][] = [
      [{}, 400, 'INVALID_RESPONSE_CODE', ['body', 'code']],
      [{ code: 'XX' }, 400, 'INVALID_RESPONSE_CODE', ['body', 'code']],
      [{ code: 'RE', message: 'no' }, 400, 'STATUS_REASON_REQUIRED', ['body', 'reasons']],
      [{ code: 'RE', reasons: [{ code: 'REF' }] }, 400, 'STATUS_REASON_REQUIRED', ['body', 'message']],
      [{ code: 'UQ', reasons: [{ code: 'ZZZ' }] }, 400, 'INVALID_STATUS_REASON', ['body', 'reasons', 0, 'code']],
      [{ code: 'CA', actions: [{ code: 'REF' }] }, 400, 'INVALID_STATUS_REASON', ['body', 'actions', 0, 'code']],
      [{ code: 'AP', reasons: [{ code: 'PRI' }] }, 400, 'INVALID_STATUS_REASON', ['body', 'reasons', 0, 'code']],
      [{ code: 'AP', colour: 'red' }, 400, 'VALIDATION_ERROR', ['body', 'colour']],
      [{ code: 'AP', note: 'x'.repeat(1001) }, 400, 'VALIDATION_ERROR', ['body', 'note']],
      [[1, 2], 400, 'VALIDATION_ERROR', ['body']],
    ];
    for (const [body, status, code, path] of cases) {
      const res = await respond(purchaseId, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).to.equal(status);
      expect(res.json, JSON.stringify(body)).to.include({ success: false, code });
      expect(res.json.path, JSON.stringify(body)).to.deep.equal(path);
    }
    const unknown = await respond('pur_00000000000000000000000000000000', { code: 'AP' });
    expect(unknown.status, unknown.text).to.equal(404);
    expect((await respond('not-a-purchase', { code: 'AP' })).status).to.equal(404);
    // Another workspace's purchase (the seller's key) is not found.
    expect((await respond(purchaseId, { code: 'AP' }, {}, seller.apiKey)).status).to.equal(404);
    // A read-only key may not answer.
    const { apiKey: readOnly } = await t.key(buyer.workspaceId, { permission: 'read' });
    const ro = await respond(purchaseId, { code: 'AP' }, {}, readOnly);
    expect(ro.status, ro.text).to.equal(403);
    const list = await call(`${t.url}/api/v3/documents/${purchaseId}/responses`, { headers: auth(buyer.apiKey) });
    expect(list.json.data.items).to.deep.equal([]);
    expect((await seller.status(salesId, 'read')).json.data).to.not.have.property('buyerResponse');
  });

  it('an imported purchase came over no network: 409 RESPONSE_NOT_ROUTABLE', async () => {
    const stored = await storePurchase(t, buyer, { number: freshNumber('IMP'), storedAt: new Date() });
    const res = await respond(stored.documentId, { code: 'AP' });
    expect(res.status, res.text).to.equal(409);
    expect(res.json).to.include({ success: false, code: 'RESPONSE_NOT_ROUTABLE' });
  });

  it('a response naming no delivered document is kept as unmatched, never an error', async () => {
    const xml = buildInvoiceResponseXml(
      {
        responseId: `orphan-${Date.now()}`,
        code: 'RE',
        message: 'unknown',
        clarifications: [{ list: 'OPStatusReason', code: 'UNR', text: null }],
        note: null,
        issueDate: '2026-11-28',
        invoice: { id: 'NO-SUCH-INVOICE', typeCode: '380', issueDate: null },
        senderParticipantId: '0235:1111111111',
        receiverParticipantId: '0235:2222222222',
      },
      { buyer: null, seller: null },
    );
    const receipt = await receiveInvoiceResponse(
      { store: t.service.runtime.store, knex: t.service.runtime.db.knex, clock: t.clock },
      { xml: Buffer.from(xml), environment: 'sandbox', channel: 'peppol_sandbox', messageId: 'm-1' },
      { now: new Date(), actor: 'test' },
    );
    expect(receipt.kind).to.equal('unmatched');
    if (receipt.kind === 'unmatched' && receipt.position) await t.settle(receipt.position);
    // Operators list it.
    const listed = await admin(['peppol', 'unmatched-responses', '--environment', 'sandbox']);
    expect(listed.code, listed.stderr).to.equal(0);
    const rows = listed.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const row = rows.find((r) => r.invoiceNumber === 'NO-SUCH-INVOICE');
    expect(row).to.include({ environment: 'sandbox', channel: 'peppol_sandbox', code: 'RE', senderParticipantId: '0235:1111111111', receiverParticipantId: '0235:2222222222' });
    expect(row.reason).to.contain('no delivered sales document NO-SUCH-INVOICE');
    expect((await admin(['peppol', 'unmatched-responses', '--limit', '0'])).code).to.not.equal(0);
    const refused = await receiveInvoiceResponse(
      { store: t.service.runtime.store, knex: t.service.runtime.db.knex, clock: t.clock },
      { xml: Buffer.from('<Invoice/>'), environment: 'sandbox', channel: 'peppol_sandbox', messageId: 'm-2' },
      { now: new Date(), actor: 'test' },
    );
    expect(refused.kind).to.equal('refused');
  });
});

describe('the buyer\'s answer without a response window: a terminal state never moves', function () {
  this.timeout(120000);
  let t: TestService;

  before(async () => {
    t = await startTestService({ config: (c) => ({ ...c, delivery: { ...c.delivery, sandboxFinalResultAfterMs: 0 } }) });
  });
  after(async () => t.close());

  it('a document final_valid at delivery stays final_valid; the rejection shows as its buyerResponse', async () => {
    const seller = await unifyTenant(t);
    const buyer = await receiver(t);
    const payload = uaeInvoice({ documentNumber: freshNumber('NOWIN') });
    payload.parties.buyer.peppolId = buyer.tin;
    const salesId = (await seller.submit(seller.request(payload))).json.documentId as string;
    const deadline = Date.now() + 15_000;
    let purchaseId: string | undefined;
    while (!purchaseId && Date.now() < deadline) {
      const list = await buyer.list(`?type=purchases&from=${new Date().toISOString().slice(0, 10)}`);
      purchaseId = list.json.data.items[0]?.documentId;
      if (!purchaseId) await new Promise((r) => setTimeout(r, 25));
    }
    let status: any;
    do status = (await seller.status(salesId, 'read')).json.data;
    while (status.state !== 'final_valid' && Date.now() < deadline);
    expect(status.state).to.equal('final_valid');
    const res = await call(`${t.url}/api/v3/documents/${purchaseId}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${buyer.apiKey}` },
      body: { code: 'RE', message: 'Wrong VAT rate', reasons: [{ code: 'LEG' }] },
    });
    expect(res.status, res.text).to.equal(201);
    do status = (await seller.status(salesId, 'read')).json.data;
    while (!status.buyerResponse && Date.now() < deadline);
    expect(status).to.include({ state: 'final_valid', isTerminal: true });
    expect(status.errors).to.deep.equal([]);
    expect(status.buyerResponse).to.include({ code: 'RE', message: 'Wrong VAT rate' });
  });
});
