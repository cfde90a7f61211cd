/**
 * A projection turns the global event log into read-model rows. Its `apply` runs inside the
 * PostgreSQL transaction that also advances its checkpoint, so an event is applied exactly
 * once, and only unqualified table names may be used: during a rebuild the search_path
 * points them at fresh tables in a rebuild schema.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import type { BatchWrite } from '../readmodels/batch-writes.js';

export interface Projection {
  /** Checkpoint key and lock name; never reuse a name for different tables. */
  readonly name: string;
  /** Bump when the projection's output changes; the tables then need a rebuild. */
  readonly version: number;
  /** The tables this projection alone writes (created by a migration; identity columns, no serial). */
  readonly tables: readonly string[];
  /** Event types the projection reads; the others only move its checkpoint. */
  readonly eventTypes: ReadonlySet<string>;
  /**
   * True for a reactor: its batch acts outside its transaction (appends, a destination) and may
   * take long, writing nothing in PostgreSQL meanwhile. The runner then moves its checkpoint at
   * the end of the batch, so that the transaction takes no transaction id while the reactions
   * run: an open transaction id holds back every reader of the log (they read only below it).
   */
  readonly actsOutside?: boolean;
  /**
   * Smallest batch limits this projection is read with: a projection with a high fixed cost
   * per batch (a search engine's refresh) reads this much at once while it catches up. The
   * runner and the rebuild use the larger of these and their own limits. A live projection
   * following the log reads whatever is new, so this only changes how a backlog is cut.
   */
  readonly batch?: BatchLimits;
  /**
   * Of the events of `eventTypes`, those the projection applies (all when absent): a projection
   * that needs only a few events of a frequent type skips the others like events of other types,
   * so they neither open a transaction nor count toward its batch.
   */
  accepts?(event: RecordedEvent): boolean;
  apply(trx: Knex.Transaction, event: RecordedEvent): Promise<void>;
  /**
   * Applies several events at once (they are already filtered by eventTypes and in order);
   * when present the runner uses it instead of `apply` one by one. Reactors use it to react
   * to independent events concurrently.
   */
  applyMany?(trx: Knex.Transaction, events: readonly RecordedEvent[], context?: BatchContext): Promise<void>;
  /**
   * The batch's writes as statements that need no reads (readmodels/batch-writes.ts), or null when
   * this batch needs `applyMany` (or `apply`). With them the live runner sends the whole batch, its
   * lock and its checkpoint as one statement. They must write exactly what `applyMany` writes for
   * the same events (the runner falls back to it, and a rebuild always uses it).
   */
  writes?(events: readonly RecordedEvent[], context?: BatchContext): readonly BatchWrite[] | null;
  /**
   * For a read model kept partly outside PostgreSQL (a search engine): the projection a rebuild
   * runs, writing to a fresh copy there, and how that copy becomes the live one. `swap` runs in
   * the rebuild's swap transaction after the last events are applied, before it commits, while
   * the projection's lock keeps the live runner out; `abandon` drops the copy if the rebuild fails.
   */
  beginRebuild?(): Promise<ProjectionRebuild>;
}

/** What the runner knows of a batch beyond its events. */
export interface BatchContext {
  /**
   * Whether the batch's effects may be awaited as soon as it commits: true when it reaches the
   * end of the log as read, or when a caller of the runner's waitFor in this process waits for
   * a position in it; false while the projection catches up on a backlog nobody here waits
   * for. A projection may then skip work that only makes its writes visible sooner (a search
   * engine's refresh). Absent: awaited.
   */
  readonly awaited: boolean;
  /**
   * Whether the batch's events may have been applied before, their effects outside this
   * transaction done already (a reactor's appends, a destination's receipt): true while a runner
   * catches up after it started or took the projection over from another instance, and for a
   * batch read again after a failure; false for the live tail the runner reads as it is appended.
   * Absent: replaying.
   */
  readonly replaying?: boolean;
}

export interface BatchLimits {
  /** Events a batch. */
  readonly size: number;
  /** Bytes of events (data and metadata as JSON text) a batch. */
  readonly bytes: number;
}

/** The limits a batch of `projection` is read with: the larger of its own and the caller's. */
export function batchLimits(projection: Pick<Projection, 'batch'>, size: number, bytes: number): BatchLimits {
  return { size: Math.max(size, projection.batch?.size ?? 0), bytes: Math.max(bytes, projection.batch?.bytes ?? 0) };
}

export interface ProjectionRebuild {
  readonly projection: Projection;
  swap(): Promise<void>;
  abandon(): Promise<void>;
}

export function defineProjection(p: Projection): Projection {
  if (!/^[a-z][a-z0-9_]*$/.test(p.name)) throw new Error(`projection name must be snake_case: ${p.name}`);
  return p;
}
