/**
 * `npm run bench:statements`: how many PostgreSQL statements and transactions one submitted
 * document costs end to end — the submission (HTTP, credits check, number claim and first
 * event), the projections, the reactors (delivery, metering, webhooks, search) — until it is
 * final. The service runs in this process on its own embedded PostgreSQL (var/pg-statements,
 * --pg-port), so every statement its pools send can be counted at the driver: a transaction is an
 * explicit BEGIN … COMMIT or a statement sent outside one. PostgreSQL's own count of committed
 * transactions (pg_stat_database.xact_commit, flushed with a delay) is printed beside it, and
 * how many events the service read from the log's store against how many were appended (a runner
 * that falls behind the shared tail of the log reads them again), by reader, and how many
 * deliveries had their start appended on its own (the destination outlasted the start grace).
 * With `--as4`, the same for one purchase received over AS4 instead: the service is configured as
 * a Peppol access point (a test PKI generated into var/), one company is onboarded in production,
 * and distinct 5-line PINT AE invoices are posted to `POST /as4` as another access point sends
 * them (commands/peppol/as4/message.ts), each until every read model has caught up.
 * Prints figures; asserts nothing about them.
 *
 * With `--pg-stats`, PostgreSQL's own counters of the counted run too (scripts/bench-pgstats.ts).
 *
 *   node --import tsx scripts/count-statements.ts [--documents 200] [--clients 16] [--pg-port 54397] [--as4] [--pg-stats]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import pg from 'pg';
import Table from 'cli-table3';
import { postgresCpuSeconds } from './bench-support.js';
import { ensurePgStatStatements, printPgStats, resetPgStats } from './bench-pgstats.js';

/** The first run with --pg-stats set pg_stat_statements up: nothing is counted until PostgreSQL restarts. */
class RunAgain extends Error {}

interface Counted {
  statements: number;
  transactions: number;
  byKind: Map<string, number>;
  /** Statements and transactions by who sent them: a projection's or reactor's loop, else the rest (requests, workers). */
  bySource: Map<string, { statements: number; transactions: number }>;
}

const counted: Counted = { statements: 0, transactions: 0, byKind: new Map(), bySource: new Map() };
/** The projection loop a statement is sent from (set around each loop of the runner). */
const source = new AsyncLocalStorage<string>();
let counting = false;
const inTransaction = new WeakMap<object, boolean>();
/** Our own connections (the progress polls): not counted. */
const ignored = new WeakSet<object>();

/**
 * A statement's kind: the event store's function it calls, else its first words with literals and
 * parameters folded, else its prepared name (the read side's names are hashes of the text).
 */
function kindOf(text: string, name: string | undefined): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const fn = /\b(es_[a-z_]+)\(/.exec(flat);
  if (fn) return `${fn[1]}()`;
  if (!flat && name) return `[${name}]`;
  return flat
    .replace(/'[^']*'/g, "'…'")
    .replace(/\$\d+|\?/g, '?')
    .replace(/\b\d+\b/g, 'N')
    .slice(0, 70);
}

// Counts every statement of every connection the service opens (knex and the event store both use pg.Client).
const originalQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: object, ...args: unknown[]) {
  if (counting && !ignored.has(this)) {
    const config = args[0] as string | { text?: string; name?: string };
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    const name = typeof config === 'string' ? undefined : config?.name;
    counted.statements++;
    const from = source.getStore() ?? 'requests, workers, group commits';
    const bySource = counted.bySource.get(from) ?? { statements: 0, transactions: 0 };
    counted.bySource.set(from, bySource);
    bySource.statements++;
    if (/^\s*begin\b/i.test(text)) {
      inTransaction.set(this, true);
      counted.transactions++;
      bySource.transactions++;
    } else if (/^\s*(commit|rollback)\b/i.test(text)) {
      inTransaction.set(this, false);
    } else if (!inTransaction.get(this)) {
      counted.transactions++;
      bySource.transactions++;
    }
    if (!/^\s*(begin|commit|rollback)\b/i.test(text)) {
      const kind = kindOf(text, name);
      counted.byKind.set(kind, (counted.byKind.get(kind) ?? 0) + 1);
    }
  }
  return originalQuery.apply(this, args);
};

