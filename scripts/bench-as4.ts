/**
 * Benchmark of the Peppol access point's AS4 transport over loopback, on the real service.
 *
 * The service runs as its own process, configured as an access point (test PKI generated with
 * OpenSSL into var/, embedded PostgreSQL of its own), with one company onboarded in production.
 * This process plays the other access point, in two phases:
 *
 * (a) Receiving. `--messages` distinct messages (each its own AS4 message id, SBDH instance
 *     identifier and invoice number; 5-line PINT AE invoices) are built before the timed window
 *     with the service's own sending code (commands/peppol/as4/message.ts: SBDH, gzip, WS-Security
 *     signature, AES-128-GCM, RSA-OAEP key transport to the service's certificate), then replayed
 *     to POST /as4 by `--connections` concurrent keep-alive connections, so that the load generator
 *     is not what limits the figure. The service does the receiving side of each: MIME,
 *     decryption, signature and certificate chain, decompression, SBDH, the UBL schema, the
 *     durable append of the purchase, the signed receipt (and its read models after it, as in
 *     production). Every answer is kept and, after the window, verified as the sending side
 *     verifies a receipt: signed by the service's certificate (chain to the trust store), for that
 *     message, repeating the digest of each signed part (non-repudiation). CPU per message of the
 *     service, PostgreSQL and this process counts until the read models have caught up.
 * (b) Sending. `--clients` concurrent senders run the service's whole sending side
 *     (commands/peppol/as4/send.ts: building, HTTP via undici, the receipt's verification) for
 *     `--seconds`; this process's CPU per message is the sending cost, printed beside the
 *     submission core's CPU per document measured in the same run (scripts/bench-core.ts).
 *
 * Goals: receiving ≥ 300 messages/s (phase a); sending CPU per message ≤ the core's per document
 * (phase b).
 *
 * `--instances` n > 1 starts n service processes on the one database (HTTP ports --http-port,
 * +1, …), as several instances behind a balancer; phase (a) spreads its connections evenly over
 * them and counts the CPU of all of them as the service's.
 *
 *   npm run bench:as4 -- [--phase a|b|both] [--messages 3000] [--connections 16] [--instances 1] [--seconds 10] [--clients 16]
 *                        [--core-clients 8] [--pg-port 54396] [--http-port 3096]
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { Pool } from 'undici';
import { createTestPki } from '../test/peppol/support/pki.js';
import { commonNameOf, sendAs4, type OutboundMessage } from '../commands/peppol/as4/send.js';
import { buildUserMessage, header, readHttpMessage, type BuiltMessage } from '../commands/peppol/as4/message.js';
import { pemBody, verifySignature } from '../commands/peppol/as4/wss.js';
import { createPeppolTrust, type PeppolTrust } from '../platform/peppol-pki.js';
import { generateInvoiceXml, type CoreDocument } from '../domain/artifacts/index.js';
import { NS, readSignal } from '../domain/peppol/ebms.js';
import { peppolIdentifiersOf, type PeppolIdentifiers } from '../domain/peppol/identifiers.js';
import { buildSbdh } from '../domain/peppol/sbdh.js';
import { sampleDocument } from '../domain/validation/index.js';
import { coresBetween, distribution, fmtCores, fmtInt, fmtMs, httpRequest, positiveInt, renderTable, runServerBenchmark, stopServerOnExit, BenchServer, RunDatabase, type CpuSnapshot } from './bench-support.js';
import { measureSubmissionCore, printCore, printTargets, coreMsPerDoc } from './bench-core.js';

const TARGET_RECEIVED_PER_S = 300;

const program = new Command()
  .name('bench:as4')
  .option('--phase <which>', 'a (receiving), b (sending with the core) or both', 'both')
  .option('--messages <n>', 'messages replayed in the timed window of the receiving phase', positiveInt(1_000_000), 3000)
  .option('--warmup-messages <n>', 'messages replayed before the window (not measured)', positiveInt(100_000), 300)
  .option('--connections <n>', 'concurrent keep-alive connections replaying the messages', positiveInt(256), 16)
  .option('--instances <n>', 'service instances on the one database (phase a spreads its connections over them, as a balancer would)', positiveInt(8), 1)
  .option('--seconds <n>', 'measured seconds of the sending phase', positiveInt(600), 10)
  .option('--clients <n>', 'concurrent senders of the sending phase', positiveInt(256), 16)
  .option('--core-clients <n>', 'concurrent callers of the submission core', positiveInt(256), 8)
  .option('--core-seconds <n>', 'measured seconds of the submission core', positiveInt(600), 5)
  .option('--pg-port <port>', "port of the benchmark's embedded PostgreSQL", '54396')
  .option('--http-port <port>', 'port of the benchmarked service', '3096')
  .parse();
const opts = program.opts<{
  phase: 'a' | 'b' | 'both';
  messages: number;
  warmupMessages: number;
  connections: number;
  instances: number;
  seconds: number;
  clients: number;
  coreClients: number;
  coreSeconds: number;
  pgPort: string;
  httpPort: string;
}>();
const problems: string[] = [];

async function productionCompany(server: BenchServer): Promise<string> {
  const { workspaceId } = await server.admin<{ workspaceId: string }>('workspace', 'create', '--name', 'AS4 bench buyer');
  const { apiKey } = await server.admin<{ apiKey: string }>('key', 'create', '--workspace', workspaceId, '--environment', 'production', '--permission', 'read_write', '--role', 'owner');
  const tin = `1${String(Date.now()).slice(-9)}`;
  const email = `bench+${tin}@example.ae`;
  await server.admin('authorization', 'create', '--workspace', workspaceId, '--environment', 'production', '--tin', tin, '--email', email);
  const res = await httpRequest(undefined, `${server.base}/v3/connect/companies`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      sourceName: 'AS4 bench ERP',
      sourceVersion: 'v1',
      countryCode: 'AE',
      tin,
      contactPersonEmail: email,
      contactPersonName: 'Bench Runner',
      contactPersonMobile: '+971501234567',
      branchName: 'Head office',
      platformEnvironment: 'production',
    }),
  });
  if (res.status !== 201) throw new Error(`onboarding the receiving company failed: ${res.status} ${res.body.slice(0, 500)}`);
  return tin;
}

interface Setup {
  server: BenchServer;
  /** Every instance of the service (the first is `server`); phase (a) spreads its connections over them. */
  instances: BenchServer[];
  template: string;
  ids: PeppolIdentifiers;
  sender: { privateKeyPem: string; certificatePem: string; chainPem: string[]; commonName: string };
  serviceCertificatePem: string;
  trust: PeppolTrust;
  runTag: string;
  sequence: number;
}

