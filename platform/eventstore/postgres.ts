/**
 * The PostgreSQL adapter of the event-store port (the embedded default).
 * See postgres-schema.ts for the table layout and the append function.
 */
import { recordAppend, recordGroupCommitBatch } from '../metrics.js';
import { EventEmitter } from 'node:events';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { decodeMetadata } from '../../domain/events/envelope.js';
import { packArtifact, unpackArtifact, type PackedArtifact } from './artifact-encoding.js';
import { catchUpSubscription } from './catch-up-subscription.js';
import {
  ArtifactHashMismatch,
  checkedArtifacts,
  DuplicateEventError,
  START,
  WrongExpectedVersionError,
  comparePositions,
  markEndedByBytes,
  markPageBytes,
  type AppendOptions,
  type AppendResult,
  type Artifact,
  type ArtifactPage,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
} from './port.js';
import { APPEND_CHANNEL, ARTIFACT_HASH_CONSTRAINT, DUPLICATE_EVENT_SQLSTATE, WRONG_EXPECTED_VERSION_SQLSTATE } from './postgres-schema.js';

// The hot statements are named: each connection parses and plans them once, not on every call.
// The transaction id is selected as text under another name: an ORDER BY on an output column
// of the same name would sort the text (so '10000' < '9999') instead of the xid8.
const EVENT_COLUMNS = `global_position, transaction_id::text as tx, event_id, stream_id, stream_revision,
  event_type, schema_version, data, metadata, (extract(epoch from recorded_at) * 1000)::float8 as recorded_ms`;

/** Reads of the global log; exported so a test can check they walk the (transaction_id, global_position) index. */
export const READ_ALL_SQL = `select ${EVENT_COLUMNS} from es_events
  where (es_events.transaction_id, es_events.global_position) > ($1::xid8, $2::bigint)
    and es_events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  order by es_events.transaction_id, es_events.global_position
  limit $3`;

export const HEAD_POSITION_SQL = `select es_events.transaction_id::text as tx, es_events.global_position from es_events
  where es_events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  order by es_events.transaction_id desc, es_events.global_position desc limit 1`;

/** The newest committed event, readable or not yet (see EventStore.committedHead). */
export const COMMITTED_HEAD_SQL = `select es_events.transaction_id::text as tx, es_events.global_position from es_events
  order by es_events.transaction_id desc, es_events.global_position desc limit 1`;

interface EventRow {
  global_position: string;
  tx: string;
  event_id: string;
  stream_id: string;
  stream_revision: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  /** recorded_at in epoch milliseconds: a number is parsed much faster than timestamp text. */
  recorded_ms: number;
}

/**
 * Reads with a byte budget receive data and metadata as the JSON text the log holds, so that a
 * page is measured before it is parsed (and what is past the budget is never parsed).
 */
const RAW_JSON_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === JSON_OID || oid === JSONB_OID ? (text: string) => text : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
const JSON_OID = 114;
const JSONB_OID = 3802;

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.event_type,
    schemaVersion: row.schema_version,
    data: row.data,
    metadata: decodeMetadata(row.metadata),
    streamId: row.stream_id,
    revision: BigInt(row.stream_revision),
    position: { commit: BigInt(row.tx), prepare: BigInt(row.global_position) },
    recordedAt: new Date(row.recorded_ms),
  };
}

function expectedToText(expected: ExpectedRevision): string {
  if (typeof expected === 'bigint') {
    if (expected < 0n) throw new RangeError(`expected revision must be >= 0, got ${expected}`);
    return expected.toString();
  }
  return expected;
}

const NOTIFY_COALESCE_MS = 5;

/** The application name of every store's LISTEN session, by which a store finds the others. */
const LISTEN_APPLICATION_NAME = 'einvoicing-eventstore-listen';
/** How long "no other session listens" is trusted before a NOTIFY asks again. */
const LISTENERS_RECHECK_MS = 1000;
/**
 * NOTIFY only when another session of this database may listen ($1: the listeners' application
 * name, $2: this store's own listening backend, 0 without one): a listener of any store, or a
 * session whose details PostgreSQL hides from this role (another role's: counted, to be safe).
 */
