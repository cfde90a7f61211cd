/**
 * `npm run bench:catchup`: how fast, and in how much memory, a restarted service catches up on a
 * log of large events. The real service runs as a separate process on its own embedded
 * PostgreSQL (var/pg-bench-catchup, port 54411 or BENCH_CATCHUP_PG_PORT; HTTP port 3926), in a
 * fresh database dropped at the end.
 *
 * 1. Write: --count (10,000) valid 20-line UAE tax invoices are submitted over HTTP and delivered
 *    by the sandbox to final_valid, so the log holds every event of a submitted-and-delivered
 *    document with its artifacts (the XML, the Tax Data Document), as in production.
 * 2. The server stops. Every projection and reactor is set back to the start of the log and the
 *    projections' read models are emptied: all of them must catch up on the whole log.
 * 3. The server starts fresh; the benchmark polls the checkpoints until every projection and
 *    reactor has reached the log's head, and prints the catch-up time, events/s, the server's peak
 *    RSS (VmHWM: start-up and catch-up) and its RSS at idle afterwards.
 *
 * Prints figures; asserts nothing about timings. Exits 1 only when something failed functionally
 * (a submission not answered 200, documents not final, or the catch-up not done within --seconds).
 *
 *   node --import tsx scripts/bench-catchup.ts [--count 10000] [--concurrency 32] [--seconds 900]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { Command } from 'commander';
import knexFactory from 'knex';
import pg from 'pg';
import { loadConfig } from '../platform/config.js';
import { allProjections } from '../projections/index.js';
import { DEFAULT_BATCH_BYTES } from '../projections/runner.js';
import { createSearchIndex } from '../readmodels/search/index.js';
import {
  BenchServer,
  benchTenant,
  coresBetween,
  fmtBytes,
  fmtCores,
  fmtInt,
  httpRequest,
  positiveInt,
  quoteIdent,
  renderTable,
  RunDatabase,
  runServerBenchmark,
  stopServerOnExit,
  submissionBody,
} from './bench-support.js';

const TARGET_PEAK_RSS_MB = 400;

const program = new Command('bench-catchup')
  .description('Catch-up time, events/s and peak RSS of a restarted service on a log of submitted-and-delivered documents')
  .option('--count <n>', 'documents submitted and delivered before the restart', positiveInt(), 10_000)
  .option('--concurrency <n>', 'submissions in flight at once', positiveInt(), 32)
  .option('--seconds <n>', 'longest wait for the catch-up', positiveInt(), 900)
  .option('--idle-seconds <n>', 'how long the caught-up server idles before its RSS is read', positiveInt(), 10)
  .option('--port <n>', 'HTTP port of the server', positiveInt(), 3926)
  .option('--keep', 'keep the database (its name is printed) for later runs with --database')
  .option('--database <name>', 'catch up on the log of a database kept by an earlier run (no writing; kept)')
  .parse();
const opts = program.opts<{ count: number; concurrency: number; seconds: number; idleSeconds: number; port: number; keep?: boolean; database?: string }>();

const startedAt = Date.now();
const run = new RunDatabase('bench_catchup', startedAt);
const database = opts.database ?? run.name;
const dropAtEnd = !opts.keep && !opts.database;
const pgPort = Number(process.env.BENCH_CATCHUP_PG_PORT || 54411);
const server = new BenchServer({
  pgDir: 'var/pg-bench-catchup',
  pgPort,
  httpPort: opts.port,
  env: { SANDBOX_LATENCY_MS: '0', EMBEDDED_PG_DATABASE: database, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
});
const problems: string[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
let db: pg.Client | null = null;

let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    agent.destroy();
    if (db) {
      // Drop the run's database, then let go of PostgreSQL (the server stops it when no one else uses it).
      await db.end().catch(() => {});
      db = null;
      if (dropAtEnd) await run.drop(server);
    }
    await server.stop();
  })();
  return cleaning;
}
stopServerOnExit(server, cleanup);


/** The server's current resident set size (VmRSS) in MB. */
function rssMb(pid: number | null): number {
  if (!pid) return Number.NaN;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 'NaN') / 1024;
}

async function pool<T>(items: readonly T[], limit: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && !cleaning) await f(items[next++]!);
    }),
  );
}

async function one<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T> {
  return (await db!.query<T>(sql, values)).rows[0]!;
}

