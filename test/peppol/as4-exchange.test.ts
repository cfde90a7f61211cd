/**
 * The AS4 exchange between this access point's sending and receiving sides over a real HTTP
 * socket, with a test PKI (OpenSSL): signed receipt verified, and every refusal an ebMS error
 * (never a 500). Every case runs twice: the receiving steps on the calling thread, and on the
 * service's worker-thread pool (commands/peppol/as4/receive-pool.ts). The independent check
 * against phase4 is in interop.test.ts.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestPki, type TestParty, type TestPki } from './support/pki.js';
import { invoiceXml } from '../purchases/support.js';
import { createPeppolTrust } from '../../platform/peppol-pki.js';
import { peppolIdentifiersOf } from '../../domain/peppol/identifiers.js';
import { buildSbdh } from '../../domain/peppol/sbdh.js';
import { receiveAs4, type Acceptance, type InboundMessage } from '../../commands/peppol/as4/receive.js';
import { sendAs4, type OutboundMessage } from '../../commands/peppol/as4/send.js';
import { buildUserMessage } from '../../commands/peppol/as4/message.js';
import { createAs4ReceivePool, type As4Pool } from '../../commands/peppol/as4/receive-pool.js';

const identityOf = (p: TestParty) => ({ privateKeyPem: p.keyPem, certificatePem: p.certPem, chainPem: [], commonName: p.commonName });

for (const threads of [0, 2]) describe(`AS4 exchange (own sender and receiver over HTTP), ${threads ? `receiving on ${threads} worker threads` : 'receiving on the calling thread'}`, function () {
  this.timeout(60_000);
  let pki: TestPki;
  let pool: As4Pool | null = null;
  let server: http.Server;
  let url: string;
  const received: InboundMessage[] = [];
  const seen = new Set<string>();
  let acceptAs: (m: InboundMessage) => Acceptance = (m) => {
    const duplicate = seen.has(m.messageId);
    seen.add(m.messageId);
    if (!duplicate) received.push(m);
    return { kind: duplicate ? 'duplicate' : 'stored', documentIds: [] };
  };
  let lastStatus = 0;

  before(async () => {
    pki = await createTestPki();
    const trust = createPeppolTrust([pki.caCertPem]);
    pool = threads ? createAs4ReceivePool({ identity: identityOf(pki.service2), maxPayloadBytes: 1024 * 1024, maxXmlBytes: 1024 * 1024, threads }) : null;
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiveAs4({ identity: identityOf(pki.service2), trust, now: () => new Date(), maxPayloadBytes: 1024 * 1024, accept: async (m) => acceptAs(m), offload: pool }, req.headers['content-type'], Buffer.concat(chunks)).then(
          (answer) => {
            lastStatus = answer.status;
            res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
          },
          (err: Error) => {
            lastStatus = 500;
            res.writeHead(500).end(err.message);
          },
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/as4`;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await pool?.close();
  });

  const message = (number: string, overrides: Partial<OutboundMessage> = {}, sbdOverride?: (sbd: string) => string): OutboundMessage => {
    const xml = invoiceXml({ number, buyerTin: '1000000001', sellerTin: '1000000002' });
    const ids = peppolIdentifiersOf(xml);
    const sbd = buildSbdh(xml, ids, { instanceId: `inst-${number}`, createdAt: new Date(), countryC1: 'AE' });
    return {
      endpointUrl: url,
      receiverCertificatePem: pki.service2.certPem,
      messageId: `msg-${number}@test`,
      conversationId: `conv-${number}`,
      header: { processId: ids.processId, documentTypeId: ids.documentTypeId, originalSender: ids.sender, finalRecipient: ids.receiver },
      payload: Buffer.from(sbdOverride ? sbdOverride(sbd) : sbd),
      ...overrides,
    };
  };
  /** The HTTP message the service's sending side would post for `m` (built, not sent). */
  const builtFromService = (m: OutboundMessage) =>
    buildUserMessage(
      { ...m.header, messageId: m.messageId, conversationId: m.conversationId, timestamp: new Date().toISOString(), fromParty: pki.service.commonName, toParty: pki.service2.commonName },
      m.payload,
      identityOf(pki.service),
      pki.service2.certPem,
    );
  const sender = (p: TestParty = pki.service) => ({ identity: identityOf(p), trust: createPeppolTrust([pki.caCertPem]), now: () => new Date(), timeoutMs: 10_000 });

  it('delivers: the receiver takes out the exact SBDH and payload, the sender verifies the signed receipt', async () => {
    const m = message('X-1');
    const outcome = await sendAs4(sender(), m);
    expect(outcome).to.deep.include({ kind: 'receipt', messageId: 'msg-X-1@test', duplicate: false, receiverCommonName: pki.service2.commonName });
    const got = received.find((r) => r.messageId === 'msg-X-1@test')!;
    expect(got.sendingAccessPoint).to.equal(pki.service.commonName);
    expect(got.sbd.facts.instanceId).to.equal('inst-X-1');
    expect(got.sbd.payload.toString('utf8')).to.equal(invoiceXml({ number: 'X-1', buyerTin: '1000000001', sellerTin: '1000000002' }).replace(/^<\?xml[^?]*\?>\s*/, '').trim());
    if (threads) {
      // The worker ran the purchases import's checks too: the acceptor gets the document read, over the very payload bytes.
      expect(got.document?.kind).to.equal('checked');
      const checked = (got.document as { document: { bytes: Uint8Array; root: string; parsed: { documentNumber: string } } }).document;
      expect(checked.bytes).to.equal(got.sbd.payload);
      expect(checked).to.deep.include({ root: 'Invoice' });
      expect(checked.parsed.documentNumber).to.equal('X-1');
    } else {
      expect(got.document).to.equal(undefined);
    }
  });

  it('answers the same message id again with a receipt and stores nothing twice', async () => {
    const m = message('X-2');
    expect((await sendAs4(sender(), m)).kind).to.equal('receipt');
    const again = await sendAs4(sender(), m);
    expect(again).to.deep.include({ kind: 'receipt' });
    expect(received.filter((r) => r.messageId === 'msg-X-2@test')).to.have.length(1);
  });

  it('a connection closed before the answer is retried as outcome unknown; a refused connection as not sent', async () => {
    // A receiver that reads the whole message, then goes away without answering (killed after storing it).
    const closing = http.createServer((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
    const closingUrl = `http://127.0.0.1:${(closing.address() as AddressInfo).port}/as4`;
    try {
      const closed = await sendAs4(sender(), message('X-10', { endpointUrl: closingUrl }));
      expect(closed).to.deep.include({ kind: 'retry', code: 'DESTINATION_UNAVAILABLE', outcomeUnknown: true, messageId: 'msg-X-10@test' });
      expect((closed as { message: string }).message).to.match(/closed before its answer/);
    } finally {
      await new Promise<void>((r) => closing.close(() => r()));
    }
    // The same port, now closed: nothing was sent.
    const refused = await sendAs4(sender(), message('X-10', { endpointUrl: closingUrl }));
    expect(refused).to.deep.include({ kind: 'retry', code: 'DESTINATION_UNAVAILABLE', outcomeUnknown: false });
    expect((refused as { message: string }).message).to.match(/cannot be reached/);
  });

  it("refuses a receipt whose eb:Messaging is not the one its signature covers (an unsigned copy put before the signed one)", async () => {
    // Between sender and receiver: the genuine signed receipt, with an unsigned eb:Messaging inserted before the signed one.
    const wrapping = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void fetch(url, { method: 'POST', headers: { 'content-type': req.headers['content-type']! }, body: Buffer.concat(chunks) }).then(async (answer) => {
          const text = await answer.text();
          const signed = /<eb:Messaging\b[\s\S]*?<\/eb:Messaging>/.exec(text)![0];
          expect(signed).to.contain('<eb:Receipt>');
          const unsigned = signed.replace(/wsu:Id="[^"]*"/, 'wsu:Id="not-signed"');
          res.writeHead(200, { 'content-type': answer.headers.get('content-type')! }).end(text.replace(signed, unsigned + signed));
        });
      });
    });
    await new Promise<void>((r) => wrapping.listen(0, '127.0.0.1', r));
    try {
      const outcome = await sendAs4(sender(), message('X-11', { endpointUrl: `http://127.0.0.1:${(wrapping.address() as AddressInfo).port}/as4` }));
      expect(outcome).to.deep.include({ kind: 'retry', code: 'PEPPOL_BAD_RESPONSE', outcomeUnknown: true });
      expect((outcome as { message: string }).message).to.match(/eb:Messaging is not covered by its signature/);
      // The receiver did get it: the same message, sent straight, is answered as a duplicate receipt.
      expect(received.filter((r) => r.messageId === 'msg-X-11@test')).to.have.length(1);
      expect(await sendAs4(sender(), message('X-11'))).to.deep.include({ kind: 'receipt' });
    } finally {
      wrapping.closeAllConnections();
      await new Promise<void>((r) => wrapping.close(() => r()));
    }
  });

  it('refuses a certificate from another CA with the same name (EBMS:0102)', async () => {
    const outcome = await sendAs4(sender(pki.rogue), message('X-3'));
    expect(outcome.kind).to.equal('refused');
    const e = (outcome as { errors: { code: string; description: string }[] }).errors[0]!;
    expect(e.code).to.equal('EBMS:0102');
    expect(e.description).to.match(/not trusted/);
  });

  it('refuses an expired certificate', async () => {
    const outcome = await sendAs4(sender(pki.expired), message('X-4'));
    expect(outcome.kind).to.equal('refused');
    expect((outcome as { errors: { code: string }[] }).errors[0]!.code).to.equal('EBMS:0102');
  });

  it('refuses a message changed after signing (EBMS:0102), with HTTP 200', async () => {
    const m = message('X-5');
    const built = builtFromService(m);
    const tampered = Buffer.from(built.body.toString('latin1').replace('<eb:ConversationId>conv-X-5</eb:ConversationId>', '<eb:ConversationId>conv-X-6</eb:ConversationId>'), 'latin1');
    expect(tampered.equals(built.body)).to.equal(false);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': built.contentType }, body: new Uint8Array(tampered) });
    expect(res.status).to.equal(200);
    const text = await res.text();
    expect(text).to.contain('errorCode="EBMS:0102"').and.contain('does not match');
    expect(received.some((r) => r.messageId === m.messageId)).to.equal(false);
  });

  it('refuses an SBDH whose document type differs from the payload', async () => {
    const m = message('X-7', {}, (sbd) => sbd.replace(/(<Type>DOCUMENTID<\/Type><InstanceIdentifier>)[^<]+/, '$1urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:other::2.1'));
    const outcome = await sendAs4(sender(), { ...m, header: { ...m.header, documentTypeId: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:other::2.1' } });
    expect(outcome.kind).to.equal('refused');
    expect((outcome as { errors: { code: string; description: string }[] }).errors[0]).to.include({ code: 'EBMS:0003' }).and.to.have.property('description').that.matches(/DOCUMENTID/);
  });

  it('refuses an originalSender or finalRecipient that is not the SBDH sender or receiver (EBMS:0003); nothing is handed on', async () => {
    const other = { scheme: 'iso6523-actorid-upis', value: '0235:1999999999' };
    for (const [name, header] of [
      ['finalRecipient', { finalRecipient: other }],
      ['originalSender', { originalSender: other }],
    ] as const) {
      const m = message(`X-9-${name}`);
      const outcome = await sendAs4(sender(), { ...m, header: { ...m.header, ...header } });
      expect(outcome.kind, name).to.equal('refused');
      const e = (outcome as { errors: { code: string; description: string }[] }).errors[0]!;
      expect(e.code, name).to.equal('EBMS:0003');
      expect(e.description, name).to.contain(name).and.contain('0235:1999999999');
      expect(received.some((r) => r.messageId === m.messageId), name).to.equal(false);
    }
    // Participant ids compare case-insensitively (Peppol policy for identifiers): not a mismatch.
    const m = message('X-9-case');
    const outcome = await sendAs4(sender(), { ...m, header: { ...m.header, finalRecipient: { ...m.header.finalRecipient, value: m.header.finalRecipient.value.toUpperCase() } } });
    expect(outcome.kind).to.equal('receipt');
  });

  it('passes an unknown receiver refusal through as a permanent error', async () => {
    acceptAs = () => ({ kind: 'refused', error: 'OTHER', description: 'PEPPOL:NOT_SERVICED the receiver participant is not served here' });
    try {
      const outcome = await sendAs4(sender(), message('X-8'));
      expect(outcome).to.deep.include({ kind: 'refused' });
      expect((outcome as { errors: { description: string }[] }).errors[0]!.description).to.match(/not served/);
    } finally {
      acceptAs = (m) => {
        received.push(m);
        return { kind: 'stored', documentIds: [] };
      };
    }
  });

  it('answers malformed, oversized and non-AS4 bodies with an ebMS error, never a 500', async () => {
    const bodies: [string, Buffer][] = [
      ['multipart/related; boundary="b"; type="application/soap+xml"', Buffer.from('--b\r\nContent-Type: application/soap+xml\r\n\r\n<S12:Envelope')],
      ['multipart/related; boundary="b"', Buffer.from('garbage without boundary')],
      ['multipart/related', Buffer.from('x')],
      ['application/soap+xml', Buffer.from('<x/>')],
      ['text/plain', Buffer.from('hello')],
      ['application/soap+xml', Buffer.from('<!DOCTYPE x [<!ENTITY a "b">]><x/>')],
    ];
    for (const [type, body] of bodies) {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) });
      expect(res.status, type).to.equal(200);
      expect(await res.text(), type).to.match(/errorCode="EBMS:00(07|09)"/);
    }
    // A compression bomb: 4 MB of spaces gzip to a few KB; the receiver bounds the decompressed size (1 MB here).
    const m = message('X-9');
    const outcome = await sendAs4(sender(), { ...m, payload: Buffer.concat([m.payload, Buffer.alloc(4 * 1024 * 1024, 0x20)]) });
    expect(outcome.kind).to.equal('refused');
    expect((outcome as { errors: { code: string }[] }).errors[0]!.code).to.equal('EBMS:0303');
    expect(lastStatus).to.equal(200);
  });

  it('maps the transport onto the delivery outcomes: unreachable and 5xx retried, a silent receiver timed out (outcome unknown), a 4xx without a signal refused, an answer without a signal retried', async () => {
    const answers: Record<string, (res: http.ServerResponse) => void> = {
      '/unavailable': (res) => res.writeHead(503, { 'retry-after': '1' }).end('busy'),
      '/forbidden': (res) => res.writeHead(403, { 'content-type': 'text/plain' }).end('no'),
      '/garbage': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'),
      '/silent': () => {},
    };
    const peer = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => answers[req.url ?? '']?.(res));
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    try {
      const to = (path: string, timeoutMs = 10_000) => sendAs4({ ...sender(), timeoutMs }, message(`T${path.replace('/', '-')}`, { endpointUrl: `${base}${path}` }));
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const unreachable = await sendAs4(sender(), message('T-closed', { endpointUrl: `http://127.0.0.1:${closedPort}/as4` }));
      expect(unreachable).to.deep.include({ kind: 'retry', code: 'DESTINATION_UNAVAILABLE', outcomeUnknown: false });
      expect((unreachable as { message: string }).message).to.match(/cannot be reached: .*ECONNREFUSED/);
      expect(await to('/unavailable')).to.deep.include({ kind: 'retry', code: 'DESTINATION_UNAVAILABLE', outcomeUnknown: false });
      const silent = await to('/silent', 300);
      expect(silent).to.deep.include({ kind: 'retry', code: 'DELIVERY_TIMEOUT', outcomeUnknown: true });
      const forbidden = await to('/forbidden');
      expect(forbidden).to.deep.include({ kind: 'refused' });
      expect((forbidden as { errors: { code: string }[] }).errors[0]!.code).to.equal('HTTP_403');
      expect(await to('/garbage')).to.deep.include({ kind: 'retry', code: 'PEPPOL_BAD_RESPONSE' });
    } finally {
      peer.closeAllConnections();
      await new Promise<void>((r) => peer.close(() => r()));
    }
  });

  if (threads) {
    it('closing the pool answers the messages in flight first, those still queued while its threads start too', async () => {
      const fresh = createAs4ReceivePool({ identity: identityOf(pki.service2), maxPayloadBytes: 1024 * 1024, maxXmlBytes: 1024 * 1024, threads: 1 });
      const pending = [fresh.check('text/plain', Buffer.from('hello')), fresh.check('application/soap+xml', Buffer.from('<x/>'))];
      await fresh.close();
      const answers = await Promise.all(pending);
      expect(answers.map((a) => (a.kind === 'refused' ? a.error.code : a.kind))).to.deep.equal(['EBMS:0007', 'EBMS:0009']);
    });

    it('a full worker queue answers 503 at once, reads nothing and hands nothing on; closing the pool lets it go', async () => {
      const busy = createAs4ReceivePool({ identity: identityOf(pki.service2), maxPayloadBytes: 1024 * 1024, maxXmlBytes: 1024 * 1024, threads: 1, maxQueue: 0 });
      let handedOn = 0;
      try {
        const m = message('X-busy');
        const built = builtFromService(m);
        const deps = { identity: identityOf(pki.service2), trust: createPeppolTrust([pki.caCertPem]), now: () => new Date(), maxPayloadBytes: 1024 * 1024, offload: busy, accept: async () => (handedOn++, { kind: 'stored' as const, documentIds: [] }) };
        const answer = await receiveAs4(deps, built.contentType, built.body);
        expect(answer).to.deep.include({ status: 503, outcome: 'busy', messageId: null });
        expect(handedOn).to.equal(0);
        // The same message on the pool with room: stored and receipted, the receipt signed on a worker thread.
        const ok = await receiveAs4({ ...deps, offload: pool }, built.contentType, built.body);
        expect(ok).to.deep.include({ status: 200, outcome: 'stored', messageId: 'msg-X-busy@test' });
        expect(ok.body).to.contain('eb:Receipt').and.contain('ds:SignatureValue');
        expect(handedOn).to.equal(1);
      } finally {
        await busy.close();
      }
    });
  }
});
