/**
 * Benchmark of the PostgreSQL event store, in both of its append modes:
 * - ordered:    the default; readers order by (transaction id, position) and read only below the
 *               oldest transaction still in flight, so appends run concurrently;
 * - serialized: serializeAppends: true, one global advisory lock per append.
 *
 * For each mode it measures single-event appends (1 and 32 writers), 100-event batch appends
 * (8 writers), reading the whole log back with readAll, and the lag of a live subscriber while
 * 32 writers append, checking that the subscriber sees every event exactly once, in order.
 * It prints figures and a verdict against the targets; it never fails on timings (the exit code
 * is 1 only when events were lost, duplicated, reordered or an append failed).
 *
 * By default it runs on an embedded PostgreSQL in var/pg-bench (port 54349), never on a developer's
 * data; with DATABASE_URL set it uses that server. Either way each mode gets a fresh database
 * (bench_<timestamp>_<pid>_<mode>), migrated with migrateToLatest and dropped afterwards, so the two
 * modes read back logs of comparable size.
 *
 *   npm run bench:eventstore -- [--seconds 5] [--mode ordered|serialized|both]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { PostgresEventStore } from '../platform/eventstore/postgres.js';
import {
  START,
  comparePositions,
  type ExpectedRevision,
  type NewEvent,
  type Position,
} from '../platform/eventstore/port.js';
import { loadConfig, type Config } from '../platform/config.js';
import { openDatabase, type Database } from '../platform/database.js';
import { migrateToLatest } from '../readmodels/migrations/index.js';
import { distribution, fmtBytes, fmtDist, fmtInt, fmtMs, quoteIdent, renderTable, type Distribution, withClient, withDatabase, runBenchmark } from './bench-support.js';

// ---------------------------------------------------------------------------------------------
// Settings

const POOL_SIZE = 40;
const MANY_WRITERS = 32;
const BATCH_WRITERS = 8;
const BATCH_SIZE = 100;
const READ_PAGE = 1000;
const BENCH_PG_DIR = 'var/pg-bench';
const BENCH_PG_PORT = '54349';
/** How long the subscriber may take to catch up after the load before events count as missing. */
const DRAIN_TIMEOUT_MS = 15_000;
/** After catching up, how long to keep listening for late duplicates (longer than the 250 ms poll). */
const DUPLICATE_GRACE_MS = 400;
/** Bounds on the log a mode writes and on reading it back, to keep the total runtime bounded. */
const BATCH_PHASE_MAX_EVENTS = 150_000;

const TARGET_APPENDS_PER_S = 5_000;
const TARGET_READ_PER_S = 50_000;

type ModeName = 'ordered' | 'serialized';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseSeconds(raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 120) throw new InvalidArgumentError('expected a number of seconds in (0, 120]');
  return n;
}

const program = new Command()
  .name('bench:eventstore')
  .description('Benchmark the PostgreSQL event store (appends, readAll, subscription lag) in both append modes.')
  .option('--seconds <n>', 'duration of each timed phase, in seconds', parseSeconds, 5)
  .addOption(
    new Option('--mode <mode>', 'which append mode(s) to measure').choices(['ordered', 'serialized', 'both']).default('both'),
  )
  .showHelpAfterError();
program.parse();
const opts = program.opts<{ seconds: number; mode: 'ordered' | 'serialized' | 'both' }>();
const phaseMs = Math.round(opts.seconds * 1000);
const readCapMs = Math.max(30_000, 6 * phaseMs);
const modes: ModeName[] = opts.mode === 'both' ? ['ordered', 'serialized'] : [opts.mode];

// Ctrl-C stops the running phase, skips the rest, and still cleans up (drops the database,
// stops the embedded server). A second Ctrl-C exits at once.
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  console.log('\ninterrupted: finishing the current append calls, then cleaning up (Ctrl-C again to exit now)');
});

// ---------------------------------------------------------------------------------------------
// Realistic events: an e-invoice-like payload of about 1 KB, and full metadata.

const runTag = `${Date.now().toString(36)}${process.pid.toString(36)}`;
const EVENT_TYPES = ['Invoice.Submitted', 'Invoice.Validated', 'Invoice.Delivered', 'Invoice.StatusChanged'] as const;

