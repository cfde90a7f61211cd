import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { endedByBytes, pageBytes, pageMayContinue, type Position, type RecordedEvent } from '../../platform/eventstore/port.js';
import { LogTail } from '../../projections/log-tail.js';
import { newEvent } from '../eventstore/contract.js';
import { testDb } from '../support/db.js';

describe('the shared tail of the log', function () {
  this.timeout(30000);
  let store: PostgresEventStore;
  let reads = 0;
  const counting = () => ({
    readAll: (after: Position, limit: number) => {
      reads++;
      return store.readAll(after, limit);
    },
  });
  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
  });
  after(async () => store.close());

  const ids = (events: { id: string }[]) => events.map((e) => e.id);

  it('serves every reader exactly what the store would, and extends the tail once for all of them', async () => {
    const head = await store.headPosition();
    const stream = `tail-${randomUUID()}`;
    await store.append(stream, Array.from({ length: 30 }, (_, i) => newEvent('T', { i })), 'no_stream');
    const tail = new LogTail(counting(), 1000, 100);
    const first = await tail.readAll(head, 10);
    expect(ids(first)).to.deep.equal(ids(await store.readAll(head, 10)));
    // Near the end of the run: it reads on before answering, so the answer is never short.
    const second = await tail.readAll(first[4]!.position, 10);
    expect(ids(second)).to.deep.equal(ids(await store.readAll(first[4]!.position, 10)));
    // Well inside the run: no store read.
    reads = 0;
    const third = await tail.readAll(first[0]!.position, 5);
    expect(ids(third)).to.deep.equal(ids(await store.readAll(first[0]!.position, 5)));
    expect(reads).to.equal(0);

    // Ten readers at the end of the run: one store read extends it for all.
    const all = await store.readAll(head, 1000);
    const end = (await tail.readAll(first[first.length - 1]!.position, 1000)).at(-1)!.position;
    await store.append(stream, Array.from({ length: 5 }, (_, i) => newEvent('T', { i: 30 + i })), 29n);
    reads = 0;
    const answers = await Promise.all(Array.from({ length: 10 }, () => tail.readAll(end, 100)));
    expect(reads).to.equal(1);
    for (const a of answers) expect(a.map((e) => (e.data as { i: number }).i)).to.deep.equal([30, 31, 32, 33, 34]);
    // A reader before the run reads the store and gets the same as the store.
    expect(ids(await tail.readAll(head, 1000)).slice(0, all.length)).to.deep.equal(ids(all));
  });

  it('keeps at most its bound in memory and still answers from before it', async () => {
    const head = await store.headPosition();
    const stream = `tail-${randomUUID()}`;
    await store.append(stream, Array.from({ length: 50 }, (_, i) => newEvent('T', { i })), 'no_stream');
    const tail = new LogTail(store, 20, 25);
    let position = head;
    const seen: number[] = [];
    for (;;) {
      const batch = await tail.readAll(position, 7);
      if (batch.length === 0) break;
      seen.push(...batch.filter((e) => e.streamId === stream).map((e) => (e.data as { i: number }).i));
      position = batch.at(-1)!.position;
    }
    expect(seen).to.deep.equal(Array.from({ length: 50 }, (_, i) => i));
    expect((await tail.readAll(head, 3)).map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 1, 2]);
  });

  it('with a byte bound, keeps at most two reads of large events and serves every reader all of them in bounded batches', async () => {
    const head = await store.headPosition();
    const stream = `tail-${randomUUID()}`;
    // 40 events of about 20 KB: 800 KB in all, reads of at most 100 KB.
    await store.append(stream, Array.from({ length: 40 }, (_, i) => newEvent('T', { i, blob: 'y'.repeat(20_000) })), 'no_stream');
    const tail = new LogTail(store, 1000, 2000, 100_000);
    const readers = await Promise.all(
      Array.from({ length: 3 }, async () => {
        let position = head;
        const seen: number[] = [];
        for (;;) {
          const batch = await tail.readAll(position, 500, { maxBytes: 100_000 });
          if (batch.length === 0) break;
          // At most one read's bytes (other events of the log may share the batch).
          const bytes = batch.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e.data)) + Buffer.byteLength(JSON.stringify(e.metadata)), 0);
          if (batch.length > 1) expect(bytes).to.be.at.most(100_000);
          seen.push(...batch.filter((e) => e.streamId === stream).map((e) => (e.data as { i: number }).i));
          position = batch.at(-1)!.position;
          expect((tail as unknown as { events: unknown[] }).events.length).to.be.at.most(10);
          if (!pageMayContinue(batch, 500)) break;
        }
        return seen;
      }),
    );
    for (const seen of readers) expect(seen).to.deep.equal(Array.from({ length: 40 }, (_, i) => i));
  });

  const sizeOf = (events: readonly RecordedEvent[]) => events.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e.data)) + Buffer.byteLength(JSON.stringify(e.metadata)), 0);

  it('the store reports the size of a page read under a byte bound', async () => {
    const head = await store.headPosition();
    const stream = `tail-${randomUUID()}`;
    await store.append(stream, Array.from({ length: 6 }, (_, i) => newEvent('T', { i, blob: 'z'.repeat(1_000 * (i + 1)) })), 'no_stream');
    const whole = await store.readAll(head, 100, { maxBytes: 1_000_000 });
    expect(pageBytes(whole)).to.equal(sizeOf(whole));
    const cut = await store.readAll(head, 100, { maxBytes: 5_000 });
    expect(endedByBytes(cut)).to.equal(true);
    expect(pageBytes(cut)).to.equal(sizeOf(cut)).and.to.be.at.most(5_000);
  });


  it('keeps many small reads while their sizes fit its byte budget, and serves a runner further behind several of them at once from memory', async () => {
    const head = await store.headPosition();
    const stream = `tail-${randomUUID()}`;
    const readsFrom: Position[] = [];
    const tail = new LogTail({ readAll: (a, l, o) => (readsFrom.push(a), store.readAll(a, l, o)) }, 1000, 2000, 10_000, 2);
    // Twenty appends of one 1 KB event, the tail read after each: twenty reads of about 1 KB.
    let end = head;
    await tail.readAll(end, 500, { maxBytes: 10_000 });
    for (let k = 0; k < 20; k++) {
      await store.append(stream, [newEvent('T', { i: k, blob: 'x'.repeat(1_000) })], k === 0 ? 'no_stream' : BigInt(k - 1));
      end = (await tail.readAll(end, 500, { maxBytes: 10_000 })).at(-1)!.position;
    }
    const mine = (events: readonly RecordedEvent[]) => events.filter((e) => e.streamId === stream).map((e) => (e.data as { i: number }).i);
    // Far more than two reads are kept, but no more than two reads' bytes (20 KB): the last 17 or so events.
    const all = await store.readAll(head, 500);
    const at = (i: number) => all.find((e) => e.streamId === stream && (e.data as { i: number }).i === i)!.position;
    // The start of the log is no longer held: the store answers a reader there.
    readsFrom.length = 0;
    expect(mine(await tail.readAll(at(0), 500, { maxBytes: 10_000 }))[0]).to.equal(1);
    expect(readsFrom).to.deep.equal([at(0)]);
    // Within two reads (maxReads) of the end: one read at a time, as before.
    readsFrom.length = 0;
    const near = await tail.readAll(at(17), 500, { maxBytes: 10_000 });
    expect(mine(near)).to.deep.equal([18]);
    expect(pageMayContinue(near, 500)).to.equal(true);
    // Ten reads back is still held: served from memory (the store is read only at the run's end, to
    // extend it), several of those reads at once (events of about 1.1 KB) within the reader's 10 KB,
    // as the store would have answered a reader that far behind.
    readsFrom.length = 0;
    const fromTenth = await tail.readAll(at(9), 500, { maxBytes: 10_000 });
    expect(readsFrom).to.deep.equal([at(19)]);
    expect(mine(fromTenth)).to.deep.equal(Array.from({ length: fromTenth.length }, (_, i) => 10 + i));
    expect(fromTenth.length).to.be.within(7, 9);
    expect(sizeOf(fromTenth)).to.be.at.most(10_000);
    expect(pageMayContinue(fromTenth, 500)).to.equal(true);
    // Never more than the reader's limit.
    expect(await tail.readAll(at(9), 3, { maxBytes: 10_000 })).to.have.length(3);
  });
});
