/**
 * The phase4 test peer against itself over loopback, with the test PKI: what the service's own AS4
 * tests rely on (a receiver that stores exactly what arrived and refuses what it must, a sender whose
 * verdict on a receipt can be trusted).
 */
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateInvoiceXml, type CoreDocument } from '../../domain/artifacts/index.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { skipWithoutPeer, peerCheckCertificate, peerSend, peerSendMany, startPeerReceiver, type PeerReceiver, type PeerSendResult } from './support/peer.js';
import { createTestPki, type TestPki } from './support/pki.js';

const BIS3_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';
const BIS3_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const PINT_AE_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:peppol:pint:billing-1@ae-1::2.1';
const PINT_PROCESS = 'urn:peppol:bis:billing';

function invoice(country: 'AE' | 'BE', number: string): string {
  const doc = sampleDocument(country, { lines: 2, documentNumber: number }) as CoreDocument;
  return generateInvoiceXml({ country, documentType: { base: 'tax_invoice', modifiers: [] }, document: doc, uuid: `uuid-${number}` }).xml;
}

/** The same XML information set (phase4 re-serialises the payload it wraps: declaration order may change). */
function parsed(xml: Buffer | string) {
  return new XMLParser({ ignoreAttributes: false, parseTagValue: false, parseAttributeValue: false, trimValues: false }).parse(xml.toString());
}

function refusalCodes(result: PeerSendResult): string[] {
  return result.errors.map((e) => e.code);
}

