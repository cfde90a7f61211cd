/**
 * Benchmark of Connect over HTTP, on the real service (Koa, projections, PostgreSQL):
 *
 * 1. one onboarding job of 500 rows (POST /v3/connect/companies/onboarding-jobs), timed end to
 *    end from the request to the response (which waits for the read model);
 * 2. seeding the workspace to 10,000 companies with more 500-row jobs (each timed as well);
 * 3. company listing (GET /v3/connect/companies) with 10,000 companies in the workspace: p50,
 *    p95 and p99 for first, middle, last and random pages, page sizes 10 and 100, searches
 *    (unique, selective, matching everything, matching nothing) and filters.
 *
 * It prints the figures and a verdict against the targets (500 rows under 5 s; listing p95 under
 * 50 ms); it never fails on timings (the exit code is 1 only when a request failed).
 *
 * By default it runs on an embedded PostgreSQL in var/pg-bench-connect (port 54369), in a fresh
 * database dropped at the end; with DATABASE_URL set it creates (and drops) a fresh database on
 * that server.
 *
 *   npm run bench:connect -- [--companies 10000] [--samples 200]
 */
import os from 'node:os';
import { Command } from 'commander';
import { createAspAuthorization } from '../commands/connect/settings.js';
import { createApiKey, createWorkspace } from '../commands/workspaces.js';
import { startService, type Service } from '../http/service.js';
import type { Config } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { fmtInt, fmtMs, openFreshBenchDatabase, percentile, positiveInt, renderTable, reportProblems, runBenchmark, type FreshBenchDatabase } from './bench-support.js';

const BENCH_PG_DIR = 'var/pg-bench-connect';
const BENCH_PG_PORT = '54369';
const JOB_ROWS = 500;
const TARGET_JOB_MS = 5_000;
const TARGET_LIST_P95_MS = 50;
const WARM_UP = 20;


const program = new Command()
  .name('bench:connect')
  .description('Benchmark Connect onboarding jobs and company listing over HTTP.')
  .option('--companies <n>', 'companies in the workspace for the listing phase (multiple of 500)', positiveInt(100_000), 10_000)
  .option('--samples <n>', 'timed requests per listing scenario', positiveInt(10_000), 200)
  .showHelpAfterError();
program.parse();
const opts = program.opts<{ companies: number; samples: number }>();
const companies = Math.max(JOB_ROWS, Math.ceil(opts.companies / JOB_ROWS) * JOB_ROWS);

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  console.log('\ninterrupted: finishing the current request, then cleaning up (Ctrl-C again to exit now)');
});

const problems: string[] = [];

// ---------------------------------------------------------------------------------------------
// Database plumbing (as bench-eventstore does)


// ---------------------------------------------------------------------------------------------
// Data

const CITIES = ['Dubai', 'Abu Dhabi', 'Sharjah', 'Ajman', 'Fujairah', 'Ras Al Khaimah', 'Umm Al Quwain'];
const SECTORS = ['Trading', 'Logistics', 'Contracting', 'Hospitality', 'Technology', 'Foodstuff', 'Marine'];

const tinOf = (i: number) => `10${String(i).padStart(8, '0')}`;
const emailOf = (i: number) => `finance${i}@company${i}.ae`;

function row(i: number) {
  return {
    sourceName: `ERP ${i}`,
    sourceVersion: i % 3 === 0 ? 'v2' : 'v1',
    tin: tinOf(i),
    contactPersonEmail: emailOf(i),
    contactPersonName: `Contact ${i}`,
    contactPersonMobile: `+9715${String(i).padStart(8, '0')}`,
    branchName: `${CITIES[i % CITIES.length]} branch ${i}`,
  };
}

async function pool<T>(items: readonly T[], limit: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && !interrupted) await f(items[next++]!);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// HTTP

interface Timed {
  ms: number;
  status: number;
  json: any;
}

async function timedCall(url: string, apiKey: string, init: { method?: string; body?: unknown } = {}): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': apiKey, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  });
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

interface JobTiming {
  index: number;
  ms: number;
  succeeded: number;
  failed: number;
}

