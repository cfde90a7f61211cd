import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { START, type Position } from '../../platform/eventstore/port.js';
import { defineProjection, type Projection } from '../../projections/projection.js';
import { ProjectionRunner } from '../../projections/runner.js';
import type { OwnershipMode } from '../../projections/ownership.js';
import { ownedCheckpoints } from '../../readmodels/projection-ownership.js';
import { newEvent } from '../eventstore/contract.js';
import { testDb } from '../support/db.js';
import { createTestProjectionTable, testProjection } from '../support/test-projection.js';

const TABLE = 'test_owned_events';

/**
 * A projection that records each event once (a second apply of one event violates the primary
 * key and fails its batch) and counts the batches each runner applied.
 */
function recording(name: string, prefix: string, batches: Map<string, number>, runner: string): Projection {
  return defineProjection({
    name,
    version: 1,
    tables: [],
    eventTypes: new Set(['Test.Added']),
    accepts: (event) => event.streamId.startsWith(prefix),
    apply: async () => {
      throw new Error('applyMany only');
    },
    async applyMany(trx, events) {
      batches.set(runner, (batches.get(runner) ?? 0) + 1);
      await trx(TABLE).insert(events.map((e) => ({ projection: name, stream_id: e.streamId, revision: e.revision.toString() })));
    },
  });
}

async function append(store: PostgresEventStore, prefix: string, count: number): Promise<Position> {
  let last: Position = START;
  for (let i = 0; i < count; i++) last = (await store.append(`${prefix}-${randomUUID().slice(0, 8)}`, [newEvent('Test.Added', { n: i })], 'no_stream')).position;
  return last;
}