describe('phase4 test peer (phase4 to phase4 over loopback)', function () {
  this.timeout(900_000);
  let pki: TestPki;
  let receiver: PeerReceiver;

  before(async function () {
    skipWithoutPeer(this);
    pki = await createTestPki();
    receiver = await startPeerReceiver({ pki });
  });

  after(async () => {
    if (receiver) await receiver.stop();
    if (pki) await rm(pki.dir, { recursive: true, force: true });
  });

  it('delivers a BIS 3.0 invoice and a PINT AE invoice, each answered with a verified signed receipt', async () => {
    const bis = invoice('BE', 'PEER-BIS-1');
    const pint = invoice('AE', 'PEER-PINT-1');
    const dump = join(tmpdir(), `phase4-peer-dump-${process.pid}.txt`);
    const [bisResult, pintResult] = await Promise.all([
      peerSend({
        pki, to: receiver.url, receiverCertPem: pki.peer.certPem, payload: bis,
        senderId: '0208:0123456749', receiverId: '0208:0987654321',
        documentTypeId: BIS3_INVOICE, processId: BIS3_PROCESS, countryC1: 'BE',
        messageId: 'peer-selftest-bis@example.test', dumpRequestTo: dump,
      }),
      peerSend({
        pki, to: receiver.url, receiverCertPem: pki.peer.certPem, payload: pint,
        senderId: '0235:1002345678', receiverId: '0235:1009876543',
        documentTypeId: PINT_AE_INVOICE, processId: PINT_PROCESS, countryC1: 'AE',
      }),
    ]);
    expect(bisResult, JSON.stringify(bisResult)).to.include({ success: true, receiptVerified: true, messageId: 'peer-selftest-bis@example.test' });
    expect(bisResult.errors).to.deep.equal([]);
    expect(pintResult, JSON.stringify(pintResult)).to.include({ success: true, receiptVerified: true });

    const received = await receiver.waitFor(2, 60_000);
    const bisIn = received.find((m) => m.messageId === bisResult.messageId)!;
    const pintIn = received.find((m) => m.messageId === pintResult.messageId)!;
    expect(bisIn).to.include({
      senderId: '0208:0123456749', receiverId: '0208:0987654321',
      documentTypeId: BIS3_INVOICE, processId: BIS3_PROCESS, countryC1: 'BE',
    });
    expect(pintIn).to.include({
      senderId: '0235:1002345678', receiverId: '0235:1009876543',
      documentTypeId: PINT_AE_INVOICE, processId: PINT_PROCESS, countryC1: 'AE',
    });
    expect(bisIn.conversationId).to.be.a('string').and.not.equal('');
    // The stored payload is the very byte slice of the SBDH that carried it, and the same document.
    for (const [message, sent] of [[bisIn, bis], [pintIn, pint]] as const) {
      expect(message.sbdh).to.include(message.payload.toString('utf8'));
      expect(message.sbdh).to.match(/<(\w+:)?StandardBusinessDocumentHeader/);
      expect(parsed(message.payload)).to.deep.equal(parsed(sent.replace(/^<\?xml[^>]*\?>/, '')));
    }
    expect(pintIn.sbdh).to.include('0235:1009876543');

    // The request on the wire: SOAP 1.2 in multipart/related, payload as an encrypted attachment.
    const wire = await readFile(dump, 'latin1');
    await rm(dump, { force: true });
    expect(wire).to.match(/Content-Type: multipart\/related;.*type="application\/soap\+xml"/);
    expect(wire).to.include('http://www.w3.org/2009/xmlenc11#aes128-gcm');
    expect(wire).to.include('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    expect(wire).to.include('urn:fdc:peppol.eu:2017:agreements:tia:ap_provider');
    expect(wire).not.to.include('PEER-BIS-1');
  });

  it('refuses a sender certificate from another CA that copies the test CA name, a tampered signature and an expired certificate', async () => {
    const base = {
      pki, to: receiver.url, receiverCertPem: pki.peer.certPem,
      senderId: '0208:0123456749', receiverId: '0208:0987654321',
      documentTypeId: BIS3_INVOICE, processId: BIS3_PROCESS, countryC1: 'BE',
    };
    const before = (await receiver.received()).length;
    const [rogue, tampered, expired] = await Promise.all([
      peerSend({ ...base, payload: invoice('BE', 'PEER-ROGUE-1'), identity: 'rogue' }),
      peerSend({ ...base, payload: invoice('BE', 'PEER-TAMPER-1'), tamper: 'signature' }),
      peerSend({ ...base, payload: invoice('BE', 'PEER-EXPIRED-1'), identity: 'expired' }),
    ]);
    for (const result of [rogue, tampered, expired]) {
      expect(result.success, JSON.stringify(result)).to.equal(false);
      expect(result.receiptVerified).to.equal(false);
      // Any WS-Security failure is reported as EBMS:0102 (or EBMS:0101 by the peer's own CA check).
      expect(refusalCodes(result).some((c) => c === 'EBMS:0101' || c === 'EBMS:0102'), JSON.stringify(result)).to.equal(true);
    }
    // Give a wrongly accepted message the time to land before concluding that none did.
    await new Promise((r) => setTimeout(r, 500));
    expect((await receiver.received()).length).to.equal(before);
  });

  it('sends a load of distinct documents from one JVM, every receipt verified', async () => {
    const before = (await receiver.received()).length;
    const result = await peerSendMany({
      pki, to: receiver.url, receiverCertPem: pki.peer.certPem,
      payload: invoice('BE', 'PEER-LOAD-{{SEQ}}'),
      senderId: '0208:0123456749', receiverId: '0208:0987654321',
      documentTypeId: BIS3_INVOICE, processId: BIS3_PROCESS, countryC1: 'BE',
      count: 12, concurrency: 3,
    });
    expect(result, JSON.stringify(result)).to.include({ sent: 12, succeeded: 12, receiptsVerified: 12 });
    expect(result.errors).to.deep.equal([]);
    expect(result.messagesPerSecond).to.be.greaterThan(0);
    const received = await receiver.waitFor(before + 12, 60_000);
    const numbers = received.map((m) => /<cbc:ID>(PEER-LOAD-\d+)<\/cbc:ID>/.exec(m.payload.toString())?.[1]).filter(Boolean);
    expect(new Set(numbers).size).to.equal(12);
  });

  it("shows why the signature must be checked: phase4's Peppol CA check accepts the rogue certificate by its issuer name", async () => {
    const [peer, rogue, expired] = await Promise.all([
      peerCheckCertificate(pki.caCertPath, pki.peer.certPath),
      peerCheckCertificate(pki.caCertPath, pki.rogue.certPath),
      peerCheckCertificate(pki.caCertPath, pki.expired.certPath),
    ]);
    expect(peer).to.deep.equal({ peppolCAChecker: 'valid', signedByCA: true, validNow: true });
    expect(rogue).to.deep.equal({ peppolCAChecker: 'valid', signedByCA: false, validNow: true });
    expect(expired).to.deep.equal({ peppolCAChecker: 'expired', signedByCA: true, validNow: false });
  });

  it('refuses a replayed message id and a receiver certificate that the test CA did not sign', async () => {
    const base = {
      pki, to: receiver.url,
      senderId: '0208:0123456749', receiverId: '0208:0987654321',
      documentTypeId: BIS3_INVOICE, processId: BIS3_PROCESS, countryC1: 'BE',
    };
    const first = await peerSend({ ...base, receiverCertPem: pki.peer.certPem, payload: invoice('BE', 'PEER-DUP-1'), messageId: 'peer-selftest-dup@example.test' });
    expect(first, JSON.stringify(first)).to.include({ success: true, receiptVerified: true });
    const count = (await receiver.received()).length;
    const [replay, untrusted] = await Promise.all([
      peerSend({ ...base, receiverCertPem: pki.peer.certPem, payload: invoice('BE', 'PEER-DUP-1'), messageId: 'peer-selftest-dup@example.test' }),
      peerSend({ ...base, receiverCertPem: pki.rogue.certPem, payload: invoice('BE', 'PEER-UNTRUSTED-1') }),
    ]);
    expect(replay.success, JSON.stringify(replay)).to.equal(false);
    expect(refusalCodes(replay)).to.include('EBMS:0004');
    expect(untrusted.success).to.equal(false);
    expect(refusalCodes(untrusted)).to.deep.equal(['RECEIVER_CERTIFICATE_NOT_TRUSTED']);
    await new Promise((r) => setTimeout(r, 500));
    expect((await receiver.received()).length).to.equal(count);
  });
});