async function runJob(service: Service, apiKey: string, index: number): Promise<JobTiming> {
  const rows = Array.from({ length: JOB_ROWS }, (_, k) => row(index * JOB_ROWS + k));
  const r = await timedCall(`${service.url}/v3/connect/companies/onboarding-jobs`, apiKey, {
    method: 'POST',
    body: { countryCode: 'AE', platformEnvironment: 'sandbox', rows },
  });
  if (r.status !== 200) {
    problems.push(`job ${index}: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    return { index, ms: r.ms, succeeded: 0, failed: JOB_ROWS };
  }
  const d = r.json.data;
  if (d.failedRows > 0) {
    const first = d.rows.find((x: any) => x.status !== 'onboarded');
    problems.push(`job ${index}: ${d.failedRows} rows failed, first ${first?.errorCode}: ${first?.errorMessage}`);
  }
  return { index, ms: r.ms, succeeded: d.succeededRows, failed: d.failedRows };
}

interface Scenario {
  label: string;
  query: () => string;
  /** Companies the answer must count (meta.pagination.total), when known. */
  expectTotal?: number;
}

interface ScenarioResult {
  label: string;
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  items: number;
  total: number;
}

async function runScenario(service: Service, apiKey: string, s: Scenario, samples: number): Promise<ScenarioResult> {
  const latencies: number[] = [];
  let items = 0;
  let total = 0;
  for (let i = 0; i < WARM_UP + samples && !interrupted; i++) {
    const r = await timedCall(`${service.url}/v3/connect/companies${s.query()}`, apiKey);
    if (r.status !== 200) {
      problems.push(`${s.label}: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
      break;
    }
    total = r.json.meta.pagination.total;
    if (s.expectTotal !== undefined && total !== s.expectTotal) {
      problems.push(`${s.label}: total ${total}, expected ${s.expectTotal}`);
      break;
    }
    if (i >= WARM_UP) {
      latencies.push(r.ms);
      items += r.json.data.length;
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    label: s.label,
    samples: latencies.length,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? Number.NaN,
    items: latencies.length ? items / latencies.length : 0,
    total,
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = Date.now();
  const log = (msg: string) => console.log(`  ${msg}`);
  let fresh: FreshBenchDatabase | null = null;
  let service: Service | null = null;
  try {
    fresh = await openFreshBenchDatabase({ prefix: 'bench_connect', startedAt, pgDir: BENCH_PG_DIR, pgPort: BENCH_PG_PORT });
    const { database, serverVersion: info } = fresh;
    const config: Config = { ...fresh.serviceConfig };
    console.log(
      `\nConnect benchmark — ${fresh.where}, fresh database ${database}`,
    );
    console.log(`  PostgreSQL ${info}; Node ${process.version}; ${os.cpus().length} CPUs; ${fmtInt(companies)} companies; ${opts.samples} samples per listing scenario\n`);

    service = await startService({ config, port: 0, logger: createLogger('silent') });
    const store = service.runtime.store;
    const ctx = () => ({ now: new Date(), actor: 'bench' });
    const settle = async (p: Parameters<Service['runner']['waitFor']>[0]) => {
      if (!(await service!.runner.waitFor(p, { timeoutMs: 30_000 }))) throw new Error('projections did not catch up');
    };
    const ws = await createWorkspace(store, 'Connect benchmark', ctx());
    await settle(ws.position);
    const key = await createApiKey(store, { workspaceId: ws.workspaceId, environment: 'sandbox', permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
    await settle(key.position);

    // ASP authorizations: the prerequisite of every row (written through the command, as the admin CLI does).
    let t0 = performance.now();
    const indexes = Array.from({ length: companies }, (_, i) => i);
    await pool(indexes, 32, async (i) => {
      await createAspAuthorization(
        store,
        { workspaceId: ws.workspaceId, environment: 'sandbox', tin: tinOf(i), email: emailOf(i), legalName: `${SECTORS[i % SECTORS.length]} Company ${i} LLC`, vatTrn: `${tinOf(i)}00003` },
        ctx(),
      );
    });
    log(`${fmtInt(companies)} ASP authorizations recorded in ${fmtMs(performance.now() - t0)}`);
    if (interrupted) return;

    // 1. The measured job, then 2. the seeding jobs.
    console.log(`\n1. one onboarding job of ${JOB_ROWS} rows, end to end over HTTP`);
    const first = await runJob(service, key.apiKey, 0);
    console.log(
      `   ${fmtInt(first.succeeded)} onboarded, ${first.failed} failed in ${fmtMs(first.ms)} (${fmtInt((JOB_ROWS * 1000) / first.ms)} rows/s) ` +
        `— target < ${TARGET_JOB_MS / 1000} s: ${first.ms < TARGET_JOB_MS ? 'met ✓' : 'NOT met ✗'}`,
    );
    const jobs = companies / JOB_ROWS;
    console.log(`\n2. seeding to ${fmtInt(companies)} companies with ${jobs - 1} more jobs of ${JOB_ROWS} rows`);
    t0 = performance.now();
    const seeding: JobTiming[] = [];
    for (let j = 1; j < jobs && !interrupted; j++) {
      seeding.push(await runJob(service, key.apiKey, j));
      if (j % 5 === 0) log(`${fmtInt((j + 1) * JOB_ROWS)} companies`);
    }
    const jobMs = [first, ...seeding].map((j) => j.ms).sort((a, b) => a - b);
    console.log(
      `   ${jobs} jobs in ${fmtMs(performance.now() - t0 + first.ms)}; per job p50 ${fmtMs(percentile(jobMs, 50))}, ` +
        `p95 ${fmtMs(percentile(jobMs, 95))}, max ${fmtMs(jobMs[jobMs.length - 1]!)} (the last ones with ${fmtInt(companies - JOB_ROWS)} companies already there)`,
    );
    if (interrupted) return;

    // 3. Listing.
    const pages10 = Math.ceil(companies / 10);
    const pages100 = Math.ceil(companies / 100);
    const rnd = (n: number) => 1 + Math.floor(Math.random() * n);
    const matchingErp12 = Array.from({ length: companies }, (_, i) => i).filter((i) => `erp ${i}`.includes('erp 12')).length;
    const scenarios: Scenario[] = [
      { label: 'page 1, limit 10', query: () => '', expectTotal: companies },
      { label: `middle page ${Math.ceil(pages10 / 2)}, limit 10`, query: () => `?page=${Math.ceil(pages10 / 2)}&limit=10` },
      { label: `last page ${pages10}, limit 10`, query: () => `?page=${pages10}&limit=10` },
      { label: 'random page, limit 10', query: () => `?page=${rnd(pages10)}&limit=10` },
      { label: 'page 1, limit 100', query: () => '?limit=100' },
      { label: `last page ${pages100}, limit 100`, query: () => `?page=${pages100}&limit=100` },
      { label: 'random page, limit 100', query: () => `?page=${rnd(pages100)}&limit=100` },
      { label: 'search unique tin', query: () => `?search=${tinOf(rnd(companies) - 1)}`, expectTotal: 1 },
      { label: `search "ERP 12" (${matchingErp12} match)`, query: () => '?search=ERP%2012', expectTotal: matchingErp12 },
      { label: 'search "company" (all match), random page', query: () => `?search=company&page=${rnd(pages10)}`, expectTotal: companies },
      { label: 'search "dubai branch", page 1', query: () => '?search=dubai%20branch' },
      { label: 'search with no match', query: () => '?search=no-such-company-anywhere', expectTotal: 0 },
      { label: 'sourceVersion=v2 & status=active, random page', query: () => `?sourceVersion=v2&status=active&page=${rnd(Math.ceil(companies / 30))}` },
      { label: 'countryCode=AE, random page, limit 100', query: () => `?countryCode=AE&limit=100&page=${rnd(pages100)}` },
    ];
    console.log(`\n3. company listing with ${fmtInt(companies)} companies (${opts.samples} sequential requests per scenario after ${WARM_UP} warm-up)`);
    const results: ScenarioResult[] = [];
    for (const s of scenarios) {
      if (interrupted) break;
      results.push(await runScenario(service, key.apiKey, s, opts.samples));
    }
    console.log(
      renderTable(
        ['scenario', 'total', 'items/page', 'p50', 'p95', 'p99', 'max'],
        results.map((r) => [r.label, fmtInt(r.total), r.items.toFixed(1), fmtMs(r.p50), fmtMs(r.p95), fmtMs(r.p99), fmtMs(r.max)]),
      ),
    );
    const worst = results.reduce((a, b) => (b.p95 > a.p95 ? b : a), results[0]!);
    console.log(
      `   worst p95: ${fmtMs(worst.p95)} (${worst.label}) — target p95 < ${TARGET_LIST_P95_MS} ms for any page and search: ` +
        `${results.every((r) => r.p95 < TARGET_LIST_P95_MS) ? 'met ✓' : 'NOT met ✗'}`,
    );
  } finally {
    await service?.close();
    const created = (await fresh?.close()) ?? false;
    console.log(`\ntotal ${((Date.now() - startedAt) / 1000).toFixed(1)} s; ${created ? 'benchmark database dropped' : 'no database created'}`);
  }
  reportProblems(problems);
}

runBenchmark(main);
