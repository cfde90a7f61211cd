/**
 * Pure translation between the event-store port and the EventStoreDB client
 * (@eventstore/db-client 6.x). No I/O here: everything is unit-tested without a server.
 *
 * Event metadata layout in EventStoreDB: our EventMetadata keys as they are, plus reserved
 * keys that start with `$` (our own keys never do):
 *   - `$schemaVersion`: NewEvent.schemaVersion;
 *   - `$correlationId` / `$causationId`: copies that EventStoreDB's system projections
 *     ($by_correlation_id) understand.
 * Reading strips every `$` key again.
 */
import {
  ANY,
  ErrorType,
  jsonEvent,
  NO_STREAM,
  START as ESDB_START,
  STREAM_EXISTS,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
  type AppendExpectedRevision,
  type EventData,
  type JSONType,
  type ReadPosition,
} from '@eventstore/db-client';
import { v5 as uuidv5 } from 'uuid';
import type { EventMetadata } from '../../domain/events/envelope.js';
import {
  comparePositions,
  START,
  WrongExpectedVersionError,
  type AppendResult,
  type Artifact,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type RecordedEvent,
  type StreamAppend,
  type StreamRevision,
} from './port.js';

/** Metadata key holding NewEvent.schemaVersion. */
export const SCHEMA_VERSION_KEY = '$schemaVersion';
/** Metadata keys EventStoreDB's own projections read. */
export const CORRELATION_ID_KEY = '$correlationId';
export const CAUSATION_ID_KEY = '$causationId';

/** A uint64 -1: what the server sends for "no position" (e.g. stream reads on servers before 22.6). */
const NO_POSITION = 0xffff_ffff_ffff_ffffn;

/** The server cannot tell the position of an event (EventStoreDB before 22.6 on stream reads). */
export class MissingPositionError extends Error {
  override readonly name = 'MissingPositionError';
  constructor(readonly streamId: string, readonly revision: bigint) {
    super(
      `EventStoreDB returned no log position for ${streamId}@${revision}: ` +
        'stream reads carry positions only on EventStoreDB 22.6 or later',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Connection strings

/**
 * The client only knows `esdb://` and `esdb+discover://`. KurrentDB-style schemes
 * (`kurrentdb://`, `kurrent://`, `kdb://`, each optionally `+discover`) are rewritten.
 */
export function toEsdbConnectionString(url: string): string {
  const trimmed = url.trim();
  const m = /^(kurrentdb|kurrent|kdb|esdb)(\+discover)?:\/\//i.exec(trimmed);
  if (!m) throw new Error(`not an EventStoreDB connection string (esdb:// or kurrentdb://): ${redact(trimmed)}`);
  return `esdb${(m[2] ?? '').toLowerCase()}://${trimmed.slice(m[0].length)}`;
}

/** The connection string without its password, for error messages and logs. */
export function redact(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/]+:)[^@/]*@/i, '$1***@');
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Our NewEvent as the client's JSON event (the same id, so EventStoreDB's idempotency applies). */
export function toEventData(event: NewEvent): EventData {
  const metadata: Record<string, unknown> = { ...event.metadata, [SCHEMA_VERSION_KEY]: event.schemaVersion };
  if (typeof event.metadata.correlationId === 'string') metadata[CORRELATION_ID_KEY] = event.metadata.correlationId;
  if (typeof event.metadata.causationId === 'string') metadata[CAUSATION_ID_KEY] = event.metadata.causationId;
  return jsonEvent({
    id: event.id,
    type: event.type,
    // Any JSON value is fine: the client JSON.stringify-s it (its type only names objects, arrays, strings).
    data: event.data as JSONType,
    metadata,
  });
}

/** Our expected revision as the client's. */
export function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (typeof expected !== 'bigint') throw new TypeError(`not an expected revision: ${String(expected)}`);
      return expected;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

