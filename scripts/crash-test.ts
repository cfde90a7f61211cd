/**
 * `npm run test:crash`: exactly once under crashes (issue 13). The service runs as a child
 * process on its own embedded PostgreSQL (var/pg-crash, a fresh database per run) under submit
 * and credit-allowance-write load from concurrent clients, each of which retries every
 * unanswered request with the same Idempotency-Key; the child is killed with SIGKILL at random
 * instants several times and started again. Afterwards:
 * - every key's later answers (a replay right after the first answer, and one at the end) equal
 *   its first answer (status, documentId / allowance version);
 * - every acknowledged document exists in the log and reaches a final state;
 * - no document number has two live documents, no key has two documents, no document was stored
 *   that no key answered with, and no rejected document exists (every payload is valid);
 * - the Connect counts equal the distinct documents stored;
 * - the ledger holds each allowance change once (one event per answered key, none for a 412);
 * - each document's credits are metered once: one reservation per document and credits stream
 *   (the submitting company has an allowance), and each final_valid document consumed exactly once;
 * - a rebuild of the documents and credits read models equals the live ones.
 * With --saudi the submissions are Saudi simplified invoices of a seller whose EGS unit holds a
 * (test CA's) production CSID, and besides: the unit's ZATCA chain holds every final_valid
 * document exactly once, its counters run 1..n without a gap, each link's previous hash is the
 * hash of the link before (no fork), and each delivered XML carries a stamp that verifies and the
 * counter and previous hash of its link.
 * With --as4: two access points exchanging over AS4, each killed in turn (scripts/crash-test-as4.ts).
 * Prints the figures of the issue; exits 1 when a check fails.
 *
 *   npm run test:crash [-- --kills 5 --submit-clients 12 --credit-clients 4 --saudi | --as4 --buyers 3]
 * CRASH_TEST_PG_PORT (default 54419): port of its embedded PostgreSQL.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { PostgresEventStore } from '../platform/eventstore/postgres.js';
import { START, type RecordedEvent } from '../platform/eventstore/port.js';
import { foldRecorded } from '../commands/execute.js';
import { documentDecider } from '../domain/document/document.js';
import { sampleDocument } from '../domain/validation/index.js';
import knexFactory from 'knex';
import { PreparingPgClient } from '../platform/prepared-statements.js';
import { projectionByName } from '../projections/index.js';
import { rebuildProjection } from '../projections/rebuild.js';
import { BenchServer, freePort, httpRequest, openFreshBenchDatabase, positiveInt, reportProblems } from './bench-support.js';
import { createAspAuthorization } from '../commands/connect/settings.js';
import { creditsEngineFor } from '../commands/credits/engine.js';
import { issueCredits } from '../commands/credits/pool.js';
import { createApiKey, createWorkspace } from '../commands/workspaces.js';
import { openRuntime } from '../commands/runtime.js';
import { createEgsCsr, egsSecretBox, generateEgsKey, recordComplianceChecksPassed, recordComplianceCsid, recordProductionCsid, registerEgsUnit, type EgsUnitDeps } from '../commands/zatca/egs-units.js';
import { ZATCA_INITIAL_PREVIOUS_INVOICE_HASH } from '../domain/artifacts/index.js';
import { ZatcaInvoiceChained, zatcaUnitChainStream, type ZatcaLink } from '../domain/delivery/zatca-chain.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { verifyStamp } from '../domain/zatca/stamp.js';
import { binarySecurityToken, openTestCa } from '../test/zatca/test-ca.js';
import { runAs4CrashTest } from './crash-test-as4.js';

const program = new Command('crash-test')
  .option('--kills <n>', 'SIGKILLs of the server', positiveInt(50), 5)
  .option('--submit-clients <n>', 'concurrent submitting clients', positiveInt(256), 12)
  .option('--credit-clients <n>', 'concurrent allowance-writing clients (one company each)', positiveInt(64), 4)
  .option('--min-uptime-ms <n>', 'least time between a restart and the next kill', positiveInt(), 2500)
  .option('--max-uptime-ms <n>', 'most time between a restart and the next kill', positiveInt(), 7000)
  .option('--saudi', 'submit stamped Saudi invoices of one EGS unit and check its chain')
  .option('--as4', 'two access points exchanging over AS4, each killed in turn (scripts/crash-test-as4.ts)')
  .option('--buyers <n>', 'with --as4: buyer companies on the receiving access point', positiveInt(64), 3)
  .parse();
const opts = program.opts<{ kills: number; submitClients: number; creditClients: number; minUptimeMs: number; maxUptimeMs: number; saudi?: boolean; as4?: boolean; buyers: number }>();
if (opts.as4 && opts.saudi) program.error('--as4 and --saudi are separate modes: give one');

/** The seller of the Saudi sample document, whose EGS unit stamps the --saudi submissions. */
const SAUDI_SELLER_VAT = '300000000000003';

