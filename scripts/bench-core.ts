/**
 * The submission core alone, for the end-to-end benchmarks (`bench:submit`, `bench:delivery`) to
 * measure beside their own figure in the same run, so their ratios hold on a noisy machine.
 *
 * The core is the work every accepted document needs whatever serves it: mapping template,
 * validation, the XML, and the two appends of the number claim and the DocumentSubmitted event
 * with the document and its XML. It is called in the benchmark's process by concurrent callers,
 * on a fresh database of the benchmarked server's PostgreSQL (which the idle server does not
 * read), with no HTTP, read models or delivery; the database is dropped afterwards.
 */
import type pg from 'pg';
import { produceInvoiceXml } from '../commands/artifacts.js';
import { PostgresEventStore } from '../commands/eventstore/postgres.js';
import { submitDocument } from '../commands/submissions.js';
import { loadConfig } from '../platform/config.js';
import { openDatabase } from '../platform/database.js';
import { migrateToLatest } from '../readmodels/migrations/index.js';
import { identityTemplate, sampleDocument } from '../domain/validation/index.js';
import { distribution, dropStaleBenchDatabases, fmtInt, fmtMs, quoteIdent, renderTable, withClient, withDatabase, type BenchServer, type Distribution } from './bench-support.js';

const CORE_PREFIX = 'bench_submit_core';
const PLACEHOLDER = 'BENCH-DOCUMENT-NUMBER-PLACEHOLDER';

export interface CoreFigures {
  clients: number;
  seconds: number;
  documents: number;
  perSecond: number;
  latency: Distribution;
  /** CPU seconds per second of this process and of PostgreSQL. */
  cores: { node: number; postgres: number };
  /** CPU milliseconds per document of this process and of PostgreSQL. */
  msPerDoc: { node: number; postgres: number };
}

/** `clients` concurrent callers of submitDocument for `seconds` after a 1 s warm-up (see the header). */
export async function measureSubmissionCore(server: BenchServer, clients: number, seconds: number): Promise<CoreFigures> {
  const admin = withDatabase(server.databaseUrl, 'postgres');
  await dropStaleBenchDatabases(admin, CORE_PREFIX);
  const database = `${CORE_PREFIX}_${Date.now()}_${process.pid}`;
  // Joins the running embedded server and creates the database.
  const opened = await openDatabase(loadConfig({ ...server.env, EMBEDDED_PG_DATABASE: database }), { poolSize: 2 });
  let store: PostgresEventStore | null = null;
  try {
    try {
      await migrateToLatest(opened.knex);
    } finally {
      await opened.close();
    }
    store = await PostgresEventStore.connect(opened.url, { poolSize: 20 });
    const [head, tail] = JSON.stringify(sampleDocument('AE', { lines: 20, documentNumber: PLACEHOLDER })).split(PLACEHOLDER) as [string, string];
    const source = { name: 'ERP', version: 'v1', companyId: 'bench-core-company', templateId: identityTemplate.id };
    const documentType = { base: 'tax_invoice', modifiers: [] as string[], variant: null };
    let sequence = 0;
    const runTag = Date.now().toString(36);
    const submitOne = async (): Promise<void> => {
      const payload = JSON.parse(`${head}CORE-${runTag}-${++sequence}${tail}`) as unknown;
      const input = { workspaceId: 'ws_bench_core', environment: 'sandbox', country: 'AE', documentType, source, payload, format: 'new' as const, externalId: null, destinations: ['TAX_AUTHORITY'] };
      const outcome = await submitDocument(store!, input, { now: new Date(), workspaceId: input.workspaceId, environment: 'sandbox' }, produceInvoiceXml);
      if (!outcome.accepted) throw new Error(`submission core: a valid sample was refused: ${JSON.stringify(outcome.errors.slice(0, 3))}`);
    };
    const runFor = async (ms: number, samples: number[] | null): Promise<number> => {
      const deadline = performance.now() + ms;
      let done = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (performance.now() < deadline) {
            const t0 = performance.now();
            await submitOne();
            samples?.push(performance.now() - t0);
            done++;
          }
        }),
      );
      return done;
    };
    await runFor(1000, null);
    const samples: number[] = [];
    const cpu0 = process.cpuUsage();
    const pg0 = server.postgresCpuSeconds();
    const t0 = performance.now();
    const documents = await runFor(seconds * 1000, samples);
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const node = (cpu.user + cpu.system) / 1e6;
    const postgres = server.postgresCpuSeconds() - pg0;
    return {
      clients,
      seconds,
      documents,
      perSecond: documents / elapsed,
      latency: distribution(samples),
      cores: { node: node / elapsed, postgres: postgres / elapsed },
      msPerDoc: { node: (node * 1000) / documents, postgres: (postgres * 1000) / documents },
    };
  } finally {
    await store?.close();
    await withClient(admin, (c) => c.query(`drop database if exists ${quoteIdent(database)} with (force)`)).catch(() => {});
  }
}

