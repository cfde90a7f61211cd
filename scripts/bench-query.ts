/**
 * Benchmark of the invoice query's search index, on each engine (PostgreSQL, Elasticsearch):
 *
 * 1. the log: realistic documents (sales, purchases and receipts across 100 workspaces; header,
 *    parties with addresses, line items, totals, a validation report) appended once as the
 *    events they leave in the log (bench-query-events.ts: submissions or rejections and the
 *    delivery's state changes; stored purchases), one append per document;
 * 2. indexing through the search projection: per engine, the `search` projection catches up
 *    from the start of that log in the runner's batches (the larger of PROJECTION_BATCH_SIZE /
 *    PROJECTION_BATCH_BYTES and, into Elasticsearch, the projection's own catch-up batch,
 *    SEARCH_BATCH: 5,000 events or 8 MB; each batch one transaction with its checkpoint, the
 *    index write acknowledged before the commit; as nobody waits for the backlog, only the batch
 *    that reaches the end of the log asks Elasticsearch to refresh), exactly as the service's
 *    runner applies it: documents/s and events/s;
 * 3. the query mix of the issue — a date range + status filter, a seller-name search, a
 *    document-number search, an amount range sorted by amount, paging to page 50 — on random
 *    workspaces, at 1 and 16 concurrent clients: queries/s and p50/p95/p99 per engine (and per
 *    kind at 1 client);
 * 4. the search projection's lag behind the log under a submit load: the live runner follows
 *    the log while submissions are appended at `--lag-rate`/s for `--lag-seconds`; the lag of a
 *    submission is the time from its append to the projection's checkpoint passing it (its
 *    document searchable), p50/p95/p99/max.
 *
 * It prints figures, the targets (query p95 < 50 ms at 1 client on both engines; ≥ 5,000
 * documents/s into Elasticsearch; lag < 1 s at 100 submissions/s) and the load average; it
 * never fails on timings (exit 1 only when a write or a query failed, a document is missing
 * from the index, or both engines disagree on a query's total).
 *
 * PostgreSQL: an embedded server in var/pg-bench-query (BENCH_QUERY_PG_PORT, default 54319), a
 * fresh database dropped at the end (DATABASE_URL: a fresh database on that server).
 * Elasticsearch: ELASTICSEARCH_URL, else the node of `npm run search:node` (started here on
 * ELASTICSEARCH_NODE_PORT or 9200 when not running, and stopped again); indices under a prefix
 * of their own, dropped at the end.
 *
 *   npm run bench:query -- [--documents 1000000] [--workspaces 100] [--batch-size 500]
 *                          [--queries 500] [--lag-rate 100] [--lag-seconds 30]
 *                          [--engines postgres,elasticsearch]
 */
import os from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import type { Knex } from 'knex';
import { comparePositions, type EventStore, type Position } from '../platform/eventstore/port.js';
import { openRuntime, type Runtime } from '../commands/runtime.js';
import { searchBatchFor, searchProjection, SEARCH_PROJECTION } from '../projections/search.js';
import { batchLimits } from '../projections/projection.js';
import { applyBatch, DEFAULT_BATCH_BYTES, ProjectionRunner } from '../projections/runner.js';
import { ElasticsearchSearchIndex } from '../readmodels/search/elasticsearch.js';
import type { SearchIndex } from '../readmodels/search/port.js';
import { PostgresSearchIndex, SEARCH_TABLE, SEARCH_TABLES } from '../readmodels/search/postgres.js';
import { fmtBytes, fmtInt, fmtMs, openFreshBenchDatabase, percentile, positiveInt, renderTable, reportProblems, runBenchmark } from './bench-support.js';
import { clusterHealth, startNode, stopNode } from './search-node.js';
import { KINDS, mixQuery, rng, type Kind } from './bench-query-documents.js';
import { documentEvents } from './bench-query-events.js';

const BENCH_PG_DIR = 'var/pg-bench-query';
const BENCH_PG_PORT = '54319';
const TARGET_P95_MS = 50;
const TARGET_ES_DOCS_PER_S = 5000;
const TARGET_LAG_MS = 1000;
const FACTS_TABLE = 'search_sales_facts';
const ENGINES = ['postgres', 'elasticsearch'] as const;
type Engine = (typeof ENGINES)[number];

