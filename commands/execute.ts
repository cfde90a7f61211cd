/**
 * Runs a command against an aggregate: load its stream, upcast and decode the events, fold
 * them, decide, and append the new events with the expected revision. A concurrency conflict
 * re-runs the whole decision on the fresher state (safe: decide is pure and re-checks every
 * rule, including client-supplied versions) through the conflict retry helper (./retry.ts):
 * a jittered back-off, for as long as a time budget allows; when it is spent the command fails with ConcurrencyConflictError, which every
 * API family answers with its 409 (retryable), never a 500.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as uuidParse, v5 as uuidv5 } from 'uuid';
import { fold, type Decider, type DomainEvent } from '../domain/decider.js';
import { decodeEventData, type EventMetadata } from '../domain/events/envelope.js';
import { CONFLICT_RETRY_BUDGET_MS, retryOnConflict } from './retry.js';
import { WrongExpectedVersionError, type AppendResult, type Artifact, type EventStore, type NewEvent, type RecordedEvent } from '../platform/eventstore/port.js';

/**
 * Too many writers on one stream: the command kept losing the race for its expected revision
 * until its retry budget was spent. Nothing was written; retrying later is safe.
 */
export class ConcurrencyConflictError extends Error {
  override readonly name = 'ConcurrencyConflictError';
  constructor(readonly streamId: string, readonly attempts: number) {
    super(`the resource was changed by concurrent requests ${attempts} times while this one was applied; retry the request`);
  }
}

export { CONFLICT_RETRY_BUDGET_MS };
const BACKOFF_BASE_MS = 2;
const BACKOFF_CAP_MS = 100;

/**
 * Sleeps before conflict retry `attempt` (1-based): "full jitter", a random pause up to an
 * exponentially growing cap, so writers that collided spread out instead of colliding again.
 * False when the pause would end past `deadline` (the budget is spent).
 */
export async function conflictBackoff(attempt: number, deadline: number): Promise<boolean> {
  const pause = Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 16));
  if (Date.now() + pause >= deadline) return false;
  await sleep(pause);
  return true;
}

const EVENT_ID_NAMESPACE = '6f1c8e4e-3b7a-5d2e-9c41-2b8f0a7d5e13';

/** The namespace as bytes, parsed once: uuid's v5 parses a namespace given as text on every call (twice). */
const EVENT_ID_NAMESPACE_BYTES = uuidParse(EVENT_ID_NAMESPACE);

/**
 * The id of a command's `index`-th event derived from `idSeed` (see execute's `idSeed`). The name
 * goes to uuid's v5 as its UTF-8 bytes, which is how v5 encodes a name given as text: the same id
 * for about half the CPU.
 */
export const seededEventId = (idSeed: string, index: number | string): string => uuidv5(Buffer.from(`${idSeed}/${index}`, 'utf8'), EVENT_ID_NAMESPACE_BYTES);

/** Who asked, and why: becomes the metadata of every event the command writes. */
export interface CommandContext {
  readonly now: Date;
  readonly workspaceId?: string | null;
  readonly environment?: string | null;
  readonly correlationId?: string | null;
  readonly causationId?: string | null;
  readonly requestId?: string | null;
  readonly keyId?: string | null;
  readonly idempotencyKey?: string | null;
  readonly actor?: string | null;
}

export function eventMetadata(ctx: CommandContext): EventMetadata {
  return {
    correlationId: ctx.correlationId ?? ctx.requestId ?? randomUUID(),
    causationId: ctx.causationId ?? null,
    occurredAt: ctx.now.toISOString(),
    workspaceId: ctx.workspaceId ?? null,
    environment: ctx.environment ?? null,
    requestId: ctx.requestId ?? null,
    keyId: ctx.keyId ?? null,
    idempotencyKey: ctx.idempotencyKey ?? null,
    actor: ctx.actor ?? null,
  };
}

export interface Loaded<S> {
  state: S;
  /** The stream's revision, or 'no_stream'. */
  revision: bigint | 'no_stream';
}

/** Folds recorded events of one stream with the decider's codecs (upcasting old versions). */
export function foldRecorded<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, recorded: readonly RecordedEvent[]): Loaded<S> {
  let state = decider.initialState;
  for (const event of recorded) {
    const definition = (decider.events as Record<string, Parameters<typeof decodeEventData>[0]>)[event.type];
    if (!definition) throw new Error(`stream ${event.streamId} holds an event type ${event.type} unknown to ${decider.category}`);
    state = decider.evolve(state, { type: event.type, data: decodeEventData(definition, event.schemaVersion, event.data) } as E);
  }
  const last = recorded[recorded.length - 1];
  return { state, revision: last ? last.revision : 'no_stream' };
}

export async function loadAggregate<C, S, E extends DomainEvent>(
  store: EventStore,
  decider: Decider<C, S, E>,
  streamId: string,
): Promise<Loaded<S>> {
  return foldRecorded(decider, await store.readStream(streamId));
}

export interface Executed<S, E> {
  /** State after the new events. */
  state: S;
  events: E[];
  /** Null when the decision produced no events. */
  appended: AppendResult | null;
}

export async function execute<C, S, E extends DomainEvent>(
  store: EventStore,
  decider: Decider<C, S, E>,
  streamId: string,
  command: C,
  ctx: CommandContext,
  options: {
    /**
     * Attempts before giving up with the store's WrongExpectedVersionError (for callers that
     * handle the conflict themselves, e.g. with 1). Without it, conflicts are retried within
     * `retryBudgetMs` and end in ConcurrencyConflictError.
     */
    maxAttempts?: number;
    /** Time budget of conflict retries (default CONFLICT_RETRY_BUDGET_MS). */
    retryBudgetMs?: number;
    /**
     * Derive event ids from this seed instead of drawing them at random. A reactor passes the
     * id of the event it reacts to, so a reaction replayed after a crash appends the same ids
     * and the event store recognises it as a replay instead of writing it twice.
     */
    idSeed?: string;
    /** State the caller has just loaded: used for the first attempt instead of reading again. */
    loaded?: Loaded<S>;
    /** Artifacts the new events name, appended with them (see AppendOptions). */
    artifacts?: readonly Artifact[];
  } = {},
): Promise<Executed<S, E>> {
  return retryOnConflict(
    async (attempt) => {
      const { state, revision } = attempt === 1 && options.loaded ? options.loaded : await loadAggregate(store, decider, streamId);
      const events = decider.decide(command, state);
      const after = fold(decider, events, state);
      if (events.length === 0) return { state: after, events, appended: null };
      const metadata = eventMetadata(ctx);
      const toAppend: NewEvent[] = events.map((e, i) => ({
        id: options.idSeed ? seededEventId(options.idSeed, i) : randomUUID(),
        type: e.type,
        schemaVersion: (decider.events as Record<string, { version: number }>)[e.type]!.version,
        data: e.data,
        metadata,
      }));
      const appended = await store.append(streamId, toAppend, revision, options.artifacts && options.artifacts.length > 0 ? { artifacts: options.artifacts } : undefined);
      return { state: after, events, appended };
    },
    {
      isConflict: (err) => err instanceof WrongExpectedVersionError,
      maxAttempts: options.maxAttempts,
      budgetMs: options.retryBudgetMs,
      // With maxAttempts the caller handles the store's own error; otherwise the family's 409.
      onSpent: options.maxAttempts !== undefined ? undefined : (_err, attempts) => new ConcurrencyConflictError(streamId, attempts),
    },
  );
}
