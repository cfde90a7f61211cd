import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { COMMITTED_HEAD_SQL, HEAD_POSITION_SQL, PostgresEventStore, READ_ALL_SQL } from '../../platform/eventstore/postgres.js';
import { artifactOf, comparePositions, DuplicateEventError, START, WrongExpectedVersionError, type Position, type RecordedEvent } from '../../platform/eventstore/port.js';
import { eventStoreContract, newEvent } from './contract.js';
import { testDb } from '../support/db.js';

eventStoreContract('postgres', async () => PostgresEventStore.connect(testDb().url, { poolSize: 30 }), 'never skipped');
eventStoreContract(
  'postgres (serialized appends)',
  async () => PostgresEventStore.connect(testDb().url, { poolSize: 30, serializeAppends: true }),
  'never skipped',
);
eventStoreContract(
  'postgres (no group commit)',
  async () => PostgresEventStore.connect(testDb().url, { poolSize: 30, maxBatchedAppends: 1 }),
  'never skipped',
);

describe('PostgreSQL event store: group commit and read-ahead', () => {
  let store: PostgresEventStore;
  before(async () => {
    // One batch in flight at a time, so appends made together are sure to share batches.
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 10, maxInFlightBatches: 1 });
  });
  after(async () => store.close());

  const stream = (name: string) => `gc-${name}-${randomUUID()}`;

  it('commits concurrent appends to many streams together, each at its own revision', async () => {
    const streams = Array.from({ length: 60 }, (_, i) => stream(`many-${i}`));
    const results = await Promise.all(streams.map((s, i) => store.append(s, [newEvent('Noted', { i }), newEvent('Noted', { i, second: true })], 'no_stream')));
    for (const r of results) {
      expect(r.nextExpectedRevision).to.equal(1n);
      expect(r.replayed).to.equal(false);
    }
    // Fewer transactions than appends: the appends were grouped.
    expect(new Set(results.map((r) => r.position.commit)).size).to.be.lessThan(streams.length);
    for (const [i, s] of streams.entries()) {
      const events = await store.readStream(s);
      expect(events.map((e) => [e.revision, (e.data as { i: number }).i])).to.deep.equal([[0n, i], [1n, i]]);
    }
  });

  it('commits the appends made in one turn of the event loop in one transaction, while no batch is in flight', async () => {
    // The default bound of batches in flight (4): before, the first four appends went out alone.
    const defaults = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
    try {
      const streams = Array.from({ length: 8 }, (_, i) => stream(`turn-${i}`));
      // As the delivery reactor's lanes append: each after some awaits of its own, in one turn.
      const results = await Promise.all(
        streams.map(async (s, i) => {
          for (let hop = 0; hop < i; hop++) await Promise.resolve();
          return defaults.append(s, [newEvent('Noted', { i })], 'no_stream');
        }),
      );
      expect(new Set(results.map((r) => r.position.commit)).size).to.equal(1);
      // A lone append later goes out on its own.
      const alone = await defaults.append(stream('alone'), [newEvent('Noted', {})], 'no_stream');
      expect(alone.position.commit > results[0]!.position.commit).to.equal(true);
    } finally {
      await defaults.close();
    }
  });

  it('keeps the other appends of a batch when one has a wrong expected revision or a stored event id', async () => {
    const existing = stream('existing');
    await store.append(existing, [newEvent('Noted', { n: 0 })], 'no_stream');
    const stored = newEvent('Noted', { n: 'stored' });
    const other = stream('other');
    await store.append(other, [stored], 'no_stream');

    const blocker = store.append(stream('first'), [newEvent('Noted', {})], 'any'); // made in the same turn: one batch with the rest
    const good = Array.from({ length: 10 }, (_, i) => store.append(stream(`good-${i}`), [newEvent('Noted', { i })], 'no_stream'));
    const wrong = store.append(existing, [newEvent('Noted', { n: 1 })], 5n);
    const duplicate = store.append(stream('dup'), [stored], 'no_stream');
    const outcomes = await Promise.allSettled([blocker, ...good, wrong, duplicate]);

    expect(outcomes.slice(0, 11).every((o) => o.status === 'fulfilled')).to.equal(true);
    const wrongOutcome = outcomes[11] as PromiseRejectedResult;
    expect(wrongOutcome.status).to.equal('rejected');
    expect(wrongOutcome.reason).to.be.instanceOf(WrongExpectedVersionError);
    expect((wrongOutcome.reason as WrongExpectedVersionError).actual).to.equal(0n);
    const duplicateOutcome = outcomes[12] as PromiseRejectedResult;
    expect(duplicateOutcome.status).to.equal('rejected');
    expect(duplicateOutcome.reason).to.be.instanceOf(DuplicateEventError);
    expect((await store.readStream(existing)).map((e) => e.revision)).to.deep.equal([0n]);
  });

  it('writes a new stream\'s row once at its final revision, and the next append finds it there (batch and multi-stream appends)', async () => {
    const { default: pg } = await import('pg');
    const db = new pg.Client({ connectionString: testDb().url });
    await db.connect();
    try {
      const revisionOf = async (s: string) => (await db.query<{ revision: string }>('select revision::text from es_streams where stream_id = $1', [s])).rows[0]?.revision ?? null;
      const [a, b, c, d] = [stream('once-a'), stream('once-b'), stream('once-c'), stream('once-d')];
      // In one batch: a new stream twice (no_stream, then at its revision), one with 'any', another new one,
      // and a 'stream_exists' part on a missing stream (refused, the others kept).
      const blocker = store.append(stream('once-blocker'), [newEvent('Noted', {})], 'any');
      const outcomes = await Promise.allSettled([
        blocker,
        store.append(a, [newEvent('A1', {}), newEvent('A2', {})], 'no_stream'),
        store.append(a, [newEvent('A3', {})], 1n),
        store.append(b, [newEvent('B1', {})], 'any'),
        store.append(c, [newEvent('C1', {}), newEvent('C2', {}), newEvent('C3', {})], 'no_stream'),
        store.append(d, [newEvent('D1', {})], 'stream_exists'),
      ]);
      expect(outcomes.slice(0, 5).map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect((outcomes[5] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedVersionError);
      expect([await revisionOf(a), await revisionOf(b), await revisionOf(c)]).to.deep.equal(['2', '0', '2']);
      expect(await store.readStream(d)).to.have.length(0);
      // Multi-stream: new streams at their final revision; a 'stream_exists' or revision part on a missing stream writes nothing.
      const [e, f, g] = [stream('once-e'), stream('once-f'), stream('once-g')];
      await store.appendMulti([
        { streamId: e, events: [newEvent('E1', {}), newEvent('E2', {})], expected: 'no_stream' },
        { streamId: f, events: [newEvent('F1', {})], expected: 'any' },
        { streamId: a, events: [newEvent('A4', {})], expected: 2n },
      ]);
      expect([await revisionOf(e), await revisionOf(f), await revisionOf(a)]).to.deep.equal(['1', '0', '3']);
      for (const expected of ['stream_exists', 0n] as const) {
        const err = await store.appendMulti([{ streamId: g, events: [newEvent('G1', {})], expected }, { streamId: stream('once-h'), events: [newEvent('H1', {})], expected: 'no_stream' }]).catch((x) => x);
        expect(err).to.be.instanceOf(WrongExpectedVersionError);
        expect((err as WrongExpectedVersionError).actual).to.equal('no_stream');
      }
      expect(await store.readStream(g)).to.have.length(0);
      // The next appends find every row at the revision its events reached.
      await store.append(b, [newEvent('B2', {})], 0n);
      await store.append(c, [newEvent('C4', {})], 2n);
      await store.appendMulti([{ streamId: e, events: [newEvent('E3', {})], expected: 1n }, { streamId: f, events: [newEvent('F2', {})], expected: 0n }]);
      expect((await store.readStream(a)).map((x) => [x.type, x.revision])).to.deep.equal([['A1', 0n], ['A2', 1n], ['A3', 2n], ['A4', 3n]]);
      expect((await store.readStream(e)).map((x) => x.revision)).to.deep.equal([0n, 1n, 2n]);
      expect([await revisionOf(b), await revisionOf(c), await revisionOf(e), await revisionOf(f)]).to.deep.equal(['1', '3', '2', '1']);
    } finally {
      await db.end();
    }
  });

  it('answers a replayed append inside a batch as a replay', async () => {
    const s = stream('replay');
    const events = [newEvent('Noted', { a: 1 }), newEvent('Noted', { a: 2 })];
    const first = await store.append(s, events, 'no_stream');
    const blocker = store.append(stream('blocker'), [newEvent('Noted', {})], 'any');
    const [, again, fresh] = await Promise.all([blocker, store.append(s, events, 'no_stream'), store.append(stream('fresh'), [newEvent('Noted', {})], 'no_stream')]);
    expect(again.replayed).to.equal(true);
    expect(again.nextExpectedRevision).to.equal(first.nextExpectedRevision);
    expect(fresh.replayed).to.equal(false);
    expect(await store.readStream(s)).to.have.length(2);
  });

  it('reads the log in full pages with read-ahead exactly as without it, and sees events appended after a read-ahead', async () => {
    const head = await store.headPosition();
    const s = stream('pages');
    for (let i = 0; i < 5; i++) await store.append(s, Array.from({ length: 100 }, (_, j) => newEvent('Paged', { n: i * 100 + j })), 'any');
    const readFrom = async (from: Position, limit: number) => {
      const out: RecordedEvent[] = [];
      for (;;) {
        const page = await store.readAll(from, limit);
        out.push(...page);
        if (page.length < limit) return out;
        from = page[page.length - 1]!.position;
      }
    };
    const paged = (await readFrom(head, 100)).filter((e) => e.streamId === s);
    expect(paged.map((e) => (e.data as { n: number }).n)).to.deep.equal(Array.from({ length: 500 }, (_, n) => n));

    // A full page sends the read of the next page at once; an event appended after that still
    // shows up, after the 400 events the read-ahead holds, and nothing is skipped or repeated.
    const first = await store.readAll(head, 100);
    expect(first).to.have.length(100);
    await store.append(s, [newEvent('Paged', { n: 'late' })], 'any');
    const rest = (await readFrom(first[first.length - 1]!.position, 100)).filter((e) => e.streamId === s);
    expect(rest.map((e) => (e.data as { n: unknown }).n)).to.deep.equal([...Array.from({ length: 400 }, (_, n) => n + 100), 'late']);
  });
});

