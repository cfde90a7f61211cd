/**
 * The sending side writes the parts it signs (eb:Messaging, the empty SOAP Body, ds:SignedInfo) in
 * their exclusive C14N form directly instead of parsing and canonicalising what it just wrote.
 * These tests prove that form byte-identical to the library's exclusive C14N (xml-crypto's, the one
 * the receiving side verifies with) of the elements as they are sent, for the values a message
 * carries: ordinary Peppol identifiers and values with every character C14N escapes or a parser
 * normalises (&, <, >, ", ', TAB, LF, CR, non-ASCII). The receiving side writes its receipt's
 * eb:Messaging so too, with the received references (its own sending side's and phase4's).
 */
import { expect } from 'chai';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import type { Element } from '@xmldom/xmldom';
import { readFileSync } from 'node:fs';
import { NS, receiptSignal, userMessage, type SignedReference } from '../../domain/peppol/ebms.js';
import { parseXml } from '../../domain/peppol/identifiers.js';
import { bodyCanonical, buildUserMessage, header, readHttpMessage, receiptEnvelope } from '../../commands/peppol/as4/message.js';
import { decryptAttachments, excC14n, signReferences, verifySignature } from '../../commands/peppol/as4/wss.js';
import { userMessageHeader, type TestHeader } from './support/headers.js';
import { createTestPki, type TestPki } from './support/pki.js';

const ordinary = userMessageHeader({ messageId: `${randomUUID()}@ledger` });
const awkward = 'a&b<c>d"e\'f\tg\nh\ri\r\nj é€𝄞 ]]> &amp;';
const cases: [string, TestHeader][] = [
  ['ordinary identifiers', ordinary],
  [
    'values with every character C14N escapes or a parser normalises',
    {
      ...ordinary,
      messageId: `${awkward}@x`,
      conversationId: awkward,
      fromParty: awkward,
      toParty: `  ${awkward}  `,
      processId: awkward,
      documentTypeId: awkward,
      originalSender: { scheme: awkward, value: awkward },
      finalRecipient: { scheme: `\t${awkward}\n`, value: '' },
    },
  ],
];

/** The envelope the sending side writes, with an empty Security header. */
const envelope = (messaging: string, bodyId: string, security = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><S12:Envelope xmlns:S12="${NS.soap}"><S12:Header>` +
  `<wsse:Security xmlns:wsse="${NS.wsse}" xmlns:wsu="${NS.wsu}" S12:mustUnderstand="true">${security}</wsse:Security>${messaging}</S12:Header>` +
  `<S12:Body xmlns:wsu="${NS.wsu}" wsu:Id="${bodyId}"/></S12:Envelope>`;
const first = (el: { getElementsByTagNameNS(ns: string, local: string): { item(i: number): Element | null } }, ns: string, local: string) => el.getElementsByTagNameNS(ns, local).item(0)!;

describe('AS4 sending: canonical forms written directly', () => {
  for (const [name, h] of cases) {
    it(`eb:Messaging and the Body are byte-identical to xml-crypto's exclusive C14N of what is sent (${name})`, () => {
      const m = userMessage({ ...h, payloadContentId: `${randomUUID()}@payload` }, `phase4-msg-${randomUUID()}`);
      const doc = parseXml(envelope(m.xml, 'id-1'));
      expect(m.canonical).to.equal(excC14n(first(doc, NS.eb, 'Messaging')));
      expect(bodyCanonical('id-1')).to.equal(excC14n(first(doc, NS.soap, 'Body')));
      // What a parser reads back is the value itself (the receiver compares it with the SBDH).
      expect(first(doc, NS.eb, 'ConversationId').textContent).to.equal(h.conversationId);
      expect(first(doc, NS.eb, 'Property').getAttribute('type')).to.equal(h.originalSender.scheme);
    });
  }

  it("ds:SignedInfo as signed is byte-identical to xml-crypto's exclusive C14N of the SignedInfo as sent, with element and attachment references", () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const m = userMessage({ ...ordinary, payloadContentId: 'p&"<1>@payload' }, 'phase4-msg-1');
    const signature = signReferences(
      [
        { uri: '#phase4-msg-1', target: { canonical: m.canonical } },
        { uri: '#id-1', target: { canonical: bodyCanonical('id-1') } },
        { uri: 'cid:p&"<1>@payload', target: Buffer.from('attachment') },
      ],
      privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      'X509-1',
      'SIG-1',
    );
    const doc = parseXml(envelope(m.xml, 'id-1', signature.xml));
    expect(signature.signedInfoCanonical).to.equal(excC14n(first(doc, NS.ds, 'SignedInfo')));
    // The digests written are those of the library's canonical forms of the sent elements.
    const digests = [first(doc, NS.eb, 'Messaging'), first(doc, NS.soap, 'Body')].map((e) => createHash('sha256').update(excC14n(e)).digest('base64'));
    expect(signature.references.map((r) => r.digest)).to.deep.equal([...digests, createHash('sha256').update('attachment').digest('base64')]);
  });

  describe('a built user message verifies with the library canonicalisation', function () {
    this.timeout(60_000);
    let pki: TestPki;
    before(async () => {
      pki = await createTestPki();
    });
    for (const [name, h] of cases) {
      it(`every reference digest and the signature value check out (${name})`, () => {
        const sender = { privateKeyPem: pki.service.keyPem, certificatePem: pki.service.certPem, commonName: pki.service.commonName };
        const built = buildUserMessage(h, Buffer.from('<sbd/>'), sender, pki.service2.certPem);
        const { doc, attachments } = readHttpMessage(built.contentType, built.body, { maxPartBytes: 1024 * 1024 });
        const security = first(doc, NS.wsse, 'Security');
        const plain = decryptAttachments(doc, security, pki.service2.keyPem, (cid) => attachments.get(cid) ?? null);
        const verified = verifySignature(doc, first(security, NS.ds, 'Signature'), (cid) => plain.get(cid)?.bytes ?? null);
        expect(verified.certificatePem.replace(/\s+/g, '')).to.equal(pki.service.certPem.replace(/\s+/g, ''));
        expect(verified.references.map((r) => ({ uri: r.uri, digest: r.digest }))).to.deep.equal(built.references);
        expect(verified.references).to.have.length(3);
      });
    }
  });
});

