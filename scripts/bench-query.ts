/**
 * Benchmark of the invoice query's search index, on each engine (PostgreSQL, Elasticsearch):
 *
 * 1. indexing: realistic indexed documents (sales, purchases and receipts across 100
 *    workspaces; header, parties with addresses, line items, totals, statuses and a validation
 *    report) written through the adapter's batched write, one batch after the other in a
 *    PostgreSQL transaction, exactly as the search projection calls it. It measures the
 *    adapter's write path, not the projection's reading and shaping of events (the projection
 *    is built on another branch), so it is an upper bound of the projection's rate;
 * 2. the query mix of the issue — a date range + status filter, a seller-name search, a
 *    document-number search, an amount range sorted by amount, paging to page 50 — on random
 *    workspaces, at 1 and 16 concurrent clients: queries/s and p50/p95/p99 per engine (and per
 *    kind at 1 client).
 *
 * It prints figures and the targets (query p95 < 50 ms at 1 client on both engines; ≥ 5,000
 * documents/s into Elasticsearch); it never fails on timings (exit 1 only when a write or a
 * query failed, or both engines disagree on a query's total).
 *
 * PostgreSQL: an embedded server in var/pg-bench-query (port 54319), a fresh database dropped at
 * the end (DATABASE_URL: a fresh database on that server). Elasticsearch: ELASTICSEARCH_URL,
 * else the node of `npm run search:node` (started here on ELASTICSEARCH_NODE_PORT or 9200 when
 * not running, and stopped again); indices under a prefix of their own, dropped at the end.
 *
 *   npm run bench:query -- [--documents 1000000] [--workspaces 100] [--batch-size 500]
 *                          [--queries 500] [--engines postgres,elasticsearch]
 */
import { Command, InvalidArgumentError } from 'commander';
import type { Knex } from 'knex';
import { openDatabase, type Database } from '../platform/database.js';
import { ElasticsearchSearchIndex } from '../readmodels/search/elasticsearch.js';
import { migrateToLatest } from '../readmodels/migrations/index.js';
import type { IndexedDocument, SearchIndex } from '../readmodels/search/port.js';
import { PostgresSearchIndex, SEARCH_TABLE } from '../readmodels/search/postgres.js';
import { fmtInt, fmtMs, openFreshBenchDatabase, percentile, positiveInt, renderTable, reportProblems, runBenchmark } from './bench-support.js';
import { clusterHealth, startNode, stopNode } from './search-node.js';
import { KINDS, makeDocument, mixQuery, rng, type Kind } from './bench-query-documents.js';

const BENCH_PG_DIR = 'var/pg-bench-query';
const BENCH_PG_PORT = '54319';
const TARGET_P95_MS = 50;
const TARGET_ES_DOCS_PER_S = 5000;
const ENGINES = ['postgres', 'elasticsearch'] as const;
type Engine = (typeof ENGINES)[number];

const program = new Command()
  .name('bench:query')
  .description('Benchmark the search index: indexing documents/s and the invoice query mix at 1 and 16 clients, per engine.')
  .option('--documents <n>', 'documents to index', positiveInt(10_000_000), 1_000_000)
  .option('--workspaces <n>', 'workspaces the documents spread over', positiveInt(100_000), 100)
  .option('--batch-size <n>', 'documents per write (the projection batch)', positiveInt(10_000), 500)
  .option('--queries <n>', 'timed queries per concurrency level', positiveInt(1_000_000), 500)
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
const opts = program.opts<{ documents: number; workspaces: number; batchSize: number; queries: number; engines: Engine[] }>();

const problems: string[] = [];

// ---------------------------------------------------------------------------------------------

interface EngineResult {
  engine: Engine;
  docsPerSecond: number;
  indexSeconds: number;
  levels: { clients: number; count: number; perSecond: number; p50: number; p95: number; p99: number }[];
  perKind: Map<Kind, number[]>;
  totals: Map<string, number>;
}

