/**
 * Runs projections: each reads the global log from its checkpoint in batches and applies a
 * batch in one PostgreSQL transaction that also compare-and-sets the checkpoint. A
 * transaction-scoped advisory lock per projection keeps two service instances (or a live
 * runner and a rebuild swap) from applying the same batch twice. A crash at any instant
 * rolls back the whole batch with its checkpoint.
 */
import { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import { comparePositions, START, type EventStore, type Position, type RecordedEvent } from '../commands/eventstore/port.js';
import { wakeSource } from '../commands/eventstore/catch-up-subscription.js';
import type { Projection } from './projection.js';

export class CheckpointMovedError extends Error {
  override readonly name = 'CheckpointMovedError';
}

export interface BatchTarget {
  /** Checkpoint row (defaults to the projection name). */
  checkpoint?: string;
  /** Schema whose tables shadow the live ones (rebuilds). */
  schema?: string;
}

/** Applies the events the projection reads; returns how many that was. */
export async function applyEvents(trx: Knex.Transaction, projection: Projection, events: readonly RecordedEvent[]): Promise<number> {
  const relevant = events.filter((e) => projection.eventTypes.has(e.type));
  if (projection.applyMany) {
    if (relevant.length > 0) await projection.applyMany(trx, relevant);
  } else {
    for (const event of relevant) await projection.apply(trx, event);
  }
  return relevant.length;
}

export function lockKey(checkpoint: string): string {
  return `projection:${checkpoint}`;
}

export async function ensureCheckpoint(knex: Knex, checkpoint: string, version: number): Promise<void> {
  await knex('projection_checkpoints').insert({ projection: checkpoint, version }).onConflict('projection').ignore();
}

export async function readCheckpoint(knex: Knex, checkpoint: string): Promise<Position | null> {
  const row = await knex('projection_checkpoints').where({ projection: checkpoint }).first();
  return row ? { commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) } : null;
}

/**
 * Applies at most `batchSize` events after the checkpoint, atomically with the checkpoint.
 * Returns the number of events read, or 'locked' when another runner holds the projection.
 */
export async function applyBatch(
  knex: Knex,
  store: EventStore,
  projection: Projection,
  batchSize: number,
  target: BatchTarget = {},
): Promise<{ read: number; position: Position } | 'locked'> {
  const checkpoint = target.checkpoint ?? projection.name;
  return knex.transaction(async (trx) => {
    const lock = await trx.raw('select pg_try_advisory_xact_lock(hashtext(?)) as ok', [lockKey(checkpoint)]);
    if (!lock.rows[0].ok) return 'locked' as const;
    if (target.schema) await trx.raw(`set local search_path to "${target.schema}", public`);
    let from = await readCheckpoint(trx, checkpoint);
    if (!from) {
      await ensureCheckpoint(trx, checkpoint, projection.version);
      from = START;
    }
    const events = await store.readAll(from, batchSize);
    if (events.length === 0) return { read: 0, position: from };
    const applied = await applyEvents(trx, projection, events);
    const last = events[events.length - 1]!.position;
    const updated = await trx('projection_checkpoints')
      .where({ projection: checkpoint, commit_position: from.commit.toString(), prepare_position: from.prepare.toString() })
      .update({
        commit_position: last.commit.toString(),
        prepare_position: last.prepare.toString(),
        events_applied: trx.raw('events_applied + ?', [applied]),
        updated_at: trx.fn.now(),
      });
    if (updated !== 1) throw new CheckpointMovedError(`checkpoint ${checkpoint} moved during the batch`);
    return { read: events.length, position: last };
  });
}

export interface ProjectionStatus {
  name: string;
  position: Position | null;
  lastError: string | null;
  /** Since when the projection has been failing (null when healthy). */
  failingSince: Date | null;
}