const program = new Command('count-statements')
  .option('--documents <n>', 'documents submitted and counted', (v) => Number.parseInt(v, 10), 200)
  .option('--clients <n>', 'concurrent clients', (v) => Number.parseInt(v, 10), 16)
  .option('--pg-port <n>', 'port of the embedded PostgreSQL', (v) => Number.parseInt(v, 10), 54397)
  .option('--kinds <n>', 'statement kinds listed', (v) => Number.parseInt(v, 10), 25)
  .option('--as4', 'count one purchase received over AS4 instead of one submitted document', false)
  .option('--pg-stats', "PostgreSQL's own counters of the counted run too (pg_stat_statements, rows by table, WAL); the first run with it sets pg_stat_statements up and asks for a second", false)
  .parse();
const opts = program.opts<{ documents: number; clients: number; pgPort: number; kinds: number; as4: boolean; pgStats: boolean }>();

const { loadConfig } = await import('../platform/config.js');
const { startService } = await import('../http/service.js');
const { createLogger } = await import('../platform/logger.js');
const { createApiKey, createWorkspace } = await import('../commands/workspaces.js');
const { createAspAuthorization } = await import('../commands/connect/settings.js');
const { sampleDocument } = await import('../domain/validation/index.js');
const { TERMINAL_STATES } = await import('../domain/document/document.js');
const { ProjectionRunner } = await import('../projections/runner.js');

// Every event the service reads from the log's store (the shared tail's reads and any reader that
// fell behind it): each event read once is as many as were appended.
const { PostgresEventStore } = await import('../platform/eventstore/postgres.js');
let logEventsRead = 0;
/** Events read from the store by who read them: the shared tail's reads, or a loop's own read (it fell behind the tail). */
const logEventsReadBy = new Map<string, number>();
const tailRead = new AsyncLocalStorage<boolean>();
const storeReadAll = PostgresEventStore.prototype.readAll;
PostgresEventStore.prototype.readAll = async function (this: typeof PostgresEventStore.prototype, ...args: Parameters<typeof storeReadAll>) {
  const page = await storeReadAll.apply(this, args);
  if (counting) {
    logEventsRead += page.length;
    const by = tailRead.getStore() ? 'the shared log tail' : `${source.getStore() ?? 'requests, workers'} (its own read)`;
    logEventsReadBy.set(by, (logEventsReadBy.get(by) ?? 0) + page.length);
  }
  return page;
};
const { LogTail } = await import('../projections/log-tail.js');
const tailExtend = (LogTail.prototype as unknown as { extend: () => Promise<void> }).extend;
(LogTail.prototype as unknown as { extend: () => Promise<void> }).extend = function (this: unknown) {
  return tailRead.run(true, () => tailExtend.call(this));
};

// Each projection's and reactor's loop runs under its name, so its statements are counted as its own.
const runnerLoop = (ProjectionRunner.prototype as unknown as { loop: (p: { name: string }) => Promise<void> }).loop;
(ProjectionRunner.prototype as unknown as { loop: (p: { name: string }) => Promise<void> }).loop = function (this: unknown, p: { name: string }) {
  return source.run(`projection ${p.name}`, () => runnerLoop.call(this, p));
};