async function indexAll(engine: Engine, index: SearchIndex, knex: Knex): Promise<{ docsPerSecond: number; seconds: number }> {
  const started = performance.now();
  let lastReport = started;
  for (let from = 0; from < opts.documents; from += opts.batchSize) {
    const batch: IndexedDocument[] = [];
    for (let i = from; i < Math.min(opts.documents, from + opts.batchSize); i++) batch.push(makeDocument(i, opts.workspaces));
    await knex.transaction((trx) => index.write(trx, batch));
    const now = performance.now();
    if (now - lastReport > 10_000) {
      lastReport = now;
      const done = Math.min(opts.documents, from + opts.batchSize);
      console.log(`  ${engine}: ${fmtInt(done)} documents, ${fmtInt(done / ((now - started) / 1000))}/s`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { docsPerSecond: opts.documents / seconds, seconds };
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

async function benchEngine(engine: Engine, index: SearchIndex, knex: Knex, prepare: () => Promise<void>): Promise<EngineResult> {
  console.log(`\n${engine}: indexing ${fmtInt(opts.documents)} documents in batches of ${opts.batchSize}`);
  const { docsPerSecond, seconds } = await indexAll(engine, index, knex);
  console.log(`  ${engine}: indexed in ${seconds.toFixed(1)} s (${fmtInt(docsPerSecond)} documents/s)`);
  await prepare();
  await runQueries(index, 4, 100, 7); // warm-up
  const perKind = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
  const totals = new Map<string, number>();
  const levels = [await runQueries(index, 1, opts.queries, 42, perKind, totals), await runQueries(index, 16, opts.queries, 43)];
  return { engine, docsPerSecond, indexSeconds: seconds, levels, perKind, totals };
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  console.log(
    `bench:query — ${fmtInt(opts.documents)} documents over ${opts.workspaces} workspaces, batches of ${opts.batchSize}, ${opts.queries} queries per level; engines: ${opts.engines.join(', ')}`,
  );
  const fresh = await openFreshBenchDatabase({ prefix: 'bench_query', startedAt, pgDir: BENCH_PG_DIR, pgPort: process.env.BENCH_QUERY_PG_PORT || BENCH_PG_PORT });
  let db: Database | null = null;
  let es: ElasticsearchSearchIndex | null = null;
  let startedNodePort: number | null = null;
  const results: EngineResult[] = [];
  try {
    console.log(`PostgreSQL ${fresh.serverVersion}: ${fresh.where}, database ${fresh.database}`);
    db = await openDatabase(fresh.serviceConfig, { poolSize: 24 });
    await migrateToLatest(db.knex);
    const knex = db.knex;
    for (const engine of opts.engines) {
      if (engine === 'postgres') {
        results.push(await benchEngine(engine, new PostgresSearchIndex(knex), knex, async () => void (await knex.raw(`vacuum analyze ${SEARCH_TABLE}`))));
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
        results.push(await benchEngine(engine, index, knex, async () => void (await index.client.indices.refresh({ index: Object.values(index.aliases) }))));
      }
    }
  } finally {
    await es?.dropAll().catch((err: Error) => console.log(`could not drop the benchmark indices: ${err.message}`));
    await es?.close();
    await db?.close();
    await fresh.close();
    if (startedNodePort !== null) await stopNode(startedNodePort);
  }

  console.log('\nindexing (the adapter write path, one batch at a time as the projection writes)');
  console.log(renderTable(['engine', 'documents', 'seconds', 'documents/s'], results.map((r) => [r.engine, fmtInt(opts.documents), r.indexSeconds.toFixed(1), fmtInt(r.docsPerSecond)])));
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
  if (results.length === 2) {
    const [a, b] = results as [EngineResult, EngineResult];
    const differ = [...a.totals].filter(([key, total]) => b.totals.has(key) && b.totals.get(key) !== total).length;
    console.log(`\nthe engines agree on the total of ${a.totals.size - differ} of ${a.totals.size} queries`);
    if (differ > 0) problems.push(`${differ} queries have different totals on the two engines`);
  }
  console.log('\ntargets:');
  for (const r of results) {
    const p95 = r.levels[0]!.p95;
    console.log(`  ${r.engine}: query p95 at 1 client ${fmtMs(p95)} (target < ${TARGET_P95_MS} ms: ${p95 < TARGET_P95_MS ? 'met' : 'NOT met'})`);
    if (r.engine === 'elasticsearch') {
      console.log(`  elasticsearch: ${fmtInt(r.docsPerSecond)} documents/s indexed (target ≥ ${fmtInt(TARGET_ES_DOCS_PER_S)}: ${r.docsPerSecond >= TARGET_ES_DOCS_PER_S ? 'met' : 'NOT met'})`);
    }
  }
  console.log('  the search projection\'s lag behind the log under a submit load is not measured here (the projection is not part of this benchmark)');
  reportProblems(problems);
}

runBenchmark(main);