/** The next distinct invoice in its SBDH (own invoice number, instance id, message id). */
function nextPayload(s: Setup): { n: string; payload: Buffer } {
  const n = `AS4-${s.runTag}-${++s.sequence}`;
  const xml = s.template.replaceAll('AS4-BENCH-NUMBER', n);
  return { n, payload: Buffer.from(buildSbdh(xml, s.ids, { instanceId: n, createdAt: new Date(), countryC1: 'AE' })) };
}

/** CPU seconds so far; `server` is every instance's together. */
function cpuOf(instances: BenchServer[]): CpuSnapshot {
  const [first, ...others] = instances;
  const snapshot = first!.cpu();
  for (const other of others) snapshot.server += other.cpu().server;
  return snapshot;
}

/** CPU seconds of the service after its read models caught up: its CPU stays near idle for a moment. */
async function settled(instances: BenchServer[]): Promise<CpuSnapshot> {
  let last = cpuOf(instances);
  for (let i = 0; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuOf(instances);
    if ((now.server - last.server) / ((now.at - last.at) / 1000) < 0.05) return last;
    last = now;
  }
  return last;
}

interface Answer {
  built: BuiltMessage;
  status: number;
  contentType: string | undefined;
  bytes: Buffer;
}

/** Checks an answer as the sending side checks a receipt (commands/peppol/as4/send.ts); null when it holds. */
async function receiptProblem(s: Setup, a: Answer): Promise<string | null> {
  if (a.status !== 200) return `HTTP ${a.status}`;
  const doc = readHttpMessage(a.contentType, a.bytes, { maxPartBytes: 1024 * 1024 }).doc;
  const messaging = header(doc, NS.eb, 'Messaging');
  const signal = messaging ? readSignal(messaging) : null;
  if (!signal) return 'neither a receipt nor an error';
  if (signal.kind === 'error') return `ebMS error ${signal.errors.map((e) => `${e.code} ${e.description}`).join('; ')}`;
  const signature = header(doc, NS.wsse, 'Security')?.getElementsByTagNameNS(NS.ds, 'Signature').item(0);
  if (!signature) return 'the receipt is not signed';
  const signer = verifySignature(doc, signature, () => null).certificatePem;
  if (pemBody(signer) !== pemBody(s.serviceCertificatePem)) return "the receipt is not signed by the service's certificate";
  const verdict = await s.trust.verifyCertificateOnline(signer, new Date(), 'ap');
  if (!verdict.ok) return `the receipt's certificate is not trusted: ${verdict.reason}`;
  if (signal.refToMessageId !== a.built.messageId) return `the receipt refers to ${signal.refToMessageId}, not ${a.built.messageId}`;
  const missing = a.built.references.filter((sent) => !signal.references.some((r) => r.uri === sent.uri && r.digestValue === sent.digest));
  if (missing.length > 0) return `the receipt lacks the digest of ${missing.map((r) => r.uri).join(', ')}`;
  return null;
}

