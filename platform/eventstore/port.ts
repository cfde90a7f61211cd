/**
 * The event-store port: the one interface every event-store adapter implements
 * (PostgreSQL by default, EventStoreDB when configured). Both adapters pass the
 * same contract suite in test/eventstore/contract.ts.
 *
 * Conventions shared by every adapter (they follow EventStoreDB's):
 * - stream revisions start at 0; a stream that does not exist has no revision;
 * - a global position is the pair {commit, prepare}; positions are totally ordered
 *   by (commit, prepare) and a reader never sees a later position before an earlier one;
 * - revisions and positions are bigint.
 */
import { createHash } from 'node:crypto';
import type { EventMetadata } from '../../domain/events/envelope.js';

export type StreamRevision = bigint;

/** What the writer believes about the stream before appending. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | StreamRevision;

export interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

/** Before the first event of the log. Reading from START returns the first event. */
export const START: Position = Object.freeze({ commit: 0n, prepare: 0n });

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export function positionToString(p: Position): string {
  return `${p.commit}/${p.prepare}`;
}

export function positionFromString(s: string): Position {
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m) throw new Error(`not a position: ${s}`);
  return { commit: BigInt(m[1]!), prepare: BigInt(m[2]!) };
}

/** An event as a writer hands it to the store. `data` must be JSON-serialisable. */
export interface NewEvent {
  /** Unique event id (UUID). Re-appending the same ids to the same stream is a no-op. */
  readonly id: string;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
  readonly metadata: EventMetadata;
}

export interface RecordedEvent extends NewEvent {
  readonly streamId: string;
  readonly revision: StreamRevision;
  readonly position: Position;
  /** When the store committed it (store clock), as opposed to metadata.occurredAt (domain clock). */
  readonly recordedAt: Date;
}

export interface AppendResult {
  /** The stream's revision after the append: pass it as the next expected revision. */
  readonly nextExpectedRevision: StreamRevision;
  /** Global position of the last appended event. */
  readonly position: Position;
  /** True when every event id was already in the stream and nothing new was written. */
  readonly replayed: boolean;
}

/**
 * An immutable artifact (the e-invoice XML, the UAE Tax Data Document) stored once, keyed by the
 * SHA-256 of its bytes (64 lowercase hex digits). Events name the hash; the bytes live in the
 * store's artifact table (PostgreSQL) or artifact streams (EventStoreDB), never in event data.
 */
export interface Artifact {
  readonly sha256: string;
  readonly content: Buffer;
}

export interface ArtifactPage {
  readonly artifacts: readonly Artifact[];
  /** Where the next page starts; null after the last page. */
  readonly cursor: string | null;
}

/** What an append writes besides its events. */
export interface AppendOptions {
  /**
   * Artifacts the events name. Stored idempotently (content-addressed: the same bytes are stored
   * once, whoever appends them again). Where `atomicMultiStream` holds, they are written in the
   * append's transaction: an append that fails leaves none of them behind. Elsewhere they are
   * written before the events (see docs/architecture.md), so a failed append may leave an artifact that no
   * event names, which is harmless. An artifact whose content does not hash to its `sha256` is
   * refused (RangeError) and nothing is written.
   */
  readonly artifacts?: readonly Artifact[];
  /**
   * Whether a store that keeps the bytes of the artifacts it appended lately, for a read soon
   * after, keeps these (default true). False for artifacts the service does not read back soon
   * (the delivery's Tax Data Document), which would only push out those it does (the submitted
   * XML its delivery reads moments later).
   */
  readonly keep?: boolean;
}

/** One stream's part of a multi-stream append. */
export interface StreamAppend {
  readonly streamId: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
}

export interface ReadStreamOptions {
  /** Forwards: the first revision to read. Backwards: the last one (default: the stream's end). */
  readonly fromRevision?: StreamRevision;
  readonly maxCount?: number;
  /** Newest first (e.g. maxCount 1 reads a stream's last event). */
  readonly backwards?: boolean;
}

