/**
 * The unit of an idempotent request (issue 13): lets a command record its effect for the
 * request's `Idempotency-Key` in the same multi-stream append as the command's own events, so
 * there is no instant at which the effect exists and the key does not know it.
 *
 * The HTTP layer claims the key (an `IdempotentRequestStarted` on the key's stream) and runs the
 * request inside a unit (AsyncLocalStorage). A command that acts takes the request's next slot:
 * - when an earlier attempt of this request committed that slot's effect, `recorded` holds what
 *   it recorded and the command answers from it instead of acting again;
 * - otherwise it appends its events together with an `IdempotentEffectRecorded` event on the
 *   key's stream at the revision the unit knows. If another request took the key over meanwhile,
 *   that part's expected revision fails, nothing of the append is written, and the command
 *   throws IdempotencyKeyTakenOver: the HTTP layer then waits for the new owner's answer.
 *
 * Slots are numbered in the order a request's commands act, which is the same on every attempt
 * of the same request (a batch submission submits its items in order). Ids a command derives
 * from `seed` (document ids, event ids) are the same on every attempt, so an engine without
 * multi-stream transactions recognises the already-written parts of an interrupted append.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { IdempotentEffectRecorded } from '../domain/idempotency.js';
import { eventMetadata, type CommandContext } from './execute.js';
import {
  DuplicateEventError,
  WrongExpectedVersionError,
  type AppendOptions,
  type AppendResult,
  type Artifact,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type StreamAppend,
} from '../platform/eventstore/port.js';

const UNIT_NAMESPACE = '0b7f4a2e-8d31-5c6a-9e0f-4d2b7c1a9e55';

export interface IdempotentUnit {
  /** The key's stream (`idempotency-…`). */
  readonly streamId: string;
  /** The key stream's revision after this request's latest append there. */
  revision: bigint;
  /** Effects earlier attempts committed (slot → record). */
  readonly effects: Readonly<Record<string, unknown>>;
  nextSlot: number;
  /** Some slot was answered from an earlier attempt's record. */
  recovered: boolean;
}

/** Another request took the key over: this request's effect was not written. */
export class IdempotencyKeyTakenOver extends Error {
  override readonly name = 'IdempotencyKeyTakenOver';
  constructor(readonly streamId: string) {
    super(`the idempotency key of stream ${streamId} was taken over by a retry`);
  }
}

const storage = new AsyncLocalStorage<IdempotentUnit>();

export function runInUnit<T>(unit: IdempotentUnit, fn: () => Promise<T>): Promise<T> {
  return storage.run(unit, fn);
}

export interface Slot<R> {
  readonly unit: IdempotentUnit;
  readonly index: number;
  /** What an earlier attempt recorded for this slot, if it committed. */
  readonly recorded: R | undefined;
  /** A deterministic UUID for this slot and `label` (the same on every attempt of the request). */
  id(label: string): string;
}

/** The next slot of the current idempotent request; null outside one (no Idempotency-Key). */
export function takeSlot<R>(): Slot<R> | null {
  const unit = storage.getStore();
  if (!unit) return null;
  const index = unit.nextSlot++;
  const recorded = unit.effects[String(index)] as R | undefined;
  if (recorded !== undefined) unit.recovered = true;
  return { unit, index, recorded, id: (label) => uuidv5(`${unit.streamId}/${index}/${label}`, UNIT_NAMESPACE) };
}

/** The key stream's part of an append recording `record` for `slot`. */
export function effectPart(slot: Slot<unknown>, record: unknown, ctx: CommandContext): StreamAppend {
  const event: NewEvent = {
    // A fresh id: a request that lost its key must not pass for a replay of the new owner's record.
    id: randomUUID(),
    type: IdempotentEffectRecorded.type,
    schemaVersion: IdempotentEffectRecorded.version,
    data: { slot: slot.index, record },
    metadata: eventMetadata(ctx),
  };
  return { streamId: slot.unit.streamId, events: [event], expected: slot.unit.revision };
}

/** Notes a successful append carrying `slot`'s effect part (result at `index` of the append's results). */
export function effectAppended(slot: Slot<unknown>, result: AppendResult): void {
  slot.unit.revision = result.nextExpectedRevision;
}

/** Maps a failed append: a wrong expected revision on the key's stream means the key was taken over. */
export function effectFailure(slot: Slot<unknown> | null, err: unknown): unknown {
  if (slot && err instanceof WrongExpectedVersionError && err.streamId === slot.unit.streamId) return new IdempotencyKeyTakenOver(slot.unit.streamId);
  return err;
}

/**
 * Appends `parts` and, when `slot` is given, the slot's effect record, all in one multi-stream
 * append. Returns the results of `parts` (in order).
 */
export async function appendWithEffect(
  store: EventStore,
  parts: readonly StreamAppend[],
  effect: { slot: Slot<unknown>; record: unknown; ctx: CommandContext } | null,
  /** Artifacts the parts' events name, written with them. */
  artifacts: readonly Artifact[] = [],
): Promise<AppendResult[]> {
  const options = artifacts.length > 0 ? { artifacts } : undefined;
  if (!effect) {
    if (parts.length === 1) return [await store.append(parts[0]!.streamId, parts[0]!.events, parts[0]!.expected, options)];
    return store.appendMulti(parts, options);
  }
  try {
    const results = await store.appendMulti([...parts, effectPart(effect.slot, effect.record, effect.ctx)], options);
    effectAppended(effect.slot, results[results.length - 1]!);
    return results.slice(0, parts.length);
  } catch (err) {
    const mapped = effectFailure(effect.slot, err);
    if (mapped === err && (err instanceof WrongExpectedVersionError || err instanceof DuplicateEventError) && (await takenOver(store, effect.slot.unit))) {
      // The failing part was another one (e.g. the document the new owner wrote under the same id).
      throw new IdempotencyKeyTakenOver(effect.slot.unit.streamId);
    }
    throw mapped;
  }
}

/** Whether the key's stream moved past what this request wrote there. */
async function takenOver(store: EventStore, unit: IdempotentUnit): Promise<boolean> {
  const [last] = await store.readStream(unit.streamId, { backwards: true, maxCount: 1 });
  return last !== undefined && last.revision !== unit.revision;
}

/**
 * The store as `execute()` sees it for a command acting for `slot`: its one append also records
 * the slot's effect. (execute() appends once per successful attempt.)
 */
export function storeRecordingEffect(store: EventStore, slot: Slot<unknown>, record: unknown, ctx: CommandContext): EventStore {
  const append = async (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options?: AppendOptions) =>
    (await appendWithEffect(store, [{ streamId, events, expected }], { slot, record, ctx }, options?.artifacts))[0]!;
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
