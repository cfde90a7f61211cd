/**
 * The submission core alone, for the end-to-end benchmarks (`bench:submit`, `bench:delivery`) to
 * measure beside their own figure in the same run, so their ratios hold on a noisy machine.
 *
 * The core is the work every accepted document needs whatever serves it: mapping template,
 * validation, the XML, and the two appends of the number claim and the DocumentSubmitted event
 * with the document and its XML. It is called in the benchmark's process by concurrent callers,
 * on a fresh database of the benchmarked server's PostgreSQL (which the idle server does not
 * read), with no HTTP, read models or delivery; the database is dropped afterwards.
 *
 * The floor (`measureDeliveryFloor`): the core, and the core whose callers then take each document
 * to its final state as the delivery reactor does (`deliverDocument` from its DocumentSubmitted
 * event, read back from its stream): the Tax Data Document's XML and its compression, and the
 * append of the attempt's start, the delivery and the final result with that artifact. The
 * destination answers at once from memory, so the difference is the delivery step's own work,
 * without a network's routing or receipts. The core with it is a floor for the end-to-end CPU per
 * document: work every accepted-and-finalized document needs before any HTTP, read model, search
 * index or metering. The two are measured in alternating one-second slices, so that the machine's
 * drift falls on both alike.
 *
 * A third slice takes each document through the search projection on PostgreSQL after the core:
 * the slice's events read back from the log in pages, as the live runners' shared log tail reads
 * them, and its DocumentSubmitted events applied in batches of the callers' number, a transaction
 * each, as the live runner applies them (the sales facts, the index's body and state rows). Its CPU
 * per document over the core's, less one, is the search index's cost in units of the core (the
 * log read included, although live it is shared by every projection; the state row rewritten at
 * final is not). Until 2026-12-07 the slice read each document's event with a read of its stream,
 * one statement per document, which no live projection does (about 0.3 ms of the 0.77 ms a
 * document the slice then measured: docs/benchmarks.md).
 */
import knexFactory from 'knex';
import type pg from 'pg';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { PreparingPgClient } from '../platform/prepared-statements.js';
import { searchProjection } from '../projections/search.js';
import { PostgresSearchIndex, SEARCH_TABLES } from '../readmodels/search/postgres.js';
import { produceInvoiceXml } from '../commands/artifacts.js';
import type { Connector, ConnectorRegistry, DeliveryAnswer } from '../commands/delivery/connector.js';
import { deliverDocument } from '../commands/delivery/deliver.js';
import { PostgresEventStore } from '../platform/eventstore/postgres.js';
import { submitDocument } from '../commands/submissions.js';
import { DocumentSubmitted, documentStream } from '../domain/document/document.js';
import { DEFAULT_BATCH_BYTES } from '../projections/runner.js';
import { systemClock } from '../platform/clock.js';
import { loadConfig } from '../platform/config.js';
import { openDatabase } from '../platform/database.js';
import { migrateToLatest } from '../readmodels/migrations/index.js';
import { identityTemplate, sampleDocument } from '../domain/validation/index.js';
import { distribution, dropStaleBenchDatabases, fmtInt, fmtMs, quoteIdent, renderTable, withClient, withDatabase, type BenchServer, type Distribution } from './bench-support.js';

const CORE_PREFIX = 'bench_submit_core';
/** Events per read of the log in the search slice: the live runners' log tail's read (projections/runner.ts). */
const LOG_READ_EVENTS = 1000;
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

/** A destination that answers every document at once, delivered and final (the delivery step's floor). */
const instantDestination: Connector = {
  name: 'bench-instant',
  destination: 'PEPPOL',
  async deliver(request): Promise<DeliveryAnswer> {
    const government = { network: 'PEPPOL', accessPoint: 'bench-instant', uuid: request.uuid, status: 'VALID', deliveredAt: new Date().toISOString() };
    return { kind: 'delivered', government, final: { outcome: 'valid', government, errors: [] }, finalResultDueAt: null, alreadyReceived: false };
  },
  finalResult: async () => null,
};
const instantConnectors: ConnectorRegistry = { connectorFor: () => instantDestination, missing: () => [] };