const program = new Command()
  .name('bench:query')
  .description('Benchmark the search index: indexing documents/s through the search projection, the invoice query mix at 1 and 16 clients, and the projection lag under a submit load, per engine.')
  .option('--documents <n>', 'documents to index', positiveInt(10_000_000), 1_000_000)
  .option('--workspaces <n>', 'workspaces the documents spread over', positiveInt(100_000), 100)
  .option('--batch-size <n>', "the runner's events per projection batch (the search projection reads at least its own catch-up batch)", positiveInt(100_000), Number(process.env.PROJECTION_BATCH_SIZE || 500))
  .option('--queries <n>', 'timed queries per concurrency level', positiveInt(1_000_000), 500)
  .option('--lag-rate <n>', 'submissions per second during the lag measurement', positiveInt(10_000), 100)
  .option('--lag-seconds <n>', 'how long the submit load of the lag measurement runs', positiveInt(3600), 30)
  .option(
    '--engines <list>',
    'engines to run, comma-separated',
    (raw: string) => {
      const list = raw.split(',').map((s) => s.trim());
      for (const e of list) if (!(ENGINES as readonly string[]).includes(e)) throw new InvalidArgumentError(`unknown engine "${e}"`);
      return list as Engine[];
    },
    [...ENGINES],
  )
  .showHelpAfterError();
program.parse();
const opts = program.opts<{ documents: number; workspaces: number; batchSize: number; queries: number; lagRate: number; lagSeconds: number; engines: Engine[] }>();

const problems: string[] = [];
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' / ');
/** The batches the search projection is read in per engine: the runner's, or (Elasticsearch) the larger of the runner's and its own. */
const batchText = (engine: Engine) => {
  const batch = batchLimits({ batch: searchBatchFor(engine) }, opts.batchSize, DEFAULT_BATCH_BYTES);
  return `up to ${fmtInt(batch.size)} events or ${fmtBytes(batch.bytes)} a batch`;
};

// ---------------------------------------------------------------------------------------------

interface Lag {
  submissions: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

interface EngineResult {
  engine: Engine;
  docsPerSecond: number;
  eventsPerSecond: number;
  indexSeconds: number;
  indexLoad: string;
  levels: { clients: number; count: number; perSecond: number; p50: number; p95: number; p99: number }[];
  perKind: Map<Kind, number[]>;
  totals: Map<string, number>;
  lag: Lag | null;
  lagLoad: string;
}

/** Appends the documents' events once (every engine's projection reads the same log): 200 documents an append, two appends in flight. */
async function appendLog(store: EventStore): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let lastReport = started;
  let events = 0;
  let done = 0;
  const chunk = 200;
  let next = 0;
  const writer = async () => {
    while (next < opts.documents) {
      const from = next;
      next = Math.min(opts.documents, from + chunk);
      const parts = [];
      for (let i = from; i < next; i++) parts.push(documentEvents(i, opts.workspaces));
      await store.appendMulti(parts.map(({ streamId, events: e, expected }) => ({ streamId, events: e, expected })));
      events += parts.reduce((n, p) => n + p.events.length, 0);
      done += parts.length;
      const now = performance.now();
      if (now - lastReport > 10_000) {
        lastReport = now;
        console.log(`  log: ${fmtInt(done)} documents, ${fmtInt(events)} events, ${fmtInt(events / ((now - started) / 1000))} events/s (load ${load()})`);
      }
    }
  };
  await Promise.all([writer(), writer()]);
  return { events, seconds: (performance.now() - started) / 1000 };
}

/** The search projection from the start of the log, batch after batch, as the runner applies it. */
async function indexThroughProjection(engine: Engine, index: SearchIndex, knex: Knex, store: EventStore) {
  const projection = searchProjection(index, { indexTables: engine === 'postgres' ? SEARCH_TABLES : [] });
  await knex(FACTS_TABLE).truncate();
  await knex('projection_checkpoints').where({ projection: SEARCH_PROJECTION }).delete();
  const started = performance.now();
  let lastReport = started;
  let events = 0;
  for (;;) {
    const result = await applyBatch(knex, store, projection, opts.batchSize, {}, { persist: true });
    if (result === 'locked' || result === 'moved') throw new Error('another runner applies the search projection');
    events += result.read;
    const now = performance.now();
    if (now - lastReport > 10_000) {
      lastReport = now;
      console.log(`  ${engine}: ${fmtInt(events)} events applied, ${fmtInt(events / ((now - started) / 1000))} events/s (load ${load()})`);
    }
    if (!result.more) break;
  }
  const seconds = (performance.now() - started) / 1000;
  return { projection, seconds, events };
}

