/**
 * The buyer's answer (Peppol Invoice Response) over AS4 with phase4, an independent Peppol AS4
 * implementation (test/peppol/peer), in both directions: phase4 answers a document the service
 * sent (the seller's document ends final_invalid within the buyer-response window), and the service
 * answers a document phase4 sent (phase4 receives the Invoice Response). Skipped when the peer is
 * not built (a failure under CI=true).
 */
import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { ublSchemaErrors } from '../../commands/purchases/xsd.js';
import { buildInvoiceResponseXml, INVOICE_RESPONSE_DOCUMENT_TYPE_ID, INVOICE_RESPONSE_PROFILE_ID, readInvoiceResponse } from '../../domain/peppol/invoice-response.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { serviceProcesses } from '../../projections/reactors/processes.js';
import { freshTin } from '../connect/support.js';
import { invoiceXml, receiver, type Receiver } from '../purchases/support.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber } from '../unify/support.js';
import { accessPointConfig, tableDiscovery, type DiscoveryEntry } from './support/access-point.js';
import { skipWithoutPeer, peerSend, startPeerReceiver, type PeerReceiver } from './support/peer.js';
import { createTestPki, type TestPki } from './support/pki.js';
import { peppolIdentifiersOf } from '../../domain/peppol/identifiers.js';

