/**
 * The contract every EventStore adapter must pass. Each adapter's test file calls
 * `eventStoreContract` with a factory; when the factory answers null (no server
 * configured) the suite reports itself as skipped with the reason.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  comparePositions,
  DuplicateEventError,
  endedByBytes,
  pageMayContinue,
  START,
  WrongExpectedVersionError,
  artifactOf,
  type ArtifactPage,
  type EventStore,
  type NewEvent,
  type Position,
  type RecordedEvent,
} from '../../platform/eventstore/port.js';

export function newEvent(type: string, data: unknown, extra: Partial<NewEvent> = {}): NewEvent {
  return {
    id: randomUUID(),
    type,
    schemaVersion: 1,
    data,
    metadata: {
      correlationId: randomUUID(),
      causationId: null,
      occurredAt: new Date().toISOString(),
      workspaceId: 'ws-contract',
      environment: 'sandbox',
      requestId: 'req-1',
      keyId: 'key-1',
      idempotencyKey: null,
    },
    ...extra,
  };
}

/** Reads can lag behind a write while an older transaction is still in flight: poll until the condition holds. */
async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function collect(store: EventStore, after: Position, predicate: (e: RecordedEvent) => boolean, count: number, timeoutMs = 20000) {
  const got: RecordedEvent[] = [];
  const sub = store.subscribe(after);
  const timer = setTimeout(() => void sub.close(), timeoutMs);
  try {
    for await (const e of sub) {
      if (predicate(e)) got.push(e);
      if (got.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
    await sub.close();
  }
  return got;
}

export function eventStoreContract(
  adapterName: string,
  factory: () => Promise<EventStore | null>,
  skipReason: string,
) {
  describe(`event store contract: ${adapterName}`, function () {
    let store: EventStore;
    const stream = (label: string) => `contract_${label}-${randomUUID()}`;

    before(async function () {
      const made = await factory();
      if (!made) {
        console.log(`      skipped: ${skipReason}`);
        this.skip();
      }
      store = made!;
    });
    after(async () => {
      await store?.close();
    });

    it('appends to a new stream and reads it back with metadata intact', async () => {
      const s = stream('basic');
      const events = [newEvent('Thing.Created', { n: 1, text: 'héllo ✓' }), newEvent('Thing.Renamed', { n: 2, nested: { a: [1, 2] } })];
      const result = await store.append(s, events, 'no_stream');
      expect(result.nextExpectedRevision).to.equal(1n);
      expect(result.replayed).to.equal(false);
      const read = await store.readStream(s);
      expect(read.map((e) => e.revision)).to.deep.equal([0n, 1n]);
      expect(read.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
      expect(read[0]!.data).to.deep.equal({ n: 1, text: 'héllo ✓' });
      expect(read[1]!.metadata).to.deep.equal(events[1]!.metadata);
      expect(read[0]!.type).to.equal('Thing.Created');
      expect(read[0]!.schemaVersion).to.equal(1);
      expect(read[0]!.streamId).to.equal(s);
      expect(read[0]!.recordedAt).to.be.instanceOf(Date);
      expect(comparePositions(read[0]!.position, read[1]!.position)).to.equal(-1);
      expect(comparePositions(result.position, read[1]!.position)).to.equal(0);
    });

    it('reads a missing stream as empty, and honours fromRevision and maxCount', async () => {
      expect(await store.readStream(stream('missing'))).to.deep.equal([]);
      const s = stream('slice');
      await store.append(s, [1, 2, 3, 4, 5].map((n) => newEvent('N', { n })), 'no_stream');
      const slice = await store.readStream(s, { fromRevision: 1n, maxCount: 3 });
      expect(slice.map((e) => (e.data as { n: number }).n)).to.deep.equal([2, 3, 4]);
      const last = await store.readStream(s, { backwards: true, maxCount: 1 });
      expect(last.map((e) => e.revision)).to.deep.equal([4n]);
      const back = await store.readStream(s, { backwards: true, fromRevision: 2n, maxCount: 2 });
      expect(back.map((e) => e.revision)).to.deep.equal([2n, 1n]);
      expect(await store.readStream(stream('missing'), { backwards: true, maxCount: 1 })).to.deep.equal([]);
    });

    it('reads several streams in one call, each as readStream gives it, in the order asked', async () => {
      const a = stream('multi-a');
      const b = stream('multi-b');
      await store.append(a, [1, 2, 3].map((n) => newEvent('N', { n })), 'no_stream');
      await store.append(b, [newEvent('N', { n: 10 })], 'no_stream');
      const [rb, missing, ra, rb2] = await store.readStreams([b, stream('multi-missing'), a, b]);
      expect(rb!.map((e) => (e.data as { n: number }).n)).to.deep.equal([10]);
      expect(missing).to.deep.equal([]);
      expect(ra).to.deep.equal(await store.readStream(a));
      expect(rb2).to.deep.equal(rb);
      const firsts = await store.readStreams([a, b], { maxCount: 1 });
      expect(firsts.map((events) => events.map((e) => e.revision))).to.deep.equal([[0n], [0n]]);
      expect(await store.readStreams([])).to.deep.equal([]);
    });

    it('checks all four kinds of expected revision with a typed error', async () => {
      const s = stream('expect');
      let err = await store.append(s, [newEvent('A', {})], 'stream_exists').catch((e) => e);
      expect(err).to.be.instanceOf(WrongExpectedVersionError);
      expect(err.actual).to.equal('no_stream');
      err = await store.append(s, [newEvent('A', {})], 0n).catch((e) => e);
      expect(err).to.be.instanceOf(WrongExpectedVersionError);

      await store.append(s, [newEvent('A', {})], 'no_stream');
      err = await store.append(s, [newEvent('A', {})], 'no_stream').catch((e) => e);
      expect(err).to.be.instanceOf(WrongExpectedVersionError);
      expect(err.actual).to.equal(0n);
      err = await store.append(s, [newEvent('A', {})], 5n).catch((e) => e);
      expect(err).to.be.instanceOf(WrongExpectedVersionError);
      expect(err.expected).to.equal(5n);

      expect((await store.append(s, [newEvent('B', {})], 'stream_exists')).nextExpectedRevision).to.equal(1n);
      expect((await store.append(s, [newEvent('C', {})], 1n)).nextExpectedRevision).to.equal(2n);
      expect((await store.append(s, [newEvent('D', {})], 'any')).nextExpectedRevision).to.equal(3n);
      expect((await store.append(stream('any-new'), [newEvent('D', {})], 'any')).nextExpectedRevision).to.equal(0n);
      expect((await store.readStream(s)).map((e) => e.type)).to.deep.equal(['A', 'B', 'C', 'D']);
    });

    it('lets exactly one of many parallel appends at the same expected revision win', async () => {
      const s = stream('race');
      await store.append(s, [newEvent('Start', {})], 'no_stream');
      const results = await Promise.allSettled(
        Array.from({ length: 25 }, (_, i) => store.append(s, [newEvent('Racer', { i })], 0n)),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(won).to.have.length(1);
      expect(lost).to.have.length(24);
      for (const l of lost) expect(l.reason).to.be.instanceOf(WrongExpectedVersionError);
      expect(await store.readStream(s)).to.have.length(2);
    });

    it('lets racing creators of one stream with no_stream produce exactly one stream', async () => {
      const s = stream('create-race');
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.append(s, [newEvent('Created', { i })], 'no_stream')),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      expect(await store.readStream(s)).to.have.length(1);
    });

    it('treats a re-append of the same event ids as a no-op, and a partial overlap as a duplicate', async () => {
      const s = stream('idem');
      const batch = [newEvent('A', { a: 1 }), newEvent('B', { b: 2 })];
      const first = await store.append(s, batch, 'no_stream');
      const again = await store.append(s, batch, 'no_stream');
      expect(again.replayed).to.equal(true);
      expect(again.nextExpectedRevision).to.equal(first.nextExpectedRevision);
      expect(comparePositions(again.position, first.position)).to.equal(0);
      expect(await store.readStream(s)).to.have.length(2);

      const overlap = [batch[1]!, newEvent('C', {})];
      const err = await store.append(s, overlap, 'any').catch((e) => e);
      expect(err).to.be.instanceOf(DuplicateEventError);
      expect(await store.readStream(s)).to.have.length(2);
    });

    it('writes concurrent identical appends once; the others are replays', async () => {
      const s = stream('idem-race');
      await store.append(s, [newEvent('First', {})], 'no_stream');
      const batch = [newEvent('Same', { n: 1 })];
      const results = await Promise.all(Array.from({ length: 8 }, () => store.append(s, batch, 'any')));
      expect(results.filter((r) => !r.replayed)).to.have.length(1);
      expect(new Set(results.map((r) => r.nextExpectedRevision))).to.deep.equal(new Set([1n]));
      expect((await store.readStream(s)).map((e) => e.type)).to.deep.equal(['First', 'Same']);
    });

    describe('appendMulti (several streams, each with its expected revision)', () => {
      it('appends to every part, answering each in the order given', async () => {
        const [a, b, c] = [stream('multi-a'), stream('multi-b'), stream('multi-c')];
        await store.append(b, [newEvent('Before', {})], 'no_stream');
        const results = await store.appendMulti([
          { streamId: c, events: [newEvent('C1', {}), newEvent('C2', {})], expected: 'no_stream' },
          { streamId: a, events: [newEvent('A1', {})], expected: 'any' },
          { streamId: b, events: [newEvent('B2', {})], expected: 0n },
        ]);
        expect(results.map((r) => r.nextExpectedRevision)).to.deep.equal([1n, 0n, 1n]);
        expect(results.every((r) => !r.replayed)).to.equal(true);
        expect((await store.readStream(c)).map((e) => e.type)).to.deep.equal(['C1', 'C2']);
        expect((await store.readStream(a)).map((e) => e.type)).to.deep.equal(['A1']);
        expect((await store.readStream(b)).map((e) => e.type)).to.deep.equal(['Before', 'B2']);
        const positions = results.map((r) => r.position);
        const all = await eventually(() => store.readAll(START, 100000), (events) => positions.every((p) => events.some((e) => comparePositions(e.position, p) === 0)));
        for (const p of positions) expect(all.some((e) => comparePositions(e.position, p) === 0)).to.equal(true);
      });

      it('refuses a wrong expected revision of any part with a typed error naming that stream; atomic engines write no part', async () => {
        const [a, b] = [stream('multi-wrong-a'), stream('multi-wrong-b')];
        await store.append(b, [newEvent('Exists', {})], 'no_stream');
        // Ordered so a non-atomic engine meets the failing part last: what it wrote before is then visible.
        const err = await store
          .appendMulti([
            { streamId: a, events: [newEvent('A1', {})], expected: 'no_stream' },
            { streamId: b, events: [newEvent('B1', {})], expected: 'no_stream' },
          ])
          .catch((e) => e);
        expect(err).to.be.instanceOf(WrongExpectedVersionError);
        expect((err as WrongExpectedVersionError).streamId).to.equal(b);
        expect((err as WrongExpectedVersionError).actual).to.equal(0n);
        expect(await store.readStream(b)).to.have.length(1);
        expect(await store.readStream(a)).to.have.length(store.atomicMultiStream ? 0 : 1);
      });

      it('recognises a re-append of the same parts as a replay, and completes one whose first part was written alone', async () => {
        const [a, b] = [stream('multi-replay-a'), stream('multi-replay-b')];
        const parts = [
          { streamId: a, events: [newEvent('A1', {})], expected: 'no_stream' as const },
          { streamId: b, events: [newEvent('B1', {}), newEvent('B2', {})], expected: 'no_stream' as const },
        ];
        const first = await store.appendMulti(parts);
        const again = await store.appendMulti(parts);
        expect(again.map((r) => r.replayed)).to.deep.equal([true, true]);
        expect(again.map((r) => r.nextExpectedRevision)).to.deep.equal(first.map((r) => r.nextExpectedRevision));
        expect(await store.readStream(b)).to.have.length(2);

        // An interrupted append (only its first part stored, as a crash can leave it on an engine
        // without multi-stream transactions): the retry with the same ids writes the rest once.
        const [c, d] = [stream('multi-resume-c'), stream('multi-resume-d')];
        const resumed = [
          { streamId: c, events: [newEvent('C1', {})], expected: 'no_stream' as const },
          { streamId: d, events: [newEvent('D1', {})], expected: 'no_stream' as const },
        ];
        await store.append(c, resumed[0]!.events, 'no_stream');
        const retried = await store.appendMulti(resumed).catch((e) => e);
        if (store.atomicMultiStream) {
          // One transaction: a part already stored alone cannot be half of this append; nothing more is written.
          expect(retried instanceof DuplicateEventError || retried instanceof WrongExpectedVersionError, String(retried)).to.equal(true);
          expect(await store.readStream(d)).to.have.length(0);
        } else {
          expect(retried.map((r: { replayed: boolean }) => r.replayed)).to.deep.equal([true, false]);
          expect(await store.readStream(d)).to.have.length(1);
        }
        expect(await store.readStream(c)).to.have.length(1);
      });

      it('lets exactly one of many multi-stream appends racing on a shared stream win, each writing all its parts or none', async () => {
        const shared = stream('multi-race');
        const own = Array.from({ length: 10 }, (_, i) => stream(`multi-race-own-${i}`));
        const results = await Promise.allSettled(
          own.map((o, i) =>
            store.appendMulti([
              { streamId: shared, events: [newEvent('Claimed', { i })], expected: 'no_stream' },
              { streamId: o, events: [newEvent('Own', { i })], expected: 'no_stream' },
            ]),
          ),
        );
        const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
        expect(winners).to.have.length(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(WrongExpectedVersionError);
        const claimed = await store.readStream(shared);
        expect(claimed).to.have.length(1);
        expect((claimed[0]!.data as { i: number }).i).to.equal(winners[0]);
        for (const [i, o] of own.entries()) expect(await store.readStream(o)).to.have.length(i === winners[0] ? 1 : 0);
      });
    });

    it('loses and reorders nothing across 24 concurrent writers, and a subscriber sees every event once', async function () {
      this.timeout(60000);
      const run = randomUUID().slice(0, 8);
      const writers = 24;
      const perWriter = 40;
      const head = await store.headPosition();
      const mine = (e: RecordedEvent) => e.streamId.startsWith(`contract_writers${run}-`);
      const subscriber = collect(store, head, mine, writers * perWriter, 45000);
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const s = `contract_writers${run}-${w}`;
          let expected: bigint | 'no_stream' = 'no_stream';
          for (let i = 0; i < perWriter; i++) {
            const r = await store.append(s, [newEvent('Written', { w, i })], expected);
            expected = r.nextExpectedRevision;
          }
        }),
      );
      const seen = await subscriber;
      expect(seen).to.have.length(writers * perWriter);
      expect(new Set(seen.map((e) => e.id)).size).to.equal(writers * perWriter);
      for (let i = 1; i < seen.length; i++) {
        expect(comparePositions(seen[i - 1]!.position, seen[i]!.position)).to.equal(-1);
      }
      const byStream = new Map<string, number[]>();
      for (const e of seen) {
        const list = byStream.get(e.streamId) ?? [];
        list.push((e.data as { i: number }).i);
        byStream.set(e.streamId, list);
      }
      expect(byStream.size).to.equal(writers);
      for (const list of byStream.values()) expect(list).to.deep.equal(Array.from({ length: perWriter }, (_, i) => i));

      // readAll from the same position returns the same sequence
      const all: RecordedEvent[] = [];
      let from = head;
      for (;;) {
        const page = await store.readAll(from, 137);
        if (page.length === 0) break;
        all.push(...page.filter(mine));
        from = page[page.length - 1]!.position;
      }
      expect(all.map((e) => e.id)).to.deep.equal(seen.map((e) => e.id));
    });

    it('reads the global log strictly after a position', async () => {
      const s = stream('readall');
      const r1 = await store.append(s, [newEvent('One', {})], 'no_stream');
      await store.append(s, [newEvent('Two', {}), newEvent('Three', {})], 0n);
      const after = await eventually(
        async () => (await store.readAll(r1.position, 1000)).filter((e) => e.streamId === s),
        (events) => events.length >= 2,
      );
      expect(after.map((e) => e.type)).to.deep.equal(['Two', 'Three']);
      const fromStart = await store.readAll(START, 1);
      expect(fromStart).to.have.length(1);
      expect(comparePositions(fromStart[0]!.position, START)).to.equal(1);
      const head = await eventually(() => store.headPosition(), (h) => comparePositions(h, r1.position) > 0);
      expect(comparePositions(head, r1.position)).to.be.greaterThan(0);
    });

    it('bounds a readAll page by bytes when asked, never skipping an event', async () => {
      const s = stream('bytes');
      const before = await store.headPosition();
      // Ten events of about 10 KB each, and one of about 40 KB.
      const sizes = [10, 10, 10, 40, 10, 10, 10, 10, 10, 10, 10];
      const appended = await store.append(s, sizes.map((kb, i) => newEvent('Sized', { i, blob: 'x'.repeat(kb * 1000) })), 'no_stream');
      const size = (e: RecordedEvent) => Buffer.byteLength(JSON.stringify(e.data)) + Buffer.byteLength(JSON.stringify(e.metadata));
      await eventually(() => store.readAll(before, 1000), (events) => events.some((e) => comparePositions(e.position, appended.position) === 0));
      const read: RecordedEvent[] = [];
      const pages: RecordedEvent[][] = [];
      let from = before;
      for (;;) {
        const page = await store.readAll(from, 1000, { maxBytes: 25_000 });
        if (page.length === 0) break;
        pages.push(page);
        read.push(...page);
        from = page[page.length - 1]!.position;
        if (!pageMayContinue(page, 1000)) break;
      }
      const mine = read.filter((e) => e.streamId === s);
      expect(mine.map((e) => (e.data as { i: number }).i)).to.deep.equal(sizes.map((_, i) => i));
      for (const page of pages) {
        // Over the budget only as a page of one event (the 40 KB one).
        if (page.length > 1) expect(page.reduce((n, e) => n + size(e), 0)).to.be.at.most(25_000 + 2_000);
      }
      expect(pages.some((p) => p.length === 1 && (p[0]!.data as { i: number }).i === 3)).to.equal(true);
      // Every page that ended short of the limit before the log's end says so.
      for (const page of pages.slice(0, -1)) expect(endedByBytes(page)).to.equal(true);
      // Without the option, one page.
      const whole = (await store.readAll(before, 1000)).filter((e) => e.streamId === s);
      expect(whole).to.have.length(sizes.length);
      expect(endedByBytes(whole)).to.equal(false);
    });

    it('has every append that returned in its committed head at once, whatever else is in flight', async () => {
      const appends = await Promise.all(Array.from({ length: 8 }, (_, i) => store.append(stream(`committed-${i}`), [newEvent('Noted', { i })], 'no_stream')));
      const committed = await store.committedHead();
      for (const a of appends) expect(comparePositions(committed, a.position)).to.be.at.least(0);
    });

    it('delivers to a subscriber first the past, then live events', async () => {
      const s = stream('sub');
      const before = await store.headPosition();
      await store.append(s, [newEvent('Past', { k: 1 }), newEvent('Past', { k: 2 })], 'no_stream');
      const got = collect(store, before, (e) => e.streamId === s, 4);
      await new Promise((r) => setTimeout(r, 200));
      await store.append(s, [newEvent('Live', { k: 3 })], 1n);
      await new Promise((r) => setTimeout(r, 50));
      await store.append(s, [newEvent('Live', { k: 4 })], 2n);
      const events = await got;
      expect(events.map((e) => (e.data as { k: number }).k)).to.deep.equal([1, 2, 3, 4]);
    });

    it('stores and returns large events intact', async () => {
      const s = stream('large');
      const big = { blob: 'x'.repeat(1_500_000), lines: Array.from({ length: 2000 }, (_, i) => ({ i, name: `line ${i}` })) };
      await store.append(s, [newEvent('Big', big)], 'no_stream');
      const [read] = await store.readStream(s);
      expect(read!.data).to.deep.equal(big);
    });

    it('wakes a waiter when an event is appended', async () => {
      const started = Date.now();
      const waiting = store.waitForAppends(10000);
      await new Promise((r) => setTimeout(r, 50));
      await store.append(stream('wake'), [newEvent('Wake', {})], 'no_stream');
      await waiting;
      expect(Date.now() - started).to.be.lessThan(5000);
    });

    describe('artifacts', () => {
      const unique = (label: string) => artifactOf(Buffer.from(`<Invoice id="${randomUUID()}">${label} ✓</Invoice>`));

      it('stores the artifacts an append names and reads them back by hash, byte for byte', async () => {
        const xml = unique('xml');
        const tdd = unique('tdd');
        const s = stream('artifacts');
        await store.append(s, [newEvent('Doc.Submitted', { xml: xml.sha256, tdd: tdd.sha256 })], 'no_stream', { artifacts: [xml, tdd] });
        const read = await store.readArtifacts([xml.sha256, tdd.sha256, '0'.repeat(64)]);
        expect(read.size).to.equal(2);
        expect(read.get(xml.sha256)!.equals(xml.content)).to.equal(true);
        expect(read.get(tdd.sha256)!.equals(tdd.content)).to.equal(true);
        expect(read.has('0'.repeat(64))).to.equal(false);
        expect((await store.readArtifacts([])).size).to.equal(0);
      });

      it('stores the same bytes once, whoever appends them again (also in one multi-stream append)', async () => {
        const xml = unique('shared');
        const [a, b] = [stream('art-a'), stream('art-b')];
        await store.appendMulti(
          [
            { streamId: a, events: [newEvent('Doc.Submitted', { xml: xml.sha256 })], expected: 'no_stream' },
            { streamId: b, events: [newEvent('Doc.Submitted', { xml: xml.sha256 })], expected: 'no_stream' },
          ],
          { artifacts: [xml, xml] },
        );
        await store.append(a, [newEvent('Doc.Delivered', { xml: xml.sha256 })], 0n, { artifacts: [xml] });
        const read = await store.readArtifacts([xml.sha256, xml.sha256]);
        expect([...read.keys()]).to.deep.equal([xml.sha256]);
        let seen = 0;
        let cursor: string | null = null;
        do {
          const page: ArtifactPage = await store.scanArtifacts(cursor, 500);
          seen += page.artifacts.filter((x) => x.sha256 === xml.sha256).length;
          cursor = page.cursor;
        } while (cursor !== null);
        expect(seen).to.equal(1);
      });

      it('stores the artifacts of concurrent appends (group commit) each with its events', async () => {
        const items = Array.from({ length: 20 }, (_, i) => ({ s: stream(`art-gc-${i}`), xml: unique(`gc ${i}`) }));
        await Promise.all(items.map(({ s, xml }) => store.append(s, [newEvent('Doc.Submitted', { xml: xml.sha256 })], 'no_stream', { artifacts: [xml] })));
        const read = await store.readArtifacts(items.map((i) => i.xml.sha256));
        expect(read.size).to.equal(items.length);
      });

      it('refuses an artifact whose bytes do not hash to its key, and writes nothing', async () => {
        const good = unique('good');
        const forged = { sha256: good.sha256, content: Buffer.from('something else') };
        const s = stream('art-forged');
        const err = await store.append(s, [newEvent('Doc.Submitted', { xml: good.sha256 })], 'no_stream', { artifacts: [forged] }).catch((e) => e);
        expect(err).to.be.instanceOf(RangeError);
        expect(await store.readStream(s)).to.deep.equal([]);
        expect((await store.readArtifacts([good.sha256])).size).to.equal(0);
        const err2 = await store.append(s, [newEvent('Doc.Submitted', {})], 'no_stream', { artifacts: [{ sha256: 'not-a-hash', content: Buffer.from('x') }] }).catch((e) => e);
        expect(err2).to.be.instanceOf(RangeError);
      });

      it('leaves no artifact behind when the append fails, where the engine writes both in one transaction', async function () {
        if (!store.atomicMultiStream) this.skip();
        const xml = unique('lost');
        const s = stream('art-conflict');
        await store.append(s, [newEvent('A', {})], 'no_stream');
        const err = await store.append(s, [newEvent('Doc.Submitted', { xml: xml.sha256 })], 'no_stream', { artifacts: [xml] }).catch((e) => e);
        expect(err).to.be.instanceOf(WrongExpectedVersionError);
        const claim = stream('art-claim');
        await store.append(claim, [newEvent('Claimed', {})], 'no_stream');
        const err2 = await store
          .appendMulti(
            [
              { streamId: claim, events: [newEvent('Claimed', {})], expected: 'no_stream' },
              { streamId: stream('art-doc'), events: [newEvent('Doc.Submitted', { xml: xml.sha256 })], expected: 'no_stream' },
            ],
            { artifacts: [xml] },
          )
          .catch((e) => e);
        expect(err2).to.be.instanceOf(WrongExpectedVersionError);
        expect((await store.readArtifacts([xml.sha256])).size).to.equal(0);
      });
    });
  });
}
