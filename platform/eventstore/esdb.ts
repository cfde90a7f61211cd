/**
 * The EventStoreDB (KurrentDB) adapter of the event-store port, on the official gRPC client
 * @eventstore/db-client 6.x. Translation lives in esdb-translate.ts; this file does the I/O.
 *
 * Requirements on the server: EventStoreDB 22.6 or later (stream reads must carry log
 * positions); read access to $all for the configured user; a max append size large enough
 * for the biggest event (the server default is 1 MiB).
 *
 * Idempotency: EventStoreDB itself treats a re-append of the same event ids as a no-op, but
 * its answer looks like a fresh write (same revision, same position). The adapter reads the
 * stream's last revision before appending: a successful append that ends at or below that
 * revision wrote nothing, and is reported as `replayed`. A partial overlap makes the server
 * answer "wrong expected version"; the adapter then looks for the ids in the stream and
 * reports DuplicateEventError (or `replayed` when all of them are there).
 * Limits inherited from EventStoreDB: with 'any'/'stream_exists' its id check relies on a
 * cache of recent writes, and a batch whose first event is new is written even when a later
 * id already exists; ids written to another stream are not detected.
 */
import {
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  excludeSystemEvents,
  START as ESDB_START,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type ReadPosition,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  checkedArtifacts,
  comparePositions,
  DuplicateEventError,
  positionFromString,
  positionToString,
  START,
  WrongExpectedVersionError,
  markEndedByBytes,
  markPageBytes,
  type AppendOptions,
  type AppendResult,
  type Artifact,
  type ArtifactPage,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type StreamRevision,
} from './port.js';
import {
  ARTIFACT_EVENT_TYPE,
  artifactEvent,
  artifactFromEvent,
  artifactStream,
  actualRevisionOf,
  appendPartsInOrder,
  extractPosition,
  fromResolvedEvent,
  isEsdbStreamNotFound,
  isEsdbWrongExpectedVersion,
  isStrictlyAfter,
  isSystemEvent,
  MissingPositionError,
  redact,
  toEsdbConnectionString,
  toEsdbExpectedRevision,
  toEsdbReadPosition,
  toEventData,
  type EsdbResolvedEventLike,
} from './esdb-translate.js';

const PING_TIMEOUT_MS = 5_000;
const RESUBSCRIBE_MIN_MS = 100;
const RESUBSCRIBE_MAX_MS = 5_000;

/** Errors a resubscription cannot cure: surfaced to the subscriber instead of retried. */
const PERMANENT_ERRORS = new Set<string>([
  ErrorType.ACCESS_DENIED,
  ErrorType.INVALID_ARGUMENT,
  ErrorType.UNSUPPORTED,
  ErrorType.STREAM_DELETED,
]);

const noop = () => {};

/** Client readables emit 'error' by plain emit(); with no listener left (after an early exit) that would crash. */
function guard<T extends NodeJS.EventEmitter>(stream: T): T {
  stream.on('error', noop);
  return stream;
}

/** Iterates a client read; leaving early cancels the gRPC call instead of leaving it to run. */
async function* iterate<T>(read: StreamingRead<T>): AsyncGenerator<T> {
  guard(read);
  let finished = false;
  try {
    for await (const item of read) yield item as T;
    finished = true;
  } finally {
    if (!finished) await read.cancel().catch(noop);
  }
}

function maxPosition(a: Position | null, b: Position): Position {
  return a === null || comparePositions(b, a) > 0 ? b : a;
}

function sleep(ms: number, wake: { cancel?: () => void }): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wake.cancel = undefined;
      resolve();
    }
    wake.cancel = done;
  });
}

function isPermanent(err: unknown): boolean {
  if (err instanceof MissingPositionError) return true;
  const type = typeof err === 'object' && err !== null ? (err as { type?: unknown }).type : undefined;
  return typeof type === 'string' && PERMANENT_ERRORS.has(type);
}

interface Located {
  readonly revision: StreamRevision;
  readonly position: Position | undefined;
}