// --as4: the service as a Peppol access point, with a test PKI of its own (removed at the end).
const pkiDir = path.resolve(`var/statements-pki-${process.pid}`);
const pki = opts.as4 ? await (await import('../test/peppol/support/pki.js')).createTestPki(pkiDir) : null;
const database = `statements_${Date.now()}`;
const pgDir = path.resolve('var/pg-statements');
const config = loadConfig({
  ...process.env,
  ...(pki
    ? {
        PEPPOL_KEY: pki.service.keyPath,
        PEPPOL_CERTIFICATE: pki.service.certPath,
        PEPPOL_TRUSTSTORE: pki.caCertPath,
        PEPPOL_SML_ZONE: 'acc.edelivery.tech.ec.europa.eu',
        PEPPOL_ENDPOINT_URL: 'http://127.0.0.1/as4',
      }
    : {}),
  DATABASE_URL: '',
  EVENTSTORE_URL: '',
  EMBEDDED_PG_DIR: pgDir,
  EMBEDDED_PG_PORT: String(opts.pgPort),
  EMBEDDED_PG_DATABASE: database,
  LOG_LEVEL: 'silent',
});
const service = await startService({ config: { ...config, http: { ...config.http, port: 0 } }, port: 0, logger: createLogger('silent') });
const store = service.runtime.store;
const poll = new pg.Client({ connectionString: service.runtime.db.url });
ignored.add(poll);
await poll.connect();

