/**
 * Unit tests of the EventStoreDB translation layer: no server needed.
 */
import { expect } from 'chai';
import {
  ANY,
  ErrorType,
  EventStoreDBClient,
  NO_STREAM,
  START as ESDB_START,
  STREAM_EXISTS,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
} from '@eventstore/db-client';
import {
  actualRevisionOf,
  ARTIFACT_EVENT_TYPE,
  artifactEvent,
  artifactFromEvent,
  artifactStream,
  appendPartsInOrder,
  CAUSATION_ID_KEY,
  CORRELATION_ID_KEY,
  extractPosition,
  fromEsdbMetadata,
  fromResolvedEvent,
  isEsdbStreamNotFound,
  isEsdbWrongExpectedVersion,
  isStrictlyAfter,
  isSystemEvent,
  MissingPositionError,
  redact,
  SCHEMA_VERSION_KEY,
  toEsdbConnectionString,
  toEsdbExpectedRevision,
  toEsdbReadPosition,
  toEventData,
  toPortError,
  type EsdbRecordedEventLike,
} from '../../platform/eventstore/esdb-translate.js';
import { artifactOf, ArtifactHashMismatch, checkedArtifacts, START, WrongExpectedVersionError, type NewEvent } from '../../platform/eventstore/port.js';

const ID = '3f0c1c52-8a4e-4d52-9a55-0b7d7b5b2f10';

function newEvent(extra: Partial<NewEvent> = {}): NewEvent {
  return {
    id: ID,
    type: 'Invoice.Submitted',
    schemaVersion: 3,
    data: { invoiceId: 'inv-1', lines: [{ n: 1, amount: '12.50' }], note: 'héllo ✓' },
    metadata: {
      correlationId: 'corr-1',
      causationId: 'cause-1',
      occurredAt: '2024-05-01T10:00:00.000Z',
      workspaceId: 'ws-1',
      environment: 'sandbox',
      requestId: 'req-1',
      keyId: null,
      idempotencyKey: 'idem-1',
      actor: 'admin-cli',
    },
    ...extra,
  };
}

/** What the client hands back for an event written with `toEventData`, after the JSON round trip. */
function recordedFrom(event: NewEvent, extra: Partial<EsdbRecordedEventLike> = {}): EsdbRecordedEventLike {
  const written = toEventData(event);
  return {
    streamId: 'invoice-1',
    id: written.id,
    type: written.type,
    revision: 4n,
    created: new Date('2024-05-01T10:00:01.234Z'),
    isJson: true,
    data: JSON.parse(JSON.stringify(written.data)),
    metadata: JSON.parse(JSON.stringify(written.metadata)),
    position: { commit: 1234n, prepare: 1200n },
    ...extra,
  };
}

