/**
 * Benchmark of the Peppol access point's AS4 transport over loopback, on the real service:
 *
 * The service runs as its own process, configured as an access point (test PKI generated with
 * OpenSSL into var/, embedded PostgreSQL of its own), with one company onboarded in production.
 * This process plays the other access point: `--clients` concurrent senders run the service's own
 * sending side (commands/peppol/as4/send.ts: SBDH, gzip, AES-128-GCM, RSA-OAEP key transport,
 * WS-Security signature, HTTP, and the signed receipt's verification) against the service's
 * POST /as4, each message a distinct invoice (5 lines) to the onboarded company. The service does
 * the receiving side for each: MIME, decryption, signature and certificate chain check,
 * decompression, SBDH check, the durable append of the purchase, the signed receipt (and its read
 * models after it, as in production).
 *
 * Figures: messages/s, latency, and CPU per message — this process (= the sending side) and the
 * service with PostgreSQL (= the receiving side); then the submission core alone in the same run
 * (scripts/bench-core.ts), so the sending rate can be set beside what the submission path feeds.
 * Goals: receiving ≥ 300 messages/s; sending at least as fast as the submission core.
 *
 *   npm run bench:as4 -- [--seconds 10] [--clients 16] [--core-clients 8] [--pg-port 54396] [--http-port 3096]
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { createTestPki } from '../test/peppol/support/pki.js';
import { sendAs4, type OutboundMessage } from '../commands/peppol/as4/send.js';
import { createPeppolTrust } from '../platform/peppol-pki.js';
import { generateInvoiceXml, type CoreDocument } from '../domain/artifacts/index.js';
import { peppolIdentifiersOf } from '../domain/peppol/identifiers.js';
import { buildSbdh } from '../domain/peppol/sbdh.js';
import { sampleDocument } from '../domain/validation/index.js';
import { coresBetween, distribution, fmtCores, fmtInt, fmtMs, httpRequest, positiveInt, renderTable, runServerBenchmark, stopServerOnExit, BenchServer } from './bench-support.js';
import { measureSubmissionCore, printCore, printTargets, coreMsPerDoc } from './bench-core.js';

const TARGET_RECEIVED_PER_S = 300;

const program = new Command()
  .name('bench:as4')
  .option('--seconds <n>', 'measured seconds of the AS4 phase', positiveInt(600), 10)
  .option('--clients <n>', 'concurrent sending access point connections', positiveInt(256), 16)
  .option('--core-clients <n>', 'concurrent callers of the submission core', positiveInt(256), 8)
  .option('--core-seconds <n>', 'measured seconds of the submission core', positiveInt(600), 5)
  .option('--pg-port <port>', "port of the benchmark's embedded PostgreSQL", '54396')
  .option('--http-port <port>', "port of the benchmarked service", '3096')
  .parse();
const opts = program.opts<{ seconds: number; clients: number; coreClients: number; coreSeconds: number; pgPort: string; httpPort: string }>();
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

async function main(server: BenchServer, pkiDir: string): Promise<void> {
  const pki = await createTestPki(pkiDir);
  Object.assign(server.env, {
    PEPPOL_KEY: pki.service.keyPath,
    PEPPOL_CERTIFICATE: pki.service.certPath,
    PEPPOL_TRUSTSTORE: pki.caCertPath,
    PEPPOL_SML_ZONE: 'acc.edelivery.tech.ec.europa.eu',
    PEPPOL_ENDPOINT_URL: `${server.base}/as4`,
  });
  console.log(`starting the service on ${server.base} (embedded PostgreSQL in ${server.options.pgDir}, port ${server.options.pgPort})`);
  await server.start(120_000);
  const tin = await productionCompany(server);
  // One invoice serialised once; each message gets its own number (a distinct purchase).
  const doc = sampleDocument('AE', { lines: 5, documentNumber: 'AS4-BENCH-NUMBER' }) as CoreDocument;
  doc.parties!.buyer!.peppolId = tin;
  const template = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document: doc, uuid: 'as4-bench' }).xml;
  const ids = peppolIdentifiersOf(template);
  const sender = { identity: { privateKeyPem: pki.service2.keyPem, certificatePem: pki.service2.certPem, chainPem: [], commonName: pki.service2.commonName }, trust: createPeppolTrust([pki.caCertPem]), now: () => new Date(), timeoutMs: 30_000 };
  const runTag = Date.now().toString(36);
  let sequence = 0;
  const message = (): OutboundMessage => {
    const n = `AS4-${runTag}-${++sequence}`;
    const xml = template.replaceAll('AS4-BENCH-NUMBER', n);
    return {
      endpointUrl: `${server.base}/as4`,
      receiverCertificatePem: pki.service.certPem,
      messageId: `${n}@bench`,
      conversationId: n,
      header: { processId: ids.processId, documentTypeId: ids.documentTypeId, originalSender: ids.sender, finalRecipient: ids.receiver },
      payload: Buffer.from(buildSbdh(xml, ids, { instanceId: n, createdAt: new Date(), countryC1: 'AE' })),
    };
  };
  const run = async (ms: number, samples: number[] | null) => {
    const deadline = performance.now() + ms;
    let done = 0;
    await Promise.all(
      Array.from({ length: opts.clients }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const outcome = await sendAs4(sender, message());
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
  console.log(`warm-up, then ${opts.seconds} s of ${opts.clients} concurrent senders (5-line PINT AE invoices, ${Buffer.byteLength(template)} bytes of UBL each)`);
  await run(2000, null);
  if (problems.length) return;
  const samples: number[] = [];
  const before = server.cpu();
  const messages = await run(opts.seconds * 1000, samples);
  const after = server.cpu();
  const wall = (after.at - before.at) / 1000;
  const cores = coresBetween(before, after);
  const perSecond = messages / wall;
  const latency = distribution(samples);
  const msPer = (seconds: number) => (seconds * 1000) / messages;
  const sendingMs = msPer(after.client - before.client);
  const receivingMs = msPer(after.server - before.server);
  const pgMs = msPer(after.postgres - before.postgres);
  console.log(`\nAS4 over loopback: ${fmtInt(messages)} messages in ${wall.toFixed(1)} s, every receipt verified`);
  console.log(
    renderTable(
      ['', 'messages/s', 'p50', 'p99', 'CPU cores sender / service / pg / other', 'CPU per message'],
      [
        [
          'send → receive → signed receipt',
          fmtInt(perSecond),
          fmtMs(latency.p50),
          fmtMs(latency.p99),
          fmtCores(cores),
          `sending ${sendingMs.toFixed(2)} ms; receiving ${receivingMs.toFixed(2)} ms + pg ${pgMs.toFixed(2)} ms = ${(receivingMs + pgMs).toFixed(2)} ms`,
        ],
      ],
    ),
  );
  const core = await measureSubmissionCore(server, opts.coreClients, opts.coreSeconds);
  printCore(core);
  // On 2 cores each side's rate if it had the machine alone: cores / CPU per message.
  const machineCores = 2;
  const sendCapacity = (machineCores * 1000) / sendingMs;
  const receiveCapacity = (machineCores * 1000) / (receivingMs + pgMs);
  printTargets('targets', [
    { name: 'receiving (messages/s, measured with the sender on the same machine)', figure: fmtInt(perSecond), target: `≥ ${TARGET_RECEIVED_PER_S}`, met: perSecond >= TARGET_RECEIVED_PER_S },
    {
      name: 'sending vs the submission core (CPU per document)',
      figure: `${sendingMs.toFixed(2)} ms vs ${coreMsPerDoc(core).toFixed(2)} ms`,
      target: 'sending ≤ core',
      met: sendingMs <= coreMsPerDoc(core),
    },
  ]);
  console.log(`  capacity on ${machineCores} cores from CPU per message alone: sending ≈ ${fmtInt(sendCapacity)}/s, receiving ≈ ${fmtInt(receiveCapacity)}/s; submission core ${fmtInt(core.perSecond)}/s`);
}

const pgDir = 'var/pg-bench-as4';
const pkiDir = path.join('var', `bench-as4-pki-${process.pid}`);
const server = new BenchServer({ pgDir, pgPort: Number(opts.pgPort), httpPort: Number(opts.httpPort), env: { LOG_LEVEL: 'warn' } });
const cleanup = async () => {
  await server.stop();
  fs.rmSync(pkiDir, { recursive: true, force: true });
};
stopServerOnExit(server, cleanup);
void runServerBenchmark(() => main(server, pkiDir), problems, cleanup);