const NOTIFY_IF_LISTENED_SQL = `select case when exists (
    select 1 from pg_stat_activity a
     where a.pid <> $2 and a.pid <> pg_backend_pid() and a.datname = current_database()
       and (a.application_name = $1 or a.backend_type is null)
  ) then (select true from pg_notify('${APPEND_CHANNEL}', '')) else false end as notified`;
/**
 * Upper bound of the events' JSON in one group-commit batch (one append alone may be larger). One
 * batch runs in one PostgreSQL backend, on one core: large events (a submitted document carries
 * its XML, about 45 KB) go out in several smaller batches that run side by side instead of a few
 * long ones (on the 2-core machine, 64 such submissions went 20-30% faster with 1 MB batches and
 * 4 in flight than with 4 MB and 2); small events still share batches of up to 64 appends.
 */
const MAX_BATCH_BYTES = 1024 * 1024;

/**
 * Artifacts this store appended lately, kept by hash up to this many bytes: content-addressed and
 * immutable, so a kept one is never stale. Delivery reads the XML its submission stored moments
 * before: served from here, it costs no round trip and no transfer. Artifacts appended with
 * `keep: false` (the delivery's Tax Data Document, 30 KB for a 20-line AE invoice) are not kept:
 * they halved how many submissions' XML this holds, and nothing reads them back soon.
 */
const RECENT_ARTIFACT_BYTES = 16 * 1024 * 1024;

/** Read-ahead (see readAll): only for pages this large, and at most this many pages waiting to be used. */
const READ_AHEAD_MIN_PAGE = 100;
const MAX_READ_AHEADS = 8;
const readAheadKey = (after: Position, limit: number, maxBytes: number | undefined) => `${after.commit}/${after.prepare}/${limit}/${maxBytes ?? ''}`;

interface Page {
  rows: EventRow[];
  endedByBytes: boolean;
  /** The rows' data and metadata as JSON text, in bytes (pages read under maxBytes). */
  bytes?: number;
}

/**
 * Prefixes an append statement with the insert of its artifacts (parameters $n: hashes, $n+1:
 * the stored bytes as base64, $n+2: their encodings): one statement, so one transaction with the
 * events. Content-addressed, so a stored artifact is left as it is. The store has checked each hash
 * against its bytes before compressing them (artifact-encoding.ts); es_artifacts checks it again
 * for bytes stored as they are.
 */
const withArtifacts = (n: number, statement: string) =>
  `with stored as (insert into es_artifacts (hash, content, encoding)
     select a.h, decode(a.c, 'base64'), a.e from unnest($${n}::text[], $${n + 1}::text[], $${n + 2}::text[]) as a(h, c, e) order by a.h
     on conflict (hash) do nothing)
   ${statement}`;

/** An artifact with the bytes the store keeps of it. */
type StoredArtifact = Artifact & PackedArtifact;

/** Checks the artifacts' hashes against their bytes, then compresses them. */
const packedArtifacts = (artifacts: readonly Artifact[] | undefined): StoredArtifact[] =>
  checkedArtifacts(artifacts, { verify: true }).map((a) => ({ ...a, ...packArtifact(a.content) }));

const artifactParams = (artifacts: readonly StoredArtifact[]) => [
  artifacts.map((a) => a.sha256),
  artifacts.map((a) => a.stored.toString('base64')),
  artifacts.map((a) => a.encoding),
];

