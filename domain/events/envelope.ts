/**
 * The event envelope: the metadata every event carries, and the registry that decodes
 * event data with io-ts, upcasting older schema versions on read (events are never rewritten).
 */
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { PathReporter } from 'io-ts/lib/PathReporter.js';

export const EventMetadataCodec = t.intersection([
  t.type({
    correlationId: t.string,
    causationId: t.union([t.string, t.null]),
    occurredAt: t.string,
  }),
  t.partial({
    workspaceId: t.union([t.string, t.null]),
    environment: t.union([t.string, t.null]),
    requestId: t.union([t.string, t.null]),
    keyId: t.union([t.string, t.null]),
    idempotencyKey: t.union([t.string, t.null]),
    /** Who acted outside HTTP: "admin-cli", "lifecycle-worker", … */
    actor: t.union([t.string, t.null]),
  }),
]);
export type EventMetadata = t.TypeOf<typeof EventMetadataCodec>;

/** A function that turns the data of schema version n into the data of version n + 1. */
export type Upcaster = (data: unknown) => unknown;

export interface EventDefinition<A> {
  readonly type: string;
  /** The current schema version written by this code. */
  readonly version: number;
  readonly codec: t.Type<A, unknown, unknown>;
  /** upcasters[n] maps version n to n + 1, for every n below `version`. */
  readonly upcasters?: Readonly<Record<number, Upcaster>>;
}

export class EventDecodingError extends Error {
  override readonly name = 'EventDecodingError';
  constructor(readonly eventType: string, readonly schemaVersion: number, readonly problems: string[]) {
    super(`cannot decode ${eventType} v${schemaVersion}: ${problems.join('; ')}`);
  }
}

export function defineEvent<A>(def: EventDefinition<A>): EventDefinition<A> {
  for (let v = 1; v < def.version; v++) {
    if (!def.upcasters?.[v]) throw new Error(`${def.type}: missing upcaster from v${v} to v${v + 1}`);
  }
  return def;
}

/** Upcasts `data` written at `schemaVersion` to the definition's version and decodes it. */
export function decodeEventData<A>(def: EventDefinition<A>, schemaVersion: number, data: unknown): A {
  if (schemaVersion > def.version) {
    throw new EventDecodingError(def.type, schemaVersion, [`written by a newer schema (this code knows v${def.version})`]);
  }
  let current = data;
  for (let v = schemaVersion; v < def.version; v++) current = def.upcasters![v]!(current);
  const result = def.codec.decode(current);
  if (isLeft(result)) throw new EventDecodingError(def.type, schemaVersion, PathReporter.report(result));
  return result.right;
}

const REQUIRED_METADATA = ['correlationId', 'occurredAt'] as const;
const NULLABLE_METADATA = ['causationId'] as const;
const OPTIONAL_METADATA = ['workspaceId', 'environment', 'requestId', 'keyId', 'idempotencyKey', 'actor'] as const;

/**
 * Exactly what EventMetadataCodec accepts, checked without io-ts's allocations: every event read
 * back is decoded, so this runs once per event of every read of the log.
 */
export function isEventMetadata(raw: unknown): raw is EventMetadata {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const m = raw as Record<string, unknown>;
  for (const key of REQUIRED_METADATA) if (typeof m[key] !== 'string') return false;
  for (const key of NULLABLE_METADATA) if (m[key] !== null && typeof m[key] !== 'string') return false;
  for (const key of OPTIONAL_METADATA) {
    const v = m[key];
    if (v !== undefined && v !== null && typeof v !== 'string') return false;
  }
  return true;
}

export function decodeMetadata(raw: unknown): EventMetadata {
  if (isEventMetadata(raw)) return raw;
  const result = EventMetadataCodec.decode(raw);
  if (isLeft(result)) throw new EventDecodingError('metadata', 0, PathReporter.report(result));
  return result.right;
}