describe('PostgreSQL event store: the head while an older transaction is open', () => {
  it('headPosition stops short of an append an older open transaction may still precede; committedHead has it, and readers reach it once that transaction ends', async () => {
    const store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    const older = await testDb().knex.client.acquireConnection();
    try {
      // A transaction with a transaction id older than the append's, still open: a reader
      // cannot yet be sure nothing will commit before the append, so it does not see it.
      await testDb().knex.raw('begin').connection(older);
      await testDb().knex.raw('select pg_current_xact_id()').connection(older);
      const appended = await store.append(`head-${randomUUID()}`, [newEvent('Noted', {})], 'no_stream');
      expect(comparePositions(await store.headPosition(), appended.position)).to.be.lessThan(0);
      expect(await store.committedHead()).to.deep.equal(appended.position);
      await testDb().knex.raw('rollback').connection(older);
      expect(comparePositions(await store.headPosition(), appended.position)).to.be.at.least(0);
    } finally {
      await testDb().knex.client.releaseConnection(older);
      await store.close();
    }
  });
});

describe('PostgreSQL event store queries', () => {
  // Ordering by a text rendering of the transaction id sorts '10000' before '9999', which skips
  // and repeats events whenever transaction ids gain a digit, and forces a sort of the whole
  // table on every read. The reads must walk the (transaction_id, global_position) index.
  for (const [name, sql, params] of [
    ['readAll', READ_ALL_SQL, ['0', '0', 100]],
    ['headPosition', HEAD_POSITION_SQL, []],
    ['committedHead', COMMITTED_HEAD_SQL, []],
  ] as const) {
    it(`${name} walks the (transaction_id, global_position) index with no sort`, async () => {
      const plan = await testDb().knex.transaction(async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        await trx.raw('set local enable_bitmapscan = off');
        const sqlWithKnexParams = sql.replace(/\$(\d)/g, '?');
        const { rows } = await trx.raw(`explain (format json) ${sqlWithKnexParams}`, [...params]);
        return JSON.stringify(rows[0]['QUERY PLAN']);
      });
      expect(plan).to.contain('es_events_tx_position');
      expect(plan).not.to.contain('"Node Type":"Sort"');
    });
  }

  it('lets no NOTIFY run inside an append (it would serialise commits)', async () => {
    const { rows } = await testDb().knex.raw(`select prosrc from pg_proc where proname in ('es_append', 'es_append_batch')`);
    expect(rows).to.have.length(4); // each for jsonb (before the log's columns became json) and json
    for (const row of rows) expect(row.prosrc).not.to.contain('pg_notify');
  });
});

