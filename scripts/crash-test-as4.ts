/**
 * `npm run test:crash -- --as4`: exactly once between two Peppol access points under crashes
 * (issue 34, "several instances"). Two service processes, each on its own database of one
 * embedded PostgreSQL (var/pg-crash): A is the sellers' access point (corner 2), B the buyers'
 * (corner 3). A test PKI (OpenSSL, generated into var/), and discovery through a loopback SML
 * (a DNS server answering U-NAPTR) and SMP (metadata signed by xmlsec1) as the Peppol suites
 * use (test/peppol/fixtures/dns-smp.ts). The SMP publishes, as B's endpoint, a proxy run by this
 * process (test infrastructure only: it forwards A's AS4 requests to B and B's answers back,
 * records the AS4 message id of every request, and can hold or drop an answer).
 *
 * Load: submitting clients post production German invoices on A (each retried with its
 * Idempotency-Key until answered) addressed to companies onboarded on B; A delivers them over
 * AS4 to B. Kills (SIGKILL), in turn:
 * - A in the window: the proxy holds B's signed receipt (B has appended the purchase) while A is
 *   killed, so A never records it; A, restarted, sends the document again;
 * - B at a random instant (requests in flight are cut);
 * - A at a random instant;
 * - B after its append: the proxy withholds B's receipt, B is killed, A gets no answer and sends
 *   again to the restarted B.
 * Afterwards, from the logs:
 * - every acknowledged document on A is final_valid, delivered over Peppol;
 * - B holds exactly one purchase per document (by the SBDH instance identifier, and by number),
 *   and none that no document of A explains;
 * - the message id A recorded with the receipt is the one B stored the purchase under, every
 *   request the proxy saw carried the message id of its document (a resent document never got a
 *   new one), and each document whose receipt was held or withheld was sent again and stored once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import knexFactory from 'knex';
import { PostgresEventStore } from '../platform/eventstore/postgres.js';
import { START, type RecordedEvent } from '../platform/eventstore/port.js';
import { foldRecorded } from '../commands/execute.js';
import { Delivered, DocumentSubmitted, documentDecider, documentStream } from '../domain/document/document.js';
import { transmissionIds } from '../commands/peppol/connector.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { PurchaseInvoiceReceived, PurchaseInvoiceStored } from '../domain/purchases/purchase.js';
import { generateInvoiceXml, type CoreDocument } from '../domain/artifacts/index.js';
import { peppolIdentifiersOf } from '../domain/peppol/identifiers.js';
import { sampleDocument } from '../domain/validation/index.js';
import { openRuntime } from '../commands/runtime.js';
import { createApiKey, createWorkspace } from '../commands/workspaces.js';
import { createAspAuthorization } from '../commands/connect/settings.js';
import { creditsEngineFor } from '../commands/credits/engine.js';
import { issueCredits } from '../commands/credits/pool.js';
import { companiesHoldingParticipants } from '../readmodels/purchases.js';
import { PreparingPgClient } from '../platform/prepared-statements.js';
import { BenchServer, freePort, httpRequest, openFreshBenchDatabase } from './bench-support.js';
import { createTestPki } from '../test/peppol/support/pki.js';
import { startDnsSmpFixture } from '../test/peppol/fixtures/dns-smp.js';

export interface As4CrashOptions {
  kills: number;
  submitClients: number;
  buyers: number;
  minUptimeMs: number;
  maxUptimeMs: number;
  pgPort: string;
}

type KillKind = 'A in window' | 'B at random' | 'A at random' | 'B after append';
const KILL_ORDER: KillKind[] = ['A in window', 'B at random', 'A at random', 'B after append'];

/** One AS4 request as the proxy saw it. */
interface Exchange {
  messageId: string | null;
  at: number;
  /** answered: B's answer went back to A; held: A was killed while B's receipt was held; withheld: B was killed and its receipt dropped; cut: B died or refused mid-request; client-gone: A went away before B answered. */
  outcome: 'pending' | 'answered' | 'held' | 'withheld' | 'cut' | 'client-gone';
  receipt: boolean | null;
  /** When B was killed while this request was at B (a random kill). */
  bKilledAt?: number;
}

type Trap = { kind: 'hold' | 'withhold'; fire: (messageId: string) => Promise<void> };