async function recorded(name: string): Promise<number> {
  return Number((await testDb().knex(TABLE).where({ projection: name }).count({ n: '*' }))[0]!.n);
}

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('projection ownership among several instances', function () {
  this.timeout(60000);
  let store: PostgresEventStore;

  before(async () => {
    await testDb().knex.raw(`create table if not exists ${TABLE} (projection text, stream_id text, revision bigint, primary key (projection, stream_id, revision))`);
    await createTestProjectionTable(testDb().knex);
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 10 });
  });
  after(async () => store.close());

  function pair(mode: OwnershipMode, names: string[], prefix: string) {
    const batches = new Map<string, number>();
    const make = (runner: string) =>
      new ProjectionRunner(testDb().knex, store, names.map((n) => recording(n, prefix, batches, `${runner}:${n}`)), {
        batchSize: 5,
        pollIntervalMs: 20,
        ownership: mode,
        claimIntervalMs: 200,
      });
    return { a: make('a'), b: make('b'), batches };
  }

  it('lets one runner apply a projection while both run; the other follows its checkpoint, and takes over when the holder stops', async () => {
    const prefix = `own-${randomUUID().slice(0, 8)}`;
    const name = `test_owned_${randomUUID().slice(0, 8)}`;
    const { a, b, batches } = pair('gather', [name], prefix);
    await a.init();
    a.start();
    b.start();
    let stopped: ProjectionRunner | null = null;
    try {
      // Several catch-ups and live tails in a row, over more than a claim round or two.
      let last: Position = START;
      for (let round = 0; round < 6; round++) {
        last = await append(store, prefix, 12);
        expect(await a.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
        expect(await b.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
        await new Promise((r) => setTimeout(r, 150));
      }
      expect(await recorded(name)).to.equal(72);
      const byA = batches.get(`a:${name}`) ?? 0;
      const byB = batches.get(`b:${name}`) ?? 0;
      // Exactly one of them applied every batch.
      expect([byA, byB].filter((n) => n > 0)).to.have.length(1);
      const [holder, follower, followerKey] = byA > 0 ? [a, b, `b:${name}`] : [b, a, `a:${name}`];
      expect(holder.ownedProjections()).to.deep.equal([name]);
      expect(follower.ownedProjections()).to.deep.equal([]);
      expect(await ownedCheckpoints(testDb().knex, [name])).to.deep.equal([name]);

      // The holder stops: the follower owns the projection and applies what follows within about a claim round.
      await holder.stop();
      stopped = holder;
      last = await append(store, prefix, 10);
      expect(await follower.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
      expect(await recorded(name)).to.equal(82);
      expect(batches.get(followerKey) ?? 0).to.be.greaterThan(0);
      expect(follower.ownedProjections()).to.deep.equal([name]);
    } finally {
      await Promise.all([a, b].filter((r) => r !== stopped).map((r) => r.stop()));
    }
    // Stopped runners hold nothing.
    expect(await ownedCheckpoints(testDb().knex, [name])).to.deep.equal([]);
  });

  it('takes over a projection whose holder process is killed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/projection-child.ts', testDb().url], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => child.once('exit', r));
    let follower: ProjectionRunner | null = null;
    try {
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      const name = testProjection().name;
      expect(await eventually(async () => (await ownedCheckpoints(testDb().knex, [name])).length === 1, 10000)).to.equal(true);
      follower = new ProjectionRunner(testDb().knex, store, [testProjection()], { batchSize: 50, pollIntervalMs: 20, claimIntervalMs: 200 });
      follower.start();
      await new Promise((r) => setTimeout(r, 500));
      expect(follower.ownedProjections()).to.deep.equal([]);
      child.kill('SIGKILL');
      await exited;
      const last = (await store.append(`test_totals-${randomUUID().slice(0, 8)}`, [newEvent('Test.Added', { n: 1 })], 'no_stream')).position;
      expect(await follower.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
      expect(follower.ownedProjections()).to.deep.equal([name]);
    } finally {
      child.kill('SIGKILL');
      await follower?.stop();
    }
  });

  it('never lets two runners both apply one projection\'s batches, and gathers the projections on one of them', async () => {
    const prefix = `own-${randomUUID().slice(0, 8)}`;
    const names = [0, 1, 2].map((i) => `test_owned_gather_${i}_${randomUUID().slice(0, 6)}`);
    const { a, b, batches } = pair('gather', names, prefix);
    await a.init();
    a.start();
    b.start();
    try {
      for (let round = 0; round < 4; round++) {
        const last = await append(store, prefix, 10);
        expect(await a.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
        expect(await b.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
      }
      for (const n of names) {
        expect(await recorded(n)).to.equal(40);
        expect([batches.get(`a:${n}`) ?? 0, batches.get(`b:${n}`) ?? 0].filter((c) => c > 0)).to.have.length(1);
      }
      const ownedA = a.ownedProjections();
      const ownedB = b.ownedProjections();
      expect([...ownedA, ...ownedB].sort()).to.deep.equal([...names].sort());
      // Gathered: one runner owns them all.
      expect([ownedA.length, ownedB.length].sort()).to.deep.equal([0, 3]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('gathering, still runs a projection the owner of the others does not run (a newer version beside an older one)', async () => {
    const prefix = `own-${randomUUID().slice(0, 8)}`;
    const names = [0, 1, 2].map((i) => `test_owned_newer_${i}_${randomUUID().slice(0, 6)}`);
    const batches = new Map<string, number>();
    const options = { batchSize: 5, pollIntervalMs: 20, claimIntervalMs: 200 };
    const older = new ProjectionRunner(testDb().knex, store, names.slice(0, 2).map((n) => recording(n, prefix, batches, `older:${n}`)), options);
    const newer = new ProjectionRunner(testDb().knex, store, names.map((n) => recording(n, prefix, batches, `newer:${n}`)), options);
    await newer.init();
    older.start();
    await eventually(() => older.ownedProjections().length === 2, 5000);
    newer.start();
    try {
      const last = await append(store, prefix, 10);
      expect(await newer.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
      expect(older.ownedProjections()).to.deep.equal(names.slice(0, 2));
      expect(newer.ownedProjections()).to.deep.equal([names[2]]);
      for (const n of names) expect(await recorded(n)).to.equal(10);
      expect(batches.get(`newer:${names[0]}`) ?? 0).to.equal(0);
      expect(batches.get(`newer:${names[2]}`) ?? 0).to.be.greaterThan(0);
    } finally {
      await Promise.all([older.stop(), newer.stop()]);
    }
  });

  it('keeps projecting when its ownership connection is lost, and owns the projection again once it reconnects', async () => {
    const prefix = `own-${randomUUID().slice(0, 8)}`;
    const name = `test_owned_${randomUUID().slice(0, 8)}`;
    const batches = new Map<string, number>();
    const logged: string[] = [];
    const runner = new ProjectionRunner(testDb().knex, store, [recording(name, prefix, batches, 'a')], {
      batchSize: 5,
      pollIntervalMs: 20,
      claimIntervalMs: 2500,
      log: (msg) => logged.push(msg),
    });
    await runner.init();
    runner.start();
    try {
      let last = await append(store, prefix, 10);
      expect(await runner.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
      expect(runner.ownedProjections()).to.deep.equal([name]);
      // The server ends the ownership session (as a lost connection would): the lock goes with it.
      await testDb().knex.raw(
        `select pg_terminate_backend(l.pid) from pg_locks l
          where l.locktype = 'advisory' and l.objsubid = 2 and l.objid = (hashtext(?)::oid)
            and l.database = (select oid from pg_database where datname = current_database())`,
        [name],
      );
      expect(await eventually(() => logged.some((m) => m.includes('ownership connection unavailable')), 5000)).to.equal(true);
      expect(runner.ownedProjections()).to.deep.equal([]);
      // Without the connection it runs the projection as before ownership, long before the next claim round.
      last = await append(store, prefix, 10);
      expect(await runner.waitFor(last, { timeoutMs: 1000 })).to.equal(true);
      // Owned again after a later claim round.
      expect(await eventually(async () => (await ownedCheckpoints(testDb().knex, [name])).length === 1, 8000)).to.equal(true);
      expect(runner.ownedProjections()).to.deep.equal([name]);
      last = await append(store, prefix, 10);
      expect(await runner.waitFor(last, { timeoutMs: 10000 })).to.equal(true);
      expect(await recorded(name)).to.equal(30);
      expect(runner.statuses()[0]!.lastError).to.equal(null);
    } finally {
      await runner.stop();
    }
  });
});