/** A fresh database of the benchmarked server's PostgreSQL, and callers of the core on it. */
/** What each core document also goes through: nothing more, its delivery to final, or the search index. */
export type CoreStep = boolean | 'search';

interface CoreSession {
  /**
   * `clients` concurrent callers for `ms`, each document delivered to its final state when
   * `deliver` is true; with 'search', the slice's DocumentSubmitted events then go through the
   * search projection (PostgreSQL index) in batches of the callers' number, as the live runner
   * applies them. The documents done.
   */
  runFor(ms: number, deliver: CoreStep, samples: number[] | null): Promise<number>;
  close(): Promise<void>;
}

async function openCoreSession(server: BenchServer, clients: number): Promise<CoreSession> {
  const admin = withDatabase(server.databaseUrl, 'postgres');
  await dropStaleBenchDatabases(admin, CORE_PREFIX);
  const database = `${CORE_PREFIX}_${Date.now()}_${process.pid}`;
  const drop = () => withClient(admin, (c) => c.query(`drop database if exists ${quoteIdent(database)} with (force)`)).catch(() => {});
  // Joins the running embedded server and creates the database.
  const opened = await openDatabase(loadConfig({ ...server.env, EMBEDDED_PG_DATABASE: database }), { poolSize: 2 });
  let store: PostgresEventStore;
  try {
    try {
      await migrateToLatest(opened.knex);
    } finally {
      await opened.close();
    }
    store = await PostgresEventStore.connect(opened.url, { poolSize: 20 });
  } catch (err) {
    await drop();
    throw err;
  }
  const knex = knexFactory({ client: PreparingPgClient, connection: opened.url, pool: { min: 0, max: 4 } });
  const search = searchProjection(new PostgresSearchIndex(knex), { indexTables: SEARCH_TABLES });
  const deliveryDeps = { store, clock: systemClock, connectors: instantConnectors, policy: { maxAttempts: 5, retryBaseMs: 1000, retryMaxMs: 60_000, startGraceMs: 200 } };
  const [head, tail] = JSON.stringify(sampleDocument('AE', { lines: 20, documentNumber: PLACEHOLDER })).split(PLACEHOLDER) as [string, string];
  const source = { name: 'ERP', version: 'v1', companyId: 'bench-core-company', templateId: identityTemplate.id };
  const documentType = { base: 'tax_invoice', modifiers: [] as string[], variant: null };
  let sequence = 0;
  const runTag = Date.now().toString(36);
  const submitOne = async (deliver: CoreStep): Promise<void> => {
    const payload = JSON.parse(`${head}CORE-${runTag}-${++sequence}${tail}`) as unknown;
    const input = { workspaceId: 'ws_bench_core', environment: 'sandbox', country: 'AE', documentType, source, payload, format: 'new' as const, externalId: null, destinations: ['TAX_AUTHORITY'] };
    const outcome = await submitDocument(store, input, { now: new Date(), workspaceId: input.workspaceId, environment: 'sandbox' }, produceInvoiceXml);
    if (!outcome.accepted) throw new Error(`submission core: a valid sample was refused: ${JSON.stringify(outcome.errors.slice(0, 3))}`);
    if (!deliver) return;
    // The search projection reads the slice's events from the log afterwards (runFor).
    if (deliver === 'search') return;
    // As the delivery reactor: from the DocumentSubmitted event (which the log tail reads for it).
    const [event] = await store.readStream(documentStream(outcome.documentId), { maxCount: 1 });
    const delivered = await deliverDocument(deliveryDeps, outcome.documentId, event);
    if (delivered !== 'final') throw new Error(`submission core with delivery: a document ended ${delivered}, not final`);
  };
  return {
    async runFor(ms, deliver, samples) {
      // Where the log ends before the slice: every earlier slice's append has been answered.
      const sliceStart = deliver === 'search' ? await store.headPosition() : null;
      const deadline = performance.now() + ms;
      let done = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (performance.now() < deadline) {
            const t0 = performance.now();
            await submitOne(deliver);
            samples?.push(performance.now() - t0);
            done++;
          }
        }),
      );
      if (!sliceStart) return done;
      // The search projection's work for the slice's documents, in the runner's way: the slice's
      // events read from the log in pages (as the live runners' shared log tail reads them, every
      // event of the slice, the number claims included), then the DocumentSubmitted events applied
      // in batches of the callers' number, a transaction each (the sales facts and the index rows).
      const submitted: RecordedEvent[] = [];
      for (let after = sliceStart; ; ) {
        const page = await store.readAll(after, LOG_READ_EVENTS, { maxBytes: DEFAULT_BATCH_BYTES });
        if (page.length === 0) break;
        submitted.push(...page.filter((e) => e.type === DocumentSubmitted.type));
        after = page[page.length - 1]!.position;
      }
      for (let i = 0; i < submitted.length; i += clients) {
        const batch = submitted.slice(i, i + clients);
        await knex.transaction((trx) => search.applyMany!(trx, batch));
      }
      return done;
    },
    async close() {
      await knex.destroy();
      await store.close();
      await drop();
    },
  };
}