try {
  if (opts.pgStats && (await ensurePgStatStatements(poll))) {
    console.log('pg_stat_statements is set up in var/pg-statements; it loads when PostgreSQL starts: run again.');
    throw new RunAgain();
  }
  const ctx = () => ({ now: new Date(), actor: 'count-statements' });
  const { workspaceId, position } = await createWorkspace(store, 'statements', ctx());
  await service.runner.waitFor(position, { timeoutMs: 10000 });
  const environment = opts.as4 ? 'production' : 'sandbox';
  const key = await createApiKey(store, { workspaceId, environment, permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
  await service.runner.waitFor(key.position, { timeoutMs: 10000 });
  const tin = String(Date.now()).slice(-10);
  const email = `statements+${tin}@example.ae`;
  const auth = await createAspAuthorization(store, { workspaceId, environment, tin, email }, ctx());
  if (auth.position) await service.runner.waitFor(auth.position, { timeoutMs: 10000 });
  const headers = { 'x-api-key': key.apiKey, 'content-type': 'application/json' };
  const onboarded = await fetch(`${service.url}/v3/connect/companies`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      sourceName: 'Statements ERP', sourceVersion: 'v1', countryCode: 'AE', tin, contactPersonEmail: email,
      contactPersonName: 'Counter', contactPersonMobile: '+971501234567', branchName: 'Head office', platformEnvironment: environment,
    }),
  });
  if (onboarded.status !== 201) throw new Error(`onboarding failed: ${onboarded.status} ${await onboarded.text()}`);
  const source = (await onboarded.json()) as { data: { sourceName: string; sourceVersion: string } };

  let sequence = 0;
  const submitDocument = async () => {
    const body = {
      country: 'AE', environment: 'sandbox', purpose: 'invoicing', source: `${source.data.sourceName}:${source.data.sourceVersion}`,
      documentType: { base: 'tax_invoice', modifiers: [] }, payload: sampleDocument('AE', { lines: 20, documentNumber: `STMT-${Date.now()}-${++sequence}` }),
    };
    const r = await fetch(`${service.url}/api/v3/unify`, { method: 'POST', headers: { authorization: `Bearer ${key.apiKey}`, 'content-type': 'application/json', 'new-api': 'true' }, body: JSON.stringify(body) });
    if (r.status !== 200) throw new Error(`submission answered ${r.status}: ${(await r.text()).slice(0, 300)}`);
    await r.arrayBuffer();
  };
  const terminal = [...TERMINAL_STATES];
  const finalDocuments = async () =>
    Number((await poll.query('select count(*)::int as n from sales_documents where workspace_id = $1 and state = any($2)', [workspaceId, terminal])).rows[0].n);

  // --as4: another access point's messages, built before they are posted (not counted: no statements).
  const as4 = pki ? await as4Sender(pki, tin, service.url) : null;
  const submit = as4 ? as4.post : submitDocument;
  const finalCount = async () =>
    as4 ? Number((await poll.query('select count(*)::int as n from purchase_invoices where workspace_id = $1', [workspaceId])).rows[0].n) : finalDocuments();
  /** Over AS4: every read model and reactor at the same position (the log's last event), not only the purchase list. */
  const caughtUp = () => new Set(service.runner.statuses().map((st) => (st.position ? `${st.position.commit}/${st.position.prepare}` : 'none'))).size === 1;
  const run = async (n: number) => {
    const before = await finalCount();
    let next = 0;
    await Promise.all(Array.from({ length: opts.clients }, async () => {
      while (next < n) {
        next++;
        await submit();
      }
    }));
    const deadline = Date.now() + 120_000;
    while ((await finalCount()) < before + n || (as4 && !caughtUp())) {
      if (Date.now() > deadline) throw new Error(`${as4 ? 'purchases' : 'documents'} did not reach a final state within 120 s`);
      await sleep(50);
    }
  };
  const xactCommit = async () => Number((await poll.query('select xact_commit from pg_stat_database where datname = current_database()')).rows[0].xact_commit);
  const logEvents = async () => Number((await poll.query('select count(*)::int as n from es_events')).rows[0].n);

  await run(Math.min(20, opts.documents)); // warm-up: prepared statements, caches
  await sleep(1500);
  const pgBefore = await xactCommit();
  const pgCpuBefore = postgresCpuSeconds(pgDir);
  const cpuBefore = process.cpuUsage();
  const eventsBefore = await logEvents();
  if (opts.pgStats) await resetPgStats(poll);
  counting = true;
  const started = performance.now();
  await run(opts.documents);
  const seconds = (performance.now() - started) / 1000;
  counting = false;
  const pgCpu = postgresCpuSeconds(pgDir) - pgCpuBefore;
  const ownCpu = process.cpuUsage(cpuBefore);
  await sleep(1500); // PostgreSQL flushes its statistics with a delay
  const pgCommits = (await xactCommit()) - pgBefore;
  const eventsAppended = (await logEvents()) - eventsBefore;
  // Deliveries whose start was appended on its own (the destination outlasted the start grace), not with the answer.
  const { DeliveryStarted } = await import('../domain/document/document.js');
  const startsAlone = Number(
    (
      await poll.query(
        `select count(*)::int as n from es_events s
          where s.event_type = $1 and s.global_position > (select coalesce(max(global_position), 0) from es_events) - $2
            and not exists (select 1 from es_events o where o.stream_id = s.stream_id and o.transaction_id = s.transaction_id and o.event_id <> s.event_id)`,
        [DeliveryStarted.type, eventsAppended],
      )
    ).rows[0].n,
  );

  const n = opts.documents;
  const per = (x: number) => (x / n).toFixed(1);
  console.log(
    as4
      ? `statements and transactions per purchase received over AS4, ${n} 5-line PINT AE invoices at ${opts.clients} connections, until every read model caught up (${seconds.toFixed(1)} s)`
      : `statements and transactions per submitted document, ${n} valid 20-line UAE invoices at ${opts.clients} clients, each until final (${seconds.toFixed(1)} s)`,
  );
  const summary = new Table({ head: ['', 'total', 'per document'], style: { head: [], border: [] } });
  summary.push(['statements (driver)', counted.statements, per(counted.statements)]);
  summary.push(['transactions (driver: BEGIN…COMMIT or a lone statement)', counted.transactions, per(counted.transactions)]);
  summary.push(['committed transactions (pg_stat_database, incl. idle polls)', pgCommits, per(pgCommits)]);
  summary.push(['events appended to the log', eventsAppended, per(eventsAppended)]);
  summary.push(['events read from the log\'s store (each once: as many as appended)', logEventsRead, per(logEventsRead)]);
  summary.push(['deliveries whose start was appended on its own (past the start grace)', startsAlone, per(startsAlone)]);
  summary.push(['PostgreSQL CPU, ms (its processes; the machine\'s load counts in)', (pgCpu * 1000).toFixed(0), ((pgCpu * 1000) / n).toFixed(2)]);
  summary.push(['this process\'s CPU, ms (the service and the load generator)', ((ownCpu.user + ownCpu.system) / 1000).toFixed(0), ((ownCpu.user + ownCpu.system) / 1000 / n).toFixed(2)]);
  console.log(summary.toString());
  const readers = new Table({ head: ['events read from the log\'s store by', 'events / document'], style: { head: [], border: [] } });
  for (const [by, count] of [...logEventsReadBy].sort((a, b) => b[1] - a[1])) readers.push([by, per(count)]);
  console.log(readers.toString());
  const sources = new Table({ head: ['sent by (a shared log read counts for whoever asked first)', 'statements / document', 'transactions / document'], style: { head: [], border: [] } });
  for (const [from, c] of [...counted.bySource].sort((a, b) => b[1].statements - a[1].statements)) sources.push([from, per(c.statements), per(c.transactions)]);
  console.log(sources.toString());
  const kinds = new Table({ head: ['statement kind', 'total', 'per document'], style: { head: [], border: [] } });
  for (const [kind, count] of [...counted.byKind].sort((a, b) => b[1] - a[1]).slice(0, opts.kinds)) kinds.push([kind, count, per(count)]);
  console.log(kinds.toString());
  if (opts.pgStats) await printPgStats(poll, n, 40);
} catch (err) {
  if (!(err instanceof RunAgain)) throw err;
  process.exitCode = 2;
} finally {
  await poll.end().catch(() => {});
  await service.close();
  if (pki) fs.rmSync(pkiDir, { recursive: true, force: true });
}

