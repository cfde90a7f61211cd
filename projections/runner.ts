/**
 * Runs projections: each reads the global log from its checkpoint in batches and applies a
 * batch in one PostgreSQL transaction that also compare-and-sets the checkpoint. A
 * transaction-scoped advisory lock per projection keeps two service instances (or a live
 * runner and a rebuild swap) from applying the same batch twice. A crash at any instant
 * rolls back the whole batch with its checkpoint. Among several instances, the one that owns a
 * projection (projections/ownership.ts) runs its batches while the others follow its checkpoint.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { setMaxListeners } from 'node:events';
import type { Knex } from 'knex';
import { comparePositions, endedByBytes, pageMayContinue, START, type EventStore, type Position, type RecordedEvent } from '../platform/eventstore/port.js';
import { wakeSource } from '../platform/eventstore/catch-up-subscription.js';
import { advanceCheckpoint, checkpointVersion, ensureCheckpoint, lockAndAdvanceCheckpoint, lockAndReadCheckpoint, readCheckpoint, tryTransactionLock, useSchema } from '../readmodels/checkpoints.js';
import { projectionBatches, type ProjectionBatchTrace } from '../platform/trace-channels.js';
import { LogTail } from './log-tail.js';
import { ProjectionOwnership, type OwnershipMode } from './ownership.js';
import { batchLimits, type BatchContext, type Projection } from './projection.js';
import { conditionsHold, writesNothing } from '../readmodels/batch-writes.js';

/** How long a position read past events a projection ignores may stay in memory only. */
const PERSIST_IDLE_POSITION_MS = 1000;

/**
 * Default upper bound of one batch's events (data and metadata as JSON text): a batch holds at
 * most this many bytes of events as well as at most batchSize events, so catching up on large
 * events (a submitted document carries its artifacts) reads pages of a few megabytes, not of
 * hundreds.
 */
export const DEFAULT_BATCH_BYTES = 2 * 1024 * 1024;

export class CheckpointMovedError extends Error {
  override readonly name = 'CheckpointMovedError';
}

export interface BatchTarget {
  /** Checkpoint row (defaults to the projection name). */
  checkpoint?: string;
  /** Schema whose tables shadow the live ones (rebuilds). */
  schema?: string;
  /** Upper bound of the batch's events in bytes (default DEFAULT_BATCH_BYTES). */
  maxBytes?: number;
}

/** Whether the projection applies this event. */
export function readsEvent(projection: Projection, event: RecordedEvent): boolean {
  return projection.eventTypes.has(event.type) && (projection.accepts === undefined || projection.accepts(event));
}

/**
 * Pages of the log one batch may read while it has fewer than batchSize events to apply: a
 * projection that applies a small share of the log (the credits projection, one event in ten
 * while webhook attempts are recorded) takes the next pages into the same transaction instead of
 * spending a transaction, and a share of the batch time, per page of others' events.
 */
const MAX_PAGES_PER_BATCH = 4;

/** Applies the events the projection reads; returns how many that was. */
export async function applyEvents(trx: Knex.Transaction, projection: Projection, events: readonly RecordedEvent[], context?: BatchContext): Promise<number> {
  const relevant = events.filter((e) => readsEvent(projection, e));
  if (projection.applyMany) {
    if (relevant.length > 0) await projection.applyMany(trx, relevant, context);
  } else {
    for (const event of relevant) await projection.apply(trx, event);
  }
  return relevant.length;
}

export function lockKey(checkpoint: string): string {
  return `projection:${checkpoint}`;
}

/** The part of the store a batch reads from (the store itself, or the shared LogTail). */
export type LogReader = Pick<EventStore, 'readAll'>;