/** CPU seconds of this process and of PostgreSQL, and the time, around `work`. */
async function measured<T>(server: BenchServer, work: () => Promise<T>): Promise<{ result: T; elapsed: number; node: number; postgres: number }> {
  const cpu0 = process.cpuUsage();
  const pg0 = server.postgresCpuSeconds();
  const t0 = performance.now();
  const result = await work();
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { result, elapsed, node: (cpu.user + cpu.system) / 1e6, postgres: server.postgresCpuSeconds() - pg0 };
}

function figures(clients: number, seconds: number, documents: number, elapsed: number, node: number, postgres: number, samples: number[]): CoreFigures {
  return {
    clients,
    seconds,
    documents,
    perSecond: documents / elapsed,
    latency: distribution(samples),
    cores: { node: node / elapsed, postgres: postgres / elapsed },
    msPerDoc: { node: (node * 1000) / documents, postgres: (postgres * 1000) / documents },
  };
}

/** `clients` concurrent callers of submitDocument for `seconds` after a 1 s warm-up (see the header). */
export async function measureSubmissionCore(server: BenchServer, clients: number, seconds: number): Promise<CoreFigures> {
  const session = await openCoreSession(server, clients);
  try {
    await session.runFor(1000, false, null);
    const samples: number[] = [];
    const m = await measured(server, () => session.runFor(seconds * 1000, false, samples));
    return figures(clients, seconds, m.result, m.elapsed, m.node, m.postgres, samples);
  } finally {
    await session.close();
  }
}

/**
 * The core and the core with its delivery step (see the header), measured in alternating slices
 * of a second each, `seconds` of each, so that the machine's drift between two measurements
 * (a fifth within an hour on this machine) falls on both alike: the floor is their ratio.
 */
export async function measureDeliveryFloor(server: BenchServer, clients: number, seconds: number): Promise<{ core: CoreFigures; withDelivery: CoreFigures; withSearch: CoreFigures }> {
  const session = await openCoreSession(server, clients);
  try {
    await session.runFor(1000, true, null);
    await session.runFor(1000, 'search', null);
    const sums = ([false, true, 'search'] as const).map((deliver) => ({ deliver, documents: 0, elapsed: 0, node: 0, postgres: 0, samples: [] as number[] }));
    for (let slice = 0; slice < seconds; slice++) {
      for (const sum of sums) {
        const m = await measured(server, () => session.runFor(1000, sum.deliver, sum.samples));
        sum.documents += m.result;
        sum.elapsed += m.elapsed;
        sum.node += m.node;
        sum.postgres += m.postgres;
      }
    }
    const [core, withDelivery, withSearch] = sums.map((x) => figures(clients, seconds, x.documents, x.elapsed, x.node, x.postgres, x.samples)) as [CoreFigures, CoreFigures, CoreFigures];
    return { core, withDelivery, withSearch };
  } finally {
    await session.close();
  }
}

