/**
 * Benchmark of credits, on the real service (engine, event store, projections, HTTP):
 *
 * 1. reservations/s spread across 1,000 companies of one workspace, and against one hot
 *    company — the reservation command as metering issues it, from 16, 64 (--concurrency) and
 *    256 concurrent callers (one service instance; then two instances on the same workspace, to
 *    show what conflicts cost); with the time the ledger and balance read models then take to
 *    catch up. Between phases (untimed) the open reservations are finalized, as delivery would,
 *    so they do not pile up beyond what a running service holds;
 * 2. metering end to end: documents submitted (DocumentSubmitted appended directly, without
 *    validation or delivery) until the metering reactor has reserved for all of them;
 * 3. ledger page reads (GET /v3/connect/credits/transactions over HTTP) with 1,000,000
 *    transactions: first page, cursor walks, random deep cursors and every filter; p50/p95/p99.
 *
 * Seeding 1,000,000 transactions through the event path would take many minutes (every
 * transaction is an event appended, decided and projected), so the ledger is topped up to the
 * target size by a documented bulk path: one INSERT … SELECT generate_series into the ledger
 * read model (credit_transactions), rows of the same shape the credit_ledger projection writes,
 * for the same workspace and companies, newer in log order than the real ones. The real
 * transactions of phases 1 and 2 stay in the table, so reads mix both.
 *
 * It prints figures and a verdict against the targets (≥ 2,000 reservations/s spread, ≥ 500/s
 * on one hot company, ledger page p95 < 30 ms); it never fails on timings (the exit code is 1
 * only when a reservation or request failed, or the numbers do not add up).
 *
 * By default it runs on an embedded PostgreSQL in var/pg-bench-credits (port 54389), in a fresh
 * database dropped at the end; with DATABASE_URL set it creates (and drops) a fresh database on
 * that server.
 *
 *   npm run bench:credits -- [--reservations 20000] [--concurrency 64] [--ledger-rows 1000000] [--samples 200]
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Command } from 'commander';
import { CreditsEngine } from '../commands/credits/engine.js';
import { reserveForDocument } from '../commands/credits/metering.js';
import { issueCredits } from '../commands/credits/pool.js';
import { creditsEngine, knexSnapshotStore } from '../commands/credits/snapshots.js';
import type { Position } from '../platform/eventstore/port.js';
import { createApiKey, createWorkspace } from '../commands/workspaces.js';
import { encodeCursor, parseLedgerQuery } from '../domain/credits/input.js';
import { pvalues } from '../domain/credits/pmap.js';
import { allowancePeriodIdFor, creditsStream } from '../domain/credits/values.js';
import { documentStream } from '../domain/document/document.js';
import { startService, type Service } from '../http/service.js';
import type { Config } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { creditProcesses } from '../projections/reactors/credits-processes.js';
import { fmtInt, fmtMs, openFreshBenchDatabase, percentile, positiveInt, renderTable, reportProblems, runBenchmark, type FreshBenchDatabase } from './bench-support.js';

const BENCH_PG_DIR = 'var/pg-bench-credits';
const BENCH_PG_PORT = '54389';
const COMPANIES = 1000;
const WARM_UP = 20;
const TARGET_SPREAD_PER_S = 2000;
const TARGET_HOT_PER_S = 500;
const TARGET_PAGE_P95_MS = 30;


const program = new Command()
  .name('bench:credits')
  .description('Benchmark credit reservations (spread and hot), metering, and ledger page reads with 1,000,000 transactions.')
  .option('--reservations <n>', 'reservations per throughput phase', positiveInt(1_000_000), 10_000)
  .option('--concurrency <n>', 'concurrent callers (submissions being metered at once)', positiveInt(1024), 64)
  .option('--documents <n>', 'documents for the metering phase', positiveInt(1_000_000), 5_000)
  .option('--ledger-rows <n>', 'ledger transactions for the page-read phase', positiveInt(20_000_000), 1_000_000)
  .option('--samples <n>', 'timed requests per page-read scenario', positiveInt(10_000), 200)
  .showHelpAfterError();
program.parse();
const opts = program.opts<{ reservations: number; concurrency: number; documents: number; ledgerRows: number; samples: number }>();

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  console.log('\ninterrupted: finishing the current phase, then cleaning up (Ctrl-C again to exit now)');
});

const problems: string[] = [];

// ---------------------------------------------------------------------------------------------
// Database plumbing (as the other benchmarks do)


// ---------------------------------------------------------------------------------------------
// Helpers

const companyIdOf = (i: number) => `c0ffee${String(i).padStart(18, '0')}`;

async function inParallel(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count && !interrupted) await work(next++);
    }),
  );
}

interface Throughput {
  label: string;
  count: number;
  reserved: number;
  ms: number;
  perSecond: number;
  p50: number;
  p99: number;
  last: Position | null;
}

async function reservePhase(
  label: string,
  engines: CreditsEngine[],
  workspaceId: string,
  count: number,
  concurrency: number,
  companyFor: (i: number) => string,
): Promise<Throughput> {
  const latencies: number[] = [];
  let reserved = 0;
  let last: Position | null = null;
  const t0 = performance.now();
  await inParallel(count, concurrency, async (i) => {
    const s = performance.now();
    try {
      const r = await reserveForDocument(engines[i % engines.length]!, { workspaceId, companyId: companyFor(i), documentId: randomUUID() }, { now: new Date(), actor: 'bench' });
      latencies.push(performance.now() - s);
      if (r.outcome === 'reserved') reserved++;
      else problems.push(`${label}: reservation ${r.outcome}`);
      const p = r.result.position;
      if (p && (!last || p.commit > last.commit || (p.commit === last.commit && p.prepare > last.prepare))) last = p;
    } catch (err) {
      problems.push(`${label}: ${(err as Error).message}`);
    }
  });
  const ms = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  return { label, count, reserved, ms, perSecond: (reserved * 1000) / ms, p50: percentile(latencies, 50), p99: percentile(latencies, 99), last };
}

async function timedGet(url: string, apiKey: string): Promise<{ ms: number; status: number; json: any }> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
  const text = await res.text();
  const ms = performance.now() - t0;
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { ms, status: res.status, json };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = Date.now();
  const log = (msg: string) => console.log(`  ${msg}`);
  let fresh: FreshBenchDatabase | null = null;
  let service: Service | null = null;
  try {
    fresh = await openFreshBenchDatabase({ prefix: 'bench_credits', startedAt, pgDir: BENCH_PG_DIR, pgPort: BENCH_PG_PORT });
    const { database, serverVersion: info } = fresh;
    const config: Config = { ...fresh.serviceConfig, dbPoolSize: 40 };
    console.log(`\nCredits benchmark — ${fresh.where}, fresh database ${database}`);
    console.log(
      `  PostgreSQL ${info}; Node ${process.version}; ${os.cpus().length} CPUs; ${fmtInt(opts.reservations)} reservations per phase, ` +
        `${opts.concurrency} concurrent callers; ${fmtInt(opts.ledgerRows)} ledger transactions\n`,
    );

    // The service with the credit processes only: no delivery of the synthetic documents of phase 2.
    service = await startService({
      config,
      port: 0,
      logger: createLogger('silent'),
      startWorkers: false,
      processes: (deps) => ({ ...creditProcesses(deps), connectors: { connectorFor: () => null, missing: () => [] } }),
    });
    const svc = service;
    const store = svc.runtime.store;
    const knex = svc.deps.knex;
    const ctx = () => ({ now: new Date(), actor: 'bench' });
    const settle = async (p: Position | null, timeoutMs = 300_000) => {
      if (p && !(await svc.runner.waitFor(p, { timeoutMs }))) throw new Error('projections did not catch up');
    };
    const ws = await createWorkspace(store, 'Credits benchmark', ctx());
    await settle(ws.position);
    const key = await createApiKey(store, { workspaceId: ws.workspaceId, environment: 'sandbox', permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
    await settle(key.position);
    const workspaceId = ws.workspaceId;
    const engine = creditsEngine({ store, knex });

    // Setup through the event path: a pool, and 1,000 companies (plus one hot one) with a current allowance.
    let t0 = performance.now();
    await issueCredits(engine, { workspaceId, environment: 'sandbox', amount: 100_000_000, expiresAt: null }, ctx());
    const now = Date.now();
    const input = (limit: number) => ({
      limit,
      periodType: 'annual' as const,
      startAt: new Date(now - 3_600_000).toISOString(),
      endAt: new Date(now + 365 * 86_400_000).toISOString(),
      reason: 'benchmark plan',
      planReference: 'BENCH',
      metadata: {},
    });
    const hot = companyIdOf(COMPANIES);
    await inParallel(COMPANIES + 1, 64, async (i) => {
      await engine.execute(
        workspaceId,
        { type: 'PutAllowance', companyId: companyIdOf(i), target: 'current', precondition: { kind: 'none' }, input: input(10_000_000), now: new Date().toISOString(), bulkJobId: null, environment: 'sandbox' },
        ctx(),
      );
    });
    await settle(await store.committedHead());
    log(`pool of 100,000,000 credits and ${fmtInt(COMPANIES + 1)} allowances written in ${fmtMs(performance.now() - t0)}`);
    if (interrupted) return;

    // 1. Reservation throughput, at several numbers of concurrent callers (documents being metered at once).
    console.log(`\n1. reservations (the command metering issues for each submitted document), by concurrent callers`);
    const levels = [...new Set([16, opts.concurrency, 256])].sort((a, b) => a - b);
    const phases: Throughput[] = [];
    const catchUps: string[] = [];
    let finalized = 0;
    let finalizeMs = 0;
    const run = async (label: string, engines: CreditsEngine[], count: number, concurrency: number, companyFor: (i: number) => string) => {
      const p = await reservePhase(label, engines, workspaceId, count, concurrency, companyFor);
      phases.push(p);
      const lag = performance.now();
      await settle(p.last);
      catchUps.push(fmtMs(performance.now() - lag));
      // Between phases (untimed) the documents reach their final result, as delivery would make
      // them: open reservations stay as few as in a running service instead of piling up.
      const f0 = performance.now();
      const open = [...pvalues((await engine.read(workspaceId)).reservations)].map((r) => r.reservationId);
      let last: Position | null = null;
      await inParallel(open.length, 64, async (i) => {
        const r = await engine.execute(workspaceId, { type: 'Finalize', reservationId: open[i]!, reason: 'final and valid', now: new Date().toISOString() }, ctx());
        last = r.position ?? last;
      });
      await settle(last);
      finalized += open.length;
      finalizeMs += performance.now() - f0;
      return p;
    };
    const spreadAt = new Map<number, Throughput>();
    const hotAt = new Map<number, Throughput>();
    for (const level of levels) {
      if (interrupted) return;
      spreadAt.set(level, await run(`spread over ${fmtInt(COMPANIES)} companies, ${level} callers`, [engine], opts.reservations, level, (i) => companyIdOf(i % COMPANIES)));
    }
    for (const level of levels) {
      if (interrupted) return;
      hotAt.set(level, await run(`one hot company, ${level} callers`, [engine], opts.reservations, level, () => hot));
    }
    // Two service instances on one workspace: separate caches and batches, kept apart only by the expected revision.
    const second = new CreditsEngine(store, { snapshots: knexSnapshotStore(knex) });
    await run(`one hot company, two instances, ${opts.concurrency} callers`, [engine, second], Math.max(1, Math.floor(opts.reservations / 2)), opts.concurrency, () => hot);
    if (interrupted) return;
    console.log(
      renderTable(
        ['phase', 'reservations', 'time', 'per second', 'latency p50', 'latency p99', 'read models caught up'],
        phases.map((p, i) => [p.label, fmtInt(p.reserved), fmtMs(p.ms), fmtInt(p.perSecond), fmtMs(p.p50), fmtMs(p.p99), `+${catchUps[i]}`]),
      ),
    );
    console.log('   "read models caught up": how long after the last reservation of the phase the ledger and balances had it');
    console.log(`   between phases, ${fmtInt(finalized)} reservations were finalized (consumption.finalized), ${fmtInt((finalized * 1000) / finalizeMs)}/s`);
    // The numbers must add up: every reservation is on the hot company's allowance, the pool, and in the ledger.
    const hotRow = await knex('credit_companies').where({ workspace_id: workspaceId, company_id: hot }).first('current_reserved');
    const pool = (await timedGet(`${svc.url}/v3/connect/credits/pool`, key.apiKey)).json.data;
    const hotReserved = phases.filter((p) => p.label.startsWith('one hot company')).reduce((n, p) => n + p.reserved, 0);
    const totalReserved = phases.reduce((n, p) => n + p.reserved, 0);
    const hotConsumed = Number((await knex('credit_companies').where({ workspace_id: workspaceId, company_id: hot }).first('current_usage'))?.current_usage);
    const ledgerCount = Number((await knex('credit_transactions').where({ workspace_id: workspaceId, event_type: 'reservation.created' }).count({ n: '*' }))[0]!.n);
    if (Number(hotRow?.current_reserved) !== 0 || hotConsumed !== hotReserved) problems.push(`hot company reserved ${hotRow?.current_reserved} and consumed ${hotConsumed}, expected 0 and ${hotReserved}`);
    if (pool.reserved !== 0 || pool.consumed !== totalReserved) problems.push(`pool reserved ${pool.reserved} and consumed ${pool.consumed}, expected 0 and ${totalReserved}`);
    if (ledgerCount !== totalReserved) problems.push(`ledger holds ${ledgerCount} reservation.created, expected ${totalReserved}`);
    console.log(`   check: pool consumed ${fmtInt(pool.consumed)}, hot company consumed ${fmtInt(hotConsumed)} of ${fmtInt(hotReserved)} reserved, ledger reservations ${fmtInt(ledgerCount)}`);
    const spread = spreadAt.get(opts.concurrency)!;
    const hotOne = hotAt.get(opts.concurrency)!;
    console.log(
      `   at ${opts.concurrency} callers — target ≥ ${fmtInt(TARGET_SPREAD_PER_S)}/s spread: ${fmtInt(spread.perSecond)}/s ${spread.perSecond >= TARGET_SPREAD_PER_S ? 'met ✓' : 'NOT met ✗'}; ` +
        `≥ ${TARGET_HOT_PER_S}/s on one hot company: ${fmtInt(hotOne.perSecond)}/s ${hotOne.perSecond >= TARGET_HOT_PER_S ? 'met ✓' : 'NOT met ✗'}`,
    );
    if (interrupted) return;

    // 2. Metering end to end through the reactor.
    console.log(`\n2. metering: ${fmtInt(opts.documents)} submitted documents until the metering reactor has reserved for each`);
    t0 = performance.now();
    let lastAppend: Position | null = null;
    await inParallel(opts.documents, 32, async (i) => {
      const documentId = randomUUID();
      const result = await store.append(
        documentStream(documentId),
        [
          {
            id: randomUUID(),
            type: 'DocumentSubmitted',
            schemaVersion: 1,
            data: {
              documentId,
              uuid: randomUUID(),
              documentNumber: `BENCH-${i}`,
              country: 'AE',
              environment: 'sandbox',
              documentType: { base: 'tax_invoice', modifiers: [] },
              source: { name: 'Bench ERP', version: 'v1', companyId: companyIdOf(i % COMPANIES) },
              format: 'new',
              externalId: null,
              destinations: ['TAX_AUTHORITY'],
              coreDocument: { header: { documentNumber: `BENCH-${i}` } },
              validation: { success: true },
              xmlBase64: null,
            },
            metadata: { correlationId: randomUUID(), causationId: null, occurredAt: new Date().toISOString(), workspaceId, environment: 'sandbox' },
          },
        ],
        'no_stream',
      );
      lastAppend = result.position;
    });
    const appendMs = performance.now() - t0;
    // Until the metering reactor has passed the last document, then until the read models have its reservations.
    await settle(await store.committedHead(), 600_000);
    const meteringMs = performance.now() - t0;
    await settle(await store.committedHead(), 600_000);
    const metered = Number((await knex('credit_transactions').where({ workspace_id: workspaceId, event_type: 'reservation.created' }).count({ n: '*' }))[0]!.n) - ledgerCount;
    if (metered !== opts.documents) problems.push(`metering reserved ${metered} of ${opts.documents} documents`);
    console.log(
      `   ${fmtInt(opts.documents)} documents appended in ${fmtMs(appendMs)} (while being metered); all metered after ${fmtMs(meteringMs)}: ` +
        `${fmtInt((opts.documents * 1000) / meteringMs)} documents/s end to end`,
    );
    void lastAppend;
    if (interrupted) return;

    // 3. Ledger page reads.
    const existing = Number((await knex('credit_transactions').where({ workspace_id: workspaceId }).count({ n: '*' }))[0]!.n);
    const toSeed = Math.max(0, opts.ledgerRows - existing);
    console.log(`\n3. ledger page reads with ${fmtInt(existing + toSeed)} transactions (${fmtInt(existing)} written through the event path, ${fmtInt(toSeed)} by the bulk path)`);
    t0 = performance.now();
    const chunk = 250_000;
    const baseCommit = 10_000_000_000; // newer in log order than every real event
    const startMs = now - 30 * 86_400_000;
    for (let from = 1; from <= toSeed && !interrupted; from += chunk) {
      const to = Math.min(toSeed, from + chunk - 1);
      await knex.raw(
        `insert into credit_transactions (workspace_id, log_commit, log_prepare, transaction_id, event_type, occurred_at, company_id, environment, amount,
           allowance_period_id, allowance_version, target, reservation_id, document_id, lot_id, reason, balance_before, balance_after,
           correlation_id, idempotency_key, request_id, bulk_job_id, key_id, actor, details)
         select :ws, :base + g, g, 'txn_' || md5(:salt || g::text),
                (array['reservation.created','reservation.created','consumption.finalized','consumption.finalized','reservation.created',
                       'consumption.finalized','reservation.released','reservation.created','consumption.finalized','allowance.replaced'])[1 + g % 10],
                to_timestamp(:startMs / 1000.0 + g * (2592000.0 / :total)), 'c0ffee' || lpad((g % ${COMPANIES})::text, 18, '0'), 'sandbox', 1,
                'ap_' || substr(md5('p' || (g % ${COMPANIES})::text), 1, 24), 1, null, 'res_' || md5('r' || g::text), md5('d' || g::text), null, null,
                jsonb_build_object('companyLimit', 10000000, 'companyFinalizedUsage', g / 2000, 'companyReserved', g % 7, 'companyAvailable', 10000000 - g / 2000,
                  'poolActive', 100000000, 'poolReserved', g % 97, 'poolConsumed', g / 2, 'poolExpired', 0, 'poolAvailable', 100000000 - g),
                jsonb_build_object('companyLimit', 10000000, 'companyFinalizedUsage', g / 2000, 'companyReserved', g % 7 + 1, 'companyAvailable', 10000000 - g / 2000 - 1,
                  'poolActive', 100000000, 'poolReserved', g % 97 + 1, 'poolConsumed', g / 2, 'poolExpired', 0, 'poolAvailable', 100000000 - g - 1),
                'corr-' || (g / 4)::text, null, 'req-' || (g / 4)::text, case when g % 1000 < 5 then 'cbj_' || lpad((g / 1000)::text, 24, '0') else null end,
                null, 'credit-metering', '{}'::jsonb
           from generate_series(:from::bigint, :to::bigint) g`,
        { ws: workspaceId, base: baseCommit, salt: database, startMs, total: toSeed, from, to },
      );
      log(`${fmtInt(to)} of ${fmtInt(toSeed)} rows (${fmtMs(performance.now() - t0)})`);
    }
    // As autovacuum would after a bulk load: visibility map and statistics up to date.
    await knex.raw('vacuum (analyze) credit_transactions');
    console.log(`   bulk path: ${fmtInt(toSeed)} rows inserted and analysed in ${fmtMs(performance.now() - t0)}`);
    if (interrupted) return;

    const base = `${svc.url}/v3/connect/credits/transactions`;
    const sample = async (n: number) =>
      (await knex.raw(`select log_commit::text as c, log_prepare::text as p, company_id, transaction_id, correlation_id from credit_transactions where workspace_id = ? order by random() limit ?`, [workspaceId, n])).rows as {
        c: string;
        p: string;
        company_id: string;
        transaction_id: string;
        correlation_id: string;
      }[];
    const picks = await sample(opts.samples + WARM_UP);
    const pick = (i: number) => picks[i % picks.length]!;
    const cursorAt = (row: { c: string; p: string }, query: Record<string, string> = {}) => encodeURIComponent(encodeCursor([row.c, row.p], parseLedgerQuery(query).filters));
    const mid = new Date(startMs + 15 * 86_400_000);
    const walk: { cursor: string | null } = { cursor: null };
    const scenarios: { label: string; url: (i: number) => string; after?: (json: any) => void }[] = [
      { label: 'first page (limit 25)', url: () => base },
      { label: 'first page, limit 100', url: () => `${base}?limit=100` },
      {
        label: 'cursor walk from the newest, limit 100',
        url: () => `${base}?limit=100${walk.cursor ? `&cursor=${encodeURIComponent(walk.cursor)}` : ''}`,
        after: (json) => (walk.cursor = json.data.nextCursor),
      },
      { label: 'random deep cursor, limit 100', url: (i) => `${base}?limit=100&cursor=${cursorAt(pick(i))}` },
      { label: 'companyId, first page', url: (i) => `${base}?companyId=${pick(i).company_id}` },
      { label: 'companyId, deep cursor, limit 100', url: (i) => `${base}?limit=100&companyId=${pick(i).company_id}&cursor=${cursorAt(pick(i), { companyId: pick(i).company_id })}` },
      { label: 'eventType=consumption.finalized, deep cursor', url: (i) => `${base}?eventType=consumption.finalized&cursor=${cursorAt(pick(i), { eventType: 'consumption.finalized' })}` },
      { label: 'eventType=allowance.replaced (10%)', url: () => `${base}?eventType=allowance.replaced&limit=100` },
      {
        label: 'occurredFrom/To one hour, middle of 30 days',
        url: () => `${base}?occurredFrom=${mid.toISOString()}&occurredTo=${new Date(mid.getTime() + 3_600_000).toISOString()}&limit=100`,
      },
      { label: 'occurredFrom only (last 24 h)', url: () => `${base}?occurredFrom=${new Date(now - 86_400_000).toISOString()}` },
      { label: 'correlationId', url: (i) => `${base}?correlationId=${pick(i).correlation_id}` },
      { label: 'transactionId', url: (i) => `${base}?transactionId=${pick(i).transaction_id}` },
      { label: 'bulkJobId', url: (i) => `${base}?bulkJobId=cbj_${String(Math.floor((i * 997) % Math.max(1, toSeed / 1000))).padStart(24, '0')}` },
      { label: 'companyId + eventType', url: (i) => `${base}?companyId=${pick(i).company_id}&eventType=reservation.created` },
    ];
    const results: { label: string; p50: number; p95: number; p99: number; max: number; items: number }[] = [];
    for (const s of scenarios) {
      if (interrupted) break;
      const latencies: number[] = [];
      let items = 0;
      for (let i = 0; i < WARM_UP + opts.samples; i++) {
        const r = await timedGet(s.url(i), key.apiKey);
        if (r.status !== 200) {
          problems.push(`${s.label}: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
          break;
        }
        s.after?.(r.json);
        if (i >= WARM_UP) {
          latencies.push(r.ms);
          items += r.json.data.items.length;
        }
      }
      latencies.sort((a, b) => a - b);
      results.push({
        label: s.label,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1] ?? Number.NaN,
        items: latencies.length ? items / latencies.length : 0,
      });
    }
    console.log(`   ${opts.samples} sequential requests per scenario after ${WARM_UP} warm-up, over HTTP with authentication`);
    console.log(
      renderTable(
        ['scenario', 'items/page', 'p50', 'p95', 'p99', 'max'],
        results.map((r) => [r.label, r.items.toFixed(1), fmtMs(r.p50), fmtMs(r.p95), fmtMs(r.p99), fmtMs(r.max)]),
      ),
    );
    const worst = results.reduce((a, b) => (b.p95 > a.p95 ? b : a), results[0]!);
    console.log(
      `   worst p95: ${fmtMs(worst.p95)} (${worst.label}) — target ledger page p95 < ${TARGET_PAGE_P95_MS} ms: ${results.every((r) => r.p95 < TARGET_PAGE_P95_MS) ? 'met ✓' : 'NOT met ✗'}`,
    );
    const events = (await store.readStream(creditsStream(workspaceId), { backwards: true, maxCount: 1 }))[0];
    console.log(`\n   the workspace's credits stream ends at revision ${events?.revision ?? '-'}; allowance period ids look like ${allowancePeriodIdFor(hot, 1)}`);
  } finally {
    await service?.close();
    const created = (await fresh?.close()) ?? false;
    console.log(`\ntotal ${((Date.now() - startedAt) / 1000).toFixed(1)} s; ${created ? 'benchmark database dropped' : 'no database created'}`);
  }
  reportProblems(problems);
}

runBenchmark(main);