export interface BatchResult {
  /** Events read (relevant or not). */
  read: number;
  /** Position the projection has now seen up to. */
  position: Position;
  /** Whether that position is written to the checkpoint (false: kept in memory only). */
  persisted: boolean;
  /** Whether events may follow at once (a full batch, by count or bytes): false means caught up. */
  more: boolean;
  /**
   * Events the batch applied without storing its position (its writes were conditions alone, and
   * they held): counted in the checkpoint's `events_applied` by the next batch that stores it
   * (`carried`).
   */
  unstoredApplied?: number;
}

/**
 * Reads at most `batchSize` events (or the projection's own larger `batch` limits) after
 * `scannedTo` (default: the stored checkpoint) and applies those the projection reads,
 * atomically with its checkpoint, under the projection's advisory lock. A batch with nothing to
 * apply opens no transaction unless `persist` asks for the position to be stored: replaying
 * events a projection ignores changes nothing, so the position may run ahead of the stored
 * checkpoint in memory. 'locked': another runner holds the projection. 'moved': another runner
 * moved the checkpoint between this batch's read of it and its compare-and-set (the statement's
 * snapshot may predate that runner's commit); the batch rolled back and nothing failed: read
 * again from the stored checkpoint.
 */
export async function applyBatch(
  knex: Knex,
  log: LogReader,
  projection: Projection,
  batchSize: number,
  target: BatchTarget = {},
  options: {
    scannedTo?: Position;
    persist?: boolean;
    /** Whether someone waits for a position up to `through` (see BatchContext.awaited); batches that end the log are awaited anyway. */
    awaited?: (through: Position) => boolean;
    /** Whether the events may have been applied before (BatchContext.replaying; default true). */
    replaying?: boolean;
    /** Events applied by earlier batches whose position was not stored, counted with this one's (BatchResult.unstoredApplied). */
    carried?: number;
  } = {},
): Promise<BatchResult | 'locked' | 'moved'> {
  const checkpoint = target.checkpoint ?? projection.name;
  const from = options.scannedTo ?? (await readCheckpoint(knex, checkpoint)) ?? START;
  const carried = options.carried ?? 0;
  const limits = batchLimits(projection, batchSize, target.maxBytes ?? DEFAULT_BATCH_BYTES);
  let page = await log.readAll(from, limits.size, { maxBytes: limits.bytes });
  let more = pageMayContinue(page, limits.size);
  let applicable = page.filter((e) => readsEvent(projection, e)).length;
  const events = [...page];
  // Further pages only while they were cut by count (a page cut by bytes has used the batch's byte budget).
  for (let pages = 1; more && !endedByBytes(page) && applicable < limits.size && pages < MAX_PAGES_PER_BATCH; pages++) {
    page = await log.readAll(events[events.length - 1]!.position, limits.size, { maxBytes: limits.bytes });
    more = pageMayContinue(page, limits.size);
    applicable += page.filter((e) => readsEvent(projection, e)).length;
    events.push(...page);
  }
  const last = events.length > 0 ? events[events.length - 1]!.position : from;
  const relevant = applicable > 0;
  if (!relevant && !options.persist) return { read: events.length, position: last, persisted: false, more };
  const context = { awaited: !more || (options.awaited?.(last) ?? false), replaying: options.replaying ?? true };
  if (!target.schema && !projection.actsOutside) {
    // The batch as one statement when its writes need no reads (Projection.writes), or when it
    // only stores the position: the lock, the checkpoint and the writes, no explicit transaction.
    const writes = relevant ? (projection.writes?.(events.filter((e) => readsEvent(projection, e)), context) ?? null) : [];
    // Writes that change nothing (conditions on what the projection remembers, e.g. a workspace
    // without webhook subscriptions) leave nothing to store but the position: like a batch of
    // events the projection ignores, it stays in memory unless `persist` asks for it, once a
    // read-only statement has checked the conditions (no transaction id, no WAL, no flush at
    // commit, instead of the checkpoint's update). Where they no longer hold, the batch is
    // applied by reading, below. Nothing of it is lost if the position is never stored: a runner
    // that reads these events again from the stored checkpoint finds the same rows, since every
    // batch that changes them stores its position with them.
    if (writes && relevant && !options.persist && writesNothing(writes) && (await conditionsHold(knex, writes))) {
      return { read: events.length, position: last, persisted: false, more, unstoredApplied: applicable };
    }
    if (writes) {
      const held = await lockAndAdvanceCheckpoint(knex, lockKey(checkpoint), checkpoint, from, last, applicable + carried, writes);
      if (!held.locked) return 'locked';
      if (held.advanced) return { read: events.length, position: last, persisted: true, more };
      // Another runner moved the checkpoint past `from` (or there is none yet): the transaction below reads it afresh.
    }
  }
  const batch = knex.transaction(async (trx) => {
    let stored: Position | null;
    if (target.schema) {
      if (!(await tryTransactionLock(trx, lockKey(checkpoint)))) return 'locked' as const;
      await useSchema(trx, target.schema);
      stored = await readCheckpoint(trx, checkpoint);
    } else if (projection.actsOutside) {
      // A reactor's transaction writes nothing until its checkpoint moves, at the end (Projection.actsOutside).
      const held = await lockAndReadCheckpoint(trx, lockKey(checkpoint), checkpoint);
      if (!held.locked) return 'locked' as const;
      stored = held.stored;
    } else {
      // Usually one statement: the lock, and the checkpoint moved past the batch before it is applied.
      const held = await lockAndAdvanceCheckpoint(trx, lockKey(checkpoint), checkpoint, from, last, applicable + carried);
      if (!held.locked) return 'locked' as const;
      if (held.advanced) {
        await applyEvents(trx, projection, events, context);
        return { read: events.length, position: last, persisted: true, more };
      }
      // Another runner moved the checkpoint past `from` (or there is none yet): read it afresh.
      stored = await readCheckpoint(trx, checkpoint);
    }
    if (!stored) {
      await ensureCheckpoint(trx, checkpoint, projection.version);
      stored = START;
    }
    // Between the stored checkpoint and `from` lie only events this projection ignores. If the
    // checkpoint is beyond `from`, another runner applied part of this batch: skip that part.
    if (comparePositions(stored, last) >= 0) return { read: events.length, position: stored, persisted: true, more };
    const fresh = comparePositions(stored, from) > 0 ? events.filter((e) => comparePositions(e.position, stored!) > 0) : events;
    // Events carried from unstored batches count only when the checkpoint moves on from where this batch began.
    const applied = (await applyEvents(trx, projection, fresh, context)) + (fresh === events ? carried : 0);
    if (!(await advanceCheckpoint(trx, checkpoint, stored, last, applied))) throw new CheckpointMovedError(`checkpoint ${checkpoint} moved during the batch`);
    return { read: events.length, position: last, persisted: true, more };
  });
  return batch.catch((err: unknown) => {
    if (err instanceof CheckpointMovedError) return 'moved' as const;
    throw err;
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
  /** Upper bound of a batch's events in bytes (default DEFAULT_BATCH_BYTES). */
  batchBytes?: number;
  /** Poll interval when no append notification arrives (events held back by an in-flight transaction). */
  pollIntervalMs?: number;
  /** Whether one instance owns each projection (projections/ownership.ts; default 'gather'). */
  ownership?: OwnershipMode;
  /** How often the projections owned elsewhere are tried again (default CLAIM_INTERVAL_MS). */
  claimIntervalMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * A loop that caught up while events this process appended are still held back from it (behind a
 * transaction begun before them and still open: a projection's batch, another append) looks again
 * after this long, doubling up to the poll interval, instead of sleeping until the next append or
 * the poll: the transaction that holds them back commits with no append to wake anyone.
 */
const HELD_BACK_FIRST_LOOK_MS = 2;

/** How often a runner tries again to own the projections another instance owns. */
export const CLAIM_INTERVAL_MS = 1000;

/** The longest the loops wait for the first claim round before they begin (the connection may be slow to open). */
const FIRST_CLAIM_WAIT_MS = 5000;

/** How often a wait looks at the stored checkpoint of a projection another instance runs. */
const ELSEWHERE_POLL_MS = 100;

interface Wait {
  position: Position;
  names: readonly string[];
  reached: () => boolean;
  /** Set while the wait sleeps. */
  wake: (() => void) | null;
}

export class ProjectionRunner {
  /** Projections whose loop in this process applies batches (not locked out by another instance). */
  private readonly activeHere = new Set<string>();
  /** The log as all loops of this runner read it: one shared read of the tail. */
  private readonly tail: LogTail;
  private readonly status = new Map<string, ProjectionStatus>();
  /** The positions callers of waitFor wait for, for which projections, and how to wake each. */
  private readonly waits = new Set<Wait>();
  private readonly abort = uncappedAbortController();
  private loops: Promise<void>[] = [];
  private readonly ownership: ProjectionOwnership;
  private readonly claimIntervalMs: number;
  /** The claim rounds (null until start). */
  private claiming: Promise<void> | null = null;
  /** Called after each claim round (loops that follow another instance). */
  private readonly claimRounds = new Set<() => void>();
  private readonly batchSize: number;
  private readonly batchBytes: number;
  private readonly pollIntervalMs: number;
  private readonly log: NonNullable<RunnerOptions['log']>;

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    readonly projections: readonly Projection[],
    options: RunnerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.batchBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.log = options.log ?? (() => {});
    this.claimIntervalMs = options.claimIntervalMs ?? CLAIM_INTERVAL_MS;
    this.ownership = new ProjectionOwnership(
      knex,
      projections.map((p) => p.name),
      options.ownership ?? 'gather',
      this.log,
    );
    const readSize = Math.max(this.batchSize, 1000);
    // Up to 8 byte-bounded reads (16 MB by default): runners a few batches apart still share them.
    this.tail = new LogTail(store, readSize, 2 * readSize, this.batchBytes, 8);
    for (const p of projections) this.status.set(p.name, { name: p.name, position: null, lastError: null, failingSince: null });
  }

  async init(): Promise<void> {
    for (const p of this.projections) {
      await ensureCheckpoint(this.knex, p.name, p.version);
      const version = await checkpointVersion(this.knex, p.name);
      if (version !== p.version) {
        this.log(`projection ${p.name} tables are version ${version}, code is version ${p.version}: run "npm run rebuild -- ${p.name}"`);
      }
    }
  }

  /** Starts one loop per projection; returns at once. */
  start(): void {
    const signal = this.abort.signal;
    const first = this.ownership.claim().then(() => this.claimed());
    this.claiming = first.then(async () => {
      while (!signal.aborted) {
        await pause(this.claimIntervalMs, signal);
        if (signal.aborted) break;
        await this.ownership.claim();
        this.claimed();
      }
    });
    // The loops begin after the first round, or without it when it takes too long (they then run as before ownership).
    const begin = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FIRST_CLAIM_WAIT_MS);
      timer.unref();
      void first.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.loops = this.projections.map((p) => begin.then(() => this.loop(p)));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wakeWaits(() => true);
    this.claimed();
    await Promise.all(this.loops);
    await this.claiming;
    // Every projection this runner owned is free for another instance from here.
    await this.ownership.close();
  }

  /** The projections this runner owns now (among several instances: projections/ownership.ts). */
  ownedProjections(): string[] {
    return this.ownership.ownedNow();
  }

  private claimed(): void {
    for (const f of [...this.claimRounds]) f();
  }

  /** Waits for the end of the next claim round (or the runner's stop). */
  private async nextClaimRound(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.claimRounds.delete(done);
        resolve();
      };
      this.claimRounds.add(done);
    });
  }

  /**
   * Runs every projection until it has applied everything visible now (tests, tools). Another
   * runner (a live service beside an admin command) may hold a projection's lock or move its
   * checkpoint meanwhile: both mean "read again".
   */
  async catchUp(): Promise<void> {
    for (const p of this.projections) {
      for (;;) {
        const result = await applyBatch(this.knex, this.store, p, this.batchSize, { maxBytes: this.batchBytes }, { persist: true });
        if (result === 'moved') continue;
        if (result === 'locked') {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        this.recordProgress(p.name, result.position);
        if (!result.more) break;
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
    const wait: Wait = {
      position,
      names,
      reached: () => names.every((n) => {
        const at = this.status.get(n)?.position;
        return at !== null && at !== undefined && comparePositions(at, position) >= 0;
      }),
      wake: null,
    };
    if (wait.reached()) return true;
    // Known to the loops while it waits: a batch holding its position is then awaited (BatchContext).
    this.waits.add(wait);
    try {
      return await this.waitUntil(wait, Date.now() + options.timeoutMs);
    } finally {
      this.waits.delete(wait);
    }
  }

  /**
   * A wait sleeps until a projection's progress reaches it (recordProgress wakes just the waits
   * it completes, not every wait at every batch), until its deadline, or, while a projection it
   * waits for runs elsewhere, until the next look at that projection's stored checkpoint.
   */
  private async waitUntil(wait: Wait, deadline: number): Promise<boolean> {
    let checkedDbAt = 0;
    while (!wait.reached()) {
      const left = deadline - Date.now();
      if (left <= 0 || this.abort.signal.aborted) return false;
      // Projections this process does not run (another instance holds them) are followed
      // through their stored checkpoints.
      const elsewhere = wait.names.filter((n) => !this.activeHere.has(n));
      if (elsewhere.length > 0 && Date.now() - checkedDbAt > ELSEWHERE_POLL_MS) {
        checkedDbAt = Date.now();
        for (const n of elsewhere) {
          const at = await readCheckpoint(this.knex, n);
          if (at) this.recordProgress(n, at);
        }
        if (wait.reached()) return true;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, elsewhere.length > 0 ? Math.min(left, ELSEWHERE_POLL_MS) : left);
        function done() {
          clearTimeout(timer);
          wait.wake = null;
          resolve();
        }
        wait.wake = done;
      });
      if (this.abort.signal.aborted) return wait.reached();
    }
    return true;
  }

  /** Wakes the sleeping waits that `which` selects (each then looks again). */
  private wakeWaits(which: (wait: Wait) => boolean): void {
    for (const w of this.waits) if (w.wake && which(w)) w.wake();
  }

  /** Whether a caller of waitFor waits for `projection` to pass a position up to `through`. */
  private awaitedWithin(projection: string, through: Position): boolean {
    for (const w of this.waits) if (w.names.includes(projection) && comparePositions(w.position, through) <= 0) return true;
    return false;
  }

  private recordProgress(name: string, position: Position): void {
    const s = this.status.get(name);
    if (!s) return;
    if (!s.position || comparePositions(position, s.position) > 0) {
      s.position = position;
      this.wakeWaits((w) => w.names.includes(name) && w.reached());
    }
  }

  /**
   * Waits at the log's end (read up to `position`) for the next wake, or, while events this process
   * appended are held back behind an open transaction, `lookMs` at most; returns the next look's delay.
   */
  private async caughtUp(position: Position, wake: Promise<void>, lookMs: number, signal: AbortSignal): Promise<number> {
    const appended = this.store.appendedHead?.() ?? null;
    if (!appended || comparePositions(appended, position) <= 0) {
      await wake;
      return HELD_BACK_FIRST_LOOK_MS;
    }
    await Promise.race([wake, pause(lookMs, signal)]);
    return Math.min(lookMs * 2, this.pollIntervalMs);
  }

  private async loop(p: Projection): Promise<void> {
    const signal = this.abort.signal;
    let backoffMs = 100;
    const nextWake = wakeSource(this.store, this.pollIntervalMs, signal);
    // Where this loop has read up to (undefined: start from the stored checkpoint), and
    // whether part of that is only in memory (batches with nothing to apply are not stored).
    let scanned: Position | undefined;
    let unpersistedSince: number | null = null;
    // Events applied by batches whose position is in memory only (BatchResult.unstoredApplied).
    let carried = 0;
    // Until a batch of this loop reaches the log's end, its events may have been applied before
    // (by this service before a restart, by another instance): BatchContext.replaying.
    let replaying = true;
    let heldBackLookMs = HELD_BACK_FIRST_LOOK_MS;
    while (!signal.aborted) {
      if (this.ownership.role(p.name) === 'follow') {
        // Another instance owns this projection: follow its checkpoint (waits on it poll it) until a claim round gives it to this one.
        if (this.activeHere.delete(p.name)) this.wakeWaits((w) => w.names.includes(p.name));
        scanned = undefined;
        unpersistedSince = null;
        carried = 0;
        replaying = true;
        await this.nextClaimRound(signal);
        continue;
      }
      const wake = nextWake();
      const startedAt = performance.now();
      try {
        const persist = unpersistedSince !== null && Date.now() - unpersistedSince >= PERSIST_IDLE_POSITION_MS;
        const result = await applyBatch(
          this.knex,
          this.tail,
          p,
          this.batchSize,
          { maxBytes: this.batchBytes },
          { scannedTo: scanned, persist, awaited: (through) => this.awaitedWithin(p.name, through), replaying, carried },
        );
        if (projectionBatches.hasSubscribers) {
          const position = typeof result === 'string' ? null : result.position;
          projectionBatches.publish({ projection: p.name, startedAt, endedAt: performance.now(), read: typeof result === 'string' ? 0 : result.read, position } satisfies ProjectionBatchTrace);
        }
        const s = this.status.get(p.name)!;
        s.lastError = null;
        s.failingSince = null;
        backoffMs = 100;
        if (result === 'locked') {
          // Another instance runs this projection: follow its checkpoint (waits on it poll it from now on).
          if (this.activeHere.delete(p.name)) this.wakeWaits((w) => w.names.includes(p.name));
          scanned = undefined;
          unpersistedSince = null;
          carried = 0;
          replaying = true;
          await pause(1000, signal);
          continue;
        }
        if (result === 'moved') {
          // Another runner moved the checkpoint (an instance that held the projection before).
          scanned = undefined;
          unpersistedSince = null;
          carried = 0;
          replaying = true;
          continue;
        }
        this.activeHere.add(p.name);
        scanned = result.position;
        if (result.persisted) {
          unpersistedSince = null;
          carried = 0;
        } else {
          if (result.read > 0) unpersistedSince ??= Date.now();
          carried += result.unstoredApplied ?? 0;
        }
        this.recordProgress(p.name, result.position);
        if (!result.more) {
          replaying = false;
          heldBackLookMs = await this.caughtUp(result.position, wake, heldBackLookMs, signal);
        }
      } catch (err) {
        if (signal.aborted) break;
        scanned = undefined;
        unpersistedSince = null;
        carried = 0;
        replaying = true;
        const s = this.status.get(p.name)!;
        s.lastError = err instanceof Error ? err.message : String(err);
        s.failingSince ??= new Date();
        this.log(`projection ${p.name} failed; retrying in ${backoffMs} ms`, { error: s.lastError });
        await pause(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, 30_000);
      }
    }
  }
}

/** One signal serves every loop of a runner and each loop's wait listens to it, so no cap of 10. */
function uncappedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** Waits `ms`, or less when `signal` aborts (then it resolves too). */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch((err: unknown) => {
    if (!(err instanceof Error && err.name === 'AbortError')) throw err;
  });
}