export class EventStoreDbEventStore implements EventStore {
  readonly engine = 'eventstoredb';
  /** EventStoreDB has no transaction spanning streams: appendMulti writes the parts in order (see appendPartsInOrder). */
  readonly atomicMultiStream = false;
  /** Subscriptions and waiters to end on close(). */
  private readonly closers = new Set<() => Promise<void> | void>();
  /** The newest non-system position this instance has seen: where waitForAppends starts listening. */
  private lastSeen: Position | null = null;
  private closed = false;

  private constructor(private readonly client: EventStoreDBClient) {}

  /** Connects (`esdb://`, `esdb+discover://`, `kurrentdb://`…) and checks that the server answers. */
  static async connect(url: string): Promise<EventStoreDbEventStore> {
    const client = EventStoreDBClient.connectionString(toEsdbConnectionString(url));
    const store = new EventStoreDbEventStore(client);
    try {
      await store.ping();
    } catch (err) {
      await store.close().catch(noop);
      throw new Error(`cannot reach EventStoreDB at ${redact(url)}: ${(err as Error)?.message ?? String(err)}`, {
        cause: err,
      });
    }
    return store;
  }

  // -------------------------------------------------------------------------------------------
  // Writing

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options: AppendOptions = {}): Promise<AppendResult> {
    if (events.length === 0) throw new Error(`append to ${streamId}: no events`);
    await this.storeArtifacts(checkedArtifacts(options.artifacts, { verify: true }));
    return this.appendEvents(streamId, events, expected);
  }

  /**
   * Artifacts go before the events that name them, each in its own stream `artifact-<sha256>`
   * (one event, expected no_stream, its id derived from the hash): EventStoreDB has no
   * transaction spanning streams, and a content-addressed write is idempotent, so a crash or a
   * failed append after it leaves at most an artifact no event names, and a retry rewrites
   * nothing. An event never names an artifact that is not stored.
   */
  private async storeArtifacts(artifacts: readonly Artifact[]): Promise<void> {
    await Promise.all(
      artifacts.map(async (a) => {
        try {
          await this.client.appendToStream(artifactStream(a.sha256), [toEventData(artifactEvent(a))], { expectedRevision: toEsdbExpectedRevision('no_stream') });
        } catch (err) {
          if (!isEsdbWrongExpectedVersion(err)) throw err; // stored already: the same bytes
        }
      }),
    );
  }

  async readArtifacts(sha256s: readonly string[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    await Promise.all(
      [...new Set(sha256s)].map(async (hash) => {
        const [event] = await this.readStream(artifactStream(hash), { maxCount: 1 });
        const artifact = event ? artifactFromEvent(event) : null;
        if (artifact) found.set(hash, artifact.content);
      }),
    );
    return found;
  }

  /** Artifacts are events of the log: a scan walks $all (the cursor is a log position). */
  async scanArtifacts(cursor: string | null, limit: number): Promise<ArtifactPage> {
    const events = await this.readAll(cursor ? positionFromString(cursor) : START, limit);
    const artifacts: Artifact[] = [];
    for (const e of events) {
      if (e.type !== ARTIFACT_EVENT_TYPE) continue;
      const artifact = artifactFromEvent(e);
      if (artifact) artifacts.push(artifact);
    }
    return { artifacts, cursor: events.length < limit ? null : positionToString(events[events.length - 1]!.position) };
  }

  private async appendEvents(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const tailBefore = await this.lastRevision(streamId);

    let result;
    try {
      result = await this.client.appendToStream(streamId, events.map(toEventData), {
        expectedRevision: toEsdbExpectedRevision(expected),
      });
    } catch (err) {
      if (isEsdbWrongExpectedVersion(err)) {
        return this.afterConflict(streamId, events, expected, actualRevisionOf(err));
      }
      throw err;
    }
    if (!result.success) {
      // Only with throwOnAppendFailure=false in the connection string; the reported revision is unreliable then.
      const actual = await this.lastRevision(streamId);
      return this.afterConflict(streamId, events, expected, actual ?? 'no_stream');
    }

    const next = result.nextExpectedRevision;
    if (tailBefore !== null && next <= tailBefore) {
      // The stream already reached this revision before the call: EventStoreDB recognised the ids.
      const replay = await this.replayOf(streamId, events, next - BigInt(events.length) + 1n);
      if (replay) return replay;
      // The ids are not where the server said (cannot happen short of a concurrent scavenge): look everywhere.
      const anywhere = await this.replayOf(streamId, events, 0n);
      if (anywhere) return anywhere;
      throw new DuplicateEventError(streamId, events.map((e) => e.id));
    }
    const position = result.position ?? (await this.positionAt(streamId, next));
    this.noteSeen(position);
    return { nextExpectedRevision: next, position, replayed: false };
  }

  async appendMulti(parts: readonly StreamAppend[], options: AppendOptions = {}): Promise<AppendResult[]> {
    const artifacts = checkedArtifacts(options.artifacts, { verify: true });
    return appendPartsInOrder(parts, (streamId, events, expected) => this.appendEvents(streamId, events, expected), () => this.storeArtifacts(artifacts));
  }

  /**
   * The server refused the expected revision. It does so too for a partial overlap of ids
   * ("corrupted idempotency"), so look for the ids after what the writer knew of the stream.
   */
  private async afterConflict(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
    actual: StreamRevision | 'no_stream',
  ): Promise<AppendResult> {
    const conflict = new WrongExpectedVersionError(streamId, expected, actual);
    if (actual === 'no_stream') throw conflict;
    let from: StreamRevision;
    if (typeof expected === 'bigint') {
      if (actual <= expected) throw conflict;
      from = expected + 1n;
    } else {
      from = 0n;
    }
    const replay = await this.replayOf(streamId, events, from);
    if (replay) return replay;
    throw conflict;
  }

  /**
   * Looks for the batch's ids in the stream from `from` on: all there gives the replay result,
   * some there throws DuplicateEventError, none gives null.
   */
  private async replayOf(streamId: string, events: readonly NewEvent[], from: StreamRevision): Promise<AppendResult | null> {
    const found = await this.locate(streamId, events.map((e) => e.id), from < 0n ? 0n : from);
    if (found.size === 0) return null;
    if (found.size < events.length) {
      throw new DuplicateEventError(
        streamId,
        events.filter((e) => found.has(e.id)).map((e) => e.id),
      );
    }
    let last: Located | undefined;
    for (const hit of found.values()) if (!last || hit.revision > last.revision) last = hit;
    if (!last!.position) throw new MissingPositionError(streamId, last!.revision);
    this.noteSeen(last!.position);
    return { nextExpectedRevision: last!.revision, position: last!.position, replayed: true };
  }

  /** Where the given ids are in the stream, reading forwards from `from` (stops once all are found). */
  private async locate(streamId: string, ids: readonly string[], from: StreamRevision): Promise<Map<string, Located>> {
    const wanted = new Set(ids);
    const found = new Map<string, Located>();
    try {
      for await (const resolved of iterate(this.client.readStream(streamId, { fromRevision: from }))) {
        const e = resolved.event;
        if (!e || !wanted.has(e.id) || found.has(e.id)) continue;
        found.set(e.id, { revision: e.revision, position: extractPosition(e) });
        if (found.size === wanted.size) break;
      }
    } catch (err) {
      if (!isEsdbStreamNotFound(err)) throw err;
    }
    return found;
  }

  /** The stream's last revision, or null when it does not exist. */
  private async lastRevision(streamId: string): Promise<StreamRevision | null> {
    try {
      for await (const resolved of iterate(
        this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 }),
      )) {
        if (resolved.event) return resolved.event.revision;
      }
      return null;
    } catch (err) {
      if (isEsdbStreamNotFound(err)) return null;
      throw err;
    }
  }

  /** The log position of the event at `revision` (when the append answer carried none). */
  private async positionAt(streamId: string, revision: StreamRevision): Promise<Position> {
    for await (const resolved of iterate(this.client.readStream(streamId, { fromRevision: revision, maxCount: 1 }))) {
      const position = resolved.event ? extractPosition(resolved.event) : undefined;
      if (position) return position;
    }
    throw new MissingPositionError(streamId, revision);
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const read = this.client.readStream(streamId, {
      ...(options.backwards
        ? { direction: BACKWARDS, fromRevision: options.fromRevision ?? END }
        : { fromRevision: options.fromRevision ?? ESDB_START }),
      ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
    });
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of iterate(read)) {
        const event = fromResolvedEvent(resolved);
        if (event) out.push(event);
      }
    } catch (err) {
      if (isEsdbStreamNotFound(err)) return [];
      throw err;
    }
    return out;
  }

  /** EventStoreDB reads one stream per call: the reads go out together. */
  readStreams(streamIds: readonly string[], options: { maxCount?: number } = {}): Promise<RecordedEvent[][]> {
    return Promise.all(streamIds.map((id) => this.readStream(id, options.maxCount === undefined ? {} : { maxCount: options.maxCount })));
  }

  async readAll(after: Position, limit: number, options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const page = await this.readAllEvents(after, limit);
    return options.maxBytes === undefined ? page : trimToBytes(page, options.maxBytes);
  }

  private async readAllEvents(after: Position, limit: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    if (limit <= 0) return out;
    let from = after;
    for (;;) {
      // +1: the read starts at `from` inclusively, and the event there has been handed out already.
      const pageSize = limit - out.length + 1;
      let count = 0;
      let lastPosition: Position | undefined;
      for await (const resolved of iterate(
        this.client.readAll({ fromPosition: toEsdbReadPosition(from), maxCount: pageSize }),
      )) {
        count++;
        const position = resolved.event ? extractPosition(resolved.event) : undefined;
        if (!position || !isStrictlyAfter(position, from)) continue;
        lastPosition = position;
        const event = fromResolvedEvent(resolved);
        if (event && out.length < limit) out.push(event);
      }
      // Fewer than asked: the end of the log. Otherwise system events took room: read on.
      if (count < pageSize || out.length >= limit || !lastPosition) break;
      from = lastPosition;
    }
    if (out.length > 0) this.noteSeen(out[out.length - 1]!.position);
    return out;
  }

  subscribe(after: Position, options: { batchSize?: number } = {}): EventSubscription {
    let closed = false;
    let current: AllStreamSubscription | null = null;
    const backoff: { cancel?: () => void } = {};
    const readableOptions = options.batchSize && options.batchSize > 0 ? { highWaterMark: options.batchSize } : {};

    const stop = async () => {
      this.closers.delete(stop);
      if (closed) return;
      closed = true;
      backoff.cancel?.();
      const sub = current;
      if (sub) {
        await sub.unsubscribe().catch(noop);
        sub.destroy();
      }
    };
    this.closers.add(stop);

    const run = async function* (this: EventStoreDbEventStore): AsyncGenerator<RecordedEvent> {
      let last = after;
      let failures = 0;
      try {
        while (!closed && !this.closed) {
          const sub = guard(
            this.client.subscribeToAll(
              { fromPosition: toEsdbReadPosition(last), filter: excludeSystemEvents() },
              readableOptions,
            ),
          );
          current = sub;
          try {
            for await (const resolved of sub as AsyncIterable<AllStreamResolvedEvent>) {
              if (closed) break;
              const position = resolved.event ? extractPosition(resolved.event) : undefined;
              // The subscription may start at `last` itself; after a resubscription, skip what was delivered.
              if (!position || !isStrictlyAfter(position, last)) continue;
              const event = fromResolvedEvent(resolved);
              last = position;
              failures = 0;
              if (event) {
                this.noteSeen(position);
                yield event;
              }
            }
          } catch (err) {
            if (closed) break;
            if (isPermanent(err)) throw err;
            failures++;
          } finally {
            current = null;
            await sub.unsubscribe().catch(noop);
            sub.destroy();
          }
          if (closed) break;
          // Dropped (error or server-side end): resubscribe from the last delivered position.
          await sleep(Math.min(RESUBSCRIBE_MIN_MS * 2 ** failures, RESUBSCRIBE_MAX_MS), backoff);
        }
      } finally {
        closed = true;
        this.closers.delete(stop);
      }
    }.call(this);

    return {
      [Symbol.asyncIterator]: () => run,
      close: stop,
    };
  }

  async waitForAppends(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || this.closed) return;
    const from = this.lastSeen;
    const sub = guard(
      this.client.subscribeToAll({
        fromPosition: from ? toEsdbReadPosition(from) : END,
        filter: excludeSystemEvents(),
      }),
    );
    let finish!: () => void;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const onEvent = (resolved: EsdbResolvedEventLike) => {
      const e = resolved.event;
      if (!e || isSystemEvent(e)) return;
      const position = extractPosition(e);
      if (from && position && !isStrictlyAfter(position, from)) return;
      if (position) this.noteSeen(position);
      finish();
    };
    const timer = setTimeout(finish, Math.max(0, timeoutMs));
    signal?.addEventListener('abort', finish, { once: true });
    this.closers.add(finish);
    sub.on('data', onEvent);
    try {
      await done;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      this.closers.delete(finish);
      sub.off('data', onEvent);
      await sub.unsubscribe().catch(noop);
      sub.destroy();
    }
  }

  async headPosition(): Promise<Position> {
    let from: ReadPosition = END;
    let boundary: Position | null = null;
    let pageSize = 16;
    for (;;) {
      let count = 0;
      let oldest: Position | null = null;
      const read: StreamingRead<AllStreamResolvedEvent> = this.client.readAll({
        direction: BACKWARDS,
        fromPosition: from,
        maxCount: pageSize,
      });
      for await (const resolved of iterate(read)) {
        count++;
        const e = resolved.event;
        const position: Position | undefined = e ? extractPosition(e) : undefined;
        if (!e || !position) continue;
        if (boundary && comparePositions(position, boundary) >= 0) continue;
        oldest = position;
        if (!isSystemEvent(e)) {
          this.noteSeen(position);
          return position;
        }
      }
      if (count < pageSize || !oldest) return START;
      boundary = oldest;
      from = oldest;
      pageSize = Math.min(pageSize * 4, 1024);
    }
  }

  /** EventStoreDB's readers see every committed event at once: the committed head is the head. */
  committedHead(): Promise<Position> {
    return this.headPosition();
  }

  async countEvents(): Promise<number | null> {
    return null;
  }

  async ping(): Promise<void> {
    const read = guard(this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void read.cancel().catch(noop);
        reject(new Error(`EventStoreDB did not answer within ${PING_TIMEOUT_MS} ms`));
      }, PING_TIMEOUT_MS);
    });
    const drain = (async () => {
      for await (const _ of iterate(read)) void _;
    })();
    try {
      await Promise.race([drain, timeout]);
    } finally {
      clearTimeout(timer);
      drain.catch(noop);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.closers].map(async (close) => close()));
    await this.client.dispose().catch(noop);
    // dispose() cancels the calls but leaves the gRPC channel (and its sockets) open.
    try {
      const getChannel = (this.client as unknown as { getChannel?: () => Promise<{ close(): void }> }).getChannel;
      const channel = await getChannel?.call(this.client);
      channel?.close();
    } catch {
      // best effort
    }
  }

  private noteSeen(position: Position): void {
    this.lastSeen = maxPosition(this.lastSeen, position);
  }
}

/**
 * readAll's byte budget on this engine: the client reads the page by count and drops what is
 * past the budget (the next read starts there again), so callers see the same pages as on PostgreSQL.
 */
function trimToBytes(page: RecordedEvent[], maxBytes: number): RecordedEvent[] {
  if (!(maxBytes > 0)) throw new RangeError(`maxBytes must be positive, got ${maxBytes}`);
  let bytes = 0;
  for (let i = 0; i < page.length; i++) {
    const size = Buffer.byteLength(JSON.stringify(page[i]!.data)) + Buffer.byteLength(JSON.stringify(page[i]!.metadata));
    if (i > 0 && bytes + size > maxBytes) return markPageBytes(markEndedByBytes(page.slice(0, i)), bytes);
    bytes += size;
  }
  return markPageBytes(page, bytes);
}
