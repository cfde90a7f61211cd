/**
 * One Peppol access point run as two service processes (`scripts/start.ts`) on one PostgreSQL,
 * behind a round-robin load balancer (test/support/balancer.ts, in haproxy's place): both
 * instances have the same key, certificate, trust store, SML zone and DNS, and the balancer's URL
 * as their endpoint URL. phase4 (test/peppol/peer) is the other access point.
 *
 * - Receiving: phase4 sends invoices for two companies to the balancer's /as4; each becomes
 *   exactly one purchase of its company, listed and read through both instances, and phase4
 *   verifies every receipt. One phase4 message delivered to both instances at once stores one
 *   purchase; both instances answer it with a signed receipt (the documented duplicate answer).
 * - Sending: production AE, BE and DE documents submitted through the balancer (so through both
 *   instances) are discovered through the loopback SML/SMP and delivered to phase4 exactly once
 *   each (the AE documents' Tax Data Documents too), counted at phase4 and on the wire in front of
 *   it; each ends final_valid. phase4's receipts of the first invoice and of the first TDD are lost
 *   on the way back (a 504 instead): those documents are retried, by whichever instance, under the
 *   same AS4 message ids (both legs of an AE document again), and phase4 answers the repeats as
 *   duplicates; no message id is posted twice within one attempt.
 * - A rolling restart: one instance is stopped with deliveries pending (phase4 unavailable until
 *   then); the other delivers them, each once; restarted, the instance receives again.
 *
 * Skipped when the peer is not built (a failure under CI=true).
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { header, readHttpMessage } from '../../commands/peppol/as4/message.js';
import { pemBody, verifySignature } from '../../commands/peppol/as4/wss.js';
import { TDD_DOCUMENT_TYPE_ID } from '../../commands/peppol/connector.js';
import { TDD_PROFILE_ID } from '../../domain/artifacts/tdd-ae.js';
import { NS, readSignal } from '../../domain/peppol/ebms.js';
import { peppolIdentifiersOf } from '../../domain/peppol/identifiers.js';
import { documentStream } from '../../domain/document/document.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { freshTin } from '../connect/support.js';
import { invoiceXml } from '../purchases/support.js';
import { startBalancer, type Balancer, type ProxiedRequest } from '../support/balancer.js';
import { testDb } from '../support/db.js';
import { call } from '../support/http.js';
import { companyOn, counterAcross, startInstance, stopInstance, type Instance, type InstanceCompany } from '../support/instances.js';
import { freshNumber } from '../unify/support.js';
import { startDnsSmpFixture, type DnsSmpFixture } from './fixtures/dns-smp.js';
import { accessPointEnvironment } from './support/access-point.js';
import { skipWithoutPeer, peerSend, peerSendMany, peerSendOf, startPeerReceiver, type PeerReceiver, type ReceivedMessage } from './support/peer.js';
import { createTestPki, type TestPki } from './support/pki.js';

const SCHEME = 'iso6523-actorid-upis';
const CORNER5 = { scheme: SCHEME, value: '0242:000773' };
const COUNTRIES = ['AE', 'BE', 'DE'] as const;

const auth = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

/** The purchases of today whose number starts with `prefix`, as one instance lists them. */
async function purchasesOn(instance: Instance, apiKey: string, prefix: string): Promise<any[]> {
  const today = new Date().toISOString().slice(0, 10);
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const r = await call(`${instance.url}/api/v3/documents?type=purchases&from=${today}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: auth(apiKey) });
    expect(r.status, r.text).to.equal(200);
    items.push(...(r.json.data.items as any[]).filter((i) => String(i.invoiceNumber).startsWith(prefix)));
    cursor = r.json.data.hasMore ? r.json.data.nextCursor : null;
  } while (cursor);
  return items;
}

/** Waits until `instance` lists `count` purchases numbered `prefix…` (then a moment more, to see any extra). */
async function waitForPurchases(instance: Instance, apiKey: string, prefix: string, count: number): Promise<any[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const items = await purchasesOn(instance, apiKey, prefix);
    if (Date.now() > deadline) return items;
    if (items.length >= count) {
      await new Promise((r) => setTimeout(r, 500));
      return purchasesOn(instance, apiKey, prefix);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The eb:MessageId of an AS4 user message as it travels (the SOAP part is signed, not encrypted). */
const userMessageId = (body: Buffer | null): string | null => (body ? (/<(?:\w+:)?MessageId>([^<]+)<\/(?:\w+:)?MessageId>/.exec(body.toString('latin1'))?.[1] ?? null) : null);
/** The eb:Action (the document type) of an AS4 user message as it travels. */
const userMessageAction = (body: Buffer | null): string | null => (body ? (/<(?:\w+:)?Action>([^<]+)<\/(?:\w+:)?Action>/.exec(body.toString('latin1'))?.[1] ?? null) : null);

type Country = (typeof COUNTRIES)[number];
interface SentDocument {
  id: string;
  country: Country;
  number: string;
  government: any;
}

/** Production documents of each country for the phase4 buyer (scheme 0235). */
function outboundDocuments(prefix: string, perCountry: number, buyerTin: string): { country: Country; payload: Record<string, any> }[] {
  return COUNTRIES.flatMap((country) =>
    Array.from({ length: perCountry }, () => {
      const payload = sampleDocument(country, { lines: 2, documentNumber: freshNumber(`${prefix}${country}`) }) as Record<string, any>;
      payload.parties.buyer.peppolId = buyerTin;
      payload.extensions = { ...(payload.extensions ?? {}), peppol_buyer_peppolIdScheme: '0235' };
      return { country, payload };
    }),
  );
}

/** Submits each document through `url` (an instance or the balancer); each must be accepted. */
async function submitAll(url: string, seller: InstanceCompany, documents: { country: Country; payload: Record<string, any> }[]): Promise<string[]> {
  const submitted = await Promise.all(
    documents.map(({ country, payload }) =>
      call(`${url}/api/v3/unify`, {
        headers: { ...auth(seller.apiKey), 'new-api': 'true' },
        body: { country, environment: 'production', purpose: 'invoicing', source: seller.source, documentType: { base: 'tax_invoice', modifiers: [] }, payload },
      }),
    ),
  );
  for (const r of submitted) expect(r.status, r.text).to.equal(200);
  return submitted.map((r) => r.json.documentId as string);
}

/** Waits for each document to end; each must be final_valid as every one of `readers` reads it. */
function finalValid(seller: InstanceCompany, ids: string[], documents: { country: Country; payload: Record<string, any> }[], readers: readonly Instance[]): Promise<SentDocument[]> {
  return Promise.all(
    ids.map(async (id, n) => {
      const read = (i: Instance) => call(`${i.url}/api/v3/documents/${id}?type=sales`, { headers: auth(seller.apiKey) });
      for (let tries = 0; ; tries++) {
        const first = await read(readers[n % readers.length]!);
        expect(first.status, first.text).to.equal(200);
        const state = first.json.data.state;
        if (state === 'final_valid' || state === 'final_invalid' || tries > 600) {
          expect(state, `${id}: ${JSON.stringify(first.json.data)}`).to.equal('final_valid');
          for (const other of readers) expect((await read(other)).json.data.state, other.name).to.equal('final_valid');
          return { id, country: documents[n]!.country, number: documents[n]!.payload.header.documentNumber as string, government: first.json.data.government };
        }
        await new Promise((res) => setTimeout(res, 200));
      }
    }),
  );
}

/** The AS4 messages of the documents: each one's own, and each AE document's Tax Data Document. */
const legsOf = (sent: SentDocument[]): string[] => sent.flatMap((f) => [f.government.messageId as string, ...(f.country === 'AE' ? [f.government.corner5.messageId as string] : [])]);

/**
 * phase4 received exactly the documents' messages, each document exactly once (by its message id and
 * by its content: one invoice with its number) and each AE document's TDD once.
 */
function expectEachReceivedOnce(received: ReceivedMessage[], sent: SentDocument[], buyerTin: string): void {
  expect(received.map((m) => m.messageId).sort()).to.deep.equal(legsOf(sent).sort());
  for (const f of sent) {
    const invoices = received.filter((m) => m.documentTypeId !== TDD_DOCUMENT_TYPE_ID && m.payload.toString('utf8').includes(`<cbc:ID>${f.number}</cbc:ID>`));
    expect(invoices, f.number).to.have.length(1);
    expect(invoices[0]!).to.include({ messageId: f.government.messageId, receiverId: `0235:${buyerTin}`, countryC1: f.country });
    if (f.country === 'AE') {
      const tdd = received.filter((m) => m.messageId === f.government.corner5.messageId);
      expect(tdd, `TDD of ${f.number}`).to.have.length(1);
      expect(tdd[0]!).to.include({ receiverId: CORNER5.value, documentTypeId: TDD_DOCUMENT_TYPE_ID });
      expect(tdd[0]!.payload.toString('utf8')).to.contain(f.number);
    }
  }
}

describe('one access point as two service instances behind a load balancer (phase4 on the other side)', function () {
  this.timeout(900_000);
  let pki: TestPki;
  let peer: PeerReceiver;
  /** In front of phase4: what the service posts to it, on the wire. */
  let peerFront: Balancer;
  let fixture: DnsSmpFixture;
  let balancer: Balancer;
  let store: PostgresEventStore;
  const instances: Instance[] = [];
  /** Every instance started, stopped ones included (their logs are checked at the end). */
  const started: Instance[] = [];
  let databaseUrl: string;
  let instanceEnv: Record<string, string>;
  const peerBuyerTin = freshTin();

  before(async function () {
    skipWithoutPeer(this);
    pki = await createTestPki();
    peer = await startPeerReceiver({ pki });
    // phase4's answer to the first invoice and to the first Tax Data Document sent to it is lost (504).
    const losing = { invoice: true, tdd: true };
    const loseFirst = (r: ProxiedRequest) => {
      const kind = userMessageAction(r.body)?.includes('::TaxData##') ? 'tdd' : 'invoice';
      const lose = losing[kind];
      losing[kind] = false;
      return lose;
    };
    peerFront = await startBalancer({ targets: [new URL(peer.url).origin], keepBodies: true, loseAnswer: loseFirst });
    // The SMP publishes phase4 (through the tap in front of it) for the AE, BE and DE document types of
    // the buyer, and for the tax authority's Tax Data Document (corner 5).
    const endpoint = (processId: string) => ({ id: processId, endpointUrl: `${peerFront.url}${new URL(peer.url).pathname}`, certificatePem: pki.peer.certPem });
    const types = COUNTRIES.map((country) => peppolIdentifiersOf(invoiceXml({ number: 'SMP-1', buyerTin: peerBuyerTin, country })));
    fixture = await startDnsSmpFixture({
      pki,
      registrations: [
        { participant: { scheme: SCHEME, value: `0235:${peerBuyerTin}` }, documentTypes: types.map((t) => ({ id: t.documentTypeId, processes: [endpoint(t.processId)] })) },
        { participant: CORNER5, documentTypes: [{ id: TDD_DOCUMENT_TYPE_ID, processes: [endpoint(TDD_PROFILE_ID)] }] },
      ],
    });
    balancer = await startBalancer();
    databaseUrl = testDb().url;
    store = await PostgresEventStore.connect(databaseUrl, { poolSize: 4 });
    instanceEnv = {
      ...accessPointEnvironment(pki, pki.service, { dnsServer: fixture.dnsServer, smlZone: fixture.smlZone, endpointUrl: `${balancer.url}/as4`, corner5Participant: CORNER5 }),
      // A failed attempt is retried within a second or two, many times over.
      DELIVERY_RETRY_BASE_MS: '500',
      DELIVERY_RETRY_MAX_MS: '2000',
      DELIVERY_MAX_ATTEMPTS: '30',
    };
    instances.push(...(await Promise.all([startInstance('one', databaseUrl, instanceEnv), startInstance('two', databaseUrl, instanceEnv)])));
    started.push(...instances);
    balancer.setTargets(instances.map((i) => i.url));
  });
  after(async () => {
    await Promise.all(started.map(stopInstance));
    await store?.close();
    await balancer?.close();
    await fixture?.stop();
    await peerFront?.close();
    await peer?.stop();
    if (pki) await rm(pki.dir, { recursive: true, force: true });
  });

  /** phase4's send of `xml` to the balancer's /as4. */
  const toService = (xml: string) => peerSendOf(pki, `${balancer.url}/as4`, pki.service.certPem, xml);

  it('both instances are the same configured access point', async () => {
    for (const i of instances) {
      const r = await call(`${i.url}/readyz`);
      expect(r.status, r.text).to.equal(200);
      expect(r.json.checks.connectors.peppolAccessPoint, i.name).to.equal('configured');
      expect(r.json.checks.connectors.present, i.name).to.deep.include({ environment: 'production', destination: 'PEPPOL', connector: 'peppol-as4' });
    }
  });

  describe('receiving', () => {
    let buyerA: InstanceCompany;
    let buyerB: InstanceCompany;
    before(async () => {
      buyerA = await companyOn(store, instances, balancer.url, 'Buyer A', 'production');
      buyerB = await companyOn(store, instances, balancer.url, 'Buyer B', 'production');
    });

    it('phase4 sends invoices for two companies to the balancer: each is one purchase of its company, listed and read through both instances', async () => {
      const tag = freshNumber('LB');
      const forA = 10;
      const forB = 4;
      const before = balancer.requests.length;
      // {{SEQ}}: phase4 numbers each message's document (and its UUID) 0, 1, …
      const [a, b] = await Promise.all([
        peerSendMany({ ...toService(invoiceXml({ number: `${tag}-A-{{SEQ}}`, buyerTin: buyerA.tin })), count: forA, concurrency: 4 }),
        peerSendMany({ ...toService(invoiceXml({ number: `${tag}-B-{{SEQ}}`, buyerTin: buyerB.tin, country: 'BE' })), count: forB, concurrency: 2 }),
      ]);
      expect(a, JSON.stringify(a)).to.include({ sent: forA, succeeded: forA, receiptsVerified: forA });
      expect(b, JSON.stringify(b)).to.include({ sent: forB, succeeded: forB, receiptsVerified: forB });

      // The balancer spread the messages over both instances, and each answered.
      const posts = balancer.requests.slice(before).filter((r) => r.path === '/as4');
      expect(posts).to.have.length(forA + forB);
      for (const i of instances) expect(posts.filter((r) => r.target === i.url).length, i.name).to.be.greaterThan(0);
      expect(posts.every((r) => r.status === 200), JSON.stringify(posts.map((r) => r.status))).to.equal(true);

      for (const [buyer, prefix, count, other] of [
        [buyerA, `${tag}-A-`, forA, `${tag}-B-`],
        [buyerB, `${tag}-B-`, forB, `${tag}-A-`],
      ] as const) {
        for (const i of instances) {
          const items = await waitForPurchases(i, buyer.apiKey, prefix, count);
          // Exactly one purchase per message: numbers 0..count-1, each once.
          expect(items.map((x) => x.invoiceNumber).sort(), `${buyer.tin} on ${i.name}`).to.deep.equal(Array.from({ length: count }, (_, n) => `${prefix}${n}`).sort());
          expect(items.every((x) => x.environment === 'production')).to.equal(true);
          // None of the other company's documents.
          expect(await purchasesOn(i, buyer.apiKey, other), `${buyer.tin} on ${i.name}`).to.have.length(0);
        }
        // Every purchase reads the same through both instances, with its Peppol transmission.
        const items = await purchasesOn(instances[0]!, buyer.apiKey, prefix);
        for (const item of items) {
          const reads = await Promise.all(instances.map((i) => call(`${i.url}/api/v3/documents/${encodeURIComponent(item.documentId)}?type=purchases`, { headers: auth(buyer.apiKey) })));
          for (const r of reads) {
            expect(r.status, r.text).to.equal(200);
            expect(r.json.data).to.include({ documentId: item.documentId, channel: 'peppol_as4', receiverParticipantId: `0235:${buyer.tin}`, invoiceNumber: item.invoiceNumber });
          }
          expect(reads[0]!.json.data.artifacts.invoiceXmlBase64).to.equal(reads[1]!.json.data.artifacts.invoiceXmlBase64);
        }
        // The counts agree on both instances.
        for (const i of instances) {
          const counts = await call(`${i.url}/v3/connect/invoices/counts?countryCode=AE`, { headers: { 'x-api-key': buyer.apiKey, 'x-environment': 'production' } });
          expect(counts.status, counts.text).to.equal(200);
          expect(counts.json.data.companies.find((c: any) => c.companyId === buyer.companyId)?.purchaseCount, `${buyer.tin} on ${i.name}`).to.be.at.least(count);
        }
      }
    });

    it('one message delivered to both instances at once stores one purchase; both answer with a signed receipt', async () => {
      // phase4 sends to a tee that hands the very same request to both instances concurrently, and
      // gives phase4 the answer of the later one.
      const answers: { instance: string; status: number; contentType: string; body: Buffer; started: number; ended: number }[] = [];
      const tee = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', async () => {
          const body = Buffer.concat(chunks);
          const headers = { 'content-type': req.headers['content-type'] ?? '', 'mime-version': '1.0' };
          await Promise.all(
            instances.map(async (i) => {
              const started = performance.now();
              const r = await fetch(`${i.url}/as4`, { method: 'POST', headers, body });
              const bytes = Buffer.from(await r.arrayBuffer());
              answers.push({ instance: i.name, status: r.status, contentType: r.headers.get('content-type') ?? '', body: bytes, started, ended: performance.now() });
            }),
          );
          const last = answers[answers.length - 1]!;
          res.writeHead(last.status, { 'content-type': last.contentType }).end(last.body);
        });
      });
      await new Promise<void>((r) => tee.listen(0, '127.0.0.1', r));
      try {
        const number = freshNumber('LBTWICE');
        const messageId = `${number}@phase4-tee`;
        const sent = await peerSend({ ...toService(invoiceXml({ number, buyerTin: buyerA.tin })), to: `http://127.0.0.1:${(tee.address() as AddressInfo).port}/as4`, messageId });
        // phase4 checked the receipt it got (signature, signer issued by the test CA, non-repudiation digests).
        expect(sent, JSON.stringify(sent)).to.include({ success: true, receiptVerified: true, messageId });
        expect(answers.map((a) => a.instance).sort()).to.deep.equal(instances.map((i) => i.name).sort());
        // Both requests were in flight at the same time.
        expect(Math.max(answers[0]!.started, answers[1]!.started)).to.be.below(Math.min(answers[0]!.ended, answers[1]!.ended));
        // Both answers: HTTP 200, a receipt for this message signed with the access point's
        // certificate, with the same non-repudiation information.
        const receipts = answers.map((a) => {
          expect(a.status, a.instance).to.equal(200);
          const { doc } = readHttpMessage(a.contentType, a.body, { maxPartBytes: 1 << 20 });
          const signal = readSignal(header(doc, NS.eb, 'Messaging')!);
          expect(signal, `${a.instance}: ${a.body.toString('utf8').slice(0, 2000)}`).to.include({ kind: 'receipt', refToMessageId: messageId });
          const signature = header(doc, NS.wsse, 'Security')!.getElementsByTagNameNS(NS.ds, 'Signature').item(0)!;
          expect(pemBody(verifySignature(doc, signature, () => null).certificatePem), a.instance).to.equal(pemBody(pki.service.certPem));
          return signal as Extract<ReturnType<typeof readSignal>, { kind: 'receipt' }>;
        });
        expect(receipts[0]!.references).to.have.length.greaterThan(0);
        expect(receipts[0]!.references).to.deep.equal(receipts[1]!.references);

        // One purchase, whichever instance lists it, after both answered.
        for (const i of instances) {
          const items = await waitForPurchases(i, buyerA.apiKey, number, 1);
          expect(items, i.name).to.have.length(1);
        }
        const [item] = await purchasesOn(instances[0]!, buyerA.apiKey, number);
        const stored = await store.readStream(`purchase-${item.documentId}`);
        expect((stored[0]!.data as any).transmission).to.include({ as4MessageId: messageId, sendingAccessPoint: pki.peer.commonName });
      } finally {
        await new Promise<void>((r) => {
          tee.close(() => r());
          tee.closeAllConnections();
        });
      }
    });
  });

  describe('sending', () => {
    it('production AE, BE and DE documents submitted through both instances reach phase4 exactly once each and end final_valid, a lost receipt retried under the same message id', async () => {
      const seller = await companyOn(store, instances, balancer.url, 'Seller', 'production');
      const receivedBefore = (await peer.received()).length;
      const wireBefore = peerFront.requests.length;
      const submitsBefore = balancer.requests.length;
      const deliveredBefore = await counterAcross(instances, 'delivery_attempts_total', { destination: 'PEPPOL', outcome: 'delivered' });
      const failedBefore = await counterAcross(instances, 'delivery_attempts_total', { destination: 'PEPPOL', outcome: 'failed' });
      const documents = outboundDocuments('LBOUT', 3, peerBuyerTin);
      const ids = await submitAll(balancer.url, seller, documents);
      const submits = balancer.requests.slice(submitsBefore).filter((r) => r.path === '/api/v3/unify');
      for (const i of instances) expect(submits.filter((r) => r.target === i.url).length, `submissions taken by ${i.name}`).to.be.greaterThan(0);

      // Each document ends final_valid, read through both instances.
      const finals = await finalValid(seller, ids, documents, instances);

      // What the service posted to phase4, on the wire.
      const legs = legsOf(finals);
      expect(new Set(legs).size, 'distinct message ids').to.equal(legs.length);
      const wire = peerFront.requests.slice(wireBefore).filter((r) => r.method === 'POST');
      const posts = new Map<string, number>();
      for (const r of wire) {
        const id = userMessageId(r.body);
        expect(id, 'a post without an AS4 message id').to.not.equal(null);
        posts.set(id!, (posts.get(id!) ?? 0) + 1);
      }
      expect([...posts.keys()].sort()).to.deep.equal([...legs].sort());
      const lost = wire.filter((r) => r.lost);
      // phase4 had taken each of those messages: what was lost is its receipt (or, when a retry's answer
      // was lost too, its duplicate error).
      for (const r of lost) {
        const answer = r.lostAnswer?.toString('utf8') ?? '';
        expect(answer, 'the lost answer').to.contain(`<eb:RefToMessageId>${userMessageId(r.body)}</eb:RefToMessageId>`);
        expect(answer.includes('<eb:Receipt>') || answer.includes('errorCode="EBMS:0004"'), answer.slice(0, 3000)).to.equal(true);
      }
      expect(lost.map((r) => (userMessageAction(r.body)?.includes('::TaxData##') ? 'tdd' : 'invoice')).sort(), 'answers lost on the way back').to.deep.equal(['invoice', 'tdd']);
      const lostOf = (messageId: string) => lost.filter((r) => userMessageId(r.body) === messageId).length;
      for (const f of finals) {
        const events = await store.readStream(documentStream(f.id));
        const count = (type: string) => events.filter((e) => e.type === type).length;
        const attempts = count('DocumentDeliveryStarted');
        expect(count('DocumentDelivered'), f.id).to.equal(1);
        expect(count('DocumentFinalized'), f.id).to.equal(1);
        expect(count('DocumentDeliveryFailed'), f.id).to.equal(attempts - 1);
        const lostOwn = lostOf(f.government.messageId);
        const lostTdd = f.country === 'AE' ? lostOf(f.government.corner5.messageId) : 0;
        // Each failed attempt is one lost answer: nothing else failed, nothing was retried without cause.
        expect(attempts - 1, `${f.id} retries`).to.equal(lostOwn + lostTdd);
        // The buyer's message goes out once per attempt: again only on a retry, under the same id.
        expect(posts.get(f.government.messageId), `${f.id} posts of its message`).to.equal(attempts);
        // A retry sends the buyer's message again, which phase4 has: it answers with a duplicate error, taken as delivered.
        expect(f.government.alreadyReceived === true, `${f.id} delivered as already received`).to.equal(attempts > 1);
        if (f.country === 'AE') {
          // The TDD follows the buyer's message in each attempt whose buyer's answer came back.
          const tddPosts = posts.get(f.government.corner5.messageId)!;
          expect(tddPosts, `${f.id} posts of its TDD`).to.equal(attempts - lostOwn);
          expect(f.government.corner5.alreadyReceived === true, `${f.id} TDD delivered as already received`).to.equal(tddPosts > 1);
        }
      }
      // Every lost answer belongs to one of these documents' messages.
      expect(finals.reduce((n, f) => n + lostOf(f.government.messageId) + (f.country === 'AE' ? lostOf(f.government.corner5.messageId) : 0), 0)).to.equal(lost.length);

      // phase4 received each document (and each AE document's TDD) exactly once.
      expectEachReceivedOnce((await peer.received()).slice(receivedBefore), finals, peerBuyerTin);
      // Across both instances: one delivered attempt per document, one failed attempt per lost receipt.
      expect((await counterAcross(instances, 'delivery_attempts_total', { destination: 'PEPPOL', outcome: 'delivered' })) - deliveredBefore).to.equal(documents.length);
      expect((await counterAcross(instances, 'delivery_attempts_total', { destination: 'PEPPOL', outcome: 'failed' })) - failedBefore).to.equal(lost.length);
    });
  });

  describe('a rolling restart', () => {
    it('an instance stopped with deliveries pending: the other delivers its documents, each exactly once; started again, it receives through the balancer', async () => {
      const seller = await companyOn(store, instances, balancer.url, 'Rolling seller', 'production');
      const buyer = await companyOn(store, instances, balancer.url, 'Rolling buyer', 'production');
      const [one, two] = instances as [Instance, Instance];
      const receivedBefore = (await peer.received()).length;
      // Everything is submitted to instance one while phase4 is unavailable (its front answers 503,
      // nothing passed on), so the first attempts fail and retries are due; then instance one is
      // stopped (SIGTERM) and the balancer sends only to two, as a health-checking balancer would.
      const deliveredByTwo = await counterAcross([two], 'delivery_attempts_total', { destination: 'PEPPOL', outcome: 'delivered' });
      const documents = outboundDocuments('LBROLL', 2, peerBuyerTin);
      peerFront.setTargets([]);
      const ids = await submitAll(one.url, seller, documents);
      for (const id of ids) {
        for (let tries = 0; ; tries++) {
          const events = await store.readStream(documentStream(id));
          if (events.some((e) => e.type === 'DocumentDeliveryFailed')) break;
          if (tries > 300) throw new Error(`no failed attempt of ${id}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      balancer.setTargets([two.url]);
      await stopInstance(one);
      peerFront.setTargets([new URL(peer.url).origin]);
      // Instance two delivers them all, each exactly once.
      const finals = await finalValid(seller, ids, documents, [two]);
      expect((await counterAcross([two], 'delivery_attempts_total', { destination: 'PEPPOL', outcome: 'delivered' })) - deliveredByTwo, 'delivered by instance two').to.equal(documents.length);
      expectEachReceivedOnce((await peer.received()).slice(receivedBefore), finals, peerBuyerTin);
      for (const f of finals) {
        const events = await store.readStream(documentStream(f.id));
        expect(events.filter((e) => e.type === 'DocumentDelivered'), f.id).to.have.length(1);
        // phase4 had never seen them: the delivering attempt was the first to reach it.
        expect(f.government.alreadyReceived, f.id).to.equal(false);
      }

      // Instance one comes back with the same configuration and takes its share of received messages.
      const again = await startInstance('one', databaseUrl, instanceEnv);
      started.push(again);
      instances[0] = again;
      balancer.setTargets(instances.map((i) => i.url));
      const before = balancer.requests.length;
      const tag = freshNumber('LBBACK');
      const result = await peerSendMany({ ...toService(invoiceXml({ number: `${tag}-{{SEQ}}`, buyerTin: buyer.tin })), count: 4, concurrency: 2 });
      expect(result, JSON.stringify(result)).to.include({ sent: 4, succeeded: 4, receiptsVerified: 4 });
      const posts = balancer.requests.slice(before).filter((r) => r.path === '/as4');
      expect(posts.filter((r) => r.target === again.url), 'messages taken by the restarted instance').to.have.length(2);
      for (const i of instances) {
        const items = await waitForPurchases(i, buyer.apiKey, `${tag}-`, 4);
        expect(items.map((x) => x.invoiceNumber).sort(), i.name).to.deep.equal([0, 1, 2, 3].map((n) => `${tag}-${n}`));
      }
    });
  });

  // A suite of its own: mocha runs a suite's tests before its nested suites.
  describe('afterwards', () => {
    it('neither instance logged an error', () => {
      for (const i of started) expect(i.warnings.filter((w) => Number(w.level) >= 50), i.name).to.deep.equal([]);
    });
  });
});