describe('Invoice Response over AS4 with phase4', function () {
  this.timeout(900_000);
  let pki: TestPki;
  let peer: PeerReceiver;
  let t: TestService;
  let seller: Receiver;
  let buyer: Receiver;
  const table = new Map<string, DiscoveryEntry>();
  const peerBuyerTin = freshTin();
  const peerSellerTin = freshTin();

  before(async function () {
    skipWithoutPeer(this);
    pki = await createTestPki();
    peer = await startPeerReceiver({ pki });
    table.set(`0235:${peerBuyerTin}`, { url: peer.url, certificatePem: pki.peer.certPem });
    table.set(`0235:${peerSellerTin}`, { url: peer.url, certificatePem: pki.peer.certPem, documentTypes: [INVOICE_RESPONSE_DOCUMENT_TYPE_ID] });
    const discovery = tableDiscovery(table);
    t = await startTestService({
      config: (c) => ({ ...accessPointConfig(pki, pki.service)(c), delivery: { ...c.delivery, peppolBuyerResponseWindowMs: 10 * 60_000 } }),
      processes: (deps) => serviceProcesses(deps, { peppolDiscovery: discovery }),
    });
    seller = await receiver(t, { environment: 'production' }, 'production');
    buyer = await receiver(t, { environment: 'production' }, 'production');
  });
  after(async () => {
    await peer?.stop();
    await t?.close();
    if (pki) await rm(pki.dir, { recursive: true, force: true });
  });

  const auth = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });
  const status = (documentId: string) => call(`${t.url}/api/v3/documents/${documentId}?type=sales`, { headers: auth(seller.apiKey) });
  async function until(documentId: string, done: (d: any) => boolean, timeoutMs = 120_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = (await status(documentId)).json.data;
      if (done(d) || Date.now() > deadline) return d;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('phase4 rejects a document the service delivered to it: the seller\'s document ends final_invalid with BUYER_REJECTED', async () => {
    const payload = sampleDocument('DE', { lines: 1, documentNumber: freshNumber('IRAS4') }) as Record<string, any>;
    payload.parties.seller.peppolId = seller.tin;
    payload.parties.buyer.peppolId = peerBuyerTin;
    payload.extensions = { ...(payload.extensions ?? {}), peppol_seller_peppolIdScheme: '0235', peppol_buyer_peppolIdScheme: '0235' };
    const res = await call(`${t.url}/api/v3/unify`, {
      method: 'POST',
      headers: { ...auth(seller.apiKey), 'new-api': 'true' },
      body: { country: 'DE', environment: 'production', purpose: 'invoicing', source: `${seller.company.sourceName}:${seller.company.sourceVersion}`, documentType: { base: 'tax_invoice', modifiers: [] }, payload },
    });
    expect(res.status, res.text).to.equal(200);
    const salesId = res.json.documentId as string;
    // Within the buyer-response window the delivered document awaits the buyer.
    const delivered = await until(salesId, (d) => d.state !== 'submitted' && d.state !== 'processing');
    expect(delivered.state, JSON.stringify(delivered)).to.equal('delivery_success');
    expect(delivered.government).to.include({ status: 'DELIVERED', receivingAccessPoint: pki.peer.commonName, senderParticipantId: `0235:${seller.tin}` });

    const ir = buildInvoiceResponseXml(
      {
        responseId: `p4-ir-${Date.now()}`,
        code: 'RE',
        message: 'Order number missing',
        clarifications: [{ list: 'OPStatusReason', code: 'REF', text: null }],
        note: null,
        issueDate: new Date().toISOString().slice(0, 10),
        invoice: { id: payload.header.documentNumber, typeCode: '380', issueDate: payload.header.issueDate },
        senderParticipantId: `0235:${peerBuyerTin}`,
        receiverParticipantId: `0235:${seller.tin}`,
      },
      { buyer: 'Peer Buyer', seller: 'Seller' },
    );
    expect(await ublSchemaErrors(ir, 'ApplicationResponse')).to.deep.equal([]);
    const sent = await peerSend({
      pki, to: `${t.url}/as4`, receiverCertPem: pki.service.certPem, payload: ir,
      senderId: `0235:${peerBuyerTin}`, receiverId: `0235:${seller.tin}`,
      documentTypeId: INVOICE_RESPONSE_DOCUMENT_TYPE_ID, processId: INVOICE_RESPONSE_PROFILE_ID, countryC1: 'DE',
    });
    expect(sent, JSON.stringify(sent)).to.include({ success: true, receiptVerified: true });
    const rejected = await until(salesId, (d) => d.state === 'final_invalid', 30_000);
    expect(rejected.state, JSON.stringify(rejected)).to.equal('final_invalid');
    expect(rejected.errors[0]).to.include({ code: 'BUYER_REJECTED', source: 'delivery' });
    expect(rejected.errors[0].message).to.contain('Order number missing');
    expect(rejected.buyerResponse).to.include({ code: 'RE', channel: 'peppol_as4', senderParticipantId: `0235:${peerBuyerTin}` });

    // The same message again is a duplicate: nothing new is recorded.
    const again = await peerSend({
      pki, to: `${t.url}/as4`, receiverCertPem: pki.service.certPem, payload: ir,
      senderId: `0235:${peerBuyerTin}`, receiverId: `0235:${seller.tin}`,
      documentTypeId: INVOICE_RESPONSE_DOCUMENT_TYPE_ID, processId: INVOICE_RESPONSE_PROFILE_ID, countryC1: 'DE', messageId: `${sent.messageId}`,
    });
    expect(again.errors.map((e) => e.code).join(',')).to.not.match(/EBMS:0004/);
    const events = await t.service.runtime.store.readStream(`document-${salesId}`);
    expect(events.filter((e) => e.type === 'DocumentBuyerResponded')).to.have.length(1);
  });

  it('the service answers a purchase phase4 sent: phase4 receives the Invoice Response', async () => {
    const number = freshNumber('P4IR');
    const xml = invoiceXml({ number, buyerTin: buyer.tin, sellerTin: peerSellerTin });
    const ids = peppolIdentifiersOf(xml);
    const inbound = await peerSend({
      pki, to: `${t.url}/as4`, receiverCertPem: pki.service.certPem, payload: xml,
      senderId: ids.sender.value, receiverId: ids.receiver.value, documentTypeId: ids.documentTypeId, processId: ids.processId, countryC1: 'AE',
    });
    expect(inbound, JSON.stringify(inbound)).to.include({ success: true });
    let purchaseId: string | undefined;
    const deadline = Date.now() + 20_000;
    while (!purchaseId && Date.now() < deadline) {
      const list = await buyer.list(`?type=purchases&from=${new Date().toISOString().slice(0, 10)}`);
      purchaseId = (list.json.data.items as any[]).find((i) => i.invoiceNumber === number)?.documentId;
      if (!purchaseId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(purchaseId, 'the purchase was stored').to.be.a('string');
    const before = (await peer.received()).length;
    const res = await call(`${t.url}/api/v3/documents/${purchaseId}/responses`, { method: 'POST', headers: auth(buyer.apiKey), body: { code: 'AP', note: 'Approved for payment' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.json.data).to.include({ code: 'AP', channel: 'peppol_as4', receiverParticipantId: `0235:${peerSellerTin}`, senderParticipantId: `0235:${buyer.tin}` });
    expect(res.json.data.transmission.status, JSON.stringify(res.json.data.transmission)).to.equal('delivered');
    const received = (await peer.waitFor(before + 1, 60_000)).find((m) => m.messageId === res.json.data.transmission.messageId);
    expect(received, 'phase4 received the Invoice Response').to.not.equal(undefined);
    expect(received!).to.include({ documentTypeId: INVOICE_RESPONSE_DOCUMENT_TYPE_ID, processId: INVOICE_RESPONSE_PROFILE_ID, senderId: `0235:${buyer.tin}`, receiverId: `0235:${peerSellerTin}` });
    const read = readInvoiceResponse(received!.payload.toString('utf8'));
    expect(read).to.include({ code: 'AP', responseId: res.json.data.responseId, note: 'Approved for payment' });
    expect(read.invoice.id).to.equal(number);

    // A seller whose SMP does not publish the Invoice Response: the answer is recorded as failed, and may be given again.
    const otherSeller = freshTin();
    table.set(`0235:${otherSeller}`, { url: peer.url, certificatePem: pki.peer.certPem, documentTypes: [] });
    const number2 = freshNumber('P4IR');
    const xml2 = invoiceXml({ number: number2, buyerTin: buyer.tin, sellerTin: otherSeller });
    const ids2 = peppolIdentifiersOf(xml2);
    expect((await peerSend({ pki, to: `${t.url}/as4`, receiverCertPem: pki.service.certPem, payload: xml2, senderId: ids2.sender.value, receiverId: ids2.receiver.value, documentTypeId: ids2.documentTypeId, processId: ids2.processId, countryC1: 'AE' })).success).to.equal(true);
    let purchase2: string | undefined;
    while (!purchase2 && Date.now() < deadline + 20_000) {
      const list = await buyer.list(`?type=purchases&from=${new Date().toISOString().slice(0, 10)}`);
      purchase2 = (list.json.data.items as any[]).find((i) => i.invoiceNumber === number2)?.documentId;
      if (!purchase2) await new Promise((r) => setTimeout(r, 100));
    }
    const failed = await call(`${t.url}/api/v3/documents/${purchase2}/responses`, { method: 'POST', headers: auth(buyer.apiKey), body: { code: 'AP' } });
    expect(failed.status, failed.text).to.equal(201);
    expect(failed.json.data.transmission).to.include({ status: 'failed' });
    expect(failed.json.data.transmission.detail).to.contain('PEPPOL_DOCUMENT_TYPE_NOT_SUPPORTED');
  });
});