/** Onboards an EGS unit for the Saudi sample seller, its CSIDs issued by a local test CA; answers its id. */
async function onboardSaudiUnit(deps: EgsUnitDeps, workspaceId: string, ctx: () => { now: Date; actor: string }): Promise<string> {
  const ca = openTestCa();
  try {
    const egsUnitId = randomUUID();
    await registerEgsUnit(deps, {
      egsUnitId,
      workspaceId,
      environment: 'sandbox',
      sellerVat: SAUDI_SELLER_VAT,
      subject: { commonName: 'TST-crash-test', serialNumber: `1-Ledger|2-crash-test|3-${egsUnitId}`, organizationUnit: 'Riyadh', organizationName: 'Najd Supplies Co.', country: 'SA', invoiceType: '0100', location: 'Riyadh', industry: 'Retail' },
    }, ctx());
    const { keyId } = await generateEgsKey(deps, egsUnitId, ctx());
    const { csrPem } = await createEgsCsr(deps, egsUnitId, ctx());
    await recordComplianceCsid(deps, egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 'compliance', requestId: 'crash-c' }, ctx());
    await recordComplianceChecksPassed(deps, egsUnitId, keyId, ctx());
    await recordProductionCsid(deps, egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 'production', requestId: 'crash-p' }, ctx());
    return egsUnitId;
  } finally {
    ca.close();
  }
}

/** The problems of an EGS unit's chain: counters 1..n, previous hashes linked, documents once, stamps verifying. */
async function saudiChainProblems(store: PostgresEventStore, egsUnitId: string, finalValid: ReadonlySet<string>): Promise<{ links: number; problems: string[] }> {
  const problems: string[] = [];
  const links = (await store.readStream(zatcaUnitChainStream(egsUnitId))).map((e) => decodeEventData(ZatcaInvoiceChained, e.schemaVersion, e.data) as ZatcaLink);
  const seen = new Map<string, number>();
  links.forEach((link, i) => {
    if (link.counter !== i + 1) problems.push(`chain link ${i + 1} has counter ${link.counter}`);
    const previous = i === 0 ? ZATCA_INITIAL_PREVIOUS_INVOICE_HASH : links[i - 1]!.invoiceHash;
    if (link.previousInvoiceHash !== previous) problems.push(`chain link ${i + 1} (${link.documentId}) names a previous hash that is not link ${i}'s: a fork`);
    seen.set(link.documentId, (seen.get(link.documentId) ?? 0) + 1);
  });
  for (const [documentId, n] of seen) if (n > 1) problems.push(`document ${documentId} is chained ${n} times`);
  for (const documentId of finalValid) if (!seen.has(documentId)) problems.push(`final_valid document ${documentId} is not in its EGS unit's chain`);
  for (const link of links) {
    if (!finalValid.has(link.documentId)) continue;
    const delivered = (await store.readStream(`document-${link.documentId}`)).find((e) => e.type === 'DocumentDelivered');
    const sha = (delivered?.data as { xml?: { sha256: string } | null } | undefined)?.xml?.sha256;
    const xml = sha ? (await store.readArtifacts([sha])).get(sha)?.toString('utf8') : undefined;
    if (!xml) {
      problems.push(`document ${link.documentId}: no delivered XML`);
      continue;
    }
    const stamp = verifyStamp(xml);
    if (stamp.length > 0) problems.push(`document ${link.documentId}: ${stamp.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
    if (!xml.includes(`<cbc:ID>ICV</cbc:ID><cbc:UUID>${link.counter}</cbc:UUID>`) || !xml.includes(`>${link.previousInvoiceHash}</cbc:EmbeddedDocumentBinaryObject>`)) {
      problems.push(`document ${link.documentId}: the delivered XML does not carry its link's counter and previous hash`);
    }
  }
  return { links: links.length, problems };
}

