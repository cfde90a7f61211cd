import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { comparePositions, START, type EventStore, type Position } from '../../platform/eventstore/port.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { defineProjection, type Projection } from '../../projections/projection.js';
import { reactorProjection } from '../../projections/reactors/reactor.js';
import { applyBatch, ProjectionRunner } from '../../projections/runner.js';
import { advanceCheckpoint, ensureCheckpoint, readCheckpoint } from '../../readmodels/checkpoints.js';
import { requirement } from '../../readmodels/batch-writes.js';
import { newEvent } from '../eventstore/contract.js';
import { testDb } from '../support/db.js';
import { createTestProjectionTable, foldedTestProjection, TEST_TABLE, testProjection } from '../support/test-projection.js';

/** The read model must equal exactly what the events up to its checkpoint imply: never ahead, never behind. */
async function expectConsistentWithCheckpoint() {
  const knex = testDb().knex;
  await knex.transaction(
    async (trx) => {
      const cp = (await readCheckpoint(trx, 'test_stream_totals')) ?? START;
      const expected = await trx.raw(
        `select stream_id, count(*)::int as events, sum((data->>'n')::bigint)::text as total, max(stream_revision)::text as last_revision
           from es_events
          where event_type = 'Test.Added' and (transaction_id, global_position) <= (?::xid8, ?::bigint)
          group by stream_id order by stream_id`,
        [cp.commit.toString(), cp.prepare.toString()],
      );
      const actual = await trx.raw(
        `select stream_id, events, total::text as total, last_revision::text as last_revision from ${TEST_TABLE} order by stream_id`,
      );
      expect(actual.rows).to.deep.equal(expected.rows);
    },
    { isolationLevel: 'repeatable read' },
  );
}

async function appendMany(store: EventStore, streams: number, perStream: number) {
  const prefix = `test_totals-${randomUUID().slice(0, 8)}`;
  let last = START;
  await Promise.all(
    Array.from({ length: streams }, async (_, s) => {
      let expected: bigint | 'no_stream' = 'no_stream';
      for (let i = 0; i < perStream; i++) {
        const r = await store.append(`${prefix}-${s}`, [newEvent('Test.Added', { n: i + 1 }), newEvent('Test.Ignored', {})], expected);
        expected = r.nextExpectedRevision;
        last = r.position;
      }
    }),
  );
  return { prefix, last };
}