/** Maps the table's hash check to the port's error. */
function artifactFailure(err: unknown): unknown {
  const e = err as { code?: string; constraint?: string; detail?: string };
  if (e.code === '23514' && e.constraint === ARTIFACT_HASH_CONSTRAINT) {
    const hash = /\(([0-9a-f]{64}),/.exec(e.detail ?? '')?.[1] ?? 'unknown';
    return new ArtifactHashMismatch(hash);
  }
  return err;
}

interface PendingAppend {
  streamId: string;
  ids: string[];
  expected: ExpectedRevision;
  expectedText: string;
  /** The events as es_append's JSON array (sent as json). */
  payload: string;
  /** Artifacts written with the events (checked, sorted by hash, compressed). */
  artifacts: StoredArtifact[];
  /** Size of payload and artifacts, for the batch bound. */
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (err: unknown) => void;
}

export interface PostgresEventStoreOptions {
  poolSize?: number;
  /** Group commit: most appends one transaction carries (default 64; 1 turns group commit off). */
  maxBatchedAppends?: number;
  /** Group commit: most batches in flight at once (default 4). */
  maxInFlightBatches?: number;
  /** Serialize all appends behind one lock instead of relying on transaction-id ordering (benchmark only). */
  serializeAppends?: boolean;
}

export class PostgresEventStore implements EventStore {
  readonly engine = 'postgres';
  readonly atomicMultiStream = true;
  private readonly appended = new EventEmitter().setMaxListeners(0);
  private listener: pg.Client | null = null;
  private listenerStarting: Promise<void> | null = null;
  private closed = false;
  private notifyTimer: NodeJS.Timeout | null = null;
  /** Until when (performance.now()) no other session listens, as last asked. */
  private aloneUntil = 0;
  /** The backend of this store's LISTEN session (not another process's listener). */
  private listenerPid = 0;
  private readonly pending: PendingAppend[] = [];
  private readonly readAhead = new LRUCache<string, Promise<Page>>({ max: MAX_READ_AHEADS });
  private inFlightBatches = 0;
  private flushScheduled = false;
  private readonly recentArtifacts = new LRUCache<string, Buffer>({ maxSize: RECENT_ARTIFACT_BYTES, sizeCalculation: (content) => Math.max(1, content.length) });
  /** The newest position this store appended (see EventStore.appendedHead). */
  private lastAppended: Position | null = null;
  /** Running average size of an event's data and metadata (JSON text), to size the steps of byte-bounded reads. */
  private averageEventBytes = 2048;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    private readonly serializeAppends: boolean,
    private readonly maxBatchedAppends: number,
    private readonly maxInFlightBatches: number,
  ) {}

  static async connect(url: string, options: PostgresEventStoreOptions = {}): Promise<PostgresEventStore> {
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 20, application_name: 'einvoicing-eventstore' });
    pool.on('error', () => {}); // idle client errors surface on the next query instead
    const store = new PostgresEventStore(pool, url, options.serializeAppends ?? false, options.maxBatchedAppends ?? 64, options.maxInFlightBatches ?? 4);
    await store.ping();
    return store;
  }

  appendedHead(): Position | null {
    return this.lastAppended;
  }

  private noteAppended(position: Position): void {
    if (!this.lastAppended || comparePositions(position, this.lastAppended) > 0) this.lastAppended = position;
  }

  async ping(): Promise<void> {
    await this.pool.query('select 1 from es_events limit 0');
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options: AppendOptions = {}): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const artifacts = packedArtifacts(options.artifacts);
    const payload = JSON.stringify(
      events.map((e) => ({ id: e.id, type: e.type, version: e.schemaVersion, data: e.data, metadata: e.metadata })),
    );
    const bytes = payload.length + artifacts.reduce((n, a) => n + a.stored.length, 0);
    const append: PendingAppend = { streamId, ids: events.map((e) => e.id), expected, expectedText: expectedToText(expected), payload, artifacts, bytes, resolve: null!, reject: null! };
    const started = performance.now();
    const timed = (result: Promise<AppendResult>) =>
      result
        .then((r) => {
          if (!r.replayed && options.keep !== false) this.rememberArtifacts(artifacts);
          return r;
        })
        .finally(() => recordAppend('postgres', (performance.now() - started) / 1000));
    if (this.maxBatchedAppends <= 1) return timed(this.appendOne(append));
    return timed(
      new Promise<AppendResult>((resolve, reject) => {
        append.resolve = resolve;
        append.reject = reject;
        this.pending.push(append);
        this.scheduleFlush();
      }),
    );
  }

  /**
   * All parts in one transaction (es_append_multi). Not group-committed: the parts already share
   * one transaction, and a failure must roll back exactly this append's parts. After a wrong
   * expected revision or a stored event id, each part is asked whether it is a replay: when all
   * are, the append is a replay; otherwise the failure stands.
   */
  async appendMulti(parts: readonly StreamAppend[], options: AppendOptions = {}): Promise<AppendResult[]> {
    if (parts.length === 0) throw new RangeError('appendMulti needs at least one part');
    const artifacts = packedArtifacts(options.artifacts);
    const seen = new Set<string>();
    for (const part of parts) {
      if (part.events.length === 0) throw new RangeError(`appendMulti: the part for ${part.streamId} has no events`);
      if (seen.has(part.streamId)) throw new RangeError(`appendMulti: stream ${part.streamId} appears twice`);
      seen.add(part.streamId);
    }
    const payloads = parts.map((p) =>
      JSON.stringify(p.events.map((e) => ({ id: e.id, type: e.type, version: e.schemaVersion, data: e.data, metadata: e.metadata }))),
    );
    const body = `[${parts.map((p, i) => `{"stream":${JSON.stringify(p.streamId)},"expected":"${expectedToText(p.expected)}","events":${payloads[i]}}`).join(',')}]`;
    let failure: Error;
    try {
      const text = 'select item, last_revision, transaction_id::text as tx, last_position from es_append_multi($1::json, $2)';
      const { rows } = await this.pool.query<{ item: number; last_revision: string; tx: string; last_position: string }>(
        artifacts.length === 0
          ? { name: 'es_append_multi', text, values: [body, this.serializeAppends] }
          : { name: 'es_append_multi_artifacts', text: withArtifacts(3, text), values: [body, this.serializeAppends, ...artifactParams(artifacts)] },
      );
      this.appended.emit('append');
      this.notifyOtherProcesses();
      if (options.keep !== false) this.rememberArtifacts(artifacts);
      const results: AppendResult[] = new Array(parts.length);
      for (const row of rows) {
        results[row.item] = { nextExpectedRevision: BigInt(row.last_revision), position: { commit: BigInt(row.tx), prepare: BigInt(row.last_position) }, replayed: false };
        this.noteAppended(results[row.item]!.position);
      }
      return results;
    } catch (err) {
      const e = err as { code?: string; detail?: string; hint?: string; constraint?: string };
      if (e.code === WRONG_EXPECTED_VERSION_SQLSTATE) {
        const streamId = e.hint ?? parts[0]!.streamId;
        const part = parts.find((p) => p.streamId === streamId) ?? parts[0]!;
        const actual = BigInt(e.detail ?? '-1');
        failure = new WrongExpectedVersionError(streamId, part.expected, actual < 0n ? 'no_stream' : actual);
      } else if (e.code === '23505' && e.constraint === 'es_events_event_id_key') {
        failure = err as Error;
      } else {
        throw artifactFailure(err);
      }
    }
    const replays: (AppendResult | undefined)[] = [];
    for (const [i, part] of parts.entries()) {
      try {
        const [replay] = await this.appendRows('es_replay', 'select last_revision, transaction_id::text as tx, last_position, replayed from es_replay($1, $2::json)', [part.streamId, payloads[i]]);
        replays.push(replay);
      } catch (err) {
        if ((err as { code?: string }).code === DUPLICATE_EVENT_SQLSTATE) throw new DuplicateEventError(part.streamId, part.events.map((ev) => ev.id));
        throw err;
      }
    }
    if (replays.every((r) => r !== undefined)) return replays as AppendResult[];
    if (!(failure instanceof WrongExpectedVersionError) && replays.some((r) => r !== undefined)) {
      const stored = parts.filter((_, i) => replays[i] !== undefined);
      throw new DuplicateEventError(stored[0]!.streamId, stored.flatMap((p) => p.events.map((ev) => ev.id)));
    }
    throw failure;
  }

  /**
   * An append waits for the rest of the event loop's turn (`setImmediate`), so that the appends
   * made in the same turn go out together: the delivery reactor's lanes append a batch's documents
   * one after the other as the destination's answers arrive together, and each went out in a
   * transaction of its own while fewer than `maxInFlightBatches` were in flight. A lone writer
   * waits for nothing but the end of the current turn.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushPending();
    });
  }

  /**
   * Group commit: the appends of a turn go out at once while fewer than `maxInFlightBatches`
   * batches are in flight; appends made meanwhile wait and go out together, in one transaction
   * (es_append_batch). Many writers thus share round trips and WAL flushes.
   */
  private flushPending(): void {
    while (this.inFlightBatches < this.maxInFlightBatches && this.pending.length > 0) {
      const batch: PendingAppend[] = [];
      let bytes = 0;
      while (this.pending.length > 0 && batch.length < this.maxBatchedAppends && (batch.length === 0 || bytes + this.pending[0]!.bytes <= MAX_BATCH_BYTES)) {
        const next = this.pending.shift()!;
        bytes += next.bytes;
        batch.push(next);
      }
      this.inFlightBatches++;
      void this.appendBatch(batch).finally(() => {
        this.inFlightBatches--;
        this.flushPending();
      });
    }
  }

  private async appendBatch(batch: PendingAppend[]): Promise<void> {
    const settle = (append: PendingAppend, result: Promise<AppendResult>) => result.then(append.resolve, append.reject);
    recordGroupCommitBatch(batch.length);
    if (batch.length === 1) return settle(batch[0]!, this.appendOne(batch[0]!));
    // Stable sort by stream id: every batch locks its streams in the same order.
    const sorted = [...batch].sort((a, b) => (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0));
    let rows: { item: number; ok: boolean; last_revision: string; tx: string; last_position: string | null }[];
    try {
      const body = `[${sorted.map((a) => `{"stream":${JSON.stringify(a.streamId)},"expected":"${a.expectedText}","events":${a.payload}}`).join(',')}]`;
      const text = 'select item, ok, last_revision, transaction_id::text as tx, last_position from es_append_batch($1::json, $2)';
      // The batch's artifacts go in with it: those of an append that is then not written (a wrong
      // expected revision) stay stored, named by no event, until its retry names them.
      const artifacts = checkedArtifacts(sorted.flatMap((a) => a.artifacts), { verify: false });
      ({ rows } = await this.pool.query(
        artifacts.length === 0
          ? { name: 'es_append_batch', text, values: [body, this.serializeAppends] }
          : { name: 'es_append_batch_artifacts', text: withArtifacts(3, text), values: [body, this.serializeAppends, ...artifactParams(artifacts)] },
      ));
    } catch {
      // Nothing of the batch was written (or, had the connection dropped after the commit, each
      // append is recognised as a replay): each append runs alone and gets its own answer.
      await Promise.all(sorted.map((a) => settle(a, this.appendOne(a))));
      return;
    }
    this.appended.emit('append');
    this.notifyOtherProcesses();
    await Promise.all(
      rows.map((row) => {
        const append = sorted[row.item]!;
        if (!row.ok) return settle(append, this.appendOne(append)); // a wrong expected revision, or a replay
        const position = { commit: BigInt(row.tx), prepare: BigInt(row.last_position!) };
        this.noteAppended(position);
        append.resolve({ nextExpectedRevision: BigInt(row.last_revision), position, replayed: false });
        return undefined;
      }),
    );
  }

  /** One append in its own transaction (es_append), with the replay check after a failure. */
  private async appendOne(append: PendingAppend): Promise<AppendResult> {
    const { streamId, expected, payload, artifacts } = append;
    const args = [streamId, append.expectedText, payload, this.serializeAppends];
    const text = 'select last_revision, transaction_id::text as tx, last_position, replayed from es_append($1, $2, $3::json, $4)';
    let failure: Error;
    try {
      const [row] =
        artifacts.length === 0
          ? await this.appendRows('es_append', text, args)
          : await this.appendRows('es_append_artifacts', withArtifacts(5, text), [...args, ...artifactParams(artifacts)]);
      this.noteAppended(row!.position);
      this.appended.emit('append');
      this.notifyOtherProcesses();
      return row!;
    } catch (err) {
      const e = err as { code?: string; detail?: string; constraint?: string };
      if (e.code === WRONG_EXPECTED_VERSION_SQLSTATE) {
        const actual = BigInt(e.detail ?? '-1');
        failure = new WrongExpectedVersionError(streamId, expected, actual < 0n ? 'no_stream' : actual);
      } else if (e.code === '23505' && e.constraint === 'es_events_event_id_key') {
        failure = err as Error;
      } else {
        throw artifactFailure(err);
      }
    }
    // The append failed on the revision or on a stored event id: it may be a replay of an
    // append that already succeeded (same ids, same stream, same order), or a duplicate.
    try {
      const [replay] = await this.appendRows('es_replay', 'select last_revision, transaction_id::text as tx, last_position, replayed from es_replay($1, $2::json)', [streamId, payload]);
      if (replay) return replay;
    } catch (err) {
      if ((err as { code?: string }).code === DUPLICATE_EVENT_SQLSTATE) throw new DuplicateEventError(streamId, append.ids);
      throw err;
    }
    throw failure;
  }

  private async appendRows(name: string, text: string, values: unknown[]): Promise<AppendResult[]> {
    const { rows } = await this.pool.query<{ last_revision: string; tx: string; last_position: string; replayed: boolean }>({ name, text, values });
    return rows.map((row) => ({
      nextExpectedRevision: BigInt(row.last_revision),
      position: { commit: BigInt(row.tx), prepare: BigInt(row.last_position) },
      replayed: row.replayed,
    }));
  }

  /** Keeps the artifacts of a written append (only then are they known to be stored). */
  private rememberArtifacts(artifacts: readonly Artifact[]): void {
    for (const a of artifacts) this.recentArtifacts.set(a.sha256, a.content);
  }

  async readArtifacts(sha256s: readonly string[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    const missing: string[] = [];
    for (const hash of new Set(sha256s)) {
      const kept = this.recentArtifacts.get(hash);
      if (kept) found.set(hash, kept);
      else missing.push(hash);
    }
    if (missing.length === 0) return found;
    const { rows } = await this.pool.query<{ hash: string; content: Buffer; encoding: string }>({
      name: 'es_read_artifacts',
      text: 'select hash, content, encoding from es_artifacts where hash = any($1::text[])',
      values: [missing],
    });
    for (const row of rows) found.set(row.hash, unpackArtifact(row.content, row.encoding));
    return found;
  }

  /** Pages in hash order; the cursor is the page's last hash. */
  async scanArtifacts(cursor: string | null, limit: number): Promise<ArtifactPage> {
    const { rows } = await this.pool.query<{ hash: string; content: Buffer; encoding: string }>({
      name: 'es_scan_artifacts',
      text: 'select hash, content, encoding from es_artifacts where $1::text is null or hash > $1::text order by hash limit $2',
      values: [cursor, limit],
    });
    // Bytes that do not decompress are given as stored: the audit then reports them as not matching their key.
    const artifacts = rows.map((r) => {
      try {
        return { sha256: r.hash, content: unpackArtifact(r.content, r.encoding) };
      } catch {
        return { sha256: r.hash, content: r.content };
      }
    });
    return { artifacts, cursor: rows.length === limit ? rows[rows.length - 1]!.hash : null };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const { rows } = options.backwards
      ? await this.pool.query<EventRow>({
          name: 'es_read_stream_backwards',
          text: `select ${EVENT_COLUMNS} from es_events
            where stream_id = $1 and ($2::bigint is null or stream_revision <= $2::bigint)
            order by stream_revision desc limit $3`,
          values: [streamId, options.fromRevision?.toString() ?? null, options.maxCount ?? null],
        })
      : await this.pool.query<EventRow>({
          name: 'es_read_stream',
          text: `select ${EVENT_COLUMNS} from es_events
            where stream_id = $1 and stream_revision >= $2
            order by stream_revision limit $3`,
          values: [streamId, (options.fromRevision ?? 0n).toString(), options.maxCount ?? null],
        });
    return rows.map(toRecorded);
  }

  async readStreams(streamIds: readonly string[], options: { maxCount?: number } = {}): Promise<RecordedEvent[][]> {
    if (streamIds.length === 0) return [];
    if (options.maxCount !== undefined && options.maxCount <= 0) return streamIds.map(() => []);
    const { rows } = await this.pool.query<EventRow & { ord: string }>({
      name: 'es_read_streams',
      text: `select s.ord::text as ord, ${EVENT_COLUMNS} from unnest($1::text[]) with ordinality as s(sid, ord)
        cross join lateral (select * from es_events where stream_id = s.sid order by stream_revision limit $2) e
        order by s.ord, e.stream_revision`,
      values: [streamIds, options.maxCount ?? null],
    });
    const out: RecordedEvent[][] = streamIds.map(() => []);
    for (const row of rows) out[Number(row.ord) - 1]!.push(toRecorded(row));
    return out;
  }

  /**
   * A page of the global log. A full page means the reader is catching up and will ask for the
   * page after it next: that query is sent at once (read-ahead), so PostgreSQL produces the next
   * page while this one is decoded and handled. A read-ahead page is correct whenever it is used:
   * it holds only events below the oldest transaction in flight when it was read, which no later
   * commit can join; newer events come with the read after it. Each is used once, by the read
   * that asks for exactly its position and limit.
   */
  async readAll(after: Position, limit: number, options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const maxBytes = options.maxBytes;
    if (maxBytes !== undefined && !(maxBytes > 0)) throw new RangeError(`maxBytes must be positive, got ${maxBytes}`);
    const key = readAheadKey(after, limit, maxBytes);
    const ahead = this.readAhead.get(key);
    this.readAhead.delete(key);
    const page = await (ahead ?? this.queryPage(after, limit, maxBytes));
    const rows = page.rows;
    if ((rows.length === limit || page.endedByBytes) && limit >= READ_AHEAD_MIN_PAGE && !this.closed) {
      const last = rows[rows.length - 1]!;
      const next: Position = { commit: BigInt(last.tx), prepare: BigInt(last.global_position) };
      const nextPage = this.queryPage(next, limit, maxBytes);
      nextPage.catch(() => {}); // a failed read-ahead is retried by the read that wanted it
      this.readAhead.set(readAheadKey(next, limit, maxBytes), nextPage.catch(() => this.queryPage(next, limit, maxBytes)));
    }
    const events = rows.map(toRecorded);
    if (page.bytes !== undefined) markPageBytes(events, page.bytes);
    return page.endedByBytes ? markEndedByBytes(events) : events;
  }

  private async queryPage(after: Position, limit: number, maxBytes: number | undefined): Promise<Page> {
    if (maxBytes === undefined) {
      const { rows } = await this.pool.query<EventRow>({ name: 'es_read_all', text: READ_ALL_SQL, values: [after.commit.toString(), after.prepare.toString(), limit] });
      return { rows, endedByBytes: false };
    }
    return this.queryPageWithin(after, limit, maxBytes);
  }

  /**
   * A page of at most `maxBytes`: the log is read in steps sized by the running average event
   * size, each row measured on its JSON text and parsed only when it fits, so a page costs about
   * one read of its own events (plus at most one step's overshoot), whatever the events' sizes.
   */
  private async queryPageWithin(after: Position, limit: number, maxBytes: number): Promise<Page> {
    const rows: EventRow[] = [];
    let bytes = 0;
    let from = after;
    for (;;) {
      const step = Math.max(1, Math.min(limit - rows.length, Math.ceil((maxBytes - bytes) / this.averageEventBytes) + 1));
      const { rows: raw } = await this.pool.query<EventRow>({
        name: 'es_read_all_raw',
        text: READ_ALL_SQL,
        values: [from.commit.toString(), from.prepare.toString(), step],
        types: RAW_JSON_TYPES,
      });
      for (const row of raw) {
        const size = Buffer.byteLength(row.data as string) + Buffer.byteLength(row.metadata as string);
        this.averageEventBytes = Math.max(64, this.averageEventBytes * 0.9 + size * 0.1);
        if (rows.length > 0 && bytes + size > maxBytes) return { rows, endedByBytes: true, bytes };
        bytes += size;
        rows.push({ ...row, data: JSON.parse(row.data as string), metadata: JSON.parse(row.metadata as string) });
        if (rows.length >= limit) return { rows, endedByBytes: false, bytes };
      }
      if (raw.length < step) return { rows, endedByBytes: false, bytes }; // the log's end
      const last = raw[raw.length - 1]!;
      from = { commit: BigInt(last.tx), prepare: BigInt(last.global_position) };
    }
  }

  subscribe(after: Position, options: { batchSize?: number } = {}): EventSubscription {
    return catchUpSubscription(this, after, options);
  }

  headPosition(): Promise<Position> {
    return this.positionOf('es_head_position', HEAD_POSITION_SQL);
  }

  committedHead(): Promise<Position> {
    return this.positionOf('es_committed_head', COMMITTED_HEAD_SQL);
  }

  /** The position a one-row statement answers (START when it answers none). */
  private async positionOf(name: string, text: string): Promise<Position> {
    const { rows } = await this.pool.query<{ tx: string; global_position: string }>({ name, text });
    const row = rows[0];
    return row ? { commit: BigInt(row.tx), prepare: BigInt(row.global_position) } : START;
  }

  async countEvents(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('select count(*) as n from es_events');
    return Number(rows[0]!.n);
  }

  waitForAppends(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    void this.ensureListener();
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.appended.off('append', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.appended.once('append', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Wakes subscribers in other processes: one NOTIFY per burst of appends, sent after the
   * commit (NOTIFY inside the append would serialise every commit on PostgreSQL's notify lock),
   * and only while another session may be listening. The statement asks first (see
   * NOTIFY_IF_LISTENED_SQL); when nobody else listens, the next LISTENERS_RECHECK_MS of appends
   * send nothing. A process that starts listening meanwhile is woken by its own poll until then.
   */
  private notifyOtherProcesses(): void {
    if (this.notifyTimer || this.closed || performance.now() < this.aloneUntil) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      if (this.closed) return;
      this.pool
        .query<{ notified: boolean }>({ name: 'es_notify_if_listened', text: NOTIFY_IF_LISTENED_SQL, values: [LISTEN_APPLICATION_NAME, this.listener ? this.listenerPid : 0] })
        .then(({ rows }) => {
          if (!rows[0]?.notified) this.aloneUntil = performance.now() + LISTENERS_RECHECK_MS;
        })
        .catch(() => {});
    }, NOTIFY_COALESCE_MS);
  }

  /** One LISTEN connection per store; appends by other processes wake local waiters. */
  private ensureListener(): Promise<void> {
    if (this.listener || this.closed) return Promise.resolve();
    this.listenerStarting ??= (async () => {
      const client = new pg.Client({ connectionString: this.url, application_name: LISTEN_APPLICATION_NAME });
      try {
        await client.connect();
        client.on('notification', () => this.appended.emit('append'));
        client.on('error', () => {
          this.listener = null; // reconnect lazily on the next wait; waits fall back to their timeouts
          void client.end().catch(() => {});
        });
        await client.query(`listen ${APPEND_CHANNEL}`);
        const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
        this.listenerPid = rows[0]?.pid ?? 0;
        if (this.closed) await client.end();
        else this.listener = client;
      } catch {
        await client.end().catch(() => {});
      } finally {
        this.listenerStarting = null;
      }
    })();
    return this.listenerStarting;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Appends made before the close go out now, as they would have at once (the pool ends after them).
    this.flushPending();
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.appended.emit('append');
    await this.listenerStarting;
    await this.listener?.end().catch(() => {});
    this.listener = null;
    await this.pool.end();
  }
}