describe('EventStoreDB translation', () => {
  describe('toEventData', () => {
    it('writes a JSON event with our id, type and data', () => {
      const event = newEvent();
      const written = toEventData(event);
      expect(written.id).to.equal(ID);
      expect(written.type).to.equal('Invoice.Submitted');
      expect(written.contentType).to.equal('application/json');
      expect(written.data).to.deep.equal(event.data);
    });

    it('puts the schema version beside our metadata under reserved keys', () => {
      const event = newEvent();
      const written = toEventData(event);
      expect(written.metadata).to.deep.equal({
        ...event.metadata,
        [SCHEMA_VERSION_KEY]: 3,
        [CORRELATION_ID_KEY]: 'corr-1',
        [CAUSATION_ID_KEY]: 'cause-1',
      });
    });

    it('omits $causationId when there is no cause', () => {
      const event = newEvent({ metadata: { correlationId: 'c', causationId: null, occurredAt: '2024-01-01T00:00:00Z' } });
      expect(toEventData(event).metadata).to.deep.equal({
        correlationId: 'c',
        causationId: null,
        occurredAt: '2024-01-01T00:00:00Z',
        $schemaVersion: 3,
        $correlationId: 'c',
      });
    });

    it('accepts any JSON value as data', () => {
      expect(toEventData(newEvent({ data: [1, 'two', null] })).data).to.deep.equal([1, 'two', null]);
      expect(toEventData(newEvent({ data: 'text' })).data).to.equal('text');
    });
  });

  describe('fromResolvedEvent', () => {
    it('round-trips data, metadata and schema version', () => {
      const event = newEvent();
      const read = fromResolvedEvent({ event: recordedFrom(event) });
      expect(read).to.deep.equal({
        id: ID,
        type: 'Invoice.Submitted',
        schemaVersion: 3,
        data: event.data,
        metadata: event.metadata,
        streamId: 'invoice-1',
        revision: 4n,
        position: { commit: 1234n, prepare: 1200n },
        recordedAt: new Date('2024-05-01T10:00:01.234Z'),
      });
    });

    it('keeps schema version 1 and minimal metadata intact', () => {
      const event = newEvent({
        schemaVersion: 1,
        metadata: { correlationId: 'c', causationId: null, occurredAt: '2024-01-01T00:00:00Z' },
      });
      const read = fromResolvedEvent({ event: recordedFrom(event) })!;
      expect(read.schemaVersion).to.equal(1);
      expect(read.metadata).to.deep.equal({ correlationId: 'c', causationId: null, occurredAt: '2024-01-01T00:00:00Z' });
    });

    it('takes revision, position and recordedAt from the stored event', () => {
      const read = fromResolvedEvent({
        event: recordedFrom(newEvent(), {
          revision: 0n,
          position: { commit: 98765432109876n, prepare: 98765432109000n },
          created: new Date(0),
        }),
      })!;
      expect(read.revision).to.equal(0n);
      expect(read.position).to.deep.equal({ commit: 98765432109876n, prepare: 98765432109000n });
      expect(read.recordedAt.getTime()).to.equal(0);
    });

    it('skips system events and events of system streams', () => {
      expect(fromResolvedEvent({ event: recordedFrom(newEvent({ type: '$metadata' })) })).to.equal(null);
      expect(fromResolvedEvent({ event: recordedFrom(newEvent({ type: '$>' })) })).to.equal(null);
      expect(fromResolvedEvent({ event: recordedFrom(newEvent(), { streamId: '$stats-127.0.0.1:2113' }) })).to.equal(null);
      expect(fromResolvedEvent({ event: recordedFrom(newEvent(), { streamId: '$$invoice-1' }) })).to.equal(null);
      expect(fromResolvedEvent({})).to.equal(null);
      expect(fromResolvedEvent({ event: recordedFrom(newEvent({ type: 'Invoice.Paid' })) })!.type).to.equal('Invoice.Paid');
    });

    it('throws MissingPositionError when the server sent no position', () => {
      expect(() => fromResolvedEvent({ event: recordedFrom(newEvent(), { position: undefined }) })).to.throw(
        MissingPositionError,
        /invoice-1@4/,
      );
      const noPosition = { commit: 0xffff_ffff_ffff_ffffn, prepare: 0xffff_ffff_ffff_ffffn };
      expect(() => fromResolvedEvent({ event: recordedFrom(newEvent(), { position: noPosition }) })).to.throw(
        MissingPositionError,
      );
    });

    it('decodes JSON text stored as a binary event, and keeps other bytes', () => {
      const json = fromResolvedEvent({
        event: recordedFrom(newEvent(), { isJson: false, data: Buffer.from('{"a":[1,2]}', 'utf8') }),
      })!;
      expect(json.data).to.deep.equal({ a: [1, 2] });
      const bytes = new Uint8Array([0xff, 0x00, 0x10]);
      const raw = fromResolvedEvent({ event: recordedFrom(newEvent(), { isJson: false, data: bytes }) })!;
      expect(raw.data).to.equal(bytes);
    });
  });

  describe('fromEsdbMetadata', () => {
    it('strips every reserved $ key and reads the schema version', () => {
      expect(
        fromEsdbMetadata({ correlationId: 'c', causationId: null, occurredAt: 't', $schemaVersion: 7, $correlationId: 'c', $foo: 1 }),
      ).to.deep.equal({ metadata: { correlationId: 'c', causationId: null, occurredAt: 't' }, schemaVersion: 7 });
    });

    it('defaults to schema version 1 when it is missing or not a positive integer', () => {
      expect(fromEsdbMetadata({ correlationId: 'c' }).schemaVersion).to.equal(1);
      expect(fromEsdbMetadata({ $schemaVersion: '2' }).schemaVersion).to.equal(1);
      expect(fromEsdbMetadata({ $schemaVersion: 0 }).schemaVersion).to.equal(1);
      expect(fromEsdbMetadata({ $schemaVersion: 1.5 }).schemaVersion).to.equal(1);
    });

    it('hands over foreign metadata as it is', () => {
      expect(fromEsdbMetadata(undefined)).to.deep.equal({ metadata: {}, schemaVersion: 1 });
      const bytes = new Uint8Array([1, 2]);
      expect(fromEsdbMetadata(bytes).metadata).to.equal(bytes);
    });
  });

  describe('toEsdbExpectedRevision', () => {
    it('maps all four kinds', () => {
      expect(toEsdbExpectedRevision('any')).to.equal(ANY);
      expect(toEsdbExpectedRevision('no_stream')).to.equal(NO_STREAM);
      expect(toEsdbExpectedRevision('stream_exists')).to.equal(STREAM_EXISTS);
      expect(toEsdbExpectedRevision(0n)).to.equal(0n);
      expect(toEsdbExpectedRevision(41n)).to.equal(41n);
      expect([ANY, NO_STREAM, STREAM_EXISTS]).to.deep.equal(['any', 'no_stream', 'stream_exists']);
    });

    it('rejects what is not an expected revision', () => {
      expect(() => toEsdbExpectedRevision(3 as unknown as bigint)).to.throw(TypeError);
    });
  });

  describe('errors', () => {
    it("maps the client's WrongExpectedVersionError with its actual revision", () => {
      const clientError = new EsdbWrongExpectedVersionError(undefined, {
        streamName: 'invoice-1',
        expected: 5n,
        current: 3n,
      });
      const mapped = toPortError(clientError, 'invoice-1', 5n);
      expect(mapped).to.be.instanceOf(WrongExpectedVersionError);
      const err = mapped as WrongExpectedVersionError;
      expect(err.streamId).to.equal('invoice-1');
      expect(err.expected).to.equal(5n);
      expect(err.actual).to.equal(3n);
      expect(err.message).to.equal('stream invoice-1: expected revision 5, actual 3');
    });

    it("maps a missing stream to actual 'no_stream' and keeps our expected kind", () => {
      const clientError = new EsdbWrongExpectedVersionError(undefined, {
        streamName: 's',
        expected: STREAM_EXISTS,
        current: NO_STREAM,
      });
      const err = toPortError(clientError, 's', 'stream_exists') as WrongExpectedVersionError;
      expect(err).to.be.instanceOf(WrongExpectedVersionError);
      expect(err.actual).to.equal('no_stream');
      expect(err.expected).to.equal('stream_exists');
    });

    it('recognises an error shaped like the client one', () => {
      const shaped = { type: 'wrong-expected-version', actualVersion: 9n };
      expect(isEsdbWrongExpectedVersion(shaped)).to.equal(true);
      expect((toPortError(shaped, 's', 'no_stream') as WrongExpectedVersionError).actual).to.equal(9n);
      expect(actualRevisionOf({ type: ErrorType.WRONG_EXPECTED_VERSION, actualVersion: -1n })).to.equal('no_stream');
      expect(actualRevisionOf({ type: ErrorType.WRONG_EXPECTED_VERSION, actualVersion: '12' })).to.equal(12n);
    });

    it('returns any other error unchanged', () => {
      const unavailable = new UnavailableError();
      expect(toPortError(unavailable, 's', 'any')).to.equal(unavailable);
      const plain = new Error('boom');
      expect(toPortError(plain, 's', 'any')).to.equal(plain);
      expect(toPortError('text', 's', 'any')).to.equal('text');
      expect(isEsdbWrongExpectedVersion(null)).to.equal(false);
    });

    it('recognises StreamNotFoundError', () => {
      expect(isEsdbStreamNotFound(new StreamNotFoundError(undefined, 'invoice-9'))).to.equal(true);
      expect(isEsdbStreamNotFound({ type: 'stream-not-found' })).to.equal(true);
      expect(isEsdbStreamNotFound(new UnavailableError())).to.equal(false);
      expect(isEsdbStreamNotFound(undefined)).to.equal(false);
    });
  });

  describe('positions', () => {
    it('extracts the position of an event', () => {
      expect(extractPosition(recordedFrom(newEvent(), { position: { commit: 5n, prepare: 4n } }))).to.deep.equal({
        commit: 5n,
        prepare: 4n,
      });
      expect(extractPosition(recordedFrom(newEvent(), { position: undefined }))).to.equal(undefined);
      expect(
        extractPosition(recordedFrom(newEvent(), { position: { commit: 0xffff_ffff_ffff_ffffn, prepare: 7n } })),
      ).to.equal(undefined);
    });

    it("reads $all from the client's START for our START, else from the position itself", () => {
      expect(toEsdbReadPosition(START)).to.equal(ESDB_START);
      expect(toEsdbReadPosition({ commit: 0n, prepare: 0n })).to.equal('start');
      expect(toEsdbReadPosition({ commit: 200n, prepare: 150n })).to.deep.equal({ commit: 200n, prepare: 150n });
    });

    it('keeps only what is strictly after a position (the client reads inclusively)', () => {
      const after = { commit: 200n, prepare: 150n };
      expect(isStrictlyAfter({ commit: 200n, prepare: 150n }, after)).to.equal(false);
      expect(isStrictlyAfter({ commit: 200n, prepare: 151n }, after)).to.equal(true);
      expect(isStrictlyAfter({ commit: 201n, prepare: 0n }, after)).to.equal(true);
      expect(isStrictlyAfter({ commit: 199n, prepare: 999n }, after)).to.equal(false);
      expect(isStrictlyAfter({ commit: 0n, prepare: 0n }, START)).to.equal(true);
      expect(isStrictlyAfter({ commit: 12n, prepare: 12n }, START)).to.equal(true);
    });
  });

  describe('system events', () => {
    it('are $-typed events and events of $ streams', () => {
      expect(isSystemEvent({ type: '$statsCollected', streamId: '$stats-x' })).to.equal(true);
      expect(isSystemEvent({ type: '$metadata', streamId: '$$invoice-1' })).to.equal(true);
      expect(isSystemEvent({ type: 'Invoice.Paid', streamId: '$ce-invoice' })).to.equal(true);
      expect(isSystemEvent({ type: 'Invoice.Paid', streamId: 'invoice-1' })).to.equal(false);
      expect(isSystemEvent({ type: 'Invoice$Paid', streamId: 'invoice-$1' })).to.equal(false);
    });
  });

  describe('connection strings', () => {
    it('rewrites KurrentDB schemes to esdb', () => {
      expect(toEsdbConnectionString('kurrentdb://localhost:2113?tls=false')).to.equal('esdb://localhost:2113?tls=false');
      expect(toEsdbConnectionString('kurrentdb+discover://admin:changeit@cluster.local:2113')).to.equal(
        'esdb+discover://admin:changeit@cluster.local:2113',
      );
      expect(toEsdbConnectionString('  esdb://a:2113,b:2113?tls=false ')).to.equal('esdb://a:2113,b:2113?tls=false');
    });

    it('produces strings the client accepts', () => {
      const client = EventStoreDBClient.connectionString(toEsdbConnectionString('kurrentdb://localhost:2113?tls=false'));
      expect(client).to.be.instanceOf(EventStoreDBClient);
    });

    it('refuses other schemes without leaking the password', () => {
      expect(() => toEsdbConnectionString('postgres://u:secret@db/x')).to.throw(/postgres:\/\/u:\*\*\*@db\/x/);
      expect(() => toEsdbConnectionString('postgres://u:secret@db/x')).not.to.throw(/secret/);
      expect(redact('esdb://admin:changeit@localhost:2113')).to.equal('esdb://admin:***@localhost:2113');
      expect(redact('esdb://localhost:2113')).to.equal('esdb://localhost:2113');
    });
  });
});