describe('projection runner', function () {
  this.timeout(60000);
  let store: PostgresEventStore;

  before(async () => {
    await createTestProjectionTable(testDb().knex);
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 20 });
  });
  after(async () => store.close());

  it('applies every event once, atomically with its checkpoint, and lets a writer wait for its position', async () => {
    const runner = new ProjectionRunner(testDb().knex, store, [testProjection()], { batchSize: 37 });
    await runner.init();
    const { prefix, last } = await appendMany(store, 5, 20);
    expect(await runner.waitFor(last, { timeoutMs: 200 })).to.equal(false);
    runner.start();
    try {
      expect(await runner.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
      const rows = await testDb().knex(TEST_TABLE).where('stream_id', 'like', `${prefix}-%`);
      expect(rows).to.have.length(5);
      for (const row of rows) {
        expect(row.events).to.equal(20);
        expect(Number(row.total)).to.equal(210);
      }
      await expectConsistentWithCheckpoint();
    } finally {
      await runner.stop();
    }
  });

  it('wakes each of many writers when its own position is applied, and releases a wait that cannot be met when stopped', async () => {
    const runner = new ProjectionRunner(testDb().knex, store, [testProjection()], { batchSize: 7 });
    await runner.init();
    const positions: Position[] = [];
    for (let i = 0; i < 40; i++) positions.push((await store.append(`test_totals-${randomUUID().slice(0, 8)}`, [newEvent('Test.Added', { n: 1 })], 'no_stream')).position);
    const beyond: Position = { commit: positions[39]!.commit + 1_000_000n, prepare: 0n };
    runner.start();
    const never = runner.waitFor(beyond, { timeoutMs: 60_000 });
    let stoppedAt = 0;
    try {
      const reached = await Promise.all(
        positions.map(async (position) => {
          const ok = await runner.waitFor(position, { timeoutMs: 20_000 });
          // Woken only once its own position is applied: the checkpoint is at or past it.
          const at = await readCheckpoint(testDb().knex, 'test_stream_totals');
          return ok && at !== null && comparePositions(at, position) >= 0;
        }),
      );
      expect(reached.every(Boolean)).to.equal(true);
    } finally {
      stoppedAt = Date.now();
      await runner.stop();
    }
    expect(await never).to.equal(false);
    expect(Date.now() - stoppedAt).to.be.below(5_000);
  });

  it('rolls back a failed batch with its checkpoint and reports the failing projection', async () => {
    await new ProjectionRunner(testDb().knex, store, [testProjection()]).catchUp();
    const before = await readCheckpoint(testDb().knex, 'test_stream_totals');
    const poison = `test_totals-poison-${randomUUID()}`;
    await store.append(poison, [newEvent('Test.Added', { n: 1 }), newEvent('Test.Added', { n: 13013 })], 'no_stream');

    const failing = new ProjectionRunner(testDb().knex, store, [testProjection({ failOn: (n) => n === 13013 })], { pollIntervalMs: 20 });
    let err: unknown = null;
    await failing.catchUp().catch((e) => (err = e));
    expect(String(err)).to.contain('refusing n=13013');
    expect(await readCheckpoint(testDb().knex, 'test_stream_totals')).to.deep.equal(before);
    expect(await testDb().knex(TEST_TABLE).where({ stream_id: poison })).to.have.length(0);

    failing.start();
    await new Promise((r) => setTimeout(r, 300));
    const [status] = failing.statuses();
    expect(status!.lastError).to.contain('refusing n=13013');
    expect(status!.failingSince).to.be.instanceOf(Date);
    await failing.stop();

    await new ProjectionRunner(testDb().knex, store, [testProjection()]).catchUp();
    const [row] = await testDb().knex(TEST_TABLE).where({ stream_id: poison });
    expect(Number(row.total)).to.equal(13014);
    await expectConsistentWithCheckpoint();
  });

  it("reads a batch with the projection's own limits when they are larger than the runner's", async () => {
    await appendMany(store, 30, 2);
    const counting = (name: string, batch?: Projection['batch']) =>
      defineProjection({ name, version: 1, tables: [], eventTypes: new Set(['Test.Added']), ...(batch ? { batch } : {}), apply: async () => {} });
    const suffix = randomUUID().slice(0, 8).replace(/-/g, '');
    // Each reads the log from its start (it holds well over 100 events by now).
    const plain = await applyBatch(testDb().knex, store, counting(`test_limits_plain_${suffix}`), 10, {}, { persist: true });
    const own = await applyBatch(testDb().knex, store, counting(`test_limits_own_${suffix}`, { size: 100, bytes: 16 * 1024 * 1024 }), 10, {}, { persist: true });
    // A batch reads pages of its limit's size, a second one (up to four) only while it has fewer
    // events to apply than the limit (the log's first events are other tests' types).
    const pagesOf = (r: typeof plain, size: number) => {
      if (r === 'locked' || r === 'moved') throw new Error(r);
      // Full pages, but for the last one when the batch reached the end of the log.
      if (r.more) expect(r.read % size, `${r.read} events read in pages of ${size}`).to.equal(0);
      return Math.ceil(r.read / size);
    };
    expect(pagesOf(plain, 10)).to.be.within(1, 4);
    expect(pagesOf(own, 100)).to.be.within(1, 4);
    expect(own).to.include({ more: true });
    // The runner's own limits win when they are the larger.
    const small = await applyBatch(testDb().knex, store, counting(`test_limits_small_${suffix}`, { size: 5, bytes: 1024 }), 20, {}, { persist: true });
    expect(pagesOf(small, 20)).to.be.within(1, 4);
  });

  it('tells a batch whether it is awaited: at the end of the log, or when a waiter waits for a position in it; not a backlog nobody waits for', async () => {
    const suffix = randomUUID().slice(0, 8).replace(/-/g, '');
    const seen: { positions: Position[]; awaited: boolean | undefined }[] = [];
    const recording = (name: string) =>
      defineProjection({
        name,
        version: 1,
        tables: [],
        eventTypes: new Set(['Test.Added']),
        apply: async () => {},
        applyMany: async (_trx, events, context) => void seen.push({ positions: events.map((e) => e.position), awaited: context?.awaited }),
      });
    // Projections that start at `from` rather than the start of the log.
    const startingAt = async (name: string, from: Position) => {
      const p = recording(name);
      await ensureCheckpoint(testDb().knex, name, 1);
      await testDb().knex.transaction((trx) => advanceCheckpoint(trx, name, START, from, 0));
      return p;
    };
    const from = await store.committedHead();
    const mid = await store.append(`test_awaited-${suffix}`, [newEvent('Test.Added', { n: 1 })], 'no_stream');
    await appendMany(store, 1, 40);

    // A catch-up nobody waits for: only the batch that ends the log is awaited.
    // (A batch that reads the log's last page to its end is not known to end it: the next, empty read says so.)
    const catchUp = await startingAt(`test_awaited_catchup_${suffix}`, from);
    const endsLog: boolean[] = [];
    for (;;) {
      const applied = seen.length;
      const r = await applyBatch(testDb().knex, store, catchUp, 10, {});
      if (r === 'locked' || r === 'moved') throw new Error(r);
      if (seen.length > applied) endsLog.push(!r.more);
      if (!r.more) break;
    }
    expect(seen.length).to.be.greaterThan(2);
    expect(seen.map((b) => b.awaited)).to.deep.equal(endsLog);
    expect(endsLog.slice(0, -1)).to.not.include(true);

    // A runner's loop with a waiter for `mid`: the batch holding it is awaited as well.
    seen.length = 0;
    const runner = new ProjectionRunner(testDb().knex, store, [await startingAt(`test_awaited_waiter_${suffix}`, from)], { batchSize: 10 });
    const waited = runner.waitFor(mid.position, { timeoutMs: 30000 });
    runner.start();
    expect(await waited).to.equal(true);
    await runner.waitFor(await store.committedHead(), { timeoutMs: 30000 });
    await runner.stop();
    const holding = seen.findIndex((b) => b.positions.some((p) => comparePositions(p, mid.position) === 0));
    expect(holding).to.be.at.least(0);
    expect(seen.length).to.be.greaterThan(holding + 2);
    expect(seen[holding]!.awaited).to.equal(true);
    expect(seen.slice(0, holding).map((b) => b.awaited)).to.not.include(true);
    expect(seen.slice(holding + 1, -1).map((b) => b.awaited)).to.not.include(true);
  });

  it('tells a batch whether its events may have been applied before: the catch-up after a start, a batch read again after a failure; not the live tail', async () => {
    const suffix = randomUUID().slice(0, 8).replace(/-/g, '');
    const name = `test_replaying_${suffix}`;
    const seen: { ns: number[]; replaying: boolean | undefined }[] = [];
    let failed = false;
    const projection = defineProjection({
      name,
      version: 1,
      tables: [],
      eventTypes: new Set(['Test.Added']),
      accepts: (e) => e.streamId.startsWith(`test_replaying-${suffix}`),
      apply: async () => {},
      applyMany: async (_trx, events, context) => {
        seen.push({ ns: events.map((e) => (e.data as { n: number }).n), replaying: context?.replaying });
        // Fails once on n = 777, after its effects outside the transaction would have happened.
        if (!failed && events.some((e) => (e.data as { n: number }).n === 777)) {
          failed = true;
          throw new Error('failing once');
        }
      },
    });
    await ensureCheckpoint(testDb().knex, name, 1);
    await testDb().knex.transaction(async (trx) => advanceCheckpoint(trx, name, START, await store.committedHead(), 0));
    const stream = `test_replaying-${suffix}`;
    let revision: bigint | 'no_stream' = 'no_stream';
    const append = async (n: number) => {
      const r = await store.append(stream, [newEvent('Test.Added', { n })], revision);
      revision = r.nextExpectedRevision;
      return r.position;
    };
    for (let n = 1; n <= 25; n++) await append(n);
    const runner = new ProjectionRunner(testDb().knex, store, [projection], { batchSize: 10, pollIntervalMs: 20 });
    runner.start();
    try {
      expect(await runner.waitFor(await store.committedHead(), { timeoutMs: 30000 })).to.equal(true);
      // The catch-up after the start, the batch that reaches the log's end included.
      expect(seen.flatMap((b) => b.ns)).to.deep.equal(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(seen.map((b) => b.replaying)).to.not.include(false);
      seen.length = 0;
      // The live tail.
      expect(await runner.waitFor(await append(100), { timeoutMs: 30000 })).to.equal(true);
      expect(seen).to.deep.equal([{ ns: [100], replaying: false }]);
      seen.length = 0;
      // A batch that fails, read again after it.
      expect(await runner.waitFor(await append(777), { timeoutMs: 30000 })).to.equal(true);
      expect(seen).to.deep.equal([
        { ns: [777], replaying: false },
        { ns: [777], replaying: true },
      ]);
      seen.length = 0;
      expect(await runner.waitFor(await append(101), { timeoutMs: 30000 })).to.equal(true);
      expect(seen).to.deep.equal([{ ns: [101], replaying: false }]);
    } finally {
      await runner.stop();
    }
  });

  it("holds back no reader of the log while a reactor's batch runs: its checkpoint moves at the end", async () => {
    const name = `test_reacting_${randomUUID().slice(0, 8)}`;
    const stream = `test_reacting-${randomUUID().slice(0, 8)}`;
    let entered!: () => void;
    let release!: () => void;
    const inBatch = new Promise<void>((r) => (entered = r));
    const released = new Promise<void>((r) => (release = r));
    const reactor = reactorProjection({
      name,
      eventTypes: new Set(['Test.Added']),
      async react(event) {
        if (event.streamId !== stream) return;
        entered();
        await released; // a slow destination
      },
    });
    await ensureCheckpoint(testDb().knex, name, 1);
    await testDb().knex.transaction(async (trx) => advanceCheckpoint(trx, name, START, await store.committedHead(), 0));
    await store.append(stream, [newEvent('Test.Added', { n: 1 })], 'no_stream');
    const running = new ProjectionRunner(testDb().knex, store, [reactor], { batchSize: 10 }).catchUp();
    try {
      await inBatch;
      // Appended while the batch is open: readable at once, not only after the batch commits.
      const other = await store.append(`${stream}-other`, [newEvent('Test.Ignored', {})], 'no_stream');
      let seen = false;
      for (let i = 0; i < 100 && !seen; i++) {
        seen = comparePositions(await store.headPosition(), other.position) >= 0;
        if (!seen) await new Promise((r) => setTimeout(r, 20));
      }
      expect(seen).to.equal(true);
    } finally {
      release();
      await running;
    }
  });

  it('never applies a batch twice when two instances run the same projection', async () => {
    // Without ownership (projections/ownership.ts) both try every batch: the batch lock and the checkpoint's compare-and-set alone decide.
    const a = new ProjectionRunner(testDb().knex, store, [testProjection()], { batchSize: 10, pollIntervalMs: 20, ownership: 'off' });
    const b = new ProjectionRunner(testDb().knex, store, [testProjection()], { batchSize: 10, pollIntervalMs: 20, ownership: 'off' });
    await a.init();
    a.start();
    b.start();
    try {
      const { last } = await appendMany(store, 8, 15);
      expect(await a.waitFor(last, { timeoutMs: 20000 })).to.equal(true);
      await expectConsistentWithCheckpoint();
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('sends a batch whose writes need no reads as one statement with its lock and checkpoint, and never applies it twice with two instances', async () => {
    const calls = { writes: 0, applyMany: 0 };
    // Without ownership (projections/ownership.ts) both try every batch: the batch lock and the checkpoint's compare-and-set alone decide.
    const a = new ProjectionRunner(testDb().knex, store, [foldedTestProjection(calls)], { batchSize: 10, pollIntervalMs: 20, ownership: 'off' });
    const b = new ProjectionRunner(testDb().knex, store, [foldedTestProjection(calls)], { batchSize: 10, pollIntervalMs: 20, ownership: 'off' });
    await a.init();
    a.start();
    b.start();
    try {
      const { last } = await appendMany(store, 8, 15);
      expect(await a.waitFor(last, { timeoutMs: 20000 })).to.equal(true);
      await expectConsistentWithCheckpoint();
      expect(calls.writes).to.be.greaterThan(0);
      // The transaction with applyMany only where the one statement found the checkpoint moved by the other runner.
      expect(calls.applyMany).to.be.lessThan(calls.writes);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('stores no checkpoint for a batch whose writes are conditions alone while they hold (a read-only check), and counts its events when the position is stored', async () => {
    const prefix = `test_conditions-${randomUUID().slice(0, 8)}`;
    const name = `test_conditions_${randomUUID().slice(0, 8)}`;
    const calls = { writes: 0, applyMany: 0 };
    let holds = true;
    const projection = defineProjection({
      name,
      version: 1,
      tables: [],
      eventTypes: new Set(['Test.Added']),
      accepts: (event) => event.streamId.startsWith(prefix),
      apply: async () => {},
      applyMany: async () => {
        calls.applyMany++;
      },
      writes: () => {
        calls.writes++;
        return [requirement({ sql: '?::boolean', bindings: [holds] })];
      },
    });
    const runner = new ProjectionRunner(testDb().knex, store, [projection], { batchSize: 100, pollIntervalMs: 20 });
    await runner.init();
    const before = await readCheckpoint(testDb().knex, name);
    runner.start();
    try {
      const first = await store.append(`${prefix}-a`, [newEvent('Test.Added', { n: 1 }), newEvent('Test.Added', { n: 2 })], 'no_stream');
      expect(await runner.waitFor(first.position, { timeoutMs: 20000 })).to.equal(true);
      // Applied (nothing to write) without a transaction: the stored checkpoint has not moved yet.
      expect(calls.writes).to.be.greaterThan(0);
      expect(calls.applyMany).to.equal(0);
      const stored = await readCheckpoint(testDb().knex, name);
      expect(stored === null || before === null ? stored : comparePositions(stored, before)).to.deep.equal(before === null ? null : 0);
      // Within about a second the idle position is stored, with the events those batches applied.
      const deadline = Date.now() + 10_000;
      let row: { commit_position: string; prepare_position: string; events_applied: string } | undefined;
      for (;;) {
        [row] = await testDb().knex('projection_checkpoints').where({ projection: name });
        if (row && comparePositions({ commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) }, first.position) >= 0) break;
        expect(Date.now()).to.be.lessThan(deadline);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(Number(row!.events_applied)).to.equal(2);
      // A condition that no longer holds: the batch is applied by reading, in a transaction that stores the checkpoint.
      holds = false;
      const second = await store.append(`${prefix}-b`, [newEvent('Test.Added', { n: 3 })], 'no_stream');
      expect(await runner.waitFor(second.position, { timeoutMs: 20000 })).to.equal(true);
      expect(calls.applyMany).to.equal(1);
      const [after] = await testDb().knex('projection_checkpoints').where({ projection: name });
      expect(comparePositions({ commit: BigInt(after.commit_position), prepare: BigInt(after.prepare_position) }, second.position)).to.equal(0);
      expect(Number(after.events_applied)).to.equal(3);
    } finally {
      await runner.stop();
    }
  });

  it('reads an append held back behind an open transaction as soon as that commits, without another append or the poll', async () => {
    const runner = new ProjectionRunner(testDb().knex, store, [testProjection()], { batchSize: 100, pollIntervalMs: 10_000 });
    await runner.init();
    runner.start();
    try {
      const { last: caughtUp } = await appendMany(store, 1, 1);
      expect(await runner.waitFor(caughtUp, { timeoutMs: 10_000 })).to.equal(true);
      // A transaction with an id older than the append's holds it back from every reader of the log.
      const blocker = await testDb().knex.transaction();
      await blocker.raw('select pg_current_xact_id()');
      const { last } = await appendMany(store, 1, 1);
      await new Promise((r) => setTimeout(r, 100)); // the loop reads, finds nothing readable yet, and waits
      await blocker.commit();
      const committedAt = performance.now();
      expect(await runner.waitFor(last, { timeoutMs: 5_000 })).to.equal(true);
      expect(performance.now() - committedAt).to.be.below(1_000);
      await expectConsistentWithCheckpoint();
    } finally {
      await runner.stop();
    }
  });

  /** A projection's checkpoint at the log's head, then one event, then five more. */
  async function checkpointBefore(prefix: string) {
    const name = `${prefix}_${randomUUID().slice(0, 8)}`;
    const from = await store.committedHead();
    await ensureCheckpoint(testDb().knex, name, 1);
    await testDb().knex.transaction((trx) => advanceCheckpoint(trx, name, START, from, 0));
    const first = await store.append(`test_moved-${randomUUID().slice(0, 8)}`, [newEvent('Test.Added', { n: 1 })], 'no_stream');
    const { last } = await appendMany(store, 1, 5);
    const batches: Position[][] = [];
    /** A projection of these events that notes each batch's positions, then runs `after` (a reactor with `actsOutside`). */
    const recording = (options: { actsOutside?: boolean; after?: () => Promise<void> } = {}) =>
      defineProjection({
        name,
        version: 1,
        tables: [],
        eventTypes: new Set(['Test.Added']),
        actsOutside: options.actsOutside,
        apply: async () => {},
        applyMany: async (_trx, events) => {
          batches.push(events.map((e) => e.position));
          await options.after?.();
        },
      });
    return { name, from, first, last, batches, recording };
  }

  /**
   * The store as a runner reads it, where the first read of the log is followed, before the batch
   * goes on, by another runner applying the first event after `from` and committing its checkpoint.
   */
  const movingCheckpointOnFirstRead = (name: string, from: Position, to: Position): EventStore => {
    let moved = false;
    return new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'readAll') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<EventStore['readAll']>) => {
          const page = await target.readAll(...args);
          if (!moved) {
            moved = true;
            await testDb().knex.transaction((other) => advanceCheckpoint(other, name, from, to, 1));
          }
          return page;
        };
      },
    }) as EventStore;
  };
  /** One batch applied exactly the events the other runner left (`after`), and the checkpoint counts both. */
  const expectRestAppliedOnce = async (name: string, batches: Position[][], after: readonly { position: Position }[], last: Position) => {
    expect(batches).to.have.length(1);
    expect(batches[0]).to.deep.equal(after.map((e) => e.position));
    expect(comparePositions((await readCheckpoint(testDb().knex, name))!, last)).to.equal(0);
    const [row] = await testDb().knex('projection_checkpoints').where({ projection: name });
    expect(Number(row.events_applied)).to.equal(1 + after.length);
  };
  /** The test events after `first` up to `last`. */
  const addedBetween = async (from: Position, first: Position, last: Position) =>
    (await store.readAll(from, 100)).filter((e) => e.type === 'Test.Added' && comparePositions(e.position, first) > 0 && comparePositions(e.position, last) <= 0);

  it('applies only what another runner has not when the checkpoint moved after the batch read its events (an admin command beside a live service)', async () => {
    const { name, from, first, last, batches, recording } = await checkpointBefore('test_moved');
    const projection = recording();
    // The first time the batch has read its events, another runner applies the first of them and
    // commits its checkpoint, before this batch's transaction begins.
    const reading = movingCheckpointOnFirstRead(name, from, first.position);
    await new ProjectionRunner(testDb().knex, reading, [projection], { batchSize: 100 }).catchUp();
    const after = await addedBetween(from, first.position, last);
    await expectRestAppliedOnce(name, batches, after, last);
  });

  it('applies only what another runner has not when the checkpoint moved before a one-statement batch (Projection.writes): the transaction reads it afresh', async () => {
    const { name, from, first, last, batches, recording } = await checkpointBefore('test_moved_folded');
    const writes: number[] = [];
    const projection = defineProjection({ ...recording(), writes: (events) => (writes.push(events.length), []) });
    const reading = movingCheckpointOnFirstRead(name, from, first.position);
    await new ProjectionRunner(testDb().knex, reading, [projection], { batchSize: 100 }).catchUp();
    const after = await addedBetween(from, first.position, last);
    // The one statement was tried with the whole batch, found the checkpoint moved and wrote nothing; the transaction applied the rest once.
    expect(writes).to.deep.equal([after.length + 1]);
    await expectRestAppliedOnce(name, batches, after, last);
  });

  it("reads again when another runner moves a reactor's checkpoint during its batch: the checkpoint's compare-and-set at the end refuses it", async () => {
    const { name, from, first, last, batches, recording } = await checkpointBefore('test_moved_reactor');
    const projection = recording({
      actsOutside: true,
      // The first time, another runner applies the first event and commits its checkpoint
      // while this batch is open (on its own connection, outside this batch's transaction).
      after: async () => {
        if (batches.length === 1) await testDb().knex.transaction((other) => advanceCheckpoint(other, name, from, first.position, 1));
      },
    });
    await new ProjectionRunner(testDb().knex, store, [projection], { batchSize: 100 }).catchUp();
    expect(batches).to.have.length(2);
    expect(batches[0]![0]).to.deep.equal(first.position);
    expect(batches[1]).to.deep.equal(batches[0]!.slice(1));
    expect(comparePositions((await readCheckpoint(testDb().knex, name))!, last)).to.equal(0);
  });

  it('keeps the read model and its checkpoint in step when the process is killed at any instant', async function () {
    this.timeout(120000);
    const { last } = await appendMany(store, 10, 150);
    for (const delay of [150, 400, 700, 1100]) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/projection-child.ts', testDb().url], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, delay));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await expectConsistentWithCheckpoint();
    }
    const runner = new ProjectionRunner(testDb().knex, store, [testProjection()]);
    await runner.catchUp();
    expect(await runner.waitFor(last, { timeoutMs: 1000 })).to.equal(true);
    await expectConsistentWithCheckpoint();
  });

  it('rebuilds into fresh tables while the live ones keep answering, then swaps in equal tables', async () => {
    const knex = testDb().knex;
    const live = new ProjectionRunner(knex, store, [testProjection()], { batchSize: 50, pollIntervalMs: 20 });
    await live.init();
    await appendMany(store, 6, 40);
    await live.catchUp();
    await knex.raw(`drop table if exists test_snapshot; create table test_snapshot as select * from ${TEST_TABLE}`);

    // No events in between: the rebuilt table must equal the live one row for row.
    let liveReads = 0;
    await rebuildProjection(knex, store, testProjection(), {
      batchSize: 100,
      onProgress: async () => {
        liveReads += Number((await knex(TEST_TABLE).count({ n: '*' }))[0]!.n) > 0 ? 1 : 0;
      },
    });
    const diff = await knex.raw(
      `(select * from ${TEST_TABLE} except select * from test_snapshot) union all (select * from test_snapshot except select * from ${TEST_TABLE})`,
    );
    expect(diff.rows).to.deep.equal([]);
    expect(liveReads).to.be.greaterThan(0);
    const indexes = await knex.raw(`select indexname from pg_indexes where schemaname = 'public' and tablename = ?`, [TEST_TABLE]);
    expect(indexes.rows.length).to.equal(2);
    const schemas = await knex.raw(`select nspname from pg_namespace where nspname like 'rebuild_%' or nspname like 'retired_%'`);
    expect(schemas.rows).to.deep.equal([]);

    // With appends and the live runner going on during the rebuild, the result is still exact.
    live.start();
    try {
      const writing = appendMany(store, 4, 60);
      await rebuildProjection(knex, store, testProjection(), { batchSize: 40 });
      const { last } = await writing;
      expect(await live.waitFor(last, { timeoutMs: 20000 })).to.equal(true);
      await expectConsistentWithCheckpoint();
      // A second rebuild in a row works (index and constraint names do not collide).
      await rebuildProjection(knex, store, testProjection());
      await expectConsistentWithCheckpoint();
    } finally {
      await live.stop();
    }
  });
});