async function main(): Promise<void> {
  console.log(
    `catch-up benchmark — node ${process.version}, ${os.cpus().length} CPUs (client, server and PostgreSQL share them); ` +
      `embedded PostgreSQL in ${server.options.pgDir} (port ${pgPort}), database ${database}; server on port ${opts.port}`,
  );
  console.log(
    `  ${fmtInt(opts.count)} documents; PROJECTION_BATCH_SIZE ${process.env.PROJECTION_BATCH_SIZE || '500 (default)'}, ` +
      `PROJECTION_BATCH_BYTES ${process.env.PROJECTION_BATCH_BYTES || `${DEFAULT_BATCH_BYTES} (default)`}`,
  );

  // 1. Write the log: documents submitted over HTTP and delivered to final (or reuse a kept one).
  await server.start();
  db = new pg.Client({ connectionString: server.databaseUrl, application_name: 'einvoicing-bench-catchup' });
  await db.connect();
  if (!opts.database) await writeLog();
  else console.log(`  reusing the log of ${database}`);
  const log = await one<{ events: number; bytes: string }>('select count(*)::int as events, sum(octet_length(data::text) + octet_length(metadata::text))::text as bytes from es_events');
  const finalBefore = (await one<{ final: number }>(`select count(*) filter (where state = 'final_valid')::int as final from sales_documents`)).final;
  const writePeakMb = server.peakRssMb();

  // 2. Stop the server; every projection and reactor back to the start, the read models emptied.
  // Our connection keeps the embedded PostgreSQL up while the server is down.
  await server.stop();
  const knex = knexFactory({ client: 'pg', connection: server.databaseUrl, pool: { min: 0, max: 1 } });
  try {
    const search = createSearchIndex(loadConfig({ ...server.env, DATABASE_URL: server.databaseUrl }), knex);
    const tables = [...new Set(allProjections(search).flatMap((p) => [...p.tables]))];
    await search.close();
    await knex.transaction(async (trx) => {
      await trx.raw(`truncate ${tables.map(quoteIdent).join(', ')}`);
      await trx('projection_checkpoints').whereLike('projection', '%#rebuild').delete();
      const reset = await trx('projection_checkpoints').update({ commit_position: '0', prepare_position: '0', events_applied: 0 });
      console.log(`  reset: ${reset} projections and reactors to the start of the log; ${tables.length} read-model tables emptied`);
    });
  } finally {
    await knex.destroy();
  }
  const target = await one<{ commit: string; prepare: string }>(
    `select transaction_id::text as commit, global_position::text as prepare from es_events order by transaction_id desc, global_position desc limit 1`,
  );

  // 3. Start fresh and wait until every checkpoint reaches the head.
  const cpu0 = server.cpu();
  const t0 = performance.now();
  await server.start(opts.seconds * 1000);
  const readyMs = performance.now() - t0;
  const cpuStart = server.cpu();
  // When each projection and reactor first reached the head (seconds after the start).
  const reachedAt = new Map<string, number>();
  const catchUpDeadline = Date.now() + opts.seconds * 1000;
  for (;;) {
    const rows = (
      await db.query<{ projection: string; reached: boolean }>(
        `select projection, (commit_position, prepare_position) >= ($1::bigint, $2::bigint) as reached
           from projection_checkpoints where projection not like '%#rebuild'`,
        [target.commit, target.prepare],
      )
    ).rows;
    for (const r of rows) if (r.reached && !reachedAt.has(r.projection)) reachedAt.set(r.projection, (performance.now() - t0) / 1000);
    const behind = rows.filter((r) => !r.reached).map((r) => r.projection);
    if (behind.length === 0) break;
    if (Date.now() > catchUpDeadline) {
      console.log(`\n  not caught up within ${opts.seconds} s; server peak RSS so far ${server.peakRssMb().toFixed(0)} MB, RSS now ${rssMb(server.pid).toFixed(0)} MB`);
      console.log(`  reached the head: ${[...reachedAt].map(([p, s]) => `${p} ${s.toFixed(0)} s`).join(', ') || 'none'}; behind: ${behind.join(', ')}`);
      throw new Error(`not caught up within ${opts.seconds} s: ${behind.join(', ')} behind`);
    }
    await sleep(200);
  }
  const catchUpMs = performance.now() - t0;
  const cpu1 = server.cpu();
  const peakMb = server.peakRssMb();
  const checkpoints = await db.query<{ projection: string; events_applied: string }>('select projection, events_applied::text from projection_checkpoints order by projection');
  await sleep(opts.idleSeconds * 1000);
  const idleMb = rssMb(server.pid);

  const perSecond = (log.events / catchUpMs) * 1000;
  console.log();
  console.log(
    renderTable(
      ['figure', 'value'],
      [
        ['events in the log', fmtInt(log.events)],
        ['their data and metadata', fmtBytes(Number(log.bytes))],
        ['projections and reactors', fmtInt(checkpoints.rows.length)],
        ['start to ready (/readyz 200)', `${(readyMs / 1000).toFixed(1)} s`],
        ['start to caught up (every checkpoint at the head)', `${(catchUpMs / 1000).toFixed(1)} s`],
        ['events/s (log events / catch-up time)', fmtInt(perSecond)],
        ['CPU seconds of the catch-up: server (since its start) / PostgreSQL', `${cpu1.server.toFixed(1)} / ${(cpu1.postgres - cpu0.postgres).toFixed(1)}`],
        ['cores from ready to caught up (client / server / PostgreSQL / other)', fmtCores(coresBetween(cpuStart, cpu1))],
        [`server peak RSS (VmHWM; target < ${TARGET_PEAK_RSS_MB} MB)`, `${peakMb.toFixed(0)} MB${peakMb < TARGET_PEAK_RSS_MB ? ' — met' : ' — NOT met'}`],
        [`server RSS at idle, ${opts.idleSeconds} s after catching up`, `${idleMb.toFixed(0)} MB`],
        ['server peak RSS while the log was written (for context)', `${writePeakMb.toFixed(0)} MB`],
      ],
    ),
  );
  console.log(`  reached the head (s after the start): ${[...reachedAt].sort((x, y) => x[1] - y[1]).map(([p, sec]) => `${p} ${sec.toFixed(0)}`).join(', ')}`);
  console.log(`  events applied per projection: ${checkpoints.rows.filter((r) => r.events_applied !== '0').map((r) => `${r.projection} ${fmtInt(Number(r.events_applied))}`).join(', ')}`);
  const finals = await one<{ final: number }>(`select count(*) filter (where state = 'final_valid')::int as final from sales_documents`);
  console.log(`  final_valid documents in sales_documents after the catch-up: ${fmtInt(finals.final)}`);
  // A kept database may have been stopped in the middle of an earlier catch-up: then fewer were there before.
  if (opts.database ? finals.final < finalBefore : finals.final !== finalBefore) {
    problems.push(`after the catch-up sales_documents holds ${finals.final} final_valid documents, not ${finalBefore}`);
  }
  if (!dropAtEnd) console.log(`  database kept: ${database} (run again with --database ${database})`);
}