/** Posts distinct AS4 user messages (5-line PINT AE invoices for the company `tin`) to the service, as another access point. */
async function as4Sender(p: NonNullable<typeof pki>, tin: string, base: string): Promise<{ post: () => Promise<void> }> {
  const { buildUserMessage } = await import('../commands/peppol/as4/message.js');
  const { generateInvoiceXml } = await import('../domain/artifacts/index.js');
  const { peppolIdentifiersOf } = await import('../domain/peppol/identifiers.js');
  const { buildSbdh } = await import('../domain/peppol/sbdh.js');
  const doc = sampleDocument('AE', { lines: 5, documentNumber: 'AS4-STMT-NUMBER' }) as { parties: { buyer: { peppolId?: string } } };
  doc.parties.buyer.peppolId = tin;
  const template = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document: doc as never, uuid: 'as4-statements' }).xml;
  const ids = peppolIdentifiersOf(template);
  const sender = { privateKeyPem: p.service2.keyPem, certificatePem: p.service2.certPem, commonName: p.service2.commonName };
  const tag = Date.now().toString(36);
  let sequence = 0;
  const post = async () => {
    const n = `AS4-${tag}-${++sequence}`;
    const payload = Buffer.from(buildSbdh(template.replaceAll('AS4-STMT-NUMBER', n), ids, { instanceId: n, createdAt: new Date(), countryC1: 'AE' }));
    const header = {
      processId: ids.processId, documentTypeId: ids.documentTypeId, originalSender: ids.sender, finalRecipient: ids.receiver,
      messageId: `${n}@statements`, conversationId: n, timestamp: new Date().toISOString(), fromParty: sender.commonName, toParty: p.service.commonName,
    };
    const built = buildUserMessage(header, payload, sender, p.service.certPem);
    const r = await fetch(`${base}/as4`, { method: 'POST', headers: { 'content-type': built.contentType, 'mime-version': '1.0' }, body: new Uint8Array(built.body) });
    const answer = await r.text();
    if (r.status !== 200 || !answer.includes('Receipt')) throw new Error(`the AS4 message was answered ${r.status}: ${answer.slice(0, 300)}`);
  };
  return { post };
}