/** The part of the client's recorded event this module reads (structural, so tests can build one). */
export interface EsdbRecordedEventLike {
  readonly streamId: string;
  readonly id: string;
  readonly type: string;
  readonly revision: bigint;
  readonly created: Date;
  readonly isJson: boolean;
  readonly data: unknown;
  readonly metadata?: unknown;
  readonly position?: { readonly commit: bigint; readonly prepare: bigint } | undefined;
}

/** The part of the client's ResolvedEvent / AllStreamResolvedEvent this module reads. */
export interface EsdbResolvedEventLike {
  readonly event?: EsdbRecordedEventLike | undefined;
  readonly commitPosition?: bigint | undefined;
}

/** EventStoreDB's own events: `$`-typed (`$metadata`, `$>` links, `$statsCollected`…) or in `$` streams. */
export function isSystemEvent(event: { readonly type: string; readonly streamId: string }): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

/** The event's log position, or undefined when the server did not send a real one. */
export function extractPosition(event: EsdbRecordedEventLike): Position | undefined {
  const p = event.position;
  if (!p || p.commit === NO_POSITION || p.prepare === NO_POSITION || p.commit < 0n || p.prepare < 0n) return undefined;
  return { commit: p.commit, prepare: p.prepare };
}

/** Splits stored metadata into our EventMetadata and the schema version. */
export function fromEsdbMetadata(raw: unknown): { metadata: EventMetadata; schemaVersion: number } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || raw instanceof Uint8Array) {
    // Written by something else than this adapter: hand over what there is, decodeMetadata will judge.
    return { metadata: (raw ?? {}) as EventMetadata, schemaVersion: 1 };
  }
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!key.startsWith('$')) rest[key] = value;
  }
  const version = (raw as Record<string, unknown>)[SCHEMA_VERSION_KEY];
  const schemaVersion = typeof version === 'number' && Number.isInteger(version) && version > 0 ? version : 1;
  return { metadata: rest as EventMetadata, schemaVersion };
}

/** Decodes the data of a non-JSON (binary) event when it happens to be JSON text, else keeps the bytes. */
function binaryData(data: unknown): unknown {
  if (!(data instanceof Uint8Array)) return data;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return data;
  }
}

/**
 * A resolved event from the client as our RecordedEvent; null for what the port does not
 * expose (system events, events of system streams, a resolved event without an event).
 * Throws MissingPositionError when the server sent no log position.
 */
export function fromResolvedEvent(resolved: EsdbResolvedEventLike): RecordedEvent | null {
  const e = resolved.event;
  if (!e || isSystemEvent(e)) return null;
  const position = extractPosition(e);
  if (!position) throw new MissingPositionError(e.streamId, e.revision);
  const { metadata, schemaVersion } = fromEsdbMetadata(e.metadata);
  return {
    id: e.id,
    type: e.type,
    schemaVersion,
    data: e.isJson ? e.data : binaryData(e.data),
    metadata,
    streamId: e.streamId,
    revision: e.revision,
    position,
    recordedAt: e.created,
  };
}

/** Where a read of $all starting at our position begins: the client's START for our START. */
export function toEsdbReadPosition(after: Position): ReadPosition {
  if (after.commit === START.commit && after.prepare === START.prepare) return ESDB_START;
  return { commit: after.commit, prepare: after.prepare };
}

/**
 * Whether an event at `position` comes strictly after `after`. The client reads $all from a
 * position inclusively, so the event at exactly `after` must be dropped; START is before everything.
 */
export function isStrictlyAfter(position: Position, after: Position): boolean {
  if (after.commit === START.commit && after.prepare === START.prepare) return true;
  return comparePositions(position, after) > 0;
}

// ---------------------------------------------------------------------------------------------
// Errors

/** The shape of the client's WrongExpectedVersionError that matters here. */
export interface EsdbWrongExpectedVersionLike {
  readonly type: string;
  readonly streamName?: string;
  readonly actualVersion: bigint | string;
}

