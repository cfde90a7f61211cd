/** The credits engine on a real event store: group commit, replays inside a batch, snapshots, two instances. */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { CreditsEngine, serializeCreditsState } from '../../commands/credits/engine.js';
import { reserveForDocument } from '../../commands/credits/metering.js';
import { knexSnapshotStore } from '../../commands/credits/snapshots.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { companyOf, poolTotals } from '../../domain/credits/credits.js';
import { creditsStream, reservationIdFor } from '../../domain/credits/values.js';
import { DomainError } from '../../domain/errors.js';
import { testDb } from '../support/db.js';

const COMPANY = 'abcdefabcdefabcdefabcdef';

describe('credits engine', function () {
  this.timeout(60000);
  let store: PostgresEventStore;
  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 10 });
  });
  after(async () => store.close());

  async function workspaceWithAllowance(engine: CreditsEngine, limit = 1000) {
    const workspaceId = `ws_engine_${randomUUID().slice(0, 8)}`;
    const now = new Date();
    await engine.execute(workspaceId, { type: 'IssueCredits', lotId: 'lot_1', amount: 10_000, expiresAt: null, environment: 'sandbox', reason: null, now: now.toISOString() }, { now });
    await engine.execute(
      workspaceId,
      {
        type: 'PutAllowance',
        companyId: COMPANY,
        target: 'current',
        precondition: { kind: 'none' },
        input: { limit, periodType: 'monthly', startAt: new Date(now.getTime() - 60_000).toISOString(), endAt: new Date(now.getTime() + 86_400_000).toISOString(), reason: 'r', planReference: null, metadata: {} },
        now: now.toISOString(),
        bulkJobId: null,
        environment: 'sandbox',
      },
      { now },
    );
    return workspaceId;
  }

  it('decides concurrent commands together (group commit) and answers each with its own outcome', async () => {
    const engine = new CreditsEngine(store);
    const workspaceId = await workspaceWithAllowance(engine, 30);
    const before = (await store.readStream(creditsStream(workspaceId))).length;
    const results = await Promise.all(
      Array.from({ length: 40 }, () => reserveForDocument(engine, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() })),
    );
    expect(results.filter((r) => r.outcome === 'reserved')).to.have.length(30);
    expect(results.filter((r) => r.outcome === 'refused')).to.have.length(10);
    const events = (await store.readStream(creditsStream(workspaceId))).slice(before);
    expect(events.filter((e) => e.type === 'ReservationCreated')).to.have.length(30);
    // Far fewer appends than commands: the events of one batch share a transaction.
    const transactions = new Set(events.map((e) => e.position.commit.toString()));
    expect(transactions.size).to.be.lessThan(20);
    // A refusal by the domain rejects that command alone.
    const refused = engine.execute(workspaceId, { type: 'Reconcile', reservationId: 'res_none', outcome: 'released', reason: 'x', now: new Date().toISOString() }, { now: new Date() });
    const fine = reserveForDocument(engine, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() });
    expect(await refused.catch((e) => e)).to.be.instanceOf(DomainError);
    expect((await fine).outcome).to.equal('refused');
  });

  it('recognises a replayed reaction inside a batch by its event ids and appends the rest', async () => {
    const engine = new CreditsEngine(store);
    const workspaceId = await workspaceWithAllowance(engine);
    const doc = randomUUID();
    const seed = randomUUID();
    const first = await reserveForDocument(engine, { workspaceId, companyId: COMPANY, documentId: doc }, { now: new Date() }, { idSeed: seed });
    expect(first.outcome).to.equal('reserved');
    await engine.execute(workspaceId, { type: 'Finalize', reservationId: reservationIdFor(doc), reason: null, now: new Date().toISOString() }, { now: new Date() });
    // The reservation is settled: deciding again would reserve anew; only the event ids tell it was done.
    const [replay, a, b] = await Promise.all([
      reserveForDocument(engine, { workspaceId, companyId: COMPANY, documentId: doc }, { now: new Date() }, { idSeed: seed }),
      reserveForDocument(engine, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() }),
      reserveForDocument(engine, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() }),
    ]);
    expect(replay).to.include({ outcome: 'reserved', replayed: true });
    expect(a.outcome).to.equal('reserved');
    expect(b.outcome).to.equal('reserved');
    const events = await store.readStream(creditsStream(workspaceId));
    expect(events.filter((e) => e.type === 'ReservationCreated' && (e.data as any).documentId === doc)).to.have.length(1);
    expect(events.filter((e) => e.type === 'ReservationCreated')).to.have.length(3);
    const state = await new CreditsEngine(store).read(workspaceId);
    expect(companyOf(state, COMPANY).current).to.include({ finalizedUsage: 1, reserved: 2 });
  });

  it('starts a cold cache from a snapshot and reads only the events after it; the state equals a full fold', async () => {
    const snapshots = knexSnapshotStore(testDb().knex);
    const writer = new CreditsEngine(store, { snapshots, snapshotEvery: 5, snapshotMinIntervalMs: 0 });
    const workspaceId = await workspaceWithAllowance(writer);
    for (let i = 0; i < 12; i++) await reserveForDocument(writer, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() });
    await new Promise((r) => setTimeout(r, 200)); // snapshots are written in the background
    const saved = await snapshots.load(creditsStream(workspaceId));
    expect(saved).to.not.equal(null);
    expect(Number(saved!.revision)).to.be.at.least(5);
    for (let i = 0; i < 3; i++) await reserveForDocument(writer, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() });
    const fromSnapshot = await new CreditsEngine(store, { snapshots }).read(workspaceId);
    const fromEvents = await new CreditsEngine(store).read(workspaceId);
    expect(serializeCreditsState(fromSnapshot)).to.deep.equal(serializeCreditsState(fromEvents));
    expect(companyOf(fromSnapshot, COMPANY).current!.reserved).to.equal(15);
    expect(poolTotals(fromSnapshot).reserved).to.equal(15);
  });

  it('keeps two instances with stale caches correct: a write decided on an old cache is decided again', async () => {
    const a = new CreditsEngine(store);
    const b = new CreditsEngine(store);
    const workspaceId = await workspaceWithAllowance(a, 10);
    await b.read(workspaceId); // b caches the state now
    for (let i = 0; i < 9; i++) await reserveForDocument(a, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() });
    // b still believes 10 are available; its append fails on the revision and it decides again.
    const last = await reserveForDocument(b, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() });
    const over = await reserveForDocument(b, { workspaceId, companyId: COMPANY, documentId: randomUUID() }, { now: new Date() });
    expect(last.outcome).to.equal('reserved');
    expect(over).to.include({ outcome: 'refused', blockReason: 'ALLOWANCE_EXHAUSTED' });
    expect(companyOf(await new CreditsEngine(store).read(workspaceId), COMPANY).current!.reserved).to.equal(10);
  });
});