interface Answer {
  status: number;
  /** What must not change on a replay: the document id, or the allowance version / error code. */
  identity: string;
  at: number;
}

interface KeyRecord {
  kind: 'submit' | 'credit';
  key: string;
  first: Answer | null;
  replays: Answer[];
  /** When the last attempt failed without an answer (the server was down or killed), if one did. */
  lastFailureAt: number | null;
  documentNumber?: string;
  companyId?: string;
}



async function main(): Promise<void> {
  const problems: string[] = [];
  const startedAt = Date.now();
  const pgPort = process.env.CRASH_TEST_PG_PORT ?? '54419';
  // The embedded PostgreSQL is started (or joined) by this process, so the killed servers only join it.
  const db = await openFreshBenchDatabase({ prefix: 'einvoicing_crash', startedAt, pgDir: 'var/pg-crash', pgPort });
  const httpPort = await freePort();
  const server = new BenchServer({
    pgDir: 'var/pg-crash',
    pgPort: Number(pgPort),
    httpPort,
    env: { EMBEDDED_PG_DATABASE: db.database, LOG_LEVEL: 'error', CONNECT_RATE_LIMIT_PER_SECOND: '0', DELIVERY_WORKER_INTERVAL_MS: '250' },
  });
  process.on('exit', () => server.killNow());
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const base = server.base;
  const records: KeyRecord[] = [];
  const restarts: number[] = []; // when the server answered /readyz again after each kill
  const kills: number[] = [];
  const waits: number[] = [];
  const busyWaits: number[] = [];
  const slowKeys: string[] = [];
  // Incarnations of the server: a kill starts the next; backAt[g] is when incarnation g first answered.
  let generation = 0;
  const backAt: (number | undefined)[] = [];
  let serverUp = false;

  try {
    console.log(`crash test: embedded PostgreSQL in var/pg-crash (port ${pgPort}), database ${db.database}; server on port ${httpPort}`);
    await server.start();
    serverUp = true;
    const runId = startedAt.toString(36);
    // The tenant, written through the commands in this process (the server reads it from the log).
    const setup = await openRuntime(db.serviceConfig, { poolSize: 4 });
    const ctx = () => ({ now: new Date(), actor: 'crash-test' });
    const { workspaceId } = await createWorkspace(setup.store, 'Crash', ctx());
    const { apiKey } = await createApiKey(setup.store, { workspaceId, environment: 'sandbox', permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
    await issueCredits(creditsEngineFor(setup.store), { workspaceId, environment: 'sandbox', amount: 1_000_000, expiresAt: null }, ctx());
    const egsUnitId = opts.saudi ? await onboardSaudiUnit({ store: setup.store, secrets: egsSecretBox(db.serviceConfig) }, workspaceId, ctx) : null;
    const headers = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...extra });
    const connect = { 'x-api-key': apiKey };

    /** Onboards an AE company with one source (retried while the server's read models catch up with the setup). */
    async function onboard(i: number): Promise<{ companyId: string; source: string }> {
      const tin = String(1_000_000_000 + ((startedAt + i * 7919) % 8_999_999_999)).slice(0, 10);
      const email = `crash+${tin}@example.ae`;
      await createAspAuthorization(setup.store, { workspaceId, environment: 'sandbox', tin, email, legalName: `Crash ${i} LLC` }, ctx());
      const body = JSON.stringify({ sourceName: `Crash ERP ${i}`, sourceVersion: 'v1', countryCode: 'AE', tin, contactPersonEmail: email, branchName: 'Head office', platformEnvironment: 'sandbox' });
      for (let attempt = 0; ; attempt++) {
        const res = await httpRequest(agent, `${base}/v3/connect/companies`, { method: 'POST', headers: headers({ ...connect, 'idempotency-key': `onboard-${runId}-${i}` }), body });
        if (res.status === 201 || res.status === 200) {
          const data = (JSON.parse(res.body) as { data: { companyId: string; sourceName: string; sourceVersion: string } }).data;
          return { companyId: data.companyId, source: `${data.sourceName}:${data.sourceVersion}` };
        }
        if (attempt >= 50) throw new Error(`onboarding company ${i} failed: ${res.status} ${res.body.slice(0, 300)}`);
        await sleep(200);
      }
    }

    /** Sends until an answer that is not a crash symptom (no connection, 5xx, or "in progress"); returns it. */
    async function untilAnswered(record: KeyRecord, method: string, path: string, body: unknown, extra: Record<string, string>, identity: (status: number, json: any, etag: string | null) => string): Promise<Answer> {
      let firstFailure: number | null = null;
      let failedIn: number | null = null;
      for (;;) {
        try {
          const res = await new Promise<{ status: number; body: string; etag: string | null }>((resolve, reject) => {
            const payload = body === undefined ? undefined : JSON.stringify(body);
            const req = http.request(`${base}${path}`, { method, agent, headers: { ...headers(extra), ...(payload ? { 'content-length': Buffer.byteLength(payload) } : {}) }, timeout: 60_000 }, (r) => {
              const chunks: Buffer[] = [];
              r.on('data', (c: Buffer) => chunks.push(c));
              r.on('end', () => resolve({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), etag: (r.headers.etag as string | undefined) ?? null }));
              r.on('error', reject);
            });
            req.on('timeout', () => req.destroy(new Error('timeout')));
            req.on('error', reject);
            req.end(payload);
          });
          const json = res.body ? JSON.parse(res.body) : null;
          const inProgress = res.status === 409 && (json?.retryable === true || json?.error?.retryable === true);
          if (res.status < 500 && !inProgress) {
            const at = Date.now();
            // The server is back from the first answer of its new incarnation (or its readiness, if earlier).
            backAt[generation] ??= at;
            if (firstFailure !== null) {
              if (generation > failedIn!) {
                // Waited across a kill: from the moment the server was back to this answer.
                const wait = at - backAt[generation]!;
                waits.push(wait);
                if (wait >= 5000) slowKeys.push(`${record.key} ${(wait / 1000).toFixed(2)} s`);
              } else busyWaits.push(at - firstFailure); // no kill in between: answered "in progress" meanwhile
            }
            return { status: res.status, identity: identity(res.status, json, res.etag), at };
          }
        } catch {
          /* the server is down or was killed mid-request */
        }
        if (firstFailure === null) {
          firstFailure = Date.now();
          failedIn = generation;
        }
        record.lastFailureAt = Date.now();
        await sleep(100);
      }
    }

    // The submitting source, and one company with a current allowance per credit client.
    const { source, companyId: submittingCompany } = await onboard(0);
    const tenant = { source, apiKey };
    // The submitting company has an allowance, so each document reserves credits and a final_valid one consumes them.
    {
      const now = Date.now();
      const put = await httpRequest(agent, `${base}/v3/connect/credits/allowances/${submittingCompany}/current`, {
        method: 'PUT',
        headers: headers({ ...connect, 'idempotency-key': `setup-${submittingCompany}`, 'if-none-match': '*', 'x-environment': 'sandbox' }),
        body: JSON.stringify({ limit: 1_000_000, periodType: 'monthly', startAt: new Date(now - 3_600_000).toISOString(), endAt: new Date(now + 30 * 86_400_000).toISOString(), reason: 'setup' }),
      });
      if (put.status !== 201) throw new Error(`creating the allowance of the submitting company failed: ${put.status} ${put.body.slice(0, 300)}`);
    }
    const companies: string[] = [];
    for (let i = 1; i <= opts.creditClients; i++) {
      const { companyId } = await onboard(i);
      const now = Date.now();
      const put = await httpRequest(agent, `${base}/v3/connect/credits/allowances/${companyId}/current`, {
        method: 'PUT',
        headers: headers({ ...connect, 'idempotency-key': `setup-${companyId}`, 'if-none-match': '*', 'x-environment': 'sandbox' }),
        body: JSON.stringify({ limit: 100, periodType: 'monthly', startAt: new Date(now - 3_600_000).toISOString(), endAt: new Date(now + 30 * 86_400_000).toISOString(), reason: 'setup' }),
      });
      if (put.status !== 201) throw new Error(`creating the allowance of company ${i} failed: ${put.status} ${put.body.slice(0, 300)}`);
      companies.push(companyId);
    }
    await setup.close();

    let stopping = false;
    const submitIdentity = (status: number, json: any) => `${status} ${json?.documentId ?? json?.code ?? json?.error?.code ?? ''}`;
    const creditIdentity = (status: number, json: any, etag: string | null) => `${status} ${status < 300 ? `${etag} ${json?.data?.current?.version}` : (json?.error?.code ?? '')}`;

    async function submitClient(c: number): Promise<void> {
      for (let i = 0; !stopping; i++) {
        const documentNumber = `CRASH-${runId}-${c}-${i}`;
        const record: KeyRecord = { kind: 'submit', key: `submit-${runId}-${c}-${i}`, first: null, replays: [], lastFailureAt: null, documentNumber };
        records.push(record);
        const body = opts.saudi
          ? {
              country: 'SA',
              environment: 'sandbox',
              purpose: 'invoicing',
              source: tenant.source,
              documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' },
              payload: sampleDocument('SA', { lines: 2, documentNumber }),
            }
          : {
              country: 'AE',
              environment: 'sandbox',
              purpose: 'invoicing',
              source: tenant.source,
              documentType: { base: 'tax_invoice', modifiers: [] },
              payload: sampleDocument('AE', { lines: 2, documentNumber }),
            };
        const extra = { authorization: `Bearer ${tenant.apiKey}`, 'new-api': 'true', 'idempotency-key': record.key };
        record.first = await untilAnswered(record, 'POST', '/api/v3/unify', body, extra, submitIdentity);
        record.replays.push(await untilAnswered(record, 'POST', '/api/v3/unify', body, extra, submitIdentity));
        (record as KeyRecord & { replay?: () => Promise<Answer> }).replay = () => untilAnswered(record, 'POST', '/api/v3/unify', body, extra, submitIdentity);
      }
    }

    async function creditClient(c: number): Promise<void> {
      const companyId = companies[c]!;
      for (let i = 0; !stopping; i++) {
        const record: KeyRecord = { kind: 'credit', key: `credit-${runId}-${c}-${i}`, first: null, replays: [], lastFailureAt: null, companyId };
        // The version to replace: read (retrying like any client while the server is down).
        let version: string | null = null;
        while (version === null) {
          try {
            const r = await httpRequest(agent, `${base}/v3/connect/credits/allowances/${companyId}`, { headers: connect });
            if (r.status === 200) version = (JSON.parse(r.body) as { data: { current: { version: number } } }).data.current.version.toString();
          } catch {
            /* down */
          }
          if (version === null) await sleep(100);
        }
        records.push(record);
        const now = Date.now();
        const body = { limit: 100 + ((c * 1000 + i) % 900), periodType: 'monthly', startAt: new Date(now - 3_600_000).toISOString(), endAt: new Date(now + 30 * 86_400_000).toISOString(), reason: `change ${i}` };
        const extra = { ...connect, 'idempotency-key': record.key, 'if-match': `"${version}"`, 'x-environment': 'sandbox' };
        const path = `/v3/connect/credits/allowances/${companyId}/current`;
        record.first = await untilAnswered(record, 'PUT', path, body, extra, creditIdentity);
        record.replays.push(await untilAnswered(record, 'PUT', path, body, extra, creditIdentity));
        (record as KeyRecord & { replay?: () => Promise<Answer> }).replay = () => untilAnswered(record, 'PUT', path, body, extra, creditIdentity);
      }
    }

    const clients = [
      ...Array.from({ length: opts.submitClients }, (_, c) => submitClient(c)),
      ...Array.from({ length: opts.creditClients }, (_, c) => creditClient(c)),
    ];
    for (let k = 0; k < opts.kills; k++) {
      await sleep(opts.minUptimeMs + Math.random() * (opts.maxUptimeMs - opts.minUptimeMs));
      await server.crash();
      generation++;
      serverUp = false;
      kills.push(Date.now());
      process.stdout.write(`  kill ${k + 1}/${opts.kills} at ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
      await server.start(120_000);
      serverUp = true;
      restarts.push(Date.now());
      backAt[generation] = Math.min(backAt[generation] ?? Date.now(), Date.now());
      process.stdout.write(`, back after ${((restarts[restarts.length - 1]! - kills[kills.length - 1]!) / 1000).toFixed(1)} s\n`);
    }
    await sleep(opts.minUptimeMs);
    stopping = true;
    await Promise.all(clients);

    // Final answers: every key once more, after the last restart.
    const pending = [...records];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let r = pending.pop(); r; r = pending.pop()) r.replays.push(await (r as KeyRecord & { replay: () => Promise<Answer> }).replay());
      }),
    );

    // Figures and checks from the log itself.
    const store = await PostgresEventStore.connect(server.databaseUrl, { poolSize: 4 });
    const submits = records.filter((r) => r.kind === 'submit');
    const credits = records.filter((r) => r.kind === 'credit');
    const differing = records.filter((r) => r.replays.some((a) => a.status !== r.first!.status || a.identity !== r.first!.identity));
    for (const r of differing.slice(0, 5)) problems.push(`key ${r.key}: first ${r.first!.identity}, later ${r.replays.map((a) => a.identity).join(' / ')}`);
    const acknowledged = submits.filter((r) => r.first!.status === 200);
    const answeredIds = new Map<string, KeyRecord>();
    for (const r of submits) answeredIds.set(r.first!.identity.split(' ')[1]!, r);

    const documents = new Map<string, RecordedEvent>();
    const ledger = new Map<string, Set<bigint>>();
    // Metering: "<event type> <credits stream> <document id>" -> how many such events.
    const metering = new Map<string, number>();
    const consumed = new Set<string>();
    const reserved = new Set<string>();
    const finalValid = new Set<string>();
    const waitFinal = Date.now() + 120_000;
    let finalMissing: string[] = [];
    let unconsumed: string[] = [];
    for (;;) {
      documents.clear();
      ledger.clear();
      metering.clear();
      consumed.clear();
      reserved.clear();
      finalValid.clear();
      for (let after = START; ; ) {
        const page = await store.readAll(after, 5000);
        if (page.length === 0) break;
        for (const e of page) {
          if (e.metadata.workspaceId !== workspaceId) continue;
          if (e.type === 'DocumentSubmitted' || e.type === 'DocumentRejected') documents.set(e.streamId.slice('document-'.length), e);
          if (e.streamId.startsWith('credits-') && e.metadata.idempotencyKey?.startsWith('credit-')) {
            // One change is one append (one transaction); a second execution would be another.
            const commits = ledger.get(e.metadata.idempotencyKey) ?? new Set<bigint>();
            ledger.set(e.metadata.idempotencyKey, commits.add(e.position.commit));
          }
          const meteredId = (e.data as { documentId?: unknown } | null)?.documentId;
          if ((e.type === 'ReservationCreated' || e.type === 'ReservationRefused' || e.type === 'ConsumptionFinalized') && typeof meteredId === 'string') {
            // A reservation decision (created or refused) and a consumption, each once per document.
            const k = `${e.type === 'ConsumptionFinalized' ? 'consumption' : 'reservation'} ${e.streamId} ${meteredId}`;
            metering.set(k, (metering.get(k) ?? 0) + 1);
            if (e.type === 'ConsumptionFinalized') consumed.add(meteredId);
            if (e.type === 'ReservationCreated') reserved.add(meteredId);
          }
        }
        after = page[page.length - 1]!.position;
      }
      finalMissing = [];
      for (const r of acknowledged) {
        const id = r.first!.identity.split(' ')[1]!;
        const state = foldRecorded(documentDecider, await store.readStream(`document-${id}`)).state.state;
        if (state !== 'final_valid' && state !== 'final_invalid') finalMissing.push(`${id} (${state})`);
        if (state === 'final_valid') finalValid.add(id);
      }
      unconsumed = [...finalValid].filter((id) => !consumed.has(id) || !reserved.has(id));
      if ((finalMissing.length === 0 && unconsumed.length === 0) || Date.now() > waitFinal) break;
      await sleep(1000);
    }
    const lost = acknowledged.filter((r) => !documents.has(r.first!.identity.split(' ')[1]!));
    for (const r of lost.slice(0, 5)) problems.push(`acknowledged document of key ${r.key} is not in the log`);
    if (finalMissing.length > 0) problems.push(`${finalMissing.length} acknowledged documents did not reach a final state: ${finalMissing.slice(0, 5).join(', ')}`);
    // Credits metered once per document: no second reservation or consumption, no final_valid document unconsumed.
    const meteredTwice = [...metering].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`);
    const consumedUnknown = [...consumed].filter((id) => !documents.has(id));
    const meteringProblems = meteredTwice.length + unconsumed.length + consumedUnknown.length;
    if (meteredTwice.length > 0) problems.push(`${meteredTwice.length} documents metered more than once: ${meteredTwice.slice(0, 3).join(', ')}`);
    if (unconsumed.length > 0) problems.push(`${unconsumed.length} final_valid documents whose credits were never reserved and consumed: ${unconsumed.slice(0, 3).join(', ')}`);
    if (consumedUnknown.length > 0) problems.push(`${consumedUnknown.length} consumptions of documents not in the log: ${consumedUnknown.slice(0, 3).join(', ')}`);

    const liveByNumber = new Map<string, number>();
    let rejected = 0;
    for (const e of documents.values()) {
      if (e.type === 'DocumentRejected') rejected++;
      else {
        const n = (e.data as { documentNumber: string }).documentNumber;
        liveByNumber.set(n, (liveByNumber.get(n) ?? 0) + 1);
      }
    }
    const duplicatedNumbers = [...liveByNumber.values()].reduce((s, n) => s + (n - 1), 0);
    const unanswered = [...documents.keys()].filter((id) => !answeredIds.has(id));
    const duplicated = duplicatedNumbers + unanswered.length;
    if (duplicatedNumbers > 0) problems.push(`${duplicatedNumbers} document numbers with more than one live document`);
    if (unanswered.length > 0) problems.push(`${unanswered.length} documents in the log that no key was answered with (second executions): ${unanswered.slice(0, 3).join(', ')}`);
    const phantom = rejected + submits.filter((r) => r.first!.status === 200 && r.replays.some((a) => a.status === 422)).length;
    if (phantom > 0) problems.push(`${phantom} phantom rejections (every payload is valid)`);

    // Counts: documents, not attempts.
    let counted = -1;
    for (const until = Date.now() + 30_000; Date.now() < until; await sleep(500)) {
      const r = await httpRequest(agent, `${base}/v3/connect/invoices/counts`, { headers: { ...connect, 'x-environment': 'sandbox' } });
      counted = (JSON.parse(r.body) as { data: { salesCount: number } }).data.salesCount;
      if (counted === documents.size) break;
    }
    if (counted !== documents.size) problems.push(`counts say ${counted} sales documents; the log holds ${documents.size}`);
    if (documents.size !== acknowledged.length + submits.filter((r) => r.first!.status === 422).length) {
      problems.push(`the log holds ${documents.size} documents for ${acknowledged.length} accepted and ${submits.filter((r) => r.first!.status === 422).length} rejected answers`);
    }

    // The ledger: each answered change once, a refused one never.
    let ledgerProblems = 0;
    for (const r of credits) {
      const n = ledger.get(r.key)?.size ?? 0;
      const expected = r.first!.status < 300 ? 1 : 0;
      if (n !== expected) {
        ledgerProblems++;
        if (ledgerProblems <= 5) problems.push(`allowance key ${r.key} answered ${r.first!.status}: ${n} ledger changes`);
      }
    }

    // The Saudi chain of the EGS unit: gap-free, unforked, each final_valid document once, stamped.
    const chain = egsUnitId ? await saudiChainProblems(store, egsUnitId, finalValid) : null;
    if (chain) problems.push(...chain.problems.slice(0, 10));

    // A rebuild equals live: documents and credits read models, after the server stopped.
    await server.stop();
    serverUp = false;
    const knex = knexFactory({ client: PreparingPgClient, connection: server.databaseUrl, pool: { min: 0, max: 4 } });
    let rebuildDiffers = 0;
    try {
      for (const name of ['documents', 'credits']) {
        const projection = projectionByName(name);
        if (!projection) throw new Error(`no projection ${name}`);
        const snapshot = async () => {
          const out: string[] = [];
          for (const table of projection.tables) {
            const rows = await knex(table).select('*');
            out.push(...rows.map((row: unknown) => `${table} ${JSON.stringify(row)}`));
          }
          return out.sort();
        };
        const live = await snapshot();
        await rebuildProjection(knex, store, projection);
        const rebuilt = await snapshot();
        const liveSet = new Set(live);
        const differ = rebuilt.filter((row) => !liveSet.has(row)).length + Math.max(0, live.length - rebuilt.length);
        if (differ > 0) {
          rebuildDiffers += differ;
          problems.push(`rebuild of ${name}: ${differ} rows differ from live (${live.length} live, ${rebuilt.length} rebuilt)`);
        }
      }
    } finally {
      await knex.destroy();
      await store.close();
    }

    const longestWait = waits.length > 0 ? Math.max(...waits) : 0;

    const lines: [string, string | number][] = [
      ['submissions', submits.length],
      ['allowance writes', credits.length],
      ['kills', kills.length],
      ['acknowledged', acknowledged.length],
      ['lost', lost.length + finalMissing.length],
      ['duplicated', duplicated],
      ['phantom', phantom],
      ['differing replays', differing.length],
      ['ledger changes not exactly once', ledgerProblems],
      ['final_valid / consumed once', `${finalValid.size} / ${[...consumed].filter((id) => finalValid.has(id)).length}`],
      ['metering not exactly once', meteringProblems],
      ['rebuild rows differing from live', rebuildDiffers],
      ...(chain ? ([['Saudi EGS chain links / problems', `${chain.links} / ${chain.problems.length}`]] as [string, string][]) : []),
      ['longest wait after restart', `${(longestWait / 1000).toFixed(2)} s`],
      ['longest "in progress" wait, no restart', `${((busyWaits.length > 0 ? Math.max(...busyWaits) : 0) / 1000).toFixed(2)} s`],
      ['run time', `${((Date.now() - startedAt) / 1000).toFixed(0)} s`],
    ];
    console.log('\nresults');
    for (const [name, value] of lines) console.log(`  ${name.padEnd(34)} ${value}`);
    if (longestWait >= 5000) problems.push(`a retry waited ${(longestWait / 1000).toFixed(2)} s after a restart (target < 5 s): ${slowKeys.slice(0, 5).join(', ')}`);
  } catch (err) {
    problems.push(err instanceof Error ? (err.stack ?? err.message) : String(err));
  } finally {
    if (serverUp) await server.stop().catch(() => {});
    agent.destroy();
    await db.close();
  }
  reportProblems(problems, '\nproblems');
}

if (opts.as4) {
  // Fewer submitting clients by default: each document also travels over AS4 to a second service.
  const submitClients = program.getOptionValueSource('submitClients') === 'default' ? 4 : opts.submitClients;
  reportProblems(
    await runAs4CrashTest({ kills: opts.kills, submitClients, buyers: opts.buyers, minUptimeMs: opts.minUptimeMs, maxUptimeMs: opts.maxUptimeMs, pgPort: process.env.CRASH_TEST_PG_PORT ?? '54419' }),
    '\nproblems',
  );
} else await main();