export function isEsdbWrongExpectedVersion(err: unknown): err is EsdbWrongExpectedVersionLike {
  return (
    err instanceof EsdbWrongExpectedVersionError ||
    (typeof err === 'object' && err !== null && (err as { type?: unknown }).type === ErrorType.WRONG_EXPECTED_VERSION)
  );
}

export function isEsdbStreamNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { type?: unknown }).type === ErrorType.STREAM_NOT_FOUND;
}

/** The stream's actual revision as reported by the client's error ('no_stream' when it does not exist). */
export function actualRevisionOf(err: EsdbWrongExpectedVersionLike): StreamRevision | 'no_stream' {
  const actual = err.actualVersion;
  if (typeof actual === 'bigint') return actual < 0n ? 'no_stream' : actual;
  if (typeof actual === 'string' && /^\d+$/.test(actual)) return BigInt(actual);
  return 'no_stream';
}

/**
 * Maps the client's WrongExpectedVersionError to ours (keeping our own notion of what was
 * expected); any other error is returned unchanged.
 */
export function toPortError(err: unknown, streamId: string, expected: ExpectedRevision): unknown {
  if (isEsdbWrongExpectedVersion(err)) {
    return new WrongExpectedVersionError(streamId, expected, actualRevisionOf(err));
  }
  return err;
}

/**
 * The multi-stream append on EventStoreDB, which has no transaction spanning streams: the parts
 * are appended one after another, in the order given, each with its own expected revision. A
 * part whose event ids are stored already is recognised by the single-stream append as a
 * replay, so a caller that derives its event ids deterministically (from an idempotency key)
 * and retries after a crash completes an interrupted append instead of writing it twice: the
 * parts written before the crash are replays, the rest are written now. `append` is the
 * adapter's single-stream append.
 */
export async function appendPartsInOrder(
  parts: readonly StreamAppend[],
  append: (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision) => Promise<AppendResult>,
  /** Runs once the parts are checked, before the first is written (the artifacts the parts name). */
  before: () => Promise<void> = async () => {},
): Promise<AppendResult[]> {
  if (parts.length === 0) throw new RangeError('appendMulti needs at least one part');
  const seen = new Set<string>();
  for (const part of parts) {
    if (part.events.length === 0) throw new RangeError(`appendMulti: the part for ${part.streamId} has no events`);
    if (seen.has(part.streamId)) throw new RangeError(`appendMulti: stream ${part.streamId} appears twice`);
    seen.add(part.streamId);
  }
  await before();
  const results: AppendResult[] = [];
  for (const part of parts) results.push(await append(part.streamId, part.events, part.expected));
  return results;
}

/** The event type of an artifact's stream (EventStoreDB keeps artifacts as events, see esdb.ts). */
export const ARTIFACT_EVENT_TYPE = 'ArtifactStored';
const ARTIFACT_NAMESPACE = '5f0c2d7e-3b1a-5e8f-9c4d-7a2b6e1f0d39';

export const artifactStream = (sha256: string) => `artifact-${sha256}`;

/** The one event of an artifact's stream; its id derives from the hash, so writing it again is recognised. */
export function artifactEvent(artifact: Artifact): NewEvent {
  return {
    id: uuidv5(artifact.sha256, ARTIFACT_NAMESPACE),
    type: ARTIFACT_EVENT_TYPE,
    schemaVersion: 1,
    data: { sha256: artifact.sha256, contentBase64: artifact.content.toString('base64') },
    metadata: { correlationId: artifact.sha256, causationId: null, occurredAt: new Date().toISOString() },
  };
}

/** The artifact an artifact event carries, or null for any other event. */
export function artifactFromEvent(event: { type: string; data: unknown }): Artifact | null {
  if (event.type !== ARTIFACT_EVENT_TYPE) return null;
  const d = event.data as { sha256?: unknown; contentBase64?: unknown };
  if (typeof d?.sha256 !== 'string' || typeof d.contentBase64 !== 'string') return null;
  return { sha256: d.sha256, content: Buffer.from(d.contentBase64, 'base64') };
}
