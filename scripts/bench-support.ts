/**
 * Small helpers for the benchmark scripts: percentiles, number formatting and a plain
 * (colourless) table, so that output piped to a file or CI log stays readable; and (below) the
 * service as a child process for the benchmarks that drive the real server over HTTP.
 */
import net from 'node:net';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { InvalidArgumentError } from 'commander';
import pg from 'pg';
import { TERMINAL_STATES } from '../domain/document/document.js';
import { sampleDocument } from '../domain/validation/index.js';
import { loadConfig, type Config } from '../platform/config.js';
import { openDatabase, type Database } from '../platform/database.js';

/** The p-th percentile (0..100) of an ascending array, nearest-rank; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export interface Distribution {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** p50/p99/max of a list of samples (the list is sorted in place). */
export function distribution(samples: number[]): Distribution {
  samples.sort((a, b) => a - b);
  return {
    count: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.length > 0 ? samples[samples.length - 1]! : Number.NaN,
  };
}

const intFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function fmtInt(n: number): string {
  return Number.isFinite(n) ? intFormat.format(Math.round(n)) : '–';
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${fmtInt(ms)} ms`;
}

export function fmtDist(d: Distribution): string {
  return `${fmtMs(d.p50)} / ${fmtMs(d.p99)} / ${fmtMs(d.max)}`;
}

export function fmtBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

/** Renders rows under a header as a bordered text table without ANSI colours. */
export function renderTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const table = new Table({
    head: [...head],
    style: { head: [], border: [], compact: false },
    colAligns: head.map((_, i) => (i === 0 ? 'left' : 'right')),
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}

// ---------------------------------------------------------------------------------------------
// The service as a child process, for the HTTP benchmarks that drive the real server
// (bench-submit, bench-delivery): what `npm start` runs (the tree compiled to dist/ by
// scripts/build.mjs, `node <flags> dist/scripts/start.js`) on its own embedded
// PostgreSQL data directory and ports, the admin CLI run against the same database, and the CPU
// time and peak memory of the server and of its PostgreSQL processes read from /proc (Linux).

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture node runs on

/** utime + stime (+ cutime + cstime with `children`) of a process in seconds; NaN when unreadable. */
function procCpuSeconds(pid: number, children = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
    const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
    return ticks / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

function parentPid(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** CPU seconds of the embedded PostgreSQL in `pgDir`: the postmaster (with its reaped children) and its live backends and workers. */
export function postgresCpuSeconds(pgDir: string): number {
  let postmaster: number;
  try {
    postmaster = Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return Number.NaN;
  }
  let total = procCpuSeconds(postmaster, true);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid !== postmaster && parentPid(pid) === postmaster) {
      const s = procCpuSeconds(pid);
      if (Number.isFinite(s)) total += s;
    }
  }
  return total;
}

export interface BenchServerOptions {
  /** Embedded PostgreSQL data directory, relative to the working directory (e.g. var/pg-bench-submit). */
  pgDir: string;
  pgPort: number;
  httpPort: number;
  /** Extra environment of the server and the admin CLI. */
  env?: Record<string, string>;
}

/** CPU seconds used so far by the benchmark process itself, the server, PostgreSQL and the whole machine. */
export interface CpuSnapshot {
  at: number;
  client: number;
  server: number;
  postgres: number;
  machine: number;
}

/** Non-idle CPU seconds of the whole machine since boot (/proc/stat), all cores together. */
function machineCpuSeconds(): number {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + (f[7] ?? 0);
    return busy / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/**
 * Node flags the service runs with (the `start` script of package.json, the Dockerfile): a 64 MB
 * young-generation semi-space, since decoding events and requests allocates many short-lived
 * objects and the default 16 MB makes the scavenger run several times as often; and an old
 * generation allowed to grow by 25% of what the last full collection kept, instead of V8's up to
 * 4x under a high allocation rate. The objects of batches in flight survive into the old
 * generation, and with V8's factor a catch-up held 560-580 MB of RSS for some 70-90 MB of live
 * objects; with 25% it peaks at about 360 MB, at the same speed (docs/changelog.md).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=64', '--heap-growing-percent=25'];

/**
 * The server's entry as `npm start` runs it: the tree compiled to dist/ (scripts/build.mjs, run
 * once per benchmark process, as `npm start` runs it first), `scripts/x.ts` as `dist/scripts/x.js`.
 * BENCH_SERVER_TSX=1 runs the TypeScript through tsx instead, as the service ran before.
 */
function serviceEntry(entry: string): string[] {
  if (process.env.BENCH_SERVER_TSX === '1') return ['--import', 'tsx', entry];
  if (!built) {
    const result = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs')], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) throw new Error(`scripts/build.mjs exited ${result.status ?? result.signal}`);
    built = true;
  }
  return [path.join(repoRoot, 'dist', entry.replace(/\.ts$/, '.js'))];
}
let built = false;

export class BenchServer {
  readonly env: NodeJS.ProcessEnv;
  readonly base: string;
  readonly databaseUrl: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(readonly options: BenchServerOptions) {
    this.env = {
      ...process.env,
      EMBEDDED_PG_DIR: options.pgDir,
      EMBEDDED_PG_PORT: String(options.pgPort),
      PORT: String(options.httpPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      ...options.env,
    };
    delete this.env.DATABASE_URL;
    delete this.env.EVENTSTORE_URL;
    this.base = `http://127.0.0.1:${options.httpPort}`;
    this.databaseUrl = `postgres://postgres:postgres@127.0.0.1:${options.pgPort}/${this.env.EMBEDDED_PG_DATABASE || 'einvoicing'}`;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Runs `node --import tsx <args>` (e.g. the admin CLI) with the server's environment; resolves its stdout. */
  run(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: this.env, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}`))));
    });
  }

  /** An admin CLI command; its JSON answer. */
  async admin<T = any>(...args: string[]): Promise<T> {
    return JSON.parse(await this.run(['scripts/admin.ts', ...args])) as T;
  }

  /**
   * Starts the server (stdout, its request log, is discarded unless BENCH_SERVER_STDOUT names a file; stderr is shown) and waits for /readyz.
   * `entry`: the entry point, `scripts/start.ts` (what `npm start` runs) unless a benchmark starts
   * the service with parts left out (`scripts/bench-service-parts.ts`).
   */
  async start(timeoutMs = 60_000, entry = 'scripts/start.ts'): Promise<void> {
    // BENCH_SERVER_NODE_ARGS: extra node flags for the server only (e.g. "--cpu-prof --cpu-prof-dir=var/prof").
    const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    // The node flags of `npm start` (package.json), then the server itself.
    // BENCH_SERVER_STDOUT: a file that receives the server's stdout (e.g. with "--trace-gc" in BENCH_SERVER_NODE_ARGS).
    const stdout = process.env.BENCH_SERVER_STDOUT ? fs.openSync(process.env.BENCH_SERVER_STDOUT, 'a') : 'ignore';
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, ...serviceEntry(entry)], { env: this.env, stdio: ['ignore', stdout, 'inherit'] });
    if (typeof stdout === 'number') fs.closeSync(stdout);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited during start-up (${child.exitCode ?? child.signalCode})`);
      try {
        if ((await httpRequest(undefined, `${this.base}/readyz`)).status === 200) return;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the server did not become ready within ${timeoutMs / 1000} s`);
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM (graceful: it stops the embedded PostgreSQL when no one else uses it), SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL, as a crash: nothing of the server's shutdown runs (the crash test). */
  async crash(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGKILL');
    await this.exited;
  }

  /** For a process 'exit' handler: signals the server synchronously if it still runs. */
  killNow(): void {
    if (this.running) this.child!.kill('SIGTERM');
  }

  /** The server's peak resident set size (VmHWM) in MB. */
  peakRssMb(): number {
    if (!this.child?.pid) return Number.NaN;
    const status = fs.readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 'NaN') / 1024;
  }

  /** CPU seconds of the postmaster (with its reaped children) and of its live backends and workers. */
  postgresCpuSeconds(): number {
    return postgresCpuSeconds(this.options.pgDir);
  }

  cpu(): CpuSnapshot {
    const own = process.cpuUsage();
    return {
      at: performance.now(),
      client: (own.user + own.system) / 1e6,
      server: this.child?.pid ? procCpuSeconds(this.child.pid) : Number.NaN,
      postgres: this.postgresCpuSeconds(),
      machine: machineCpuSeconds(),
    };
  }
}

export interface Cores {
  client: number;
  server: number;
  postgres: number;
  /** Everything else on the machine (other programs, the kernel's own threads). */
  other: number;
}

/** Cores used on average between two snapshots (CPU seconds per wall-clock second). */
export function coresBetween(a: CpuSnapshot, b: CpuSnapshot): Cores {
  const wall = (b.at - a.at) / 1000;
  const client = (b.client - a.client) / wall;
  const server = (b.server - a.server) / wall;
  const postgres = (b.postgres - a.postgres) / wall;
  const other = Math.max(0, (b.machine - a.machine) / wall - client - server - postgres);
  return { client, server, postgres, other };
}

/** Starts measuring the CPU of every process but this one; the function returned gives its average cores so far. */
export function otherCores(): () => number {
  const own0 = process.cpuUsage();
  const machine0 = machineCpuSeconds();
  const t0 = performance.now();
  return () => {
    const own = process.cpuUsage(own0);
    const wall = (performance.now() - t0) / 1000;
    return Math.max(0, (machineCpuSeconds() - machine0 - (own.user + own.system) / 1e6) / wall);
  };
}

/** `client / server / pg / other` cores. */
export function fmtCores(c: Cores): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');
  return `${f(c.client)} / ${f(c.server)} / ${f(c.postgres)} / ${f(c.other)}`;
}

export interface HttpAnswer {
  status: number;
  body: string;
}

/** One HTTP request on a keep-alive agent (cheaper per request than fetch); the body is read whole. */
export function httpRequest(
  agent: http.Agent | undefined,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const req = http.request(url, { method: init.method ?? 'GET', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * A workspace with a read_write sandbox key and one onboarded AE source (admin CLI, then
 * POST /v3/connect/companies): everything a Unify submission needs.
 */
/**
 * The body of a valid 20-line UAE tax invoice submission (new format) from the tenant's source,
 * serialised once: each call returns it with `documentNumber` spliced in, so a benchmark's
 * requests cost no serialisation.
 */
export function submissionBody(source: string): (documentNumber: string) => string {
  const placeholder = 'BENCH-DOCUMENT-NUMBER-PLACEHOLDER';
  const [head, tail] = JSON.stringify({
    country: 'AE',
    environment: 'sandbox',
    purpose: 'invoicing',
    source,
    documentType: { base: 'tax_invoice', modifiers: [] },
    payload: sampleDocument('AE', { lines: 20, documentNumber: placeholder }),
  }).split(placeholder) as [string, string];
  return (documentNumber) => `${head}${documentNumber}${tail}`;
}

export async function benchTenant(server: BenchServer, name: string): Promise<{ workspaceId: string; apiKey: string; source: string }> {
  const { workspaceId } = await server.admin<{ workspaceId: string }>('workspace', 'create', '--name', name);
  const { apiKey } = await server.admin<{ apiKey: string }>(
    'key', 'create', '--workspace', workspaceId, '--environment', 'sandbox', '--permission', 'read_write', '--role', 'owner',
  );
  const tin = String(Date.now()).slice(-10);
  const email = `bench+${tin}@example.ae`;
  await server.admin('authorization', 'create', '--workspace', workspaceId, '--environment', 'sandbox', '--tin', tin, '--email', email);
  const body = {
    sourceName: `${name} ERP`,
    sourceVersion: 'v1',
    countryCode: 'AE',
    tin,
    contactPersonEmail: email,
    contactPersonName: 'Bench Runner',
    contactPersonMobile: '+971501234567',
    branchName: 'Head office',
    platformEnvironment: 'sandbox',
  };
  const res = await httpRequest(undefined, `${server.base}/v3/connect/companies`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`onboarding the source failed: ${res.status} ${res.body.slice(0, 500)}`);
  const data = (JSON.parse(res.body) as { data: { sourceName: string; sourceVersion: string } }).data;
  return { workspaceId, apiKey, source: `${data.sourceName}:${data.sourceVersion}` };
}

// ---------------------------------------------------------------------------------------------
// Databases of the benchmarks (each run works in a fresh database it drops afterwards)

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export async function withClient<T>(url: string, f: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'einvoicing-bench' });
  await client.connect();
  try {
    return await f(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Drops `<prefix>_<startedAtMs>_<pid>` databases left by runs that started over 30 minutes ago. */
export async function dropStaleBenchDatabases(adminUrl: string, prefix: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where datname ~ $1', [`^${prefix}_[0-9]+_[0-9]+$`]);
    for (const { datname } of rows) {
      const startedAt = Number(datname.slice(prefix.length + 1).split('_')[0]);
      if (Date.now() - startedAt < 30 * 60_000) continue; // perhaps another run still going
      await client.query(`drop database ${quoteIdent(datname)} with (force)`).catch(() => {});
    }
  });
}

/**
 * The database of one run of a benchmark that starts the service as its own process:
 * `<prefix>_<startedAt>_<pid>`, given to the service as EMBEDDED_PG_DATABASE (it creates the
 * database at its start). Every run then starts from an empty database, as the submission core it
 * is compared with does, whatever earlier runs in the same data directory left behind.
 */
export class RunDatabase {
  readonly name: string;

  constructor(readonly prefix: string, startedAt = Date.now()) {
    this.name = `${prefix}_${startedAt}_${process.pid}`;
  }

  /** Once the service is up: drops this prefix's databases left by runs that did not end theirs. */
  dropStale(server: BenchServer): Promise<void> {
    return dropStaleBenchDatabases(withDatabase(server.databaseUrl, 'postgres'), this.prefix);
  }

  /**
   * Drops the run's database while the service still runs (its connections are ended with it), so
   * that the service's stop, which stops the embedded PostgreSQL, comes after it; a failure is printed.
   */
  async drop(server: BenchServer): Promise<void> {
    if (!server.running) return; // its PostgreSQL is gone with it: the next run's dropStale ends it
    await withClient(withDatabase(server.databaseUrl, 'postgres'), (c) => c.query(`drop database if exists ${quoteIdent(this.name)} with (force)`)).catch(
      (err: Error) => console.log(`could not drop ${this.name}: ${err.message}`),
    );
  }
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A fresh database for a benchmark that runs the service in process (see `openFreshBenchDatabase`). */
export interface FreshBenchDatabase {
  readonly database: string;
  /** Where the server is, for the benchmark's header line. */
  readonly where: string;
  /** The PostgreSQL server version. */
  readonly serverVersion: string;
  /** The service's configuration for the database: HTTP on a free local port, no Connect rate limit, the PostgreSQL event store. */
  readonly serviceConfig: Config;
  /** Drops the database (a failure is printed) and releases the embedded server; says whether a database was created. */
  close(): Promise<boolean>;
}

/**
 * Creates `<prefix>_<startedAt>_<pid>` on the DATABASE_URL server when it is set (never writing
 * into an existing database), else on the benchmark's own embedded PostgreSQL in `pgDir` (started
 * here, or joined); drops that prefix's databases left by crashed runs first.
 */
export async function openFreshBenchDatabase(options: { prefix: string; startedAt: number; pgDir: string; pgPort: string }): Promise<FreshBenchDatabase> {
  const database = `${options.prefix}_${options.startedAt}_${process.pid}`;
  const externalUrl = process.env.DATABASE_URL || null;
  const configFor = (db: string): Config =>
    externalUrl
      ? loadConfig({ ...process.env, DATABASE_URL: withDatabase(externalUrl, db) })
      : loadConfig({ ...process.env, DATABASE_URL: '', EMBEDDED_PG_DIR: path.join(repoRoot, options.pgDir), EMBEDDED_PG_PORT: options.pgPort, EMBEDDED_PG_DATABASE: db });
  const log = (msg: string) => console.log(`  ${msg}`);
  let server: Database | null = null;
  let admin: string | null = externalUrl;
  let created = false;
  // The embedded server stops when its last client leaves: this connection keeps it up for the
  // drop below after the benchmark's service (the same process) has closed its own pool.
  let keepAlive: pg.Client | null = null;
  const close = async (): Promise<boolean> => {
    if (created) {
      await withClient(admin!, (c) => c.query(`drop database if exists ${quoteIdent(database)} with (force)`)).catch((err: Error) =>
        console.log(`could not drop ${database}: ${err.message}`),
      );
    }
    await keepAlive?.end().catch(() => {});
    await server?.close();
    return created;
  };
  try {
    if (!externalUrl) {
      server = await openDatabase(configFor('postgres'), { log, poolSize: 1 });
      await server.knex.destroy(); // unused; server.close() tolerates the second destroy
      admin = server.url;
      keepAlive = new pg.Client({ connectionString: admin, application_name: 'einvoicing-bench' });
      await keepAlive.connect();
      if (!server.ownsServer) log(`joined an embedded PostgreSQL already running on port ${options.pgPort}`);
    }
    await dropStaleBenchDatabases(admin!, options.prefix);
    await withClient(admin!, (c) => c.query(`create database ${quoteIdent(database)}`));
    created = true;
    const serverVersion = await withClient(admin!, async (c) => (await c.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v);
    const base = configFor(database);
    return {
      database,
      where: externalUrl ? 'DATABASE_URL server' : `embedded PostgreSQL in ${options.pgDir} (port ${options.pgPort})`,
      serverVersion,
      serviceConfig: { ...base, http: { ...base.http, host: '127.0.0.1', port: 0 }, connectRateLimit: { perSecond: 0, burst: 0 }, eventStoreUrl: null },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A commander option parser for a whole number from 1 to `max`. */
export function positiveInt(max = Number.MAX_SAFE_INTEGER): (raw: string) => number {
  return (raw: string) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? 'expected a positive integer' : `expected an integer from 1 to ${max}`);
    }
    return n;
  };
}

/** Prints the functional problems of a run (the first 20) and makes the process exit 1. */
export function reportProblems(problems: readonly string[], heading = 'problems'): void {
  if (problems.length === 0) return;
  console.log(`${heading}:\n  ${problems.slice(0, 20).join('\n  ')}`);
  process.exitCode = 1;
}

/** Runs a benchmark's main function: an error prints its stack and makes the process exit 1. */
export function runBenchmark(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  });
}

/**
 * Runs the main function of a benchmark that drives a server: an error becomes one of its
 * `problems`, `cleanup` (which stops the server) runs either way, then the problems are printed.
 */
export async function runServerBenchmark(main: () => Promise<void>, problems: string[], cleanup: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (err) {
    problems.push(err instanceof Error ? (err.stack ?? err.message) : String(err));
  } finally {
    await cleanup();
  }
  reportProblems(problems, '\nproblems');
}

/**
 * Ctrl-C and SIGTERM run `cleanup` (which stops the benchmarked server) and exit 130; any other
 * way out signals the server synchronously, so it never outlives the benchmark.
 */
export function stopServerOnExit(server: BenchServer, cleanup: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.log(`\n${signal}: stopping the server`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  process.on('exit', () => server.killNow());
}

export interface OpenLoopFigures {
  /** Requests started per second (the schedule's rate). */
  rate: number;
  seconds: number;
  sent: number;
  /** Answered 200. */
  accepted: number;
  /** Any other answer or a failed request. */
  failed: number;
  /** The answer's latency from the request's scheduled start (so a late start counts against it). */
  answer: Distribution;
  /** Submit (scheduled start) to final, as the read model shows it: polled every `pollMs`. */
  toFinal: Distribution;
  /** Documents not final when the wait for them ended. */
  notFinal: number;
}

/**
 * An open loop: `rate` submissions a second for `seconds`, each started on its schedule whatever
 * the earlier ones do (a closed loop of N clients measures queueing once the service is slower
 * than N requests per latency; this measures the service at a steady rate). `submit` sends one
 * and answers the document's id on a 200. Each accepted document's time to final is taken from
 * the read model (`sales_documents`, one query of the pending ids every `pollMs`), from its
 * request's scheduled start. BENCH_OPEN_LOOP_TRACE=<file> writes each submission as a JSON line
 * (its scheduled start, when it was sent and when answered, in process.hrtime microseconds: the
 * clock of the server's latency probe), to set the load generator's own lateness beside the
 * server's time.
 */
export async function runOpenLoop(options: {
  rate: number;
  seconds: number;
  submit: () => Promise<string | null>;
  db: pg.Client;
  pollMs?: number;
  finalWaitSeconds?: number;
}): Promise<OpenLoopFigures> {
  const pollMs = options.pollMs ?? 50;
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const interval = 1000 / options.rate;
  const answers: number[] = [];
  const toFinal: number[] = [];
  const pending = new Map<string, number>();
  let accepted = 0;
  let failed = 0;
  let sending = true;
  const poll = async () => {
    while (sending || pending.size > 0) {
      if (pending.size > 0) {
        const { rows } = await options.db.query<{ document_id: string }>(
          `select document_id from sales_documents where document_id = any($1::text[]) and state = any($2::text[])`,
          [[...pending.keys()], [...TERMINAL_STATES]],
        );
        const now = performance.now();
        for (const { document_id } of rows) {
          toFinal.push(now - pending.get(document_id)!);
          pending.delete(document_id);
        }
      }
      if (!sending && performance.now() > waitUntil) break;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };
  let waitUntil = Number.POSITIVE_INFINITY;
  const poller = poll();
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  const trace: string[] = [];
  const us = () => Number(process.hrtime.bigint() / 1000n);
  for (let i = 0; i < total; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const dueUs = us() - Math.round((performance.now() - due) * 1000);
    const sentUs = us();
    inFlight.push(
      options.submit().then(
        (id) => {
          answers.push(performance.now() - due);
          if (process.env.BENCH_OPEN_LOOP_TRACE) trace.push(JSON.stringify({ dueUs, sentUs, answeredUs: us(), ms: performance.now() - due }));
          if (id === null) failed++;
          else {
            accepted++;
            pending.set(id, due);
          }
        },
        () => void failed++,
      ),
    );
  }
  await Promise.all(inFlight);
  if (process.env.BENCH_OPEN_LOOP_TRACE) fs.writeFileSync(process.env.BENCH_OPEN_LOOP_TRACE, trace.join('\n') + '\n');
  waitUntil = performance.now() + (options.finalWaitSeconds ?? 60) * 1000;
  sending = false;
  await poller;
  return {
    rate: options.rate,
    seconds: options.seconds,
    sent: total,
    accepted,
    failed,
    answer: distribution(answers),
    toFinal: distribution(toFinal),
    notFinal: pending.size,
  };
}

/** The open loop's figures as table rows (label, figure). */
export function openLoopRows(f: OpenLoopFigures, rateOf = "50% of the run's measured maximum"): string[][] {
  return [
    [`rate (${rateOf})`, `${f.rate.toFixed(1)} submissions/s for ${f.seconds} s (${fmtInt(f.sent)} sent, ${fmtInt(f.accepted)} answered 200, ${f.failed} other)`],
    ['submit answer p50 / p99 (from the scheduled start)', `${fmtMs(f.answer.p50)} / ${fmtMs(f.answer.p99)}`],
    ['submit-to-final p50 / p99 (read model, polled)', `${fmtMs(f.toFinal.p50)} / ${fmtMs(f.toFinal.p99)}${f.notFinal ? `; ${f.notFinal} not final at the end of the wait` : ''}`],
  ];
}

/** The open loop's targets (answer p99 < 100 ms, submit-to-final p99 < 1 s), PASS/MISS. */
export function printOpenLoopTargets(f: OpenLoopFigures, rateOf = '50% of the measured maximum'): void {
  console.log(`\nopen-loop targets at ${f.rate.toFixed(1)} submissions/s (${rateOf}):`);
  console.log(
    renderTable(
      ['target', 'measured', 'goal', ''],
      [
        ['submit answer p99', fmtMs(f.answer.p99), '< 100 ms', f.answer.p99 < 100 ? 'PASS' : 'MISS'],
        ['submit-to-final p99', fmtMs(f.toFinal.p99), '< 1 s', f.toFinal.p99 < 1000 && f.notFinal === 0 ? 'PASS' : 'MISS'],
      ],
    ),
  );
}

/** A TCP port on loopback that is free at the moment of asking (the system picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