export interface RunnerOptions {
  batchSize?: number;
  /** Poll interval when no append notification arrives (events held back by an in-flight transaction). */
  pollIntervalMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export class ProjectionRunner {
  private readonly progress = new EventEmitter().setMaxListeners(0);
  private readonly status = new Map<string, ProjectionStatus>();
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly log: NonNullable<RunnerOptions['log']>;

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    readonly projections: readonly Projection[],
    options: RunnerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.log = options.log ?? (() => {});
    for (const p of projections) this.status.set(p.name, { name: p.name, position: null, lastError: null, failingSince: null });
  }

  async init(): Promise<void> {
    for (const p of this.projections) {
      await ensureCheckpoint(this.knex, p.name, p.version);
      const row = await this.knex('projection_checkpoints').where({ projection: p.name }).first();
      if (row.version !== p.version) {
        this.log(`projection ${p.name} tables are version ${row.version}, code is version ${p.version}: run "npm run rebuild -- ${p.name}"`);
      }
    }
  }

  /** Starts one loop per projection; returns at once. */
  start(): void {
    this.loops = this.projections.map((p) => this.loop(p));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.progress.emit('advanced');
    await Promise.all(this.loops);
  }

  /** Runs every projection until it has applied everything visible now (tests, tools). */
  async catchUp(): Promise<void> {
    for (const p of this.projections) {
      for (;;) {
        const result = await applyBatch(this.knex, this.store, p, this.batchSize);
        if (result === 'locked') {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        this.recordProgress(p.name, result.position);
        if (result.read < this.batchSize) break;
      }
    }
  }

  statuses(): ProjectionStatus[] {
    return [...this.status.values()].map((s) => ({ ...s }));
  }

  /**
   * Waits until every projection (or the named ones) has applied the event at `position`.
   * Returns false when `timeoutMs` passes first. Progress made by another instance is seen
   * through the checkpoint table.
   */
  async waitFor(position: Position, options: { timeoutMs: number; projections?: readonly string[] }): Promise<boolean> {
    const names = options.projections ?? this.projections.map((p) => p.name);
    const deadline = Date.now() + options.timeoutMs;
    const reached = () => names.every((n) => {
      const at = this.status.get(n)?.position;
      return at !== null && at !== undefined && comparePositions(at, position) >= 0;
    });
    let checkedDbAt = 0;
    while (!reached()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      if (Date.now() - checkedDbAt > 100) {
        checkedDbAt = Date.now();
        for (const n of names) {
          const at = await readCheckpoint(this.knex, n);
          if (at) this.recordProgress(n, at);
        }
        if (reached()) return true;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.progress.off('advanced', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, 100));
        this.progress.once('advanced', done);
      });
      if (this.abort.signal.aborted) return reached();
    }
    return true;
  }

  private recordProgress(name: string, position: Position): void {
    const s = this.status.get(name);
    if (!s) return;
    if (!s.position || comparePositions(position, s.position) > 0) {
      s.position = position;
      this.progress.emit('advanced');
    }
  }

  private async loop(p: Projection): Promise<void> {
    const signal = this.abort.signal;
    let backoffMs = 100;
    const nextWake = wakeSource(this.store, this.pollIntervalMs, signal);
    while (!signal.aborted) {
      const wake = nextWake();
      try {
        const result = await applyBatch(this.knex, this.store, p, this.batchSize);
        const s = this.status.get(p.name)!;
        s.lastError = null;
        s.failingSince = null;
        backoffMs = 100;
        if (result === 'locked') {
          await sleep(1000, signal); // another instance runs this projection
          continue;
        }
        this.recordProgress(p.name, result.position);
        if (result.read < this.batchSize) await wake;
      } catch (err) {
        if (signal.aborted) break;
        const s = this.status.get(p.name)!;
        s.lastError = err instanceof Error ? err.message : String(err);
        s.failingSince ??= new Date();
        this.log(`projection ${p.name} failed; retrying in ${backoffMs} ms`, { error: s.lastError });
        await sleep(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, 30_000);
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