describe('EventStoreDB translation: the multi-stream append', () => {
  const ev = (id: string) => ({ id, type: 'T', schemaVersion: 1, data: {}, metadata: { correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00Z', workspaceId: null, environment: null, requestId: null, keyId: null, idempotencyKey: null } });
  /** Single-stream appends with EventStoreDB's id idempotence: the same ids at the stream's end are a replay. */
  function streams() {
    const data = new Map<string, string[]>();
    const calls: string[] = [];
    const append = async (streamId: string, events: readonly { id: string }[], expected: unknown) => {
      calls.push(streamId);
      const stored = data.get(streamId) ?? [];
      const ids = events.map((e) => e.id);
      if (ids.every((id) => stored.includes(id))) return { nextExpectedRevision: BigInt(stored.indexOf(ids[ids.length - 1]!)), position: { commit: 1n, prepare: 1n }, replayed: true };
      if (expected === 'no_stream' && stored.length > 0) throw new Error(`wrong expected version on ${streamId}`);
      stored.push(...ids);
      data.set(streamId, stored);
      return { nextExpectedRevision: BigInt(stored.length - 1), position: { commit: 1n, prepare: 1n }, replayed: false };
    };
    return { data, calls, append };
  }

  it('appends the parts one after another in the order given and answers in that order', async () => {
    const s = streams();
    const results = await appendPartsInOrder(
      [
        { streamId: 'b', events: [ev('b1'), ev('b2')], expected: 'no_stream' },
        { streamId: 'a', events: [ev('a1')], expected: 'any' },
      ],
      s.append,
    );
    expect(s.calls).to.deep.equal(['b', 'a']);
    expect(results.map((r) => r.nextExpectedRevision)).to.deep.equal([1n, 0n]);
  });

  it('stops at the first part that fails: later parts are not attempted', async () => {
    const s = streams();
    s.data.set('taken', ['x']);
    const err = await appendPartsInOrder(
      [
        { streamId: 'taken', events: [ev('t1')], expected: 'no_stream' },
        { streamId: 'later', events: [ev('l1')], expected: 'no_stream' },
      ],
      s.append,
    ).catch((e: unknown) => e);
    expect(String(err)).to.contain('wrong expected version on taken');
    expect(s.calls).to.deep.equal(['taken']);
  });

  it('completes an interrupted append when retried with the same ids: written parts are replays, the rest is written once', async () => {
    const s = streams();
    const parts = [
      { streamId: 'claim', events: [ev('c1')], expected: 'no_stream' as const },
      { streamId: 'document', events: [ev('d1')], expected: 'no_stream' as const },
      { streamId: 'idempotency', events: [ev('i1')], expected: 'no_stream' as const },
    ];
    await s.append('claim', parts[0]!.events, 'no_stream'); // the crash came after the first part
    const results = await appendPartsInOrder(parts, s.append);
    expect(results.map((r) => r.replayed)).to.deep.equal([true, false, false]);
    expect([...s.data.entries()]).to.deep.equal([['claim', ['c1']], ['document', ['d1']], ['idempotency', ['i1']]]);
  });

  it('refuses no parts, a part without events and a stream named twice', async () => {
    const s = streams();
    for (const parts of [[], [{ streamId: 'a', events: [], expected: 'any' as const }], [{ streamId: 'a', events: [ev('1')], expected: 'any' as const }, { streamId: 'a', events: [ev('2')], expected: 'any' as const }]]) {
      const err = await appendPartsInOrder(parts, s.append).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RangeError);
    }
    expect(s.calls).to.deep.equal([]);
  });
});

describe('EventStoreDB translation: artifacts stored before the events that name them', () => {
  const ev = (id: string) => ({ id, type: 'T', schemaVersion: 1, data: {}, metadata: { correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00Z' } });

  it('writes the artifacts once the parts are checked, before the first part, and not for refused parts', async () => {
    const order: string[] = [];
    const append = async (streamId: string) => {
      order.push(streamId);
      return { nextExpectedRevision: 0n, position: { commit: 1n, prepare: 1n }, replayed: false };
    };
    await appendPartsInOrder(
      [
        { streamId: 'claim', events: [ev('c1')], expected: 'no_stream' },
        { streamId: 'document', events: [ev('d1')], expected: 'no_stream' },
      ],
      append,
      async () => {
        order.push('artifacts');
      },
    );
    expect(order).to.deep.equal(['artifacts', 'claim', 'document']);
    order.length = 0;
    const err = await appendPartsInOrder([{ streamId: 'a', events: [], expected: 'any' }], append, async () => {
      order.push('artifacts');
    }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RangeError);
    expect(order).to.deep.equal([]);
  });

  it('keeps an artifact as the one event of its stream, with an id derived from its hash, and reads it back byte for byte', () => {
    const artifact = artifactOf(Buffer.from('<Invoice>ünïcode ✓</Invoice>'));
    const event = artifactEvent(artifact);
    expect(artifactStream(artifact.sha256)).to.equal(`artifact-${artifact.sha256}`);
    expect(event.type).to.equal(ARTIFACT_EVENT_TYPE);
    expect(artifactEvent(artifact).id).to.equal(event.id); // the same bytes, the same event id: a rewrite is recognised
    expect(artifactEvent(artifactOf(Buffer.from('other'))).id).to.not.equal(event.id);
    const back = artifactFromEvent(JSON.parse(JSON.stringify({ type: event.type, data: event.data })));
    expect(back!.sha256).to.equal(artifact.sha256);
    expect(Buffer.compare(back!.content, artifact.content)).to.equal(0);
    expect(artifactFromEvent({ type: 'Other', data: event.data })).to.equal(null);
    expect(artifactFromEvent({ type: ARTIFACT_EVENT_TYPE, data: { sha256: 1 } })).to.equal(null);
  });

  it('refuses, before writing anything, an artifact whose bytes do not hash to its key', () => {
    const good = artifactOf(Buffer.from('a'));
    expect(() => checkedArtifacts([{ sha256: good.sha256, content: Buffer.from('b') }], { verify: true })).to.throw(ArtifactHashMismatch);
    expect(checkedArtifacts([good, good], { verify: true })).to.deep.equal([good]);
    // artifactOf's own artifacts are not hashed again, and their key cannot be changed after it.
    expect(Object.isFrozen(good)).to.equal(true);
    expect(() => ((good as { sha256: string }).sha256 = artifactOf(Buffer.from('b')).sha256)).to.throw(TypeError);
    // The same key and bytes in an object of its own are checked as any other.
    expect(checkedArtifacts([{ ...good }], { verify: true })).to.deep.equal([good]);
    expect(() => checkedArtifacts([{ ...good, content: Buffer.from('b') }], { verify: true })).to.throw(ArtifactHashMismatch);
  });
});