describe("AS4 receiving: the receipt's eb:Messaging written in its canonical form", function () {
  this.timeout(60_000);
  let pki: TestPki;
  before(async () => {
    pki = await createTestPki();
  });
  /** The references as the receiving side copies them: each received ds:Reference in exclusive C14N form. */
  const asReferences = (refs: Element[]): SignedReference[] =>
    refs.map((ref) => ({ uri: ref.getAttribute('URI') ?? '', xml: excC14n(ref), digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256', digestValue: 'x' }));
  const receivedReferences = (h: TestHeader): SignedReference[] => {
    const built = buildUserMessage(h, Buffer.from('<sbd/>'), { privateKeyPem: pki.service.keyPem, certificatePem: pki.service.certPem, commonName: pki.service.commonName }, pki.service2.certPem);
    const { doc, attachments } = readHttpMessage(built.contentType, built.body, { maxPartBytes: 1024 * 1024 });
    const security = first(doc, NS.wsse, 'Security');
    const plain = decryptAttachments(doc, security, pki.service2.keyPem, (cid) => attachments.get(cid) ?? null);
    const verified = verifySignature(doc, first(security, NS.ds, 'Signature'), (cid) => plain.get(cid)?.bytes ?? null);
    return verified.references.map((r) => ({ uri: r.uri, xml: r.xml, digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256', digestValue: r.digest }));
  };
  const phase4References = () => {
    const doc = parseXml(readFileSync(new URL('./fixtures/phase4-answers/receipt.xml', import.meta.url), 'utf8'));
    const all = doc.getElementsByTagNameNS(NS.ds, 'Reference');
    return asReferences(Array.from({ length: all.length }, (_, i) => all.item(i)!));
  };
  const check = (r: Parameters<typeof receiptSignal>[0]) => {
    const m = receiptSignal(r, `phase4-msg-${randomUUID()}`);
    const doc = parseXml(envelope(m.xml, 'id-1'));
    expect(m.canonical).to.be.a('string');
    expect(m.canonical).to.equal(excC14n(first(doc, NS.eb, 'Messaging')));
    expect(first(doc, NS.eb, 'RefToMessageId').textContent).to.equal(r.refToMessageId);
    return doc;
  };

  for (const [name, h] of cases) {
    it(`byte-identical to xml-crypto's exclusive C14N of what is sent, over the references of a received message (${name})`, () => {
      check({ messageId: `${randomUUID()}@receipt`, timestamp: '2026-12-07T16:00:00.000Z', refToMessageId: h.messageId, references: receivedReferences(h) });
    });
  }

  it("byte-identical over phase4's references (its receipt's ds:Reference elements, canonicalised as received) and awkward values", () => {
    check({ messageId: `${awkward}@receipt`, timestamp: awkward, refToMessageId: awkward, references: phase4References() });
  });

  it('not written when a reference declares a prefix the receipt renders above it with the same namespace; the signed receipt still verifies', () => {
    const ref = parseXml(`<ds:Reference xmlns:ds="${NS.ds}" xmlns:eb="${NS.eb}" URI="#a"><ds:DigestValue eb:x="1">AA==</ds:DigestValue></ds:Reference>`).documentElement!;
    const [odd] = asReferences([ref]);
    expect(receiptSignal({ messageId: 'm@receipt', timestamp: 't', refToMessageId: 'r', references: [odd!] }, 'phase4-msg-1').canonical).to.equal(null);
    const identity = { privateKeyPem: pki.service.keyPem, certificatePem: pki.service.certPem, commonName: pki.service.commonName };
    for (const references of [[odd!], receivedReferences(ordinary), phase4References()]) {
      const xml = receiptEnvelope(identity, { refToMessageId: 'r@x', timestamp: '2026-12-07T16:00:00.000Z', references });
      const { doc } = readHttpMessage('application/soap+xml', Buffer.from(xml), { maxPartBytes: 1024 * 1024 });
      const verified = verifySignature(doc, first(header(doc, NS.wsse, 'Security')!, NS.ds, 'Signature'), () => null);
      expect(verified.signedIds.size).to.equal(2);
    }
  });
});