/** Phase (a): pre-built messages replayed over keep-alive connections; every receipt verified afterwards. */
async function receivingPhase(s: Setup): Promise<{ perSecond: number; msPerMessage: number } | null> {
  const toParty = commonNameOf(s.serviceCertificatePem);
  const build = (count: number): BuiltMessage[] =>
    Array.from({ length: count }, () => {
      const { n, payload } = nextPayload(s);
      return buildUserMessage(
        {
          processId: s.ids.processId,
          documentTypeId: s.ids.documentTypeId,
          originalSender: s.ids.sender,
          finalRecipient: s.ids.receiver,
          messageId: `${n}@bench`,
          conversationId: n,
          timestamp: new Date().toISOString(),
          fromParty: s.sender.commonName,
          toParty,
        },
        payload,
        s.sender,
        s.serviceCertificatePem,
      );
    });
  const t0 = performance.now();
  const warmup = build(opts.warmupMessages);
  const messages = build(opts.messages);
  console.log(
    `(a) receiving: ${fmtInt(warmup.length + messages.length)} distinct messages built in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
      `(${fmtInt(messages[0]!.body.length)} bytes each on the wire); ${fmtInt(warmup.length)} to warm up, then ${fmtInt(messages.length)} ` +
      `replayed by ${opts.connections} keep-alive connections`,
  );
  // Connection c talks to instance c mod n: a balancer's even spread over the instances.
  const pools = s.instances.map((instance, i) => new Pool(instance.base, { connections: Math.ceil((opts.connections - i) / s.instances.length), pipelining: 1 }));
  const replay = async (list: BuiltMessage[], samples: number[] | null): Promise<Answer[]> => {
    const answers: Answer[] = new Array(list.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: opts.connections }, async (_, c) => {
        const pool = pools[c % pools.length]!;
        for (let i = next++; i < list.length; i = next++) {
          const built = list[i]!;
          const t = performance.now();
          const res = await pool.request({ path: '/as4', method: 'POST', headers: { 'content-type': built.contentType, 'mime-version': '1.0' }, body: built.body });
          const bytes = Buffer.from(await res.body.arrayBuffer());
          samples?.push(performance.now() - t);
          const type = res.headers['content-type'];
          answers[i] = { built, status: res.statusCode, contentType: Array.isArray(type) ? type[0] : type, bytes };
        }
      }),
    );
    return answers;
  };
  try {
    const warmed = await replay(warmup, null);
    const first = warmed.length ? await receiptProblem(s, warmed[0]!) : null;
    if (first) {
      problems.push(`a warm-up message was not received: ${first}`);
      return null;
    }
    await settled(s.instances);
    const samples: number[] = [];
    const before = cpuOf(s.instances);
    const answers = await replay(messages, samples);
    const end = cpuOf(s.instances);
    const after = await settled(s.instances);
    const wall = (end.at - before.at) / 1000;
    const perSecond = messages.length / wall;
    const latency = distribution(samples);
    const msPer = (seconds: number) => (seconds * 1000) / messages.length;
    const serviceMs = msPer(after.server - before.server);
    const pgMs = msPer(after.postgres - before.postgres);
    const generatorMs = msPer(end.client - before.client);
    // After the window: every answer is a receipt that verifies.
    let verified = 0;
    for (const a of answers) {
      const problem = await receiptProblem(s, a);
      if (problem) {
        if (problems.length < 5) problems.push(`message ${a.built.messageId}: ${problem}`);
      } else verified++;
    }
    const where = s.instances.length > 1 ? ` by ${s.instances.length} service instances on one database` : '';
    console.log(`\n(a) AS4 receiving over loopback${where}: ${fmtInt(messages.length)} messages in ${wall.toFixed(1)} s; receipts verified afterwards: ${fmtInt(verified)} of ${fmtInt(answers.length)}`);
    console.log(
      renderTable(
        ['', 'messages/s', 'p50', 'p99', 'CPU cores generator / service / pg / other (window)', 'CPU per message (until the read models caught up)'],
        [
          [
            `replay → receive → signed receipt (${opts.connections} connections)`,
            fmtInt(perSecond),
            fmtMs(latency.p50),
            fmtMs(latency.p99),
            fmtCores(coresBetween(before, end)),
            `service ${serviceMs.toFixed(2)} ms + pg ${pgMs.toFixed(2)} ms = ${(serviceMs + pgMs).toFixed(2)} ms; generator ${generatorMs.toFixed(2)} ms`,
          ],
        ],
      ),
    );
    return { perSecond, msPerMessage: serviceMs + pgMs };
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
}

/** Phase (b): the service's whole sending side (sendAs4) against the service, for `--seconds`. */
async function sendingPhase(s: Setup, pkiSender: Setup['sender']): Promise<{ sendingMs: number; perSecond: number } | null> {
  const deps = { identity: pkiSender, trust: s.trust, now: () => new Date(), timeoutMs: 30_000 };
  const message = (): OutboundMessage => {
    const { n, payload } = nextPayload(s);
    return {
      endpointUrl: `${s.server.base}/as4`,
      receiverCertificatePem: s.serviceCertificatePem,
      messageId: `${n}@bench`,
      conversationId: n,
      header: { processId: s.ids.processId, documentTypeId: s.ids.documentTypeId, originalSender: s.ids.sender, finalRecipient: s.ids.receiver },
      payload,
    };
  };
  const run = async (ms: number, samples: number[] | null) => {
    const deadline = performance.now() + ms;
    let done = 0;
    await Promise.all(
      Array.from({ length: opts.clients }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const outcome = await sendAs4(deps, message());
          if (outcome.kind !== 'receipt' || outcome.duplicate) {
            problems.push(`a message was not received: ${JSON.stringify(outcome).slice(0, 300)}`);
            return;
          }
          samples?.push(performance.now() - t0);
          done++;
        }
      }),
    );
    return done;
  };
  console.log(`\n(b) sending: warm-up, then ${opts.seconds} s of ${opts.clients} concurrent senders (the service's sendAs4, each receipt verified)`);
  await run(2000, null);
  if (problems.length) return null;
  await settled(s.instances);
  const samples: number[] = [];
  const before = cpuOf(s.instances);
  const messages = await run(opts.seconds * 1000, samples);
  const after = cpuOf(s.instances);
  if (problems.length) return null;
  const wall = (after.at - before.at) / 1000;
  const latency = distribution(samples);
  const msPer = (seconds: number) => (seconds * 1000) / messages;
  const sendingMs = msPer(after.client - before.client);
  const receivingMs = msPer(after.server - before.server);
  const pgMs = msPer(after.postgres - before.postgres);
  console.log(
    renderTable(
      ['', 'messages/s', 'p50', 'p99', 'CPU cores sender / service / pg / other', 'CPU per message'],
      [
        [
          'sendAs4 → receive → signed receipt',
          fmtInt(messages / wall),
          fmtMs(latency.p50),
          fmtMs(latency.p99),
          fmtCores(coresBetween(before, after)),
          `sending ${sendingMs.toFixed(2)} ms; receiving ${receivingMs.toFixed(2)} ms + pg ${pgMs.toFixed(2)} ms (window)`,
        ],
      ],
    ),
  );
  return { sendingMs, perSecond: messages / wall };
}

async function main(server: BenchServer, pkiDir: string): Promise<void> {
  const pki = await createTestPki(pkiDir);
  const accessPoint = {
    PEPPOL_KEY: pki.service.keyPath,
    PEPPOL_CERTIFICATE: pki.service.certPath,
    PEPPOL_TRUSTSTORE: pki.caCertPath,
    PEPPOL_SML_ZONE: 'acc.edelivery.tech.ec.europa.eu',
    PEPPOL_ENDPOINT_URL: `${server.base}/as4`,
  };
  Object.assign(server.env, accessPoint);
  console.log(`starting the service on ${server.base} (embedded PostgreSQL in ${server.options.pgDir}, port ${server.options.pgPort}, database ${database.name}, dropped at the end)`);
  await server.start(120_000);
  await database.dropStale(server);
  // Further instances join the first one's database, as several instances behind a balancer do.
  for (const extra of extraInstances) {
    Object.assign(extra.env, accessPoint);
    console.log(`starting another instance of the service on ${extra.base} (the same database)`);
    await extra.start(120_000);
  }
  const tin = await productionCompany(server);
  // One invoice serialised once; each message gets its own number (a distinct purchase).
  const doc = sampleDocument('AE', { lines: 5, documentNumber: 'AS4-BENCH-NUMBER' }) as CoreDocument;
  doc.parties!.buyer!.peppolId = tin;
  const template = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document: doc, uuid: 'as4-bench' }).xml;
  const sender = { privateKeyPem: pki.service2.keyPem, certificatePem: pki.service2.certPem, chainPem: [], commonName: pki.service2.commonName };
  const setup: Setup = {
    server,
    instances: [server, ...extraInstances],
    template,
    ids: peppolIdentifiersOf(template),
    sender,
    serviceCertificatePem: pki.service.certPem,
    trust: createPeppolTrust([pki.caCertPem]),
    runTag: Date.now().toString(36),
    sequence: 0,
  };
  console.log(`5-line PINT AE invoices, ${Buffer.byteLength(template)} bytes of UBL each\n`);
  const receiving = opts.phase === 'b' ? null : await receivingPhase(setup);
  if (problems.length || opts.phase === 'a') return;
  const sending = await sendingPhase(setup, sender);
  if (!sending) return;
  const core = await measureSubmissionCore(server, opts.coreClients, opts.coreSeconds);
  printCore(core);
  const machineCores = 2;
  printTargets('targets', [
    ...(receiving
      ? [{ name: 'receiving (messages/s, phase a: pre-built messages replayed)', figure: fmtInt(receiving.perSecond), target: `≥ ${TARGET_RECEIVED_PER_S}`, met: receiving.perSecond >= TARGET_RECEIVED_PER_S }]
      : []),
    {
      name: 'sending vs the submission core (CPU per document, phase b)',
      figure: `${sending.sendingMs.toFixed(2)} ms vs ${coreMsPerDoc(core).toFixed(2)} ms`,
      target: 'sending ≤ core',
      met: sending.sendingMs <= coreMsPerDoc(core),
    },
  ]);
  console.log(
    `  capacity on ${machineCores} cores from CPU per message alone: ${receiving ? `receiving (service + pg) ≈ ${fmtInt((machineCores * 1000) / receiving.msPerMessage)}/s, ` : ''}` +
      `sending ≈ ${fmtInt((machineCores * 1000) / sending.sendingMs)}/s; submission core ${fmtInt(core.perSecond)}/s`,
  );
}

const pgDir = 'var/pg-bench-as4';
const pkiDir = path.join('var', `bench-as4-pki-${process.pid}`);
const database = new RunDatabase('bench_as4');
const server = new BenchServer({ pgDir, pgPort: Number(opts.pgPort), httpPort: Number(opts.httpPort), env: { LOG_LEVEL: 'warn', EMBEDDED_PG_DATABASE: database.name } });
const extraInstances = Array.from(
  { length: opts.instances - 1 },
  (_, i) => new BenchServer({ pgDir, pgPort: Number(opts.pgPort), httpPort: Number(opts.httpPort) + 1 + i, env: { LOG_LEVEL: 'warn', EMBEDDED_PG_DATABASE: database.name } }),
);
const cleanup = async () => {
  await database.drop(server);
  // The others first: the first instance stops the embedded PostgreSQL it started.
  await Promise.all(extraInstances.map((extra) => extra.stop()));
  await server.stop();
  fs.rmSync(pkiDir, { recursive: true, force: true });
};
stopServerOnExit(server, cleanup);
process.on('exit', () => extraInstances.forEach((extra) => extra.killNow()));
void runServerBenchmark(() => main(server, pkiDir), problems, cleanup);