export interface ReadAllOptions {
  /** Upper bound of a page's data and metadata as JSON text, in bytes (one larger event is still returned alone). */
  readonly maxBytes?: number;
}

const endedByBytesPages = new WeakSet<readonly RecordedEvent[]>();

/** Marks a page readAll ended early because of `maxBytes` (adapters; and readers that pass pages on). */
export function markEndedByBytes<T extends readonly RecordedEvent[]>(page: T): T {
  endedByBytesPages.add(page);
  return page;
}

/** True when readAll ended this page because of `maxBytes`: more events may follow at once. */
export function endedByBytes(page: readonly RecordedEvent[]): boolean {
  return endedByBytesPages.has(page);
}

const pageByteSizes = new WeakMap<readonly RecordedEvent[], number>();

/**
 * Records the size of a page readAll returned under `maxBytes`: its events' data and metadata as
 * JSON text, as the byte bound counts them (adapters).
 */
export function markPageBytes<T extends readonly RecordedEvent[]>(page: T, bytes: number): T {
  pageByteSizes.set(page, bytes);
  return page;
}

/** The size of a page readAll returned under `maxBytes`, when its adapter recorded it (see markPageBytes). */
export function pageBytes(page: readonly RecordedEvent[]): number | undefined {
  return pageByteSizes.get(page);
}

/** Whether a page of readAll(…, limit, …) may have more events right after it (not the log's end). */
export function pageMayContinue(page: readonly RecordedEvent[], limit: number): boolean {
  return page.length >= limit || endedByBytes(page);
}

export interface EventSubscription extends AsyncIterable<RecordedEvent> {
  /** Ends the iteration; pending reads finish, the iterator returns. */
  close(): Promise<void>;
}