describe('PostgreSQL event store: the artifact table', () => {
  it('refuses UPDATE, DELETE and TRUNCATE like the log, and an artifact whose hash does not match its bytes', async () => {
    const knex = testDb().knex;
    const artifact = artifactOf(Buffer.from(`<Invoice>${randomUUID()}</Invoice>`));
    await knex('es_artifacts').insert({ hash: artifact.sha256, content: artifact.content });
    for (const statement of [
      knex('es_artifacts').where({ hash: artifact.sha256 }).update({ content: Buffer.from('changed') }),
      knex('es_artifacts').where({ hash: artifact.sha256 }).delete(),
      knex.raw('truncate es_artifacts'),
    ]) {
      const err = await statement.then(() => null, (e: { code?: string }) => e);
      expect(err?.code).to.equal('ES403');
    }
    const forged = await knex('es_artifacts').insert({ hash: 'a'.repeat(64), content: Buffer.from('x') }).then(() => null, (e: { code?: string }) => e);
    expect(forged?.code).to.equal('23514');
    const [row] = await knex('es_artifacts').where({ hash: artifact.sha256 });
    expect(Buffer.compare(row.content, artifact.content)).to.equal(0);
  });
});

/** Counts the statements a store sends from here on (those of one prepared name, when given). */
function countStatements(store: PostgresEventStore, name?: string): { n: number } {
  const pool = (store as unknown as { pool: { query: (config: unknown, ...rest: unknown[]) => unknown } }).pool;
  const query = pool.query.bind(pool);
  const counter = { n: 0 };
  pool.query = (config: unknown, ...rest: unknown[]) => {
    if (name === undefined || (config as { name?: string })?.name === name) counter.n++;
    return query(config, ...rest);
  };
  return counter;
}