function money(n: number): string {
  return n.toFixed(2);
}

function invoiceData(writer: number, seq: number): unknown {
  const lines = Array.from({ length: 3 }, (_, i) => {
    const quantity = 1 + ((seq + i) % 9);
    const unitPrice = 40 + ((seq * 7 + i * 13) % 160);
    return {
      lineId: String(i + 1),
      description: `Professional services, engagement ${1000 + (seq % 97)} item ${i + 1}`,
      quantity,
      unitCode: 'HUR',
      unitPrice: money(unitPrice),
      vatCategory: 'S',
      vatRate: '20.00',
      netAmount: money(quantity * unitPrice),
    };
  });
  const net = lines.reduce((sum, l) => sum + Number(l.netAmount), 0);
  return {
    invoiceId: randomUUID(),
    number: `INV-2025-${String(writer).padStart(2, '0')}-${String(seq).padStart(7, '0')}`,
    issueDate: '2025-06-30',
    dueDate: '2025-07-30',
    currency: 'EUR',
    profile: 'urn:cen.eu:en16931:2017',
    seller: {
      name: 'Atelier Numérique SAS',
      vatId: 'FR32123456789',
      siren: '123456789',
      address: { line1: '12 rue de la République', city: 'Lyon', postcode: '69002', country: 'FR' },
    },
    buyer: {
      name: `Client ${writer}-${seq % 1000} SARL`,
      vatId: 'FR61987654321',
      siren: '987654321',
      address: { line1: '3 avenue des Champs', city: 'Paris', postcode: '75008', country: 'FR' },
    },
    lines,
    totals: { net: money(net), vat: money(net * 0.2), gross: money(net * 1.2), payable: money(net * 1.2) },
    payment: { terms: 'Net 30 days', means: '58', iban: 'FR7630006000011234567890189' },
  };
}