async function runQueries(index: SearchIndex, clients: number, count: number, seed: number, perKind?: Map<Kind, number[]>, totals?: Map<string, number>) {
  const r = rng(seed);
  const queries = Array.from({ length: count }, (_, i) => {
    const kind = KINDS[i % KINDS.length]!;
    return { kind, q: mixQuery(kind, r, opts.workspaces, opts.documents), key: String(i) };
  });
  const samples: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < queries.length) {
        const { kind, q, key } = queries[next++]!;
        const t0 = performance.now();
        try {
          const result = await index.search(q);
          const ms = performance.now() - t0;
          samples.push(ms);
          perKind?.get(kind)?.push(ms);
          totals?.set(key, result.total);
        } catch (err) {
          problems.push(`${index.engine} ${kind}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  return { clients, count: samples.length, perSecond: samples.length / seconds, p50: percentile(samples, 50), p95: percentile(samples, 95), p99: percentile(samples, 99) };
}

/**
 * The live runner follows the log while submissions are appended at --lag-rate/s: the lag of
 * each is the time from its append to the search checkpoint passing it.
 */
async function measureLag(engine: Engine, index: SearchIndex, knex: Knex, store: EventStore, firstDocument: number): Promise<Lag> {
  const projection = searchProjection(index, { indexTables: engine === 'postgres' ? SEARCH_TABLES : [] });
  const runner = new ProjectionRunner(knex, store, [projection], { batchSize: opts.batchSize });
  await runner.init();
  runner.start();
  const waiting: { at: number; position: Position }[] = [];
  const lags: number[] = [];
  const sampler = setInterval(() => {
    const at = runner.statuses()[0]?.position;
    if (!at) return;
    const now = performance.now();
    let kept = 0;
    for (const w of waiting) {
      if (comparePositions(w.position, at) <= 0) lags.push(now - w.at);
      else waiting[kept++] = w;
    }
    waiting.length = kept;
  }, 2);
  try {
    const total = opts.lagRate * opts.lagSeconds;
    const started = performance.now();
    const pending = new Set<Promise<unknown>>();
    for (let n = 0; n < total; ) {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * opts.lagRate) + 1);
      for (; n < due; n++) {
        // A submission leaves its first event (submitted, rejected or a stored purchase) in the log.
        const { streamId, events, expected } = documentEvents(firstDocument + n, opts.workspaces);
        const p = store
          .append(streamId, events.slice(0, 1), expected)
          .then((r) => void waiting.push({ at: performance.now(), position: r.position }))
          .catch((err: Error) => void problems.push(`${engine} lag: append failed: ${err.message}`));
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(pending);
    const deadline = performance.now() + 60_000;
    while (waiting.length > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (waiting.length > 0) problems.push(`${engine} lag: ${waiting.length} submissions not applied within 60 s of the load`);
  } finally {
    clearInterval(sampler);
    await runner.stop();
  }
  lags.sort((a, b) => a - b);
  return { submissions: lags.length, p50: percentile(lags, 50), p95: percentile(lags, 95), p99: percentile(lags, 99), max: lags[lags.length - 1] ?? 0 };
}

async function benchEngine(engine: Engine, index: SearchIndex, knex: Knex, store: EventStore, prepare: () => Promise<void>, count: () => Promise<number>): Promise<EngineResult> {
  console.log(`\n${engine}: the search projection indexes ${fmtInt(opts.documents)} documents from the log, ${batchText(engine)} (load ${load()})`);
  const { seconds, events } = await indexThroughProjection(engine, index, knex, store);
  const indexLoad = load();
  const docsPerSecond = opts.documents / seconds;
  console.log(`  ${engine}: indexed in ${seconds.toFixed(1)} s (${fmtInt(docsPerSecond)} documents/s, ${fmtInt(events / seconds)} events/s; load ${indexLoad})`);
  await prepare();
  const indexed = await count();
  if (indexed !== opts.documents) problems.push(`${engine}: ${fmtInt(indexed)} documents in the index, ${fmtInt(opts.documents)} expected`);
  await runQueries(index, 4, 100, 7); // warm-up
  const perKind = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
  const totals = new Map<string, number>();
  const levels = [await runQueries(index, 1, opts.queries, 42, perKind, totals), await runQueries(index, 16, opts.queries, 43)];
  console.log(`  ${engine}: query p95 at 1 client ${fmtMs(levels[0]!.p95)}, at 16 clients ${fmtMs(levels[1]!.p95)} (load ${load()})`);
  return { engine, docsPerSecond, eventsPerSecond: events / seconds, indexSeconds: seconds, indexLoad, levels, perKind, totals, lag: null, lagLoad: '' };
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  console.log(
    `bench:query — ${fmtInt(opts.documents)} documents over ${opts.workspaces} workspaces, search projection batches of ${batchText('postgres')} (Elasticsearch: ${batchText('elasticsearch')}), ${opts.queries} queries per level, ` +
      `lag at ${opts.lagRate} submissions/s for ${opts.lagSeconds} s; engines: ${opts.engines.join(', ')}; ${os.cpus().length} CPUs, load average ${load()}`,
  );
  const fresh = await openFreshBenchDatabase({ prefix: 'bench_query', startedAt, pgDir: BENCH_PG_DIR, pgPort: process.env.BENCH_QUERY_PG_PORT || BENCH_PG_PORT });
  let runtime: Runtime | null = null;
  let es: ElasticsearchSearchIndex | null = null;
  let startedNodePort: number | null = null;
  const results: EngineResult[] = [];
  let log = { events: 0, seconds: 0 };
  try {
    console.log(`PostgreSQL ${fresh.serverVersion}: ${fresh.where}, database ${fresh.database}`);
    runtime = await openRuntime(fresh.serviceConfig, { poolSize: 24 });
    const knex = runtime.db.knex;
    const store = runtime.store;
    console.log(`\nthe log: ${fmtInt(opts.documents)} documents' events`);
    log = await appendLog(store);
    console.log(`  log: ${fmtInt(log.events)} events in ${log.seconds.toFixed(1)} s (${fmtInt(log.events / log.seconds)} events/s)`);
    const indices: { engine: Engine; index: SearchIndex }[] = [];
    for (const engine of opts.engines) {
      if (engine === 'postgres') {
        const index = new PostgresSearchIndex(knex);
        indices.push({ engine, index });
        results.push(
          await benchEngine(
            engine,
            index,
            knex,
            store,
            async () => void (await knex.raw(`vacuum analyze ${SEARCH_TABLES.join(', ')}`)),
            async () => Number((await knex(SEARCH_TABLE).count({ n: '*' }))[0]!.n),
          ),
        );
      } else {
        let url = process.env.ELASTICSEARCH_URL;
        if (!url) {
          const port = Number(process.env.ELASTICSEARCH_NODE_PORT || 9200);
          if (!(await clusterHealth(`http://127.0.0.1:${port}`))) startedNodePort = port;
          url = await startNode(port);
        }
        es = ElasticsearchSearchIndex.connect(url, { prefix: `bench-query-${process.pid}` });
        await es.ensureIndices();
        console.log(`Elasticsearch at ${url}, indices ${es.aliases.sales}-* (and purchases, receipts)`);
        const index = es;
        indices.push({ engine, index });
        const names = Object.values(index.aliases);
        results.push(
          await benchEngine(
            engine,
            index,
            knex,
            store,
            async () => void (await index.client.indices.refresh({ index: names })),
            async () => (await index.client.count({ index: names })).count,
          ),
        );
      }
    }
    // The lag last, once every engine has indexed the same log (its submissions add documents).
    let next = opts.documents;
    for (const { engine, index } of indices) {
      console.log(`\n${engine}: the live search projection under ${opts.lagRate} submissions/s for ${opts.lagSeconds} s (load ${load()})`);
      const lag = await measureLag(engine, index, knex, store, next);
      next += opts.lagRate * opts.lagSeconds;
      const r = results.find((x) => x.engine === engine)!;
      r.lag = lag;
      r.lagLoad = load();
      console.log(`  ${engine}: lag p50 ${fmtMs(lag.p50)}, p99 ${fmtMs(lag.p99)} (load ${r.lagLoad})`);
    }
  } finally {
    await es?.dropAll().catch((err: Error) => console.log(`could not drop the benchmark indices: ${err.message}`));
    await es?.close();
    await runtime?.close();
    await fresh.close();
    if (startedNodePort !== null) await stopNode(startedNodePort);
  }

  console.log(`\nthe log: ${fmtInt(opts.documents)} documents as ${fmtInt(log.events)} events, appended at ${fmtInt(log.events / Math.max(log.seconds, 0.001))} events/s`);
  console.log('\nindexing through the search projection (from the start of the log, one batch after the other, each acknowledged by the engine before its checkpoint commits)');
  console.log(
    renderTable(
      ['engine', 'documents', 'seconds', 'documents/s', 'events/s', 'load average (1/5/15 min)'],
      results.map((r) => [r.engine, fmtInt(opts.documents), r.indexSeconds.toFixed(1), fmtInt(r.docsPerSecond), fmtInt(r.eventsPerSecond), r.indexLoad]),
    ),
  );
  console.log('\nquery mix (a random workspace each; production environment; 20 documents a page)');
  console.log(
    renderTable(
      ['engine', 'clients', 'queries', 'queries/s', 'p50', 'p95', 'p99'],
      results.flatMap((r) => r.levels.map((l) => [r.engine, String(l.clients), fmtInt(l.count), fmtInt(l.perSecond), fmtMs(l.p50), fmtMs(l.p95), fmtMs(l.p99)])),
    ),
  );
  console.log('\np95 per kind of query at 1 client');
  console.log(
    renderTable(
      ['query', ...results.map((r) => r.engine)],
      KINDS.map((k) => [k, ...results.map((r) => fmtMs(percentile([...r.perKind.get(k)!].sort((a, b) => a - b), 95)))]),
    ),
  );
  console.log(`\nthe search projection's lag behind the log (append → checkpoint past it) at ${opts.lagRate} submissions/s for ${opts.lagSeconds} s (the live runner, this projection alone)`);
  console.log(
    renderTable(
      ['engine', 'submissions', 'p50', 'p95', 'p99', 'max', 'load average'],
      results.filter((r) => r.lag).map((r) => [r.engine, fmtInt(r.lag!.submissions), fmtMs(r.lag!.p50), fmtMs(r.lag!.p95), fmtMs(r.lag!.p99), fmtMs(r.lag!.max), r.lagLoad]),
    ),
  );
  if (results.length === 2) {
    const [a, b] = results as [EngineResult, EngineResult];
    const differ = [...a.totals].filter(([key, total]) => b.totals.has(key) && b.totals.get(key) !== total).length;
    console.log(`\nthe engines agree on the total of ${a.totals.size - differ} of ${a.totals.size} queries`);
    if (differ > 0) problems.push(`${differ} queries have different totals on the two engines`);
  }
  console.log(`\ntargets (load average now ${load()}):`);
  for (const r of results) {
    const p95 = r.levels[0]!.p95;
    console.log(`  ${r.engine}: query p95 at 1 client ${fmtMs(p95)} (target < ${TARGET_P95_MS} ms: ${p95 < TARGET_P95_MS ? 'met' : 'NOT met'})`);
    if (r.engine === 'elasticsearch') {
      console.log(`  elasticsearch: ${fmtInt(r.docsPerSecond)} documents/s indexed through the projection (target ≥ ${fmtInt(TARGET_ES_DOCS_PER_S)}: ${r.docsPerSecond >= TARGET_ES_DOCS_PER_S ? 'met' : 'NOT met'})`);
    }
    if (r.lag) console.log(`  ${r.engine}: lag p99 ${fmtMs(r.lag.p99)} at ${opts.lagRate} submissions/s (target < ${fmtMs(TARGET_LAG_MS)}: ${r.lag.p99 < TARGET_LAG_MS ? 'met' : 'NOT met'})`);
  }
  console.log(`  total ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  reportProblems(problems);
}

runBenchmark(main);
