/**
 * The PostgreSQL adapter of the event-store port (the embedded default).
 * See postgres-schema.ts for the table layout and the append function.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { decodeMetadata } from '../../domain/events/envelope.js';
import { catchUpSubscription } from './catch-up-subscription.js';
import {
  DuplicateEventError,
  START,
  WrongExpectedVersionError,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadStreamOptions,
  type RecordedEvent,
} from './port.js';
import { APPEND_CHANNEL, DUPLICATE_EVENT_SQLSTATE, WRONG_EXPECTED_VERSION_SQLSTATE } from './postgres-schema.js';

// The transaction id is selected as text under another name: an ORDER BY on an output column
// of the same name would sort the text (so '10000' < '9999') instead of the xid8.
const EVENT_COLUMNS = `global_position, transaction_id::text as tx, event_id, stream_id, stream_revision,
  event_type, schema_version, data, metadata, recorded_at`;

/** Reads of the global log; exported so a test can check they walk the (transaction_id, global_position) index. */
export const READ_ALL_SQL = `select ${EVENT_COLUMNS} from es_events
  where (es_events.transaction_id, es_events.global_position) > ($1::xid8, $2::bigint)
    and es_events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  order by es_events.transaction_id, es_events.global_position
  limit $3`;

export const HEAD_POSITION_SQL = `select es_events.transaction_id::text as tx, es_events.global_position from es_events
  where es_events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
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
  recorded_at: Date;
}

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
    recordedAt: row.recorded_at,
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

export interface PostgresEventStoreOptions {
  poolSize?: number;
  /** Serialize all appends behind one lock instead of relying on transaction-id ordering (benchmark only). */
  serializeAppends?: boolean;
}

export class PostgresEventStore implements EventStore {
  readonly engine = 'postgres';
  private readonly appended = new EventEmitter().setMaxListeners(0);
  private listener: pg.Client | null = null;
  private listenerStarting: Promise<void> | null = null;
  private closed = false;
  private notifyTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    private readonly serializeAppends: boolean,
  ) {}

  static async connect(url: string, options: PostgresEventStoreOptions = {}): Promise<PostgresEventStore> {
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 20, application_name: 'einvoicing-eventstore' });
    pool.on('error', () => {}); // idle client errors surface on the next query instead
    const store = new PostgresEventStore(pool, url, options.serializeAppends ?? false);
    await store.ping();
    return store;
  }

  async ping(): Promise<void> {
    await this.pool.query('select 1 from es_events limit 0');
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const payload = JSON.stringify(
      events.map((e) => ({ id: e.id, type: e.type, version: e.schemaVersion, data: e.data, metadata: e.metadata })),
    );
    const args = [streamId, expectedToText(expected), payload, this.serializeAppends];
    let failure: Error;
    try {
      const [row] = await this.appendRows('select last_revision, transaction_id::text as tx, last_position, replayed from es_append($1, $2, $3::jsonb, $4)', args);
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
        throw err;
      }
    }
    // The append failed on the revision or on a stored event id: it may be a replay of an
    // append that already succeeded (same ids, same stream, same order), or a duplicate.
    try {
      const [replay] = await this.appendRows('select last_revision, transaction_id::text as tx, last_position, replayed from es_replay($1, $2::jsonb)', [streamId, payload]);
      if (replay) return replay;
    } catch (err) {
      if ((err as { code?: string }).code === DUPLICATE_EVENT_SQLSTATE) throw new DuplicateEventError(streamId, events.map((x) => x.id));
      throw err;
    }
    throw failure;
  }

  private async appendRows(sql: string, args: unknown[]): Promise<AppendResult[]> {
    const { rows } = await this.pool.query<{ last_revision: string; tx: string; last_position: string; replayed: boolean }>(sql, args);
    return rows.map((row) => ({
      nextExpectedRevision: BigInt(row.last_revision),
      position: { commit: BigInt(row.tx), prepare: BigInt(row.last_position) },
      replayed: row.replayed,
    }));
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const { rows } = options.backwards
      ? await this.pool.query<EventRow>(
          `select ${EVENT_COLUMNS} from es_events
            where stream_id = $1 and ($2::bigint is null or stream_revision <= $2::bigint)
            order by stream_revision desc limit $3`,
          [streamId, options.fromRevision?.toString() ?? null, options.maxCount ?? null],
        )
      : await this.pool.query<EventRow>(
          `select ${EVENT_COLUMNS} from es_events
            where stream_id = $1 and stream_revision >= $2
            order by stream_revision limit $3`,
          [streamId, (options.fromRevision ?? 0n).toString(), options.maxCount ?? null],
        );
    return rows.map(toRecorded);
  }

  async readAll(after: Position, limit: number): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(READ_ALL_SQL, [after.commit.toString(), after.prepare.toString(), limit]);
    return rows.map(toRecorded);
  }

  subscribe(after: Position, options: { batchSize?: number } = {}): EventSubscription {
    return catchUpSubscription(this, after, options);
  }

  async headPosition(): Promise<Position> {
    const { rows } = await this.pool.query<{ tx: string; global_position: string }>(HEAD_POSITION_SQL);
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
   * commit (NOTIFY inside the append would serialise every commit on PostgreSQL's notify lock).
   */
  private notifyOtherProcesses(): void {
    if (this.notifyTimer || this.closed) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      if (this.closed) return;
      this.pool.query(`select pg_notify('${APPEND_CHANNEL}', '')`).catch(() => {});
    }, NOTIFY_COALESCE_MS);
  }

  /** One LISTEN connection per store; appends by other processes wake local waiters. */
  private ensureListener(): Promise<void> {
    if (this.listener || this.closed) return Promise.resolve();
    this.listenerStarting ??= (async () => {
      const client = new pg.Client({ connectionString: this.url, application_name: 'einvoicing-eventstore-listen' });
      try {
        await client.connect();
        client.on('notification', () => this.appended.emit('append'));
        client.on('error', () => {
          this.listener = null; // reconnect lazily on the next wait; waits fall back to their timeouts
          void client.end().catch(() => {});
        });
        await client.query(`listen ${APPEND_CHANNEL}`);
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
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.appended.emit('append');
    await this.listenerStarting;
    await this.listener?.end().catch(() => {});
    this.listener = null;
    await this.pool.end();
  }
}
