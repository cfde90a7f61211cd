/**
 * Interoperability of the service's access point with phase4 (an independent Peppol AS4
 * implementation, Java, built from test/peppol/peer): both directions, and the bad cases on each
 * side. Skipped when the peer is not built (a failure under CI=true).
 */
import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { createTestPki, type TestPki } from './support/pki.js';
import { skipWithoutPeer, peerSend, peerSendOf, startPeerReceiver, type PeerReceiver } from './support/peer.js';
import { startAccessPoint, tableDiscovery, type DiscoveryEntry } from './support/access-point.js';
import type { TestService } from '../support/http.js';
import { invoiceXml, receiver, type Receiver } from '../purchases/support.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { freshTin } from '../connect/support.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { peppolIdentifiersOf } from '../../domain/peppol/identifiers.js';
import { TDD_DOCUMENT_TYPE_ID } from '../../commands/peppol/connector.js';
import { readUbl, screenXml } from '../../domain/purchases/ubl-reader.js';

/** XRechnung 3.0 UBL Invoice as registered in the Peppol code lists, under the Peppol billing process. */
const XRECHNUNG_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0::2.1';
const BILLING_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const CORNER5 = { scheme: 'iso6523-actorid-upis', value: '0242:000773' };

describe('Peppol access point against phase4', function () {
  this.timeout(900_000);
  let pki: TestPki;
  let peer: PeerReceiver;
  let t: TestService;
  let buyer: Receiver;
  let seller: UnifyTenant;
  const table = new Map<string, DiscoveryEntry>();
  const peerBuyerTin = freshTin();

  before(async function () {
    skipWithoutPeer(this);
    pki = await createTestPki();
    peer = await startPeerReceiver({ pki });
    // The buyer participant served by phase4, and the tax authority's corner 5 (phase4 plays it too).
    table.set(`0235:${peerBuyerTin}`, { url: peer.url, certificatePem: pki.peer.certPem });
    table.set(CORNER5.value, { url: peer.url, certificatePem: pki.peer.certPem });
    t = await startAccessPoint(pki, pki.service, tableDiscovery(table), { peppol: { corner5Participant: CORNER5 } });
    buyer = await receiver(t, { environment: 'production' }, 'production');
    seller = await unifyTenant(t, { environment: 'production' });
  });
  after(async () => {
    await peer?.stop();
    await t?.close();
    if (pki) await rm(pki.dir, { recursive: true, force: true });
  });

  const send = (xml: string, extra: Partial<Parameters<typeof peerSend>[0]> = {}) => peerSend(peerSendOf(pki, `${t.url}/as4`, pki.service.certPem, xml, extra));

  async function purchases(number: string, wantAtLeast = 1, timeoutMs = 10_000) {
    const today = new Date().toISOString().slice(0, 10);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await buyer.list(`?type=purchases&from=${today}`);
      const items = (res.json.data.items as any[]).filter((i) => i.invoiceNumber === number);
      if (items.length >= wantAtLeast || Date.now() > deadline) return items;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  describe('phase4 sends to the service', () => {
    it('a PINT AE invoice and a BIS 3.0 invoice become purchases of the right company; phase4 verifies the signed receipts', async () => {
      const ae = invoiceXml({ number: freshNumber('P4AE'), buyerTin: buyer.tin });
      const bis = invoiceXml({ number: freshNumber('P4BIS'), buyerTin: buyer.tin, country: 'BE' });
      expect(peppolIdentifiersOf(bis).customizationId).to.equal('urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0');
      const [r1, r2] = await Promise.all([send(ae), send(bis)]);
      expect(r1, JSON.stringify(r1)).to.include({ success: true, receiptVerified: true });
      expect(r2, JSON.stringify(r2)).to.include({ success: true, receiptVerified: true });
      for (const xml of [ae, bis]) {
        const number = /<cbc:ID>([^<]+)<\/cbc:ID>/.exec(xml)![1]!;
        const [item] = await purchases(number);
        expect(item, number).to.not.equal(undefined);
        expect(item).to.include({ environment: 'production' });
        const read = await buyer.read(item.documentId);
        expect(read.status).to.equal(200);
        expect(read.json.data).to.include({ channel: 'peppol_as4', receiverParticipantId: `0235:${buyer.tin}` });
        // phase4 carries the UBL re-serialized from its DOM (namespace declarations reordered): the same document.
        const stored = Buffer.from(read.json.data.artifacts.invoiceXmlBase64, 'base64');
        expect(readUbl(screenXml(stored, 1e7)).coreDocument).to.deep.equal(readUbl(screenXml(Buffer.from(xml), 1e7)).coreDocument);
      }
    });

    it('a German XRechnung 3.0 invoice travels with its own document type and becomes a purchase', async () => {
      const number = freshNumber('P4XR');
      const xml = invoiceXml({ number, buyerTin: buyer.tin, country: 'DE' });
      const ids = peppolIdentifiersOf(xml);
      expect(ids).to.include({ documentTypeId: XRECHNUNG_INVOICE, processId: BILLING_PROCESS });
      const result = await send(xml);
      expect(result, JSON.stringify(result)).to.include({ success: true, receiptVerified: true });
      const [item] = await purchases(number);
      expect(item, number).to.not.equal(undefined);
      const received = (await t.service.runtime.store.readStream(`purchase-${item.documentId}`))[0]!;
      expect((received.data as any).transmission).to.include({ documentTypeId: XRECHNUNG_INVOICE, processId: BILLING_PROCESS });
    });

    it('a replayed message id stores no second purchase', async () => {
      const number = freshNumber('P4RE');
      const xml = invoiceXml({ number, buyerTin: buyer.tin });
      const messageId = `${number}@phase4-replay`;
      const first = await send(xml, { messageId });
      expect(first.success, JSON.stringify(first)).to.equal(true);
      const again = await send(xml, { messageId });
      expect(again.errors.map((e) => e.code).join(',')).to.not.match(/EBMS:0102/);
      await new Promise((r) => setTimeout(r, 500));
      expect(await purchases(number, 2, 1000)).to.have.length(1);
    });

    it('refuses a tampered signature, a certificate of another CA, an expired certificate, an unknown receiver and a wrong document type; nothing is stored', async () => {
      const cases: [string, Partial<Parameters<typeof peerSend>[0]>, string | null, RegExp][] = [
        ['tampered', { tamper: 'signature' }, null, /EBMS:0102|EBMS:0101/],
        ['rogue', { identity: 'rogue' }, null, /EBMS:0102/],
        ['expired', { identity: 'expired' }, null, /EBMS:0102|expired|valid/i],
        ['unknown receiver', {}, freshTin(), /EBMS:0004/],
      ];
      for (const [name, extra, otherBuyer, expected] of cases) {
        const number = freshNumber('P4BAD');
        const xml = invoiceXml({ number, buyerTin: otherBuyer ?? buyer.tin });
        const result = await send(xml, extra);
        expect(result.success, `${name}: ${JSON.stringify(result)}`).to.equal(false);
        expect(JSON.stringify(result.errors), name).to.match(expected);
        expect(await purchases(number, 1, 500), name).to.have.length(0);
      }
      const number = freshNumber('P4DOC');
      const xml = invoiceXml({ number, buyerTin: buyer.tin });
      const wrong = await send(xml, { documentTypeId: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1' });
      expect(wrong.success, JSON.stringify(wrong)).to.equal(false);
      expect(JSON.stringify(wrong.errors)).to.match(/EBMS:0003/);
      expect(await purchases(number, 1, 500)).to.have.length(0);
    });
  });

  describe('the service sends to phase4', () => {
    async function final(documentId: string) {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const r = await seller.status(documentId, 'read');
        if (['final_valid', 'final_invalid'].includes(r.json.data?.state) || Date.now() > deadline) return r.json.data;
        await new Promise((res) => setTimeout(res, 200));
      }
    }

    it('a German (XRechnung 3.0) document: phase4 receives the exact UBL and the SBDH with the XRechnung document type, the service accepts its receipt (final_valid)', async () => {
      const payload = sampleDocument('DE', { lines: 2, documentNumber: freshNumber('TOP4') }) as Record<string, any>;
      payload.parties.buyer.peppolId = peerBuyerTin;
      payload.extensions = { ...(payload.extensions ?? {}), peppol_buyer_peppolIdScheme: '0235' };
      const res = await seller.submit(seller.request(payload, { country: 'DE' }));
      expect(res.status, res.text).to.equal(200);
      const sales = await final(res.json.documentId);
      expect(sales.state, JSON.stringify(sales)).to.equal('final_valid');
      expect(sales.government).to.include({ receivingAccessPoint: pki.peer.commonName, status: 'DELIVERED' });
      const received = (await peer.waitFor(1, 60_000)).find((m) => m.messageId === sales.government.messageId);
      expect(received, 'phase4 received the message').to.not.equal(undefined);
      const sent = Buffer.from(sales.artifacts.invoiceXmlBase64, 'base64').toString('utf8').replace(/^<\?xml[^?]*\?>\s*/, '').trim();
      expect(received!.payload.toString('utf8')).to.equal(sent);
      expect(sales.government).to.include({ documentTypeId: XRECHNUNG_INVOICE, processId: BILLING_PROCESS });
      expect(received!).to.include({ receiverId: `0235:${peerBuyerTin}`, countryC1: 'DE', documentTypeId: XRECHNUNG_INVOICE, processId: BILLING_PROCESS });
      expect(received!.sbdh).to.contain(`<InstanceIdentifier>${sales.government.sbdhInstanceId}</InstanceIdentifier>`);
    });

    it('an AE document reaches the buyer and its Tax Data Document the corner-5 participant, through the same transport', async () => {
      const payload = uaeInvoice({ documentNumber: freshNumber('TOP4AE') });
      payload.parties.buyer.peppolId = peerBuyerTin;
      const before = (await peer.received()).length;
      const res = await seller.submit(seller.request(payload, { country: 'AE' }));
      expect(res.status, res.text).to.equal(200);
      const sales = await final(res.json.documentId);
      expect(sales.state, JSON.stringify(sales)).to.equal('final_valid');
      expect(sales.government.corner5).to.include({ receiverParticipantId: CORNER5.value, documentTypeId: TDD_DOCUMENT_TYPE_ID, status: 'DELIVERED' });
      const all = await peer.waitFor(before + 2, 60_000);
      const tdd = all.find((m) => m.messageId === sales.government.corner5.messageId)!;
      expect(tdd, 'phase4 received the TDD').to.not.equal(undefined);
      expect(tdd).to.include({ receiverId: CORNER5.value, documentTypeId: TDD_DOCUMENT_TYPE_ID });
      expect(tdd.payload.toString('utf8')).to.contain('<pxs:TaxData').and.contain(payload.header.documentNumber);
    });

    it('a receiver whose published certificate is not its own cannot decrypt: its ebMS error ends the delivery final_invalid', async () => {
      const tin = freshTin();
      table.set(`0235:${tin}`, { url: peer.url, certificatePem: pki.service2.certPem });
      const payload = sampleDocument('DE', { lines: 1, documentNumber: freshNumber('TOP4BAD') }) as Record<string, any>;
      payload.parties.buyer.peppolId = tin;
      payload.extensions = { ...(payload.extensions ?? {}), peppol_buyer_peppolIdScheme: '0235' };
      const res = await seller.submit(seller.request(payload, { country: 'DE' }));
      const sales = await final(res.json.documentId);
      expect(sales.state, JSON.stringify(sales)).to.equal('final_invalid');
      expect(sales.errors[0]).to.include({ source: 'delivery' });
      expect(sales.errors[0].code).to.match(/^EBMS:/);
    });
  });
});