export function coreMsPerDoc(core: CoreFigures): number {
  return core.msPerDoc.node + core.msPerDoc.postgres;
}

/**
 * Prints the core's figures with a heading, and beside them, when measured, the floor: the core
 * and the core with its delivery step in alternating slices, and what their ratio leaves of the
 * goal's ratio.
 */
export function printCore(core: CoreFigures, floor: { core: CoreFigures; withDelivery: CoreFigures; withSearch?: CoreFigures } | null = null, targetRatio = 2): void {
  const perDoc = coreMsPerDoc(core);
  console.log(
    `\nsubmission core alone, same run (template, validation, XML, number claim and DocumentSubmitted appends; no HTTP, read models or delivery), ` +
      `${core.clients} concurrent callers in this process, ${core.seconds} s` +
      (floor ? `; then it and the core with its delivery step in alternating 1 s slices, ${floor.core.seconds} s each:` : ':'),
  );
  const row = (name: string, figures: CoreFigures) => [
    name,
    fmtInt(figures.perSecond),
    fmtMs(figures.latency.p50),
    fmtMs(figures.latency.p99),
    `${figures.cores.node.toFixed(2)} / ${figures.cores.postgres.toFixed(2)}`,
    `${figures.msPerDoc.node.toFixed(2)} + ${figures.msPerDoc.postgres.toFixed(2)} = ${coreMsPerDoc(figures).toFixed(2)} ms`,
  ];
  const rows = [row('submission core', core)];
  if (floor) rows.push(row('  in slices: core', floor.core), row('  in slices: core + delivery step (to final)', floor.withDelivery));
  if (floor?.withSearch) rows.push(row('  in slices: core + search projection (PostgreSQL index)', floor.withSearch));
  console.log(renderTable(['', 'documents/s', 'p50', 'p99', 'CPU cores this process/pg', 'CPU/doc this process + pg'], rows));
  if (!floor) return;
  const ratio = coreMsPerDoc(floor.withDelivery) / coreMsPerDoc(floor.core);
  console.log(
    `  the floor: the core with its delivery step (Tax Data Document, its compression, the start, delivery and final appended with it; ` +
      `the destination answering from memory) costs ${ratio.toFixed(2)}× the core's CPU (the step alone ${(coreMsPerDoc(floor.withDelivery) - coreMsPerDoc(floor.core)).toFixed(2)} ms a document), ` +
      `so a goal of ${targetRatio}× leaves ${(targetRatio - ratio).toFixed(2)}× the core (${((targetRatio - ratio) * perDoc).toFixed(2)} ms a document) ` +
      `for HTTP, authentication, idempotency, the log's reads, the read models, the search index, metering and the destination`,
  );
  if (floor.withSearch) {
    const search = searchIndexRatio(floor);
    console.log(
      `  the search index on PostgreSQL (the search projection's batches of the submitted documents: the slice's log read, sales facts, body and state rows) costs ` +
        `${search.toFixed(2)}× the core's CPU per document (goal <= 0.3×: ${search <= 0.3 ? 'PASS' : 'MISS'}); ` +
        `its state row rewritten when a document becomes final is not in it`,
    );
  }
}

/** The search projection's CPU per document over the core's, from the alternating slices. */
export function searchIndexRatio(floor: { core: CoreFigures; withSearch?: CoreFigures }): number {
  return floor.withSearch ? coreMsPerDoc(floor.withSearch) / coreMsPerDoc(floor.core) - 1 : Number.NaN;
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