const messageIdOf = (body: Buffer): string | null => /<(?:[\w-]+:)?MessageId>([^<]+)<\/(?:[\w-]+:)?MessageId>/.exec(body.toString('latin1'))?.[1] ?? null;

/**
 * The proxy between A and B (B's endpoint as the SMP publishes it). A plain pass-through, except
 * when a trap is armed: the next signed receipt of B is then not passed on — the trap fires first
 * (it kills A, or B) and A's connection is closed without an answer.
 */
async function startProxy(target: () => number): Promise<{ port: number; exchanges: Exchange[]; arm(trap: Trap): void; armed(): boolean; inFlight(): Exchange[]; close(): Promise<void> }> {
  const exchanges: Exchange[] = [];
  let trap: Trap | null = null;
  const upstream = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => {});
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ex: Exchange = { messageId: messageIdOf(body), at: Date.now(), outcome: 'pending', receipt: null };
      exchanges.push(ex);
      let clientGone = false;
      res.on('close', () => {
        if (!res.writableFinished) clientGone = true;
      });
      const headers: http.OutgoingHttpHeaders = { 'content-type': req.headers['content-type'], 'content-length': body.length };
      if (req.headers['mime-version']) headers['mime-version'] = req.headers['mime-version'];
      const up = http.request({ host: '127.0.0.1', port: target(), path: req.url, method: req.method, headers, agent: upstream }, (upRes) => {
        const answer: Buffer[] = [];
        upRes.on('data', (c: Buffer) => answer.push(c));
        upRes.on('error', () => {
          ex.outcome = 'cut';
          res.destroy();
        });
        upRes.on('end', () => {
          const text = Buffer.concat(answer);
          ex.receipt = /<(?:[\w-]+:)?Receipt[\s>]/.test(text.toString('latin1'));
          const armed = trap;
          if (armed && ex.receipt && ex.messageId && !clientGone) {
            trap = null;
            ex.outcome = armed.kind === 'hold' ? 'held' : 'withheld';
            void armed.fire(ex.messageId).finally(() => res.destroy());
            return;
          }
          ex.outcome = clientGone ? 'client-gone' : 'answered';
          if (clientGone) return;
          res.writeHead(upRes.statusCode ?? 502, { 'content-type': upRes.headers['content-type'] ?? 'application/octet-stream' });
          res.end(text);
        });
      });
      up.on('error', () => {
        // B is down, or was killed with this request: A's connection closes without an answer.
        ex.outcome = 'cut';
        res.destroy();
      });
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    exchanges,
    arm: (t) => {
      trap = t;
    },
    armed: () => trap !== null,
    inFlight: () => exchanges.filter((e) => e.outcome === 'pending'),
    close: async () => {
      upstream.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function runAs4CrashTest(opts: As4CrashOptions): Promise<string[]> {
  const problems: string[] = [];
  const startedAt = Date.now();
  const runId = startedAt.toString(36);
  const pgDir = 'var/pg-crash';
  const pkiDir = path.join('var', `crash-as4-pki-${process.pid}`);
  // The embedded PostgreSQL is started (or joined) here; the killed servers only join it.
  const dbA = await openFreshBenchDatabase({ prefix: 'einvoicing_crash_as4a', startedAt, pgDir, pgPort: opts.pgPort });
  const dbB = await openFreshBenchDatabase({ prefix: 'einvoicing_crash_as4b', startedAt, pgDir, pgPort: opts.pgPort }).catch(async (err: unknown) => {
    await dbA.close();
    throw err;
  });
  const [portA, portB] = [await freePort(), await freePort()];
  const common = {
    LOG_LEVEL: 'error',
    CONNECT_RATE_LIMIT_PER_SECOND: '0',
    DELIVERY_WORKER_INTERVAL_MS: '250',
    // Quick retries, and enough of them for B's outages: the run checks that every document arrives.
    DELIVERY_RETRY_BASE_MS: '500',
    DELIVERY_RETRY_MAX_MS: '2000',
    DELIVERY_MAX_ATTEMPTS: '100',
    // An attempt A was killed in is resumed by its worker after this long (5 minutes in production).
    DELIVERY_RESUME_AFTER_MS: '5000',
  };
  const a = new BenchServer({ pgDir, pgPort: Number(opts.pgPort), httpPort: portA, env: { ...common, EMBEDDED_PG_DATABASE: dbA.database } });
  const b = new BenchServer({ pgDir, pgPort: Number(opts.pgPort), httpPort: portB, env: { ...common, EMBEDDED_PG_DATABASE: dbB.database } });
  process.on('exit', () => {
    a.killNow();
    b.killNow();
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let proxy: Awaited<ReturnType<typeof startProxy>> | null = null;
  let fixture: Awaited<ReturnType<typeof startDnsSmpFixture>> | null = null;
  const kills: { kind: KillKind; at: number; back: number; detail: string }[] = [];

  try {
    console.log(`crash test (AS4): embedded PostgreSQL in ${pgDir} (port ${opts.pgPort}), databases ${dbA.database} (A) and ${dbB.database} (B)`);
    const pki = await createTestPki(pkiDir);
    proxy = await startProxy(() => portB);
    const endpointB = `http://127.0.0.1:${proxy.port}/as4`;

    // The buyers (companies on B) and their registration in the loopback SML and SMP.
    const buyerTins = Array.from({ length: opts.buyers }, (_, i) => String(1_000_000_000 + ((startedAt + i * 7919) % 8_999_999_999)).slice(0, 10));
    const template = sampleDocument('DE', { lines: 2, documentNumber: 'TEMPLATE' }) as CoreDocument;
    const ids = peppolIdentifiersOf(generateInvoiceXml({ country: 'DE', documentType: { base: 'tax_invoice', modifiers: [] }, document: withBuyer(template, buyerTins[0]!), uuid: 'template' }).xml);
    fixture = await startDnsSmpFixture({
      pki,
      registrations: buyerTins.map((tin) => ({
        participant: { scheme: 'iso6523-actorid-upis', value: `0235:${tin}` },
        documentTypes: [{ id: ids.documentTypeId, processes: [{ id: ids.processId, endpointUrl: endpointB, certificatePem: pki.service2.certPem }] }],
      })),
    });
    const peppol = (party: typeof pki.service, endpointUrl: string) => ({
      PEPPOL_KEY: party.keyPath,
      PEPPOL_CERTIFICATE: party.certPath,
      PEPPOL_TRUSTSTORE: pki.caCertPath,
      PEPPOL_SML_ZONE: fixture!.smlZone,
      PEPPOL_DNS_SERVERS: fixture!.dnsServer,
      PEPPOL_ENDPOINT_URL: endpointUrl,
    });
    Object.assign(a.env, peppol(pki.service, `${a.base}/as4`));
    Object.assign(b.env, peppol(pki.service2, endpointB));
    await Promise.all([a.start(120_000), b.start(120_000)]);
    console.log(`  A (${pki.service.commonName}) on ${a.base}, B (${pki.service2.commonName}) on ${b.base} behind the proxy ${endpointB}; SML ${fixture.dnsServer}, SMP ${fixture.smpUrl}`);

    const ctx = () => ({ now: new Date(), actor: 'crash-test' });
    const onboard = async (server: BenchServer, apiKey: string, tin: string, name: string) => {
      const body = JSON.stringify({
        sourceName: name,
        sourceVersion: 'v1',
        countryCode: 'AE',
        tin,
        contactPersonEmail: `crash+${tin}@example.ae`,
        contactPersonName: 'Crash Test',
        contactPersonMobile: '+971501234567',
        branchName: 'Head office',
        platformEnvironment: 'production',
      });
      for (let attempt = 0; ; attempt++) {
        const res = await httpRequest(agent, `${server.base}/v3/connect/companies`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'idempotency-key': `onboard-${runId}-${tin}` }, body });
        if (res.status === 201 || res.status === 200) return (JSON.parse(res.body) as { data: { sourceName: string; sourceVersion: string } }).data;
        if (attempt >= 50) throw new Error(`onboarding ${tin} on ${server.base} failed: ${res.status} ${res.body.slice(0, 300)}`);
        await sleep(200);
      }
    };

    // A: the seller's workspace, a production key, credits, one production source.
    const setupA = await openRuntime(dbA.serviceConfig, { poolSize: 2 });
    const sellerTin = String(2_000_000_000 + (startedAt % 999_999_999)).slice(0, 10);
    const seller = await (async () => {
      const { workspaceId } = await createWorkspace(setupA.store, 'Crash AS4 seller', ctx());
      const { apiKey } = await createApiKey(setupA.store, { workspaceId, environment: 'production', permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
      await issueCredits(creditsEngineFor(setupA.store), { workspaceId, environment: 'production', amount: 1_000_000, expiresAt: null }, ctx());
      await createAspAuthorization(setupA.store, { workspaceId, environment: 'production', tin: sellerTin, email: `crash+${sellerTin}@example.ae`, legalName: 'Crash Seller GmbH' }, ctx());
      const company = await onboard(a, apiKey, sellerTin, 'Crash AS4 ERP');
      return { workspaceId, apiKey, source: `${company.sourceName}:${company.sourceVersion}` };
    })();
    await setupA.close();
    // B: the buyers' workspace and its production companies, each holding its participant id.
    const setupB = await openRuntime(dbB.serviceConfig, { poolSize: 2 });
    const { workspaceId: buyerWorkspace } = await createWorkspace(setupB.store, 'Crash AS4 buyers', ctx());
    const { apiKey: buyerKey } = await createApiKey(setupB.store, { workspaceId: buyerWorkspace, environment: 'production', permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
    for (const [i, tin] of buyerTins.entries()) {
      await createAspAuthorization(setupB.store, { workspaceId: buyerWorkspace, environment: 'production', tin, email: `crash+${tin}@example.ae`, legalName: `Crash Buyer ${i} LLC` }, ctx());
      await onboard(b, buyerKey, tin, `Crash AS4 buyer ${i}`);
    }
    await setupB.close();
    // B serves a receiver only once its read model holds the company: wait for all of them.
    {
      const knexB = knexFactory({ client: PreparingPgClient, connection: b.databaseUrl, pool: { min: 0, max: 1 } });
      try {
        for (const until = Date.now() + 30_000; ; await sleep(200)) {
          const held = await companiesHoldingParticipants(knexB, buyerTins.map((tin) => ({ participantId: `0235:${tin}`, environment: 'production' })));
          if (held.every((companies) => companies.length > 0)) break;
          if (Date.now() > until) throw new Error('the buyers onboarded on B do not show in its read model');
        }
      } finally {
        await knexB.destroy();
      }
    }

    // Load: production German invoices on A, to the buyers on B.
    interface Submission {
      key: string;
      number: string;
      buyer: string;
      documentId: string | null;
    }
    const submissions: Submission[] = [];
    let stopping = false;
    const submitOnce = async (s: Submission, body: string): Promise<void> => {
      for (;;) {
        try {
          const res = await httpRequest(agent, `${a.base}/api/v3/unify`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${seller.apiKey}`, 'new-api': 'true', 'idempotency-key': s.key },
            body,
          });
          const json = res.body ? (JSON.parse(res.body) as { documentId?: string; retryable?: boolean; error?: { retryable?: boolean; code?: string } }) : null;
          const inProgress = res.status === 409 && (json?.retryable === true || json?.error?.retryable === true);
          if (res.status === 200 && json?.documentId) {
            s.documentId = json.documentId;
            return;
          }
          if (res.status < 500 && !inProgress) throw new Error(`submission ${s.number} answered ${res.status}: ${res.body.slice(0, 300)}`);
        } catch (err) {
          if (err instanceof Error && err.message.startsWith('submission ')) throw err;
          /* A is down or was killed mid-request: the same key again */
        }
        await sleep(100);
      }
    };
    const submitClient = async (c: number) => {
      for (let i = 0; !stopping; i++) {
        const number = `AS4CRASH-${runId}-${c}-${i}`;
        const buyer = buyerTins[(c + i) % buyerTins.length]!;
        const s: Submission = { key: `as4-${runId}-${c}-${i}`, number, buyer, documentId: null };
        submissions.push(s);
        const payload = withBuyer(sampleDocument('DE', { lines: 2, documentNumber: number }) as CoreDocument, buyer);
        const body = JSON.stringify({ country: 'DE', environment: 'production', purpose: 'invoicing', source: seller.source, documentType: { base: 'tax_invoice', modifiers: [] }, payload });
        await submitOnce(s, body);
        await sleep(50);
      }
    };
    const clients = Array.from({ length: opts.submitClients }, (_, c) => submitClient(c));
    const clientsDone = Promise.all(clients);
    clientsDone.catch(() => {});

    /** Kills a server and starts it again; answers the seconds it took to be ready. */
    const restart = async (server: BenchServer) => {
      const t = Date.now();
      await server.start(120_000);
      return (Date.now() - t) / 1000;
    };
    for (let k = 0; k < opts.kills; k++) {
      const kind = KILL_ORDER[k % KILL_ORDER.length]!;
      await sleep(opts.minUptimeMs + Math.random() * (opts.maxUptimeMs - opts.minUptimeMs));
      let detail = '';
      let victim: BenchServer;
      if (kind === 'A in window' || kind === 'B after append') {
        victim = kind === 'A in window' ? a : b;
        // The next signed receipt of B: held (or dropped) at the proxy while the victim is killed.
        const fired = new Promise<string>((resolve) => proxy!.arm({ kind: kind === 'A in window' ? 'hold' : 'withhold', fire: async (messageId) => {
          await victim.crash();
          resolve(messageId);
        } }));
        const messageId = await Promise.race([fired, sleep(60_000).then(() => null)]);
        if (messageId === null) throw new Error(`no receipt passed the proxy within 60 s to kill ${kind}`);
        detail = `, receipt of ${messageId.slice(0, 8)}… ${kind === 'A in window' ? 'held' : 'withheld'}`;
      } else {
        victim = kind === 'A at random' ? a : b;
        const inFlight = proxy.inFlight();
        const at = Date.now();
        if (victim === b) for (const ex of inFlight) ex.bKilledAt = at;
        await victim.crash();
        detail = `, ${inFlight.length} AS4 requests in flight`;
      }
      const at = Date.now();
      const back = await restart(victim);
      kills.push({ kind, at, back, detail });
      console.log(`  kill ${k + 1}/${opts.kills}: ${kind} at ${((at - startedAt) / 1000).toFixed(1)} s${detail}, back after ${back.toFixed(1)} s`);
    }
    await sleep(opts.minUptimeMs);
    stopping = true;
    await clientsDone;

    // Every acknowledged document final; then the logs of both sides.
    const storeA = await PostgresEventStore.connect(a.databaseUrl, { poolSize: 2 });
    const storeB = await PostgresEventStore.connect(b.databaseUrl, { poolSize: 2 });
    try {
      const acknowledged = submissions.filter((s) => s.documentId !== null);
      const states = new Map<string, { state: string; events: RecordedEvent[] }>();
      for (const until = Date.now() + 120_000; ; await sleep(1000)) {
        for (const s of acknowledged) {
          if (['final_valid', 'final_invalid'].includes(states.get(s.documentId!)?.state ?? '')) continue;
          const events = await storeA.readStream(documentStream(s.documentId!));
          states.set(s.documentId!, { state: foldRecorded(documentDecider, events).state.state, events });
        }
        if (acknowledged.every((s) => ['final_valid', 'final_invalid'].includes(states.get(s.documentId!)!.state)) || Date.now() > until) break;
      }
      // A: each document's transmission identities (they derive from its UUID), and what its receipt was recorded with.
      const sent = new Map<string, { number: string; buyer: string; messageId: string; sbdhInstanceId: string; recordedMessageId: string | null; attempts: number }>();
      const notFinalValid: string[] = [];
      for (const s of acknowledged) {
        const { state, events } = states.get(s.documentId!)!;
        if (state !== 'final_valid') notFinalValid.push(`${s.number} (${state})`);
        const uuid = decodeEventData(DocumentSubmitted, events[0]!.schemaVersion, events[0]!.data).uuid;
        const ids = transmissionIds(uuid, 'c3', pki.service.commonName);
        const delivered = events.find((e) => e.type === Delivered.type);
        const government = delivered ? (decodeEventData(Delivered, delivered.schemaVersion, delivered.data).government as Record<string, unknown>) : null;
        sent.set(s.documentId!, {
          number: s.number,
          buyer: s.buyer,
          messageId: ids.messageId,
          sbdhInstanceId: ids.instanceId,
          recordedMessageId: typeof government?.messageId === 'string' ? government.messageId : null,
          attempts: foldRecorded(documentDecider, events).state.attempts,
        });
        if (government && (government.network !== 'PEPPOL' || government.status !== 'DELIVERED' || government.sbdhInstanceId !== ids.instanceId)) {
          problems.push(`document ${s.number}: delivered, but not over Peppol as its own transmission (${JSON.stringify(government).slice(0, 200)})`);
        }
      }
      if (notFinalValid.length > 0) problems.push(`${notFinalValid.length} acknowledged documents are not final_valid: ${notFinalValid.slice(0, 5).join(', ')}`);

      // B: the purchases received over AS4.
      const purchases: { documentId: string; as4MessageId: string; sbdhInstanceId: string; receiver: string | null; at: number }[] = [];
      // The invoice number each purchase was stored with (read from the XML by B), apart from any transmission id.
      const numbers = new Map<string, number>();
      for (let after = START; ; ) {
        const page = await storeB.readAll(after, 5000);
        if (page.length === 0) break;
        for (const e of page) {
          if (e.type === PurchaseInvoiceStored.type) {
            const n = String(decodeEventData(PurchaseInvoiceStored, e.schemaVersion, e.data).invoiceNumber);
            numbers.set(n, (numbers.get(n) ?? 0) + 1);
          }
          if (e.type !== PurchaseInvoiceReceived.type) continue;
          const data = decodeEventData(PurchaseInvoiceReceived, e.schemaVersion, e.data);
          const t = (data.transmission ?? {}) as Record<string, unknown>;
          purchases.push({ documentId: data.documentId, as4MessageId: String(t.as4MessageId), sbdhInstanceId: String(t.sbdhInstanceId), receiver: data.receiverParticipantId, at: e.recordedAt.getTime() });
        }
        after = page[page.length - 1]!.position;
      }
      const bySbdh = new Map<string, typeof purchases>();
      for (const p of purchases) bySbdh.set(p.sbdhInstanceId, [...(bySbdh.get(p.sbdhInstanceId) ?? []), p]);
      const expected = new Map([...sent.values()].map((d) => [d.sbdhInstanceId, d]));
      let missing = 0;
      let duplicated = 0;
      let idMismatch = 0;
      for (const d of sent.values()) {
        const got = bySbdh.get(d.sbdhInstanceId) ?? [];
        if (got.length === 0) {
          missing++;
          if (missing <= 5) problems.push(`document ${d.number}: no purchase on B`);
        }
        if (got.length > 1) {
          duplicated += got.length - 1;
          problems.push(`document ${d.number}: ${got.length} purchases on B`);
        }
        // The log of A (the id the receipt was recorded with) and the log of B (the id the purchase was stored under).
        if ((got.length > 0 && got.some((p) => p.as4MessageId !== d.messageId)) || (d.recordedMessageId !== null && d.recordedMessageId !== d.messageId)) {
          idMismatch++;
          if (idMismatch <= 5) problems.push(`document ${d.number}: A recorded the receipt of message ${d.recordedMessageId}, B stored it under ${got.map((p) => p.as4MessageId).join(', ')}, its own id is ${d.messageId}`);
        }
        if (got.length > 0 && got.some((p) => p.receiver !== `0235:${d.buyer}`)) problems.push(`document ${d.number}: stored for ${got.map((p) => p.receiver).join(', ')}, not for 0235:${d.buyer}`);
      }
      // By number: one purchase per document, none other.
      let duplicatedByNumber = 0;
      const sentNumbers = new Set([...sent.values()].map((d) => d.number));
      for (const d of sent.values()) {
        const n = numbers.get(d.number) ?? 0;
        if (n > 1) {
          duplicatedByNumber += n - 1;
          problems.push(`invoice ${d.number}: stored ${n} times on B`);
        }
      }
      const strangers = [...numbers.keys()].filter((n) => !sentNumbers.has(n));
      if (strangers.length > 0) problems.push(`${strangers.length} invoice numbers stored on B that no document of A has: ${strangers.slice(0, 3).join(', ')}`);
      duplicated = Math.max(duplicated, duplicatedByNumber);
      const unexplained = purchases.filter((p) => !expected.has(p.sbdhInstanceId));
      if (unexplained.length > 0) problems.push(`${unexplained.length} purchases on B that no document of A explains: ${unexplained.slice(0, 3).map((p) => p.sbdhInstanceId).join(', ')}`);

      // The wire: every request carried the message id of its document, and the held or withheld ones were sent again.
      const exchanges = proxy.exchanges;
      const knownIds = new Set([...sent.values()].map((d) => d.messageId));
      const foreign = exchanges.filter((e) => !e.messageId || !knownIds.has(e.messageId));
      if (foreign.length > 0) problems.push(`${foreign.length} AS4 requests with a message id that is none of the documents': ${foreign.slice(0, 3).map((e) => e.messageId).join(', ')}`);
      const requestsPerId = new Map<string, number>();
      for (const e of exchanges) if (e.messageId) requestsPerId.set(e.messageId, (requestsPerId.get(e.messageId) ?? 0) + 1);
      const resent = [...requestsPerId.values()].filter((n) => n > 1).length;
      const trapped = exchanges.filter((e) => e.outcome === 'held' || e.outcome === 'withheld');
      for (const e of trapped) {
        const d = [...sent.values()].find((x) => x.messageId === e.messageId);
        if (!d) continue; // reported as foreign above
        if ((requestsPerId.get(e.messageId!) ?? 0) < 2) problems.push(`document ${d.number}: its receipt was ${e.outcome}, yet it was not sent again`);
      }
      if (trapped.length !== kills.filter((k) => k.kind === 'A in window' || k.kind === 'B after append').length) problems.push('a deterministic kill did not hold or withhold a receipt');
      // Random kills of B that fell between its append and its receipt: a request cut by the kill whose purchase B had stored before it.
      const bWindowHits = exchanges.filter((e) => e.bKilledAt !== undefined && purchases.some((p) => p.as4MessageId === e.messageId && p.at <= e.bKilledAt!)).length;
      const aCut = exchanges.filter((e) => e.outcome === 'client-gone').length;

      // B's read models agree: the Connect counts of its workspace.
      let counted = -1;
      for (const until = Date.now() + 30_000; Date.now() < until; await sleep(500)) {
        const r = await httpRequest(agent, `${b.base}/v3/connect/invoices/counts`, { headers: { 'x-api-key': buyerKey, 'x-environment': 'production' } });
        counted = r.status === 200 ? (JSON.parse(r.body) as { data: { purchaseCount: number } }).data.purchaseCount : -1;
        if (counted === purchases.length) break;
      }
      if (counted !== purchases.length) problems.push(`B's counts say ${counted} purchases; its log holds ${purchases.length}`);

      const count = (kind: KillKind) => kills.filter((k) => k.kind === kind).length;
      const maxAttempts = Math.max(0, ...[...sent.values()].map((d) => d.attempts));
      const lines: [string, string | number][] = [
        ['documents acknowledged on A', acknowledged.length],
        ['kills of A: in the window / at random', `${count('A in window')} / ${count('A at random')}`],
        ['kills of B: after append / at random', `${count('B after append')} / ${count('B at random')}`],
        ['random B kills between append and receipt', bWindowHits],
        ['AS4 requests / documents sent again', `${exchanges.length} / ${resent}`],
        ['exchanges A left by a kill', aCut],
        ['final_valid on A', acknowledged.length - notFinalValid.length],
        ['purchases on B', purchases.length],
        ['missing / duplicated purchases', `${missing} / ${duplicated}`],
        ['message ids differing A vs B / new', `${idMismatch} / ${foreign.length}`],
        ['most delivery attempts of a document', maxAttempts],
        ['run time', `${((Date.now() - startedAt) / 1000).toFixed(0)} s`],
      ];
      console.log('\nresults');
      for (const [name, value] of lines) console.log(`  ${name.padEnd(44)} ${value}`);
      console.log(
        `\nAS4 crash: ${acknowledged.length} documents, ${kills.length} kills, ${acknowledged.length - notFinalValid.length} final_valid, ${purchases.length} purchases on B, ${missing} missing, ${duplicated} duplicated, ${resent} resent under their own message id, ${idMismatch + foreign.length} message id problems`,
      );
    } finally {
      await storeA.close();
      await storeB.close();
    }
  } catch (err) {
    problems.push(err instanceof Error ? (err.stack ?? err.message) : String(err));
  } finally {
    await Promise.all([a.stop().catch(() => {}), b.stop().catch(() => {})]);
    agent.destroy();
    await proxy?.close();
    await fixture?.stop();
    fs.rmSync(pkiDir, { recursive: true, force: true });
    await dbB.close();
    await dbA.close();
  }
  return problems;
}

/** The invoice addressed to the buyer's Peppol participant 0235:<tin>. */
function withBuyer(doc: CoreDocument, tin: string): CoreDocument {
  doc.parties!.buyer!.peppolId = tin;
  doc.extensions = { ...(doc.extensions ?? {}), peppol_buyer_peppolIdScheme: '0235' };
  return doc;
}