/** Submits --count documents over HTTP and waits until they are final and the log is quiet. */
async function writeLog(): Promise<void> {
  const tenant = await benchTenant(server, `bench-catchup-${startedAt}`);
  const body = submissionBody(tenant.source);
  const headers = { authorization: `Bearer ${tenant.apiKey}`, 'new-api': 'true', 'content-type': 'application/json' };
  const runId = startedAt.toString(36);
  const writeStart = performance.now();
  let submitted = 0;
  const progress = setInterval(() => process.stdout.write(`\r  writing: ${fmtInt(submitted)} submitted`), 1000);
  try {
    await pool(
      Array.from({ length: opts.count }, (_, i) => `CATCHUP-${runId}-${i + 1}`),
      opts.concurrency,
      async (label) => {
        const res = await httpRequest(agent, `${server.base}/api/v3/unify`, { method: 'POST', headers, body: body(label) });
        if (res.status !== 200) problems.push(`submission ${label}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
        else submitted++;
      },
    );
  } finally {
    clearInterval(progress);
  }
  const deadline = Date.now() + opts.seconds * 1000;
  for (;;) {
    const c = await one<{ final: number }>(`select count(*) filter (where state = 'final_valid')::int as final from sales_documents where workspace_id = $1`, [tenant.workspaceId]);
    if (c.final >= submitted) break;
    if (Date.now() > deadline) throw new Error(`only ${c.final} of ${submitted} documents became final_valid`);
    await sleep(500);
  }
  // Reactions still running (metering, webhooks) may append a little more: wait for a quiet log.
  let log = await one<{ events: number; bytes: string }>('select count(*)::int as events, sum(octet_length(data::text) + octet_length(metadata::text))::text as bytes from es_events');
  for (;;) {
    await sleep(2000);
    const now = await one<{ events: number; bytes: string }>('select count(*)::int as events, sum(octet_length(data::text) + octet_length(metadata::text))::text as bytes from es_events');
    if (now.events === log.events) break;
    log = now;
  }
  const writeSeconds = (performance.now() - writeStart) / 1000;
  console.log(`\r  written: ${fmtInt(submitted)} documents final_valid, ${fmtInt(log.events)} events (${fmtBytes(Number(log.bytes))} of data and metadata) in ${writeSeconds.toFixed(0)} s`);
}

void runServerBenchmark(main, problems, cleanup);