describe('PostgreSQL event store: artifacts it appended lately', () => {
  it('serves an artifact it has just written without a query; another store reads it from the table', async () => {
    const store = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
    const other = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
    try {
      const written = artifactOf(Buffer.from(`<Invoice>${randomUUID()}</Invoice>`));
      const event = (id = randomUUID()) => ({ id, type: 'ArtifactNamed', schemaVersion: 1, data: { sha256: written.sha256 }, metadata: { correlationId: id, causationId: null, occurredAt: new Date().toISOString() } });
      const stream = `artifacts-${randomUUID()}`;
      const first = event();
      await store.append(stream, [first], 'no_stream', { artifacts: [written] });
      // Count the statements each store sends from here on.
      const mine = countStatements(store);
      const theirs = countStatements(other);
      const here = await store.readArtifacts([written.sha256]);
      expect(Buffer.compare(here.get(written.sha256)!, written.content)).to.equal(0);
      expect(mine.n).to.equal(0);
      // Another process (another store) reads it from the table.
      const there = await other.readArtifacts([written.sha256]);
      expect(Buffer.compare(there.get(written.sha256)!, written.content)).to.equal(0);
      expect(theirs.n).to.equal(1);

      // Appended with keep: false (one stream, and several at once), it is stored and read from the table.
      const reads = countStatements(store, 'es_read_artifacts');
      for (const multi of [false, true]) {
        const unkept = artifactOf(Buffer.from(`<TaxData>${randomUUID()}</TaxData>`));
        const id = randomUUID();
        const named = { ...event(id), data: { sha256: unkept.sha256 } };
        if (multi) await store.appendMulti([{ streamId: `artifacts-${randomUUID()}`, events: [named], expected: 'no_stream' }], { artifacts: [unkept], keep: false });
        else await store.append(`artifacts-${randomUUID()}`, [named], 'no_stream', { artifacts: [unkept], keep: false });
        const before = reads.n;
        const read = await store.readArtifacts([unkept.sha256]);
        expect(Buffer.compare(read.get(unkept.sha256)!, unkept.content)).to.equal(0);
        expect(reads.n - before, multi ? 'appendMulti' : 'append').to.equal(1);
      }
    } finally {
      await store.close();
      await other.close();
    }
  });
});

describe('PostgreSQL event store: waking other processes', () => {
  it('notifies a store listening in another session, which wakes at once', async () => {
    const writer = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
    const reader = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
    try {
      await reader.waitForAppends(50); // starts its LISTEN session
      const started = Date.now();
      const woken = reader.waitForAppends(20_000);
      await writer.append(`wake-${randomUUID()}`, [newEvent('Woken', {})], 'no_stream');
      await woken;
      expect(Date.now() - started).to.be.below(10_000); // the notification, not the 20 s time-out
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it('asks at most once a second while no other session listens, and then sends no NOTIFY', async () => {
    const alone = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
    try {
      await alone.waitForAppends(50); // its own LISTEN session does not count as another
      const asked = countStatements(alone, 'es_notify_if_listened');
      const started = Date.now();
      for (let i = 0; i < 40; i++) {
        await alone.append(`alone-${randomUUID()}`, [newEvent('Alone', {})], 'no_stream');
        await new Promise((r) => setTimeout(r, 10)); // past the 5 ms coalescing of each burst
      }
      const seconds = (Date.now() - started) / 1000;
      expect(asked.n).to.be.at.least(1);
      expect(asked.n).to.be.at.most(Math.ceil(seconds) + 1);
    } finally {
      await alone.close();
    }
  });
});
