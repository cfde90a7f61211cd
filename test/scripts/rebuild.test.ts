import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { readCheckpoint } from '../../readmodels/checkpoints.js';
import { describeProgress, runRebuild, UnknownProjectionError } from '../../scripts/rebuild.js';
import { newEvent } from '../eventstore/contract.js';
import { testDb } from '../support/db.js';
import { createTestProjectionTable, TEST_TABLE, testProjection } from '../support/test-projection.js';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe('rebuild CLI', function () {
  this.timeout(60000);
  let store: PostgresEventStore;

  before(async () => {
    await createTestProjectionTable(testDb().knex);
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
  });
  after(async () => store.close());

  async function appendStreams(streams: number, perStream: number) {
    const prefix = `test_rebuild-${randomUUID().slice(0, 8)}`;
    for (let s = 0; s < streams; s++) {
      const events = Array.from({ length: perStream }, (_, i) => [newEvent('Test.Added', { n: i + 1 }), newEvent('Test.Ignored', {})]).flat();
      await store.append(`${prefix}-${s}`, events, 'no_stream');
    }
    return prefix;
  }

  it('rebuilds the named projection into the right rows, with progress on stderr and a JSON summary on stdout', async () => {
    const prefix = await appendStreams(3, 25);
    // Rows the rebuild must replace: a stale row for one of the streams.
    await testDb().knex(TEST_TABLE).insert({ stream_id: `${prefix}-0`, events: 999, total: 999, last_revision: 0 });
    const out = capture();
    const err = capture();

    const summaries = await runRebuild({ db: testDb(), store }, [testProjection()], {
      target: 'test_stream_totals',
      batchSize: 20,
      progress: 'lines',
      progressIntervalMs: 0,
      stdout: out.stream,
      stderr: err.stream,
    });

    const rows = await testDb().knex(TEST_TABLE).where('stream_id', 'like', `${prefix}-%`).orderBy('stream_id');
    expect(rows.map((r) => [r.stream_id, r.events, Number(r.total), Number(r.last_revision)])).to.deep.equal([
      [`${prefix}-0`, 25, 325, 48],
      [`${prefix}-1`, 25, 325, 48],
      [`${prefix}-2`, 25, 325, 48],
    ]);
    const total = await store.countEvents();
    expect(summaries).to.have.length(1);
    expect(summaries[0]).to.include({ projection: 'test_stream_totals', events: total });
    expect(summaries[0]!.seconds).to.be.a('number').and.at.least(0);
    expect(out.text()).to.equal(`${JSON.stringify(summaries[0])}\n`);

    const progress = err.text();
    expect(progress).to.contain(`rebuild test_stream_totals: started, ${total} events in the log`);
    expect(progress).to.match(/rebuild test_stream_totals: \d+\/\d+ events \(\d+%\), \d+ events\/s, ETA /);
    expect(progress).to.contain('swapping');
    expect(progress).to.contain(`rebuild test_stream_totals: done, ${total} events in`);

    const checkpoint = await readCheckpoint(testDb().knex, 'test_stream_totals');
    expect(checkpoint).to.deep.equal(await store.headPosition());
  });

  it('rebuilds every projection for "all", and has nothing to do without projections', async () => {
    const out = capture();
    const summaries = await runRebuild({ db: testDb(), store }, [testProjection()], {
      target: 'all',
      progress: 'none',
      stdout: out.stream,
    });
    expect(summaries.map((s) => s.projection)).to.deep.equal(['test_stream_totals']);
    expect(out.text().trim().split('\n').map((l) => JSON.parse(l).projection)).to.deep.equal(['test_stream_totals']);

    const err = capture();
    const none = await runRebuild({ db: testDb(), store }, [], { target: 'all', stdout: out.stream, stderr: err.stream });
    expect(none).to.deep.equal([]);
    expect(err.text()).to.contain('nothing to rebuild');
  });

  it('rejects an unknown projection name, listing the known ones, before touching anything', async () => {
    const before = await testDb().knex(TEST_TABLE).count({ n: '*' });
    let error: unknown = null;
    await runRebuild({ db: testDb(), store }, [testProjection()], { target: 'nope', progress: 'none' }).catch((e) => (error = e));
    expect(error).to.be.instanceOf(UnknownProjectionError);
    expect((error as UnknownProjectionError).exitCode).to.equal(2);
    expect(String((error as Error).message)).to.equal('unknown projection "nope"; known projections: test_stream_totals (or "all")');
    expect(await testDb().knex(TEST_TABLE).count({ n: '*' })).to.deep.equal(before);
  });

  it('exits 2 from the command line for an unknown projection', async () => {
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/rebuild.ts', `no_such_projection_${process.pid}`],
        { env: { ...process.env, DATABASE_URL: testDb().url, EVENTSTORE_URL: '' }, timeout: 60000 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
    expect(result.code).to.equal(2);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.match(/^error: unknown projection "no_such_projection_\d+"; known projections: .+\n$/);
  });

  it('describes progress with rate and ETA, or events done only when the total is unknown', () => {
    const startedAt = 1_000_000;
    expect(describeProgress({ projection: 'p', done: 500, total: 2000, phase: 'copying', startedAt }, startedAt + 2000)).to.equal(
      'rebuild p: 500/2000 events (25%), 250 events/s, ETA 6s',
    );
    expect(describeProgress({ projection: 'p', done: 500, total: null, phase: 'copying', startedAt }, startedAt + 1000)).to.equal(
      'rebuild p: 500 events, 500 events/s',
    );
  });
});