function makeEvent(writer: number, seq: number): NewEvent {
  return {
    id: randomUUID(),
    type: EVENT_TYPES[seq % EVENT_TYPES.length]!,
    schemaVersion: 1,
    data: invoiceData(writer, seq),
    metadata: {
      correlationId: randomUUID(),
      causationId: seq === 0 ? null : randomUUID(),
      occurredAt: new Date().toISOString(),
      workspaceId: `ws-bench-${writer % 4}`,
      environment: 'sandbox',
      requestId: `req-${randomUUID()}`,
      keyId: `key-${writer % 8}`,
      idempotencyKey: seq % 3 === 0 ? randomUUID() : null,
      actor: null,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Phases

/** Events successfully appended to the current mode's database, for the read-back check. */
let written = 0;
const problems: string[] = [];

interface WriteStats {
  writers: number;
  batch: number;
  events: number;
  appends: number;
  elapsedMs: number;
  latency: Distribution;
  errors: string[];
}

/**
 * `writers` concurrent writers, each appending batches of `batch` new events to its own stream
 * with the exact expected revision, for `durationMs` (each writer finishes its call in flight).
 */
async function runWriters(
  store: PostgresEventStore,
  p: {
    writers: number;
    batch: number;
    durationMs: number;
    streamPrefix: string;
    /** Stop early once this many events are written (the phase then lasts less than durationMs). */
    maxEvents?: number;
    onAppended?: (events: readonly NewEvent[], resolvedAt: number) => void;
  },
): Promise<WriteStats> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let events = 0;
  let appends = 0;
  let failed = false;
  const started = performance.now();
  const deadline = started + p.durationMs;
  await Promise.all(
    Array.from({ length: p.writers }, async (_, w) => {
      const stream = `${p.streamPrefix}-${w}`;
      let expected: ExpectedRevision = 'no_stream';
      let seq = 0;
      const maxEvents = p.maxEvents ?? Number.POSITIVE_INFINITY;
      while (!failed && !interrupted && performance.now() < deadline && events < maxEvents) {
        const batch = Array.from({ length: p.batch }, () => makeEvent(w, seq++));
        const t0 = performance.now();
        try {
          const result = await store.append(stream, batch, expected);
          const t1 = performance.now();
          if (result.replayed) throw new Error(`append to ${stream} unexpectedly reported a replay`);
          latencies.push(t1 - t0);
          expected = result.nextExpectedRevision;
          events += batch.length;
          appends++;
          written += batch.length;
          p.onAppended?.(batch, t1);
        } catch (err) {
          failed = true;
          errors.push(`${stream}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  return { writers: p.writers, batch: p.batch, events, appends, elapsedMs, latency: distribution(latencies), errors };
}

interface ReadStats {
  events: number;
  elapsedMs: number;
  pageLatency: Distribution;
  outOfOrder: number;
  duplicates: number;
  expected: number;
  counted: number;
  /** Stopped at the time cap before reaching the end of the log. */
  capped: boolean;
}

/** Reads the whole log from START in pages, checking order, and compares the count with what was written. */
async function runReadAll(store: PostgresEventStore): Promise<ReadStats> {
  const pageLatencies: number[] = [];
  const ids = new Set<string>();
  let events = 0;
  let outOfOrder = 0;
  let duplicates = 0;
  let from: Position = START;
  let capped = false;
  const started = performance.now();
  for (;;) {
    if (performance.now() - started > readCapMs) {
      capped = true;
      break;
    }
    const t0 = performance.now();
    const page = await store.readAll(from, READ_PAGE);
    pageLatencies.push(performance.now() - t0);
    if (page.length === 0) break;
    for (const event of page) {
      if (comparePositions(from, event.position) >= 0) outOfOrder++;
      if (ids.has(event.id)) duplicates++;
      else ids.add(event.id);
      from = event.position;
    }
    events += page.length;
    if (interrupted) break;
  }
  const elapsedMs = performance.now() - started;
  const counted = await store.countEvents();
  return { events, elapsedMs, pageLatency: distribution(pageLatencies), outOfOrder, duplicates, expected: written, counted, capped };
}

interface SubscriptionStats {
  write: WriteStats;
  lag: Distribution;
  appended: number;
  /** Distinct events of this phase received. */
  received: number;
  missing: number;
  duplicates: number;
  outOfOrder: number;
  unexpected: number;
  /** Received before the append call that wrote them had resolved (lag counted as 0). */
  early: number;
  catchUpMs: number;
  error: string | null;
}

/**
 * A subscriber started at the head of the log while MANY_WRITERS writers append single events:
 * lag from each append resolving to the subscriber receiving the event, and an exactly-once,
 * in-order check of what it received.
 */
async function runSubscription(store: PostgresEventStore, mode: ModeName): Promise<SubscriptionStats> {
  const prefix = `bench-${mode}-sub-${runTag}`;
  const head = await store.headPosition();
  const resolvedAt = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  let duplicates = 0;
  let outOfOrder = 0;
  let unexpected = 0;
  let last: Position = head;
  let error: string | null = null;
  let target = Number.POSITIVE_INFINITY;
  let caughtUp: () => void = () => {};
  const allReceived = new Promise<void>((resolve) => (caughtUp = resolve));

  const subscription = store.subscribe(head);
  const consumer = (async () => {
    try {
      for await (const event of subscription) {
        const now = performance.now();
        if (comparePositions(last, event.position) >= 0) outOfOrder++;
        last = event.position;
        if (!event.streamId.startsWith(prefix)) {
          unexpected++;
          continue;
        }
        if (receivedAt.has(event.id)) duplicates++;
        else receivedAt.set(event.id, now);
        if (receivedAt.size >= target) caughtUp();
      }
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      caughtUp();
    }
  })();
  await sleep(100); // let the subscriber reach the head and start waiting

  const write = await runWriters(store, {
    writers: MANY_WRITERS,
    batch: 1,
    durationMs: phaseMs,
    streamPrefix: prefix,
    onAppended: (events, at) => {
      for (const e of events) resolvedAt.set(e.id, at);
    },
  });
  const loadEnded = performance.now();
  target = resolvedAt.size;
  if (receivedAt.size >= target) caughtUp();
  let drainTimer: NodeJS.Timeout | undefined;
  await Promise.race([allReceived, new Promise<void>((resolve) => (drainTimer = setTimeout(resolve, DRAIN_TIMEOUT_MS)))]);
  clearTimeout(drainTimer);
  const catchUpMs = performance.now() - loadEnded;
  await sleep(DUPLICATE_GRACE_MS);
  await subscription.close();
  await consumer;

  const lags: number[] = [];
  let missing = 0;
  let early = 0;
  for (const [id, at] of resolvedAt) {
    const got = receivedAt.get(id);
    if (got === undefined) {
      missing++;
      continue;
    }
    if (got < at) early++;
    lags.push(Math.max(0, got - at));
  }
  for (const id of receivedAt.keys()) if (!resolvedAt.has(id)) unexpected++;
  return {
    write,
    lag: distribution(lags),
    appended: resolvedAt.size,
    received: receivedAt.size,
    missing,
    duplicates,
    outOfOrder,
    unexpected,
    early,
    catchUpMs,
    error,
  };
}

// ---------------------------------------------------------------------------------------------
// One mode

interface ModeResult {
  mode: ModeName;
  single1: WriteStats;
  single32: WriteStats;
  batches: WriteStats;
  read: ReadStats;
  sub: SubscriptionStats;
}

function perSecond(n: number, ms: number): number {
  return ms > 0 ? (n * 1000) / ms : Number.NaN;
}

async function benchMode(url: string, mode: ModeName): Promise<ModeResult | null> {
  written = 0;
  const store = await PostgresEventStore.connect(url, { poolSize: POOL_SIZE, serializeAppends: mode === 'serialized' });
  try {
    // Open every pooled connection and warm up the append function's plans on each of them,
    // so connection set-up is not measured; these events count towards the read-back.
    await Promise.all(Array.from({ length: POOL_SIZE }, () => store.ping()));
    const warm = await runWriters(store, { writers: POOL_SIZE, batch: 1, durationMs: 300, streamPrefix: `bench-${mode}-warmup-${runTag}` });
    if (warm.errors.length > 0) problems.push(`[${mode}] warm-up: ${warm.errors[0]}`);

    const step = (what: string) => console.log(`  [${mode}] ${what}…`);
    step(`single-event appends, 1 writer, ${opts.seconds} s`);
    const single1 = await runWriters(store, { writers: 1, batch: 1, durationMs: phaseMs, streamPrefix: `bench-${mode}-w1-${runTag}` });
    if (interrupted) return null;
    step(`single-event appends, ${MANY_WRITERS} writers, ${opts.seconds} s`);
    const single32 = await runWriters(store, {
      writers: MANY_WRITERS,
      batch: 1,
      durationMs: phaseMs,
      streamPrefix: `bench-${mode}-w${MANY_WRITERS}-${runTag}`,
    });
    if (interrupted) return null;
    step(`${BATCH_SIZE}-event batch appends, ${BATCH_WRITERS} writers, ${opts.seconds} s`);
    const batches = await runWriters(store, {
      writers: BATCH_WRITERS,
      batch: BATCH_SIZE,
      durationMs: phaseMs,
      maxEvents: BATCH_PHASE_MAX_EVENTS,
      streamPrefix: `bench-${mode}-batch-${runTag}`,
    });
    if (interrupted) return null;
    step(`readAll from START in pages of ${READ_PAGE} (${fmtInt(written)} events)`);
    const read = await runReadAll(store);
    if (interrupted) return null;
    step(`subscription lag, ${MANY_WRITERS} writers, ${opts.seconds} s`);
    const sub = await runSubscription(store, mode);
    return { mode, single1, single32, batches, read, sub };
  } finally {
    await store.close();
  }
}

function writeRow(label: string, s: WriteStats): string[] {
  return [
    label,
    String(s.writers),
    fmtInt(s.events),
    fmtInt(s.appends),
    `${(s.elapsedMs / 1000).toFixed(2)} s`,
    fmtInt(perSecond(s.events, s.elapsedMs)),
    fmtDist(s.latency),
  ];
}

function subscriptionOk(s: SubscriptionStats): boolean {
  return s.missing === 0 && s.duplicates === 0 && s.outOfOrder === 0 && s.unexpected === 0 && s.error === null;
}

function report(r: ModeResult): void {
  const { single1, single32, batches, read, sub } = r;
  console.log(`\n=== PostgreSQL event store, mode "${r.mode}"${r.mode === 'serialized' ? ' (serializeAppends: true)' : ' (transaction-id ordering)'} ===`);
  console.log(
    renderTable(
      ['phase', 'writers', 'events', 'calls', 'time', 'events/s', 'call latency p50 / p99 / max'],
      [
        writeRow('single-event appends', single1),
        writeRow('single-event appends', single32),
        writeRow(`${BATCH_SIZE}-event batch appends`, batches),
        [
          `readAll, pages of ${READ_PAGE}`,
          '1 reader',
          fmtInt(read.events),
          fmtInt(Math.max(0, read.pageLatency.count)),
          `${(read.elapsedMs / 1000).toFixed(2)} s`,
          fmtInt(perSecond(read.events, read.elapsedMs)),
          fmtDist(read.pageLatency),
        ],
        writeRow('appends with live subscriber', sub.write),
      ],
    ),
  );
  const readOk = (read.capped || read.events === read.expected) && read.outOfOrder === 0 && read.duplicates === 0;
  const readMissing = read.capped ? 0 : read.expected - (read.events - read.duplicates);
  if (read.capped) {
    console.log(`  read-back stopped at the ${readCapMs / 1000} s time cap: the count check covers only what was read`);
  }
  console.log(
    `  read-back: ${fmtInt(read.events)} events read, ${fmtInt(read.expected)} written in this run, count(*) ${fmtInt(read.counted)}` +
      (readOk
        ? ', each once, in position order ✓'
        : ' ✗ ' +
          [
            readMissing > 0 ? `${fmtInt(readMissing)} NOT READ BACK` : '',
            read.duplicates > 0 ? `${fmtInt(read.duplicates)} READ TWICE` : '',
            read.outOfOrder > 0 ? `${fmtInt(read.outOfOrder)} OUT OF POSITION ORDER` : '',
            readMissing < 0 ? `${fmtInt(-readMissing)} MORE THAN WRITTEN` : '',
          ]
            .filter(Boolean)
            .join(', ')),
  );
  console.log(
    `  subscription lag (append resolved → subscriber received), p50 / p99 / max: ${fmtDist(sub.lag)}` +
      (sub.early > 0 ? ` (${fmtInt(sub.early)} events arrived before their append call resolved, counted as 0)` : ''),
  );
  const subVerdict = subscriptionOk(sub)
    ? 'no event skipped'
    : [
        sub.missing > 0 ? `${fmtInt(sub.missing)} MISSING (not received ${DRAIN_TIMEOUT_MS / 1000} s after the load)` : '',
        sub.duplicates > 0 ? `${fmtInt(sub.duplicates)} DUPLICATED` : '',
        sub.outOfOrder > 0 ? `${fmtInt(sub.outOfOrder)} OUT OF POSITION ORDER` : '',
        sub.unexpected > 0 ? `${fmtInt(sub.unexpected)} UNEXPECTED (not written during the phase: older than the start position)` : '',
        sub.error ? `subscription failed: ${sub.error}` : '',
      ]
        .filter(Boolean)
        .join(', ');
  console.log(
    `  subscriber: received ${fmtInt(sub.received)} of ${fmtInt(sub.appended)} appended: ${subVerdict}; ` +
      `caught up ${fmtMs(sub.catchUpMs)} after the load stopped`,
  );
  const writeErrors = [single1, single32, batches, sub.write].flatMap((s) => s.errors);
  if (writeErrors.length > 0) console.log(`  append errors: ${writeErrors.length}, first: ${writeErrors[0]}`);

  const appendRate = perSecond(single32.events, single32.elapsedMs);
  const readRate = perSecond(read.events, read.elapsedMs);
  const check = (ok: boolean) => (ok ? '✓' : '✗');
  const appendOk = appendRate >= TARGET_APPENDS_PER_S;
  const readRateOk = readRate >= TARGET_READ_PER_S;
  const allOk = appendOk && readRateOk && subscriptionOk(sub) && readOk && writeErrors.length === 0;
  console.log(
    `  verdict [${r.mode}]: ${allOk ? 'MEETS TARGETS' : 'BELOW TARGET'} — ` +
      `${MANY_WRITERS}-writer appends ${fmtInt(appendRate)}/s (target ≥ ${fmtInt(TARGET_APPENDS_PER_S)}) ${check(appendOk)}, ` +
      `read-back ${fmtInt(readRate)} events/s (target ≥ ${fmtInt(TARGET_READ_PER_S)}) ${check(readRateOk)}, ` +
      `${subscriptionOk(sub) && readOk ? 'no event skipped' : 'event delivery check FAILED (see above)'} ${check(subscriptionOk(sub) && readOk)}` +
      (writeErrors.length > 0 ? `, ${writeErrors.length} append errors ✗` : ''),
  );
  if (!subscriptionOk(sub) || !readOk || writeErrors.length > 0) problems.push(`[${r.mode}] correctness check failed`);
}

function comparison(results: readonly ModeResult[]): void {
  if (results.length < 2) return;
  const row = (label: string, f: (r: ModeResult) => string) => [label, ...results.map(f)];
  console.log('\n=== comparison ===');
  console.log(
    renderTable(
      ['', ...results.map((r) => r.mode)],
      [
        row('appends/s, 1 writer', (r) => fmtInt(perSecond(r.single1.events, r.single1.elapsedMs))),
        row(`appends/s, ${MANY_WRITERS} writers`, (r) => fmtInt(perSecond(r.single32.events, r.single32.elapsedMs))),
        row(`append p99, ${MANY_WRITERS} writers`, (r) => fmtMs(r.single32.latency.p99)),
        row(`events/s, ${BATCH_SIZE}-event batches`, (r) => fmtInt(perSecond(r.batches.events, r.batches.elapsedMs))),
        row('readAll events/s', (r) => fmtInt(perSecond(r.read.events, r.read.elapsedMs))),
        row('appends/s with subscriber', (r) => fmtInt(perSecond(r.sub.write.events, r.sub.write.elapsedMs))),
        row('subscription lag p50 / p99 / max', (r) => fmtDist(r.sub.lag)),
      ],
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Database set-up and clean-up




function describeServer(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}`;
}

/** Drops bench databases that crashed or interrupted runs left in the bench's own embedded cluster. */
async function dropStaleBenchDatabases(adminUrl: string, current: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      "select datname from pg_database where datname ~ '^bench_[0-9]+_[0-9]+(_[a-z]+)?$' and datname not like $1",
      [`${current}%`],
    );
    for (const { datname } of rows) {
      const startedAt = Number(/^bench_(\d+)_/.exec(datname)![1]);
      if (Date.now() - startedAt < 30 * 60_000) continue; // perhaps another run still going
      await client
        .query(`drop database ${quoteIdent(datname)}`)
        .then(() => console.log(`  dropped ${datname}, left behind by an earlier run`))
        .catch(() => {});
    }
  });
}

async function dropDatabase(adminUrl: string, database: string): Promise<boolean> {
  return withClient(adminUrl, (c) => c.query(`drop database if exists ${quoteIdent(database)} with (force)`))
    .then(() => true)
    .catch((err: Error) => {
      console.log(`  could not drop ${database}: ${err.message}`);
      return false;
    });
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const runName = `bench_${startedAt}_${process.pid}`;
  const externalUrl = process.env.DATABASE_URL || null;
  const configFor = (database: string): Config =>
    externalUrl
      ? loadConfig({ ...process.env, DATABASE_URL: withDatabase(externalUrl, database) })
      : loadConfig({
          ...process.env,
          DATABASE_URL: '',
          EMBEDDED_PG_DIR: path.join(repoRoot, BENCH_PG_DIR),
          EMBEDDED_PG_PORT: BENCH_PG_PORT,
          EMBEDDED_PG_DATABASE: database,
        });
  const log = (msg: string) => console.log(`  ${msg}`);
  /** Mode databases created and not dropped yet. */
  const pending = new Set<string>();
  let allDropped = true;
  let server: Database | null = null;
  let xids: { first: string; last: string } | null = null;
  const results: ModeResult[] = [];
  /** The next transaction id the server will assign (reading it assigns none). */
  const nextXid = (url: string) =>
    withClient(url, async (c) => (await c.query<{ x: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as x')).rows[0]!.x);

  let adminUrl: string | null = externalUrl;
  try {
    if (!externalUrl) {
      // Holds the embedded server (started here, or joined) for the whole run; closing it stops the server.
      server = await openDatabase(configFor('postgres'), { log, poolSize: 1 });
      await server.knex.destroy(); // unused; server.close() tolerates the second destroy
      adminUrl = server.url;
      if (!server.ownsServer) log(`joined an embedded PostgreSQL already running on port ${BENCH_PG_PORT}`);
      await dropStaleBenchDatabases(adminUrl, runName);
    }
    const admin = adminUrl!;
    const info = await withClient(admin, async (c) => {
      const { rows } = await c.query<{ version: string; sync: string; fsync: string }>(
        "select current_setting('server_version') as version, current_setting('synchronous_commit') as sync, current_setting('fsync') as fsync",
      );
      return rows[0]!;
    });
    const sample = makeEvent(0, 1);
    const dataBytes = Buffer.byteLength(JSON.stringify(sample.data));
    const metaBytes = Buffer.byteLength(JSON.stringify(sample.metadata));
    console.log(
      `\nevent store benchmark — ${externalUrl ? `DATABASE_URL server ${describeServer(externalUrl)}` : `embedded PostgreSQL in ${BENCH_PG_DIR} (port ${BENCH_PG_PORT})`}, ` +
        `fresh database ${runName}_<mode> per mode`,
    );
    console.log(
      `  PostgreSQL ${info.version} (synchronous_commit=${info.sync}, fsync=${info.fsync}); Node ${process.version}; ` +
        `${os.cpus().length} CPUs; pool ${POOL_SIZE}; ${opts.seconds} s per phase; modes: ${modes.join(', ')}`,
    );
    console.log(`  payload: data ${fmtBytes(dataBytes)} + metadata ${fmtBytes(metaBytes)} of JSON per event\n`);

    const firstXid = await nextXid(admin);
    for (const mode of modes) {
      if (interrupted) break;
      const database = `${runName}_${mode}`;
      pending.add(database);
      if (externalUrl) {
        // Never write benchmark events into an existing (append-only) log: a fresh database on that server.
        await withClient(admin, (c) => c.query(`create database ${quoteIdent(database)}`)).catch((err: Error) => {
          throw new Error(`cannot create the benchmark database ${database} on ${describeServer(externalUrl)} (DATABASE_URL): ${err.message}`);
        });
      }
      // Embedded: joins the server held above and creates the database.
      const db = await openDatabase(configFor(database), { log, poolSize: 2 });
      try {
        await migrateToLatest(db.knex);
      } finally {
        await db.close(); // does not stop the server: `server` holds it
      }
      // Start each mode from a fresh checkpoint so the previous mode's dirty pages are not flushed during this one.
      await withClient(admin, (c) => c.query('checkpoint')).catch(() => {});
      const result = await benchMode(db.url, mode);
      if (await dropDatabase(admin, database)) pending.delete(database);
      if (!result) break;
      results.push(result);
      report(result);
    }
    comparison(results);
    xids = { first: firstXid, last: await nextXid(admin) };
  } finally {
    for (const database of pending) {
      if (adminUrl && (await dropDatabase(adminUrl, database))) pending.delete(database);
    }
    allDropped = pending.size === 0;
    await server?.close();
  }

  const peakRss = process.resourceUsage().maxRSS * 1024;
  if (xids) console.log(`\nserver transaction ids used by the run: ${fmtInt(Number(xids.first))} → ${fmtInt(Number(xids.last))}`);
  console.log(
    `peak RSS of the bench process: ${fmtBytes(peakRss)}; total ${((Date.now() - startedAt) / 1000).toFixed(1)} s; ` +
      (allDropped ? 'benchmark databases dropped' : `NOT dropped: ${[...pending].join(', ')}`),
  );
  if (problems.length > 0) {
    console.log(`correctness problems:\n  ${problems.join('\n  ')}`);
    process.exitCode = 1;
  } else if (interrupted) {
    process.exitCode = 130;
  }
}

runBenchmark(main);