export function coreMsPerDoc(core: CoreFigures): number {
  return core.msPerDoc.node + core.msPerDoc.postgres;
}

/** Prints the core's figures as a one-row table with a heading. */
export function printCore(core: CoreFigures): void {
  const perDoc = coreMsPerDoc(core);
  console.log(
    `\nsubmission core alone, same run (template, validation, XML, number claim and DocumentSubmitted appends; no HTTP, read models or delivery), ` +
      `${core.clients} concurrent callers in this process, ${core.seconds} s:`,
  );
  console.log(
    renderTable(
      ['documents/s', 'p50', 'p99', 'CPU cores this process/pg', 'CPU/doc this process + pg'],
      [
        [
          fmtInt(core.perSecond),
          fmtMs(core.latency.p50),
          fmtMs(core.latency.p99),
          `${core.cores.node.toFixed(2)} / ${core.cores.postgres.toFixed(2)}`,
          `${core.msPerDoc.node.toFixed(2)} + ${core.msPerDoc.postgres.toFixed(2)} = ${perDoc.toFixed(2)} ms`,
        ],
      ],
    ),
  );
}

/** One target of the goal: a measured figure, how it is judged, and PASS/MISS. */
export interface Target {
  name: string;
  figure: string;
  target: string;
  met: boolean;
}

export function printTargets(title: string, targets: readonly Target[]): void {
  console.log(`\n${title}`);
  console.log(renderTable(['target', 'measured', 'goal', ''], targets.map((t) => [t.name, t.figure, t.target, t.met ? 'PASS' : 'MISS'])));
}

export const pct = (ratio: number): string => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(0)}%` : '–');

/** PostgreSQL's own counters of the benchmarked database: commits, and rows written per table. */
export interface PgActivity {
  commits: number;
  tables: Map<string, { inserted: number; updated: number; deleted: number }>;
}

export async function pgActivity(client: pg.Client): Promise<PgActivity> {
  // Counters of this backend's own transactions are flushed first, so a snapshot sees the others'.
  await client.query('select pg_stat_force_next_flush()').catch(() => {});
  const { rows: db } = await client.query<{ commits: string }>('select xact_commit::text as commits from pg_stat_database where datname = current_database()');
  const { rows } = await client.query<{ relname: string; ins: string; upd: string; del: string }>(
    'select relname, n_tup_ins::text as ins, n_tup_upd::text as upd, n_tup_del::text as del from pg_stat_user_tables',
  );
  return {
    commits: Number(db[0]?.commits ?? 0),
    tables: new Map(rows.map((r) => [r.relname, { inserted: Number(r.ins), updated: Number(r.upd), deleted: Number(r.del) }])),
  };
}

/** Commits and rows written per document between two snapshots (the tables written most first). */
export function printPgPerDocument(before: PgActivity, after: PgActivity, documents: number): void {
  const per = (n: number) => (n / documents).toFixed(2);
  const rows: string[][] = [];
  for (const [name, a] of after.tables) {
    const b = before.tables.get(name) ?? { inserted: 0, updated: 0, deleted: 0 };
    const ins = a.inserted - b.inserted;
    const upd = a.updated - b.updated;
    const del = a.deleted - b.deleted;
    if (ins + upd + del > 0) rows.push([name, per(ins), per(upd), per(del), String(ins + upd + del)]);
  }
  rows.sort((x, y) => Number(y[4]) - Number(x[4]));
  const total = rows.reduce((s, r) => s + Number(r[4]), 0);
  console.log(
    `\nPostgreSQL per document (its statistics counters, ${fmtInt(documents)} documents): ${per(after.commits - before.commits)} transactions committed, ` +
      `${per(total)} rows written; by table:`,
  );
  console.log(renderTable(['table', 'inserted/doc', 'updated/doc', 'deleted/doc', 'rows'], rows.slice(0, 15).map((r) => [r[0]!, r[1]!, r[2]!, r[3]!, fmtInt(Number(r[4]))])));
}
