/**
 * Runs commands against the credits stream of a workspace (`credits-<workspaceId>`), the one
 * hot stream of the service: every reservation of every company of a workspace is appended
 * there. The rules are commands/execute.ts's (fold, decide, append with the expected revision,
 * decide again on a conflict), with three additions for throughput:
 *
 * - the folded state is cached per stream: a write is decided on the cache and appended with the
 *   cache's revision; when another writer (another service instance) got there first, the append
 *   fails on the revision, the events after the cached revision are read, and the batch is
 *   decided again. A read reads those events first. A persisted snapshot, when given, starts a
 *   cold cache;
 * - commands for one stream queue up, and the queue is decided and appended as one batch
 *   (group commit): one tail read and one append for many commands, each decided on the
 *   state its predecessors in the batch left. A command refused by the domain is refused
 *   alone; a conflict re-decides the whole batch on the fresher state; nothing is answered
 *   before the append is durable;
 * - a command that passes `idSeed` (a reactor) gets event ids derived from it. Replayed after a
 *   crash, its append is recognised by those ids (a replay or a duplicate), reported as
 *   `replayed` and not applied again. A batch holding such a replay is split and each command
 *   appended alone.
 *
 * Several service instances may run engines on the same stream: the expected revision keeps
 * them correct, the cache and the tail read keep them cheap.
 */
import { randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { LRUCache } from 'lru-cache';
import { decideCredits, evolveCredits, initialCreditsState, type CreditsCommand, type CreditsState, type CompanyCredits, type Reservation } from '../../domain/credits/credits.js';
import { creditEventDefinitions, type CreditEvent } from '../../domain/credits/events.js';
import { pfromEntries, pvalues } from '../../domain/credits/pmap.js';
import { creditsStream } from '../../domain/credits/values.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { DuplicateEventError, WrongExpectedVersionError, type AppendResult, type EventStore, type NewEvent, type Position, type StreamAppend } from '../../platform/eventstore/port.js';
import { ConcurrencyConflictError, eventMetadata, type CommandContext } from '../execute.js';
import { effectAppended, effectFailure, effectPart, type Slot } from '../idempotent-unit.js';

const EVENT_ID_NAMESPACE = '2d8f6b1e-7c4a-5e93-b0a1-4f6c2e9d8a71';
/** Bump when the shape of CreditsState changes: older snapshots are then ignored. */
export const CREDITS_SNAPSHOT_VERSION = 1;

/** Where folded states are kept between processes (commands/credits/snapshots.ts); optional. */
export interface SnapshotStore {
  load(streamId: string): Promise<{ revision: bigint; version: number; state: unknown } | null>;
  save(streamId: string, revision: bigint, version: number, state: unknown): Promise<void>;
}

export interface CreditsOutcome {
  /** The state right after this command's events (or the current state for a no-op). */
  state: CreditsState;
  events: CreditEvent[];
  /** Position of the batch's last event; null when nothing was appended. */
  position: Position | null;
  /** True when the command's events were already in the stream (a reaction replayed after a crash). */
  replayed: boolean;
}

/** An idempotent request's effect, recorded in the same append as the command's events. */
export interface CreditsEffect {
  slot: Slot<unknown>;
  /** What to record, from the command's outcome (its events and the state right after them). */
  record(outcome: { state: CreditsState; events: CreditEvent[] }): unknown;
}

interface Pending {
  command: CreditsCommand | null; // null: a read
  ctx: CommandContext;
  idSeed?: string;
  effect?: CreditsEffect;
  resolve(outcome: CreditsOutcome): void;
  reject(err: unknown): void;
}

interface Entry {
  streamId: string;
  state: CreditsState;
  revision: bigint | 'no_stream';
  loaded: boolean;
  queue: Pending[];
  draining: boolean;
  snapshotRevision: bigint;
  snapshotAt: number;
  /** The cache may be behind the stream (a replayed append was detected): read before deciding. */
  stale: boolean;
  /** When (Date.now()) the cache was last known to match the stream: after a read of its tail, or an append. */
  currentAt: number;
}

export interface CreditsEngineOptions {
  snapshots?: SnapshotStore | null;
  /** Write a snapshot after this many new events (default 2,000)… */
  snapshotEvery?: number;
  /** …and not more often than this (default 60 s): a snapshot serializes the whole state. */
  snapshotMinIntervalMs?: number;
  /** Commands decided and appended together at most (default 200). */
  maxBatch?: number;
  /** Streams kept in memory at most (default 2,000). */
  cacheSize?: number;
  maxAttempts?: number;
}

export function serializeCreditsState(state: CreditsState): unknown {
  return {
    enforcement: state.enforcement,
    lots: state.lots,
    companies: [...pvalues(state.companies)],
    reservations: [...pvalues(state.reservations)],
  };
}

export function deserializeCreditsState(raw: unknown): CreditsState {
  const s = raw as { enforcement: boolean; lots: CreditsState['lots']; companies: CompanyCredits[]; reservations: Reservation[] };
  return {
    enforcement: s.enforcement,
    lots: s.lots,
    companies: pfromEntries(s.companies.map((c) => [c.companyId, c] as const)),
    reservations: pfromEntries(s.reservations.map((r) => [r.reservationId, r] as const)),
  };
}

/**
 * The environment of an event a system process caused (lifecycle, lot expiry): the one of the
 * allowance or lot it concerns, since each event is produced in the environment of the
 * operation behind it (docs/api/webhooks.md).
 */
function environmentOfEvent(e: CreditEvent): string | null {
  const d = e.data as { environment?: unknown; allowance?: { environment?: unknown } };
  if (typeof d.environment === 'string') return d.environment;
  if (typeof d.allowance?.environment === 'string') return d.allowance.environment;
  return null;
}

export class CreditsEngine {
  /** Cached states, least recently used evicted first. */
  private readonly entries: LRUCache<string, Entry>;
  /** Entries evicted while busy (commands queued or draining): kept until they are idle. */
  private readonly busy = new Map<string, Entry>();
  private readonly maxBatch: number;
  private readonly snapshotEvery: number;
  private readonly maxAttempts: number;

  constructor(
    readonly store: EventStore,
    private readonly options: CreditsEngineOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 200;
    this.entries = new LRUCache<string, Entry>({
      max: options.cacheSize ?? 2000,
      dispose: (entry, key, reason) => {
        if (reason === 'evict' && (entry.draining || entry.queue.length > 0)) this.busy.set(key, entry);
      },
    });
    this.snapshotEvery = options.snapshotEvery ?? 2000;
    this.maxAttempts = options.maxAttempts ?? 50;
  }

  /** Decides and appends one command on the workspace's credits stream. Domain refusals reject with their DomainError. */
  execute(workspaceId: string, command: CreditsCommand, ctx: CommandContext, options: { idSeed?: string; effect?: CreditsEffect } = {}): Promise<CreditsOutcome> {
    return this.enqueue(creditsStream(workspaceId), command, { ...ctx, workspaceId }, options.idSeed, options.effect);
  }

  /** The workspace's credits state, brought up to date with the stream. */
  async read(workspaceId: string): Promise<CreditsState> {
    return (await this.enqueue(creditsStream(workspaceId), null, { now: new Date(0) })).state;
  }

  /**
   * The workspace's cached state when it was known to match the stream at most `maxAgeMs` ago,
   * without a round trip; null otherwise (then read() it). Writes through this engine keep the
   * cache current at once; another instance's writes show after at most `maxAgeMs`.
   */
  recent(workspaceId: string, maxAgeMs: number): CreditsState | null {
    const key = creditsStream(workspaceId);
    const entry = this.entries.peek(key) ?? this.busy.get(key);
    // Commands queued or in flight meanwhile are concurrent with the caller: as with a read, the
    // answer is the state before them.
    if (!entry || !entry.loaded || entry.stale) return null;
    return Date.now() - entry.currentAt <= maxAgeMs ? entry.state : null;
  }

  /** Forgets every cached state (tests). */
  clear(): void {
    for (const [key, entry] of [...this.entries.entries()]) if (!entry.draining) this.entries.delete(key);
  }

  private enqueue(streamId: string, command: CreditsCommand | null, ctx: CommandContext, idSeed?: string, effect?: CreditsEffect): Promise<CreditsOutcome> {
    const entry = this.entry(streamId);
    return new Promise<CreditsOutcome>((resolve, reject) => {
      entry.queue.push({ command, ctx, idSeed, effect, resolve, reject });
      if (!entry.draining) void this.drain(entry);
    });
  }

  private entry(streamId: string): Entry {
    let entry = this.entries.get(streamId); // most recently used now
    if (entry) return entry;
    entry = this.busy.get(streamId);
    if (entry) {
      this.busy.delete(streamId);
      this.entries.set(streamId, entry);
      return entry;
    }
    entry = { streamId, state: initialCreditsState, revision: 'no_stream', loaded: false, queue: [], draining: false, snapshotRevision: -1n, snapshotAt: 0, stale: false, currentAt: 0 };
    this.entries.set(streamId, entry);
    return entry;
  }

  private async drain(entry: Entry): Promise<void> {
    entry.draining = true;
    try {
      while (entry.queue.length > 0) {
        const batch = entry.queue.splice(0, this.maxBatch);
        try {
          await this.runBatch(entry, batch);
        } catch (err) {
          for (const p of batch) p.reject(err);
          entry.loaded = false; // start from a clean load next time
          entry.state = initialCreditsState;
          entry.revision = 'no_stream';
        }
      }
    } finally {
      entry.draining = false;
      if (this.busy.get(entry.streamId) === entry) this.busy.delete(entry.streamId); // evicted meanwhile: now idle
    }
  }

  /** Brings the cached state up to the stream's last event. */
  private async refresh(entry: Entry): Promise<void> {
    if (!entry.loaded) {
      entry.state = initialCreditsState;
      entry.revision = 'no_stream';
      const snapshot = await this.options.snapshots?.load(entry.streamId).catch(() => null);
      if (snapshot && snapshot.version === CREDITS_SNAPSHOT_VERSION) {
        entry.state = deserializeCreditsState(snapshot.state);
        entry.revision = snapshot.revision;
        entry.snapshotRevision = snapshot.revision;
      }
      entry.loaded = true;
    }
    for (;;) {
      const from = entry.revision === 'no_stream' ? 0n : entry.revision + 1n;
      const events = await this.store.readStream(entry.streamId, { fromRevision: from, maxCount: 5000 });
      let state = entry.state;
      for (const recorded of events) {
        const definition = (creditEventDefinitions as Record<string, Parameters<typeof decodeEventData>[0]>)[recorded.type];
        if (!definition) throw new Error(`stream ${entry.streamId} holds an event type ${recorded.type} unknown to credits`);
        state = evolveCredits(state, { type: recorded.type, data: decodeEventData(definition, recorded.schemaVersion, recorded.data) } as CreditEvent);
      }
      entry.state = state;
      if (events.length > 0) entry.revision = events[events.length - 1]!.revision;
      if (events.length < 5000) {
        entry.currentAt = Date.now();
        return;
      }
    }
  }

  /**
   * Decides and appends `batch` (owned by the caller, which rejects every item still pending if
   * this throws). After a conflict the retry also takes in commands that queued meanwhile: under
   * contention from another instance the batches grow instead of the queue.
   */
  private async runBatch(entry: Entry, batch: Pending[]): Promise<void> {
    let writes = batch.filter((p) => p.command !== null);
    let reads = batch.filter((p) => p.command === null);
    for (let attempt = 1; ; attempt++) {
      // The cache is trusted for a first attempt: the append's expected revision proves it was
      // current (another instance's events make the append fail, and the retry reads them).
      // Reads always look at the stream.
      if (attempt > 1 || !entry.loaded || entry.stale || reads.length > 0) {
        await this.refresh(entry);
        entry.stale = false;
      }
      if (attempt > 1 && batch.length < this.maxBatch) {
        const more = entry.queue.splice(0, this.maxBatch - batch.length);
        batch.push(...more);
        writes = [...writes, ...more.filter((p) => p.command !== null)];
        reads = [...reads, ...more.filter((p) => p.command === null)];
      }
      for (const p of reads) p.resolve({ state: entry.state, events: [], position: null, replayed: false });
      reads = [];
      if (writes.length === 0) return;

      let state = entry.state;
      const decided: { p: Pending; events: CreditEvent[]; state: CreditsState; error?: unknown }[] = [];
      const toAppend: NewEvent[] = [];
      // Idempotent requests' effect records, appended in the same transaction as the batch.
      const effects: { p: Pending; part: StreamAppend }[] = [];
      for (const p of writes) {
        try {
          const events = decideCredits(p.command!, state);
          for (const e of events) state = evolveCredits(state, e);
          if (p.effect && events.length > 0) effects.push({ p, part: effectPart(p.effect.slot, p.effect.record({ state, events }), p.ctx) });
          const metadata = eventMetadata(p.ctx);
          events.forEach((e, i) =>
            toAppend.push({
              id: p.idSeed ? uuidv5(`${p.idSeed}/${i}`, EVENT_ID_NAMESPACE) : randomUUID(),
              type: e.type,
              schemaVersion: creditEventDefinitions[e.type].version,
              data: e.data,
              metadata: metadata.environment ? metadata : { ...metadata, environment: environmentOfEvent(e) },
            }),
          );
          decided.push({ p, events, state });
        } catch (err) {
          decided.push({ p, events: [], state, error: err });
        }
      }
      if (toAppend.length === 0) {
        for (const d of decided) (d.error ? d.p.reject(d.error) : d.p.resolve({ state: d.state, events: [], position: null, replayed: false }));
        return;
      }
      if (writes.length > 1 && new Set(effects.map((e) => e.part.streamId)).size < effects.length) {
        // Two attempts of one request (one of them taken over) in one batch: one append each.
        for (const p of writes) await this.runBatch(entry, [p]).catch((e) => p.reject(e));
        return;
      }
      try {
        let result: AppendResult;
        if (effects.length === 0) result = await this.store.append(entry.streamId, toAppend, entry.revision);
        else {
          const results = await this.store.appendMulti([{ streamId: entry.streamId, events: toAppend, expected: entry.revision }, ...effects.map((e) => e.part)]);
          effects.forEach((e, i) => effectAppended(e.p.effect!.slot, results[i + 1]!));
          result = results[0]!;
        }
        if (result.replayed) {
          // Everything in this batch was written before: nothing new, and the cache must re-read.
          entry.stale = true;
          for (const d of decided) (d.error ? d.p.reject(d.error) : d.p.resolve({ state: entry.state, events: [], position: result.position, replayed: d.events.length > 0 }));
          return;
        }
        entry.state = state;
        entry.revision = result.nextExpectedRevision;
        entry.currentAt = Date.now();
        for (const d of decided) (d.error ? d.p.reject(d.error) : d.p.resolve({ state: d.state, events: d.events, position: d.events.length > 0 ? result.position : null, replayed: false }));
        this.maybeSnapshot(entry);
        return;
      } catch (err) {
        const lost = err instanceof WrongExpectedVersionError ? effects.find((e) => e.part.streamId === err.streamId) : undefined;
        if (lost) {
          // A retry took that request's key over: it writes nothing; the others go again.
          lost.p.reject(effectFailure(lost.p.effect!.slot, err));
          writes = writes.filter((p) => p !== lost.p);
          if (writes.length === 0 && reads.length === 0) return;
          continue;
        }
        if (err instanceof WrongExpectedVersionError) {
          // Another writer appended first: a short random pause keeps two instances from colliding in step.
          if (attempt < this.maxAttempts) {
            await new Promise((r) => setTimeout(r, Math.random() * Math.min(20, attempt * 2)));
            continue;
          }
          throw new ConcurrencyConflictError(entry.streamId, attempt);
        }
        if (err instanceof DuplicateEventError) {
          entry.stale = true;
          if (writes.length === 1) {
            writes[0]!.resolve({ state: entry.state, events: [], position: null, replayed: true });
            return;
          }
          for (const p of writes) await this.runBatch(entry, [p]).catch((e) => p.reject(e));
          return;
        }
        throw err;
      }
    }
  }

  private maybeSnapshot(entry: Entry): void {
    const snapshots = this.options.snapshots;
    if (!snapshots || entry.revision === 'no_stream') return;
    if (entry.revision - entry.snapshotRevision < BigInt(this.snapshotEvery)) return;
    if (Date.now() - entry.snapshotAt < (this.options.snapshotMinIntervalMs ?? 60_000)) return;
    const revision = entry.revision;
    entry.snapshotRevision = revision;
    entry.snapshotAt = Date.now();
    void snapshots.save(entry.streamId, revision, CREDITS_SNAPSHOT_VERSION, serializeCreditsState(entry.state)).catch(() => {});
  }
}

const engines = new WeakMap<EventStore, CreditsEngine>();

/** The process's engine for an event store (one per store, so every caller shares its cache and batches). */
export function creditsEngineFor(store: EventStore, options: CreditsEngineOptions = {}): CreditsEngine {
  let engine = engines.get(store);
  if (!engine) {
    engine = new CreditsEngine(store, options);
    engines.set(store, engine);
  }
  return engine;
}