export interface EventStore {
  /** A short name for logs and readiness reports ("postgres", "eventstoredb"). */
  readonly engine: string;
  /** Appends atomically, checking the expected revision. Throws WrongExpectedVersionError or DuplicateEventError. */
  append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options?: AppendOptions): Promise<AppendResult>;
  /**
   * Appends to several streams at once, each with its own expected revision (at most one part
   * per stream). Every part is written or none is: a wrong expected revision of any part throws
   * WrongExpectedVersionError naming that stream, and nothing is written. A re-append of parts
   * whose event ids are all stored already (as one whole) is a replay: every result then has
   * `replayed: true`. `atomicMultiStream` says whether the engine writes the parts in one
   * transaction; where it cannot, the parts are written one after another in the order given
   * and a retry with the same event ids completes an interrupted one (see docs/architecture.md).
   * Results are in the order of `parts`.
   */
  appendMulti(parts: readonly StreamAppend[], options?: AppendOptions): Promise<AppendResult[]>;
  /** The stored artifacts among `sha256s` (hash -> bytes); a hash not stored is absent from the map. */
  readArtifacts(sha256s: readonly string[]): Promise<Map<string, Buffer>>;
  /**
   * Every stored artifact, a page at a time (audits): pass null first, then the returned cursor
   * until it is null. A page may hold fewer than `limit` artifacts (even none) before the end.
   */
  scanArtifacts(cursor: string | null, limit: number): Promise<ArtifactPage>;
  /** True when appendMulti commits all of its parts in one transaction. */
  readonly atomicMultiStream: boolean;
  /** A stream's events in revision order; empty when the stream does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Several streams at once, forwards from their start, at most `maxCount` events each: one
   * answer per id, in the order of `streamIds` (as `readStream` would give each). Where the engine
   * can, one round trip (a decision that reads several small streams pays one, not one per stream).
   */
  readStreams(streamIds: readonly string[], options?: { maxCount?: number }): Promise<RecordedEvent[][]>;
  /**
   * Up to `limit` events of the global log strictly after `after`, in position order, never
   * skipping one. With `maxBytes` the page also stops before the event that would bring its
   * size (data and metadata as JSON text) above `maxBytes`, but holds at least one event; such
   * a page is marked (see `endedByBytes`): a short page is the log's end only when unmarked.
   */
  readAll(after: Position, limit: number, options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Catch-up from `after`, then live delivery, in position order. */
  subscribe(after: Position, options?: { batchSize?: number }): EventSubscription;
  /** Resolves when events may have been appended since the call, or after `timeoutMs`. */
  waitForAppends(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /**
   * Position of the newest event this store instance appended (null before its first append),
   * known without a round trip. A reader whose read of the log ended before it knows that
   * committed events are held back from it (behind a transaction still open) and will become
   * readable without a further append. Absent where the engine shows every committed event.
   */
  appendedHead?(): Position | null;
  /**
   * Position of the newest event a reader can see now (START when the log is empty): a safe
   * place to start reading "from now on", since no event committed later sorts before it.
   */
  headPosition(): Promise<Position>;
  /**
   * Position of the newest committed event, which readers may not see yet while a transaction
   * begun before it is still open (START when the log is empty). Wait for this one to have
   * everything committed so far applied: the head a reader sees can stop short of an append
   * that has already returned.
   */
  committedHead(): Promise<Position>;
  /** Number of events in the log, or null where the engine cannot count cheaply. */
  countEvents(): Promise<number | null>;
  /** Throws when the engine cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The stream was not at the expected revision. Map it to HTTP 409/412 at the edge. */
export class WrongExpectedVersionError extends Error {
  override readonly name = 'WrongExpectedVersionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** The stream's actual revision, or 'no_stream'. */
    readonly actual: StreamRevision | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
  }
}

/** Some (not all) of the event ids were already written, or written to another stream. */
export class DuplicateEventError extends Error {
  override readonly name = 'DuplicateEventError';
  constructor(readonly streamId: string, readonly eventIds: readonly string[]) {
    super(`stream ${streamId}: event ids already written elsewhere: ${eventIds.join(', ')}`);
  }
}

export function isWrongExpectedVersion(e: unknown): e is WrongExpectedVersionError {
  return e instanceof WrongExpectedVersionError;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Artifacts whose key artifactOf computed from their bytes in this process: checkedArtifacts does
 * not hash them a second time (one SHA-256 of a 30 KB document fewer for each artifact appended).
 * An artifact built any other way (decoded from an old event, given by a caller) is checked.
 */
const hashedHere = new WeakSet<Artifact>();

/** The SHA-256 of `content` as an artifact key. */
export function artifactOf(content: Buffer): Artifact {
  const artifact = Object.freeze({ sha256: createHash('sha256').update(content).digest('hex'), content });
  hashedHere.add(artifact);
  return artifact;
}

export class ArtifactHashMismatch extends RangeError {
  override readonly name = 'ArtifactHashMismatch';
  constructor(readonly sha256: string) {
    super(`artifact ${sha256}: its content does not hash to its key`);
  }
}

/**
 * Checks every artifact's key (format; and, with `verify`, against its bytes, for an engine that
 * cannot check it where it stores them); returns them without duplicates, sorted by hash (one
 * lock order for every writer).
 */
export function checkedArtifacts<A extends Artifact>(artifacts: readonly A[] | undefined, options: { verify: boolean }): A[] {
  if (!artifacts || artifacts.length === 0) return [];
  const byHash = new Map<string, A>();
  for (const a of artifacts) {
    if (!SHA256_HEX.test(a.sha256)) throw new RangeError(`artifact key is not a SHA-256 in lowercase hex: ${a.sha256}`);
    if (options.verify && !hashedHere.has(a) && createHash('sha256').update(a.content).digest('hex') !== a.sha256) throw new ArtifactHashMismatch(a.sha256);
    byHash.set(a.sha256, a);
  }
  return [...byHash.values()].sort((a, b) => (a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0));
}
