/**
 * The recording of webhook attempts against the real PostgreSQL event store: each delivery's
 * attempts in its own stream at exact revisions, decided by the delivery's decider; two
 * recorders (two worker processes) never record an attempt twice; attempts begun in a
 * subscription's stream of before go on; attempts recorded together share a transaction.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { AttemptRecorder } from '../../commands/webhooks/deliver.js';
import { DomainError } from '../../domain/errors.js';
import { WebhookDeliveryAttempted, type AttemptRecord } from '../../domain/webhooks/delivery.js';
import { webhookAttemptsStream, webhookDeliveryStream } from '../../domain/webhooks/values.js';
import { ManualClock } from '../../platform/clock.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { testDb } from '../support/db.js';

const record = (deliveryId: string, attempt: number, outcome: AttemptRecord['outcome']): AttemptRecord => ({
  deliveryId,
  subscriptionId: `whk_${deliveryId.slice(4)}`,
  workspaceId: 'ws_recorder',
  environment: 'sandbox',
  eventId: randomUUID(),
  eventType: 'isv.credits.allowance.changed',
  attempt,
  attemptedAt: '2026-06-01T00:00:00.000Z',
  statusCode: outcome === 'delivered' ? 200 : 503,
  durationMs: 3,
  error: outcome === 'delivered' ? null : 'HTTP 503',
  responseBody: null,
  outcome,
  nextAttemptAt: outcome === 'retry' ? '2026-06-01T00:01:00.000Z' : null,
  ping: null,
});

describe('webhooks: recording attempts (decider, expected revision, bounded cache)', function () {
  this.timeout(60000);
  let store: PostgresEventStore;
  const clock = new ManualClock('2026-06-01T00:00:00Z');
  const recorder = () => new AttemptRecorder({ store, clock });
  const newDelivery = () => `whd_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const attemptsIn = async (stream: string) => (await store.readStream(stream)).map((e) => [e.revision, (e.data as AttemptRecord).attempt, (e.data as AttemptRecord).outcome]);

  before(async () => {
    // One batch in flight at a time, so attempts recorded together are sure to share batches.
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 10, maxInFlightBatches: 1 });
  });
  after(async () => store.close());

  it("records a delivery's attempts in its own stream, attempt n at revision n - 1, and an attempt once", async () => {
    const d = newDelivery();
    const r = recorder();
    expect(await r.record(record(d, 1, 'retry'))).to.not.equal(null);
    expect(await r.record(record(d, 2, 'retry'))).to.not.equal(null);
    expect(await r.record(record(d, 2, 'retry'))).to.equal(null);
    expect(await r.record(record(d, 3, 'delivered'))).to.not.equal(null);
    expect(await recorder().record(record(d, 3, 'delivered'))).to.equal(null);
    expect(await attemptsIn(webhookDeliveryStream(d))).to.deep.equal([[0n, 1, 'retry'], [1n, 2, 'retry'], [2n, 3, 'delivered']]);
  });

  it('refuses an attempt after the delivery finished, or one that skips a number, and writes nothing', async () => {
    const d = newDelivery();
    await recorder().record(record(d, 1, 'delivered'));
    for (const r of [recorder(), recorder()]) {
      const refused = await r.record(record(d, 2, 'retry')).then(() => null, (err: unknown) => err);
      expect(refused).to.be.instanceOf(DomainError);
      expect((refused as DomainError).code).to.equal('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    }
    const skipped = await recorder().record(record(newDelivery(), 2, 'retry')).then(() => null, (err: unknown) => err);
    expect((skipped as DomainError).code).to.equal('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    expect(await attemptsIn(webhookDeliveryStream(d))).to.deep.equal([[0n, 1, 'delivered']]);
  });

  it('two recorders of the same delivery (a claim that lapsed): the stale one reloads on the conflict and records nothing twice', async () => {
    const d = newDelivery();
    const a = recorder();
    const b = recorder();
    expect(await a.record(record(d, 1, 'retry'))).to.not.equal(null);
    // b knows nothing of d: a first attempt expects no stream, conflicts, reloads and finds it recorded.
    expect(await b.record(record(d, 1, 'retry'))).to.equal(null);
    expect(await b.record(record(d, 2, 'retry'))).to.not.equal(null);
    // a still keeps revision 0: its attempt 2 conflicts, reloads, and is recorded already.
    expect(await a.record(record(d, 2, 'retry'))).to.equal(null);
    expect(await a.record(record(d, 3, 'failed'))).to.not.equal(null);
    expect(await attemptsIn(webhookDeliveryStream(d))).to.deep.equal([[0n, 1, 'retry'], [1n, 2, 'retry'], [2n, 3, 'failed']]);
  });

  it('a stale recorder whose delivery finished meanwhile reloads on the conflict and is refused by the decider', async () => {
    const d = newDelivery();
    const a = recorder();
    await a.record(record(d, 1, 'retry'));
    await a.record(record(d, 2, 'retry'));
    // Another worker made attempt 3 and it ended the delivery; a made it too and saw a 503.
    expect(await recorder().record(record(d, 3, 'failed'))).to.not.equal(null);
    expect(await a.record(record(d, 3, 'retry'))).to.equal(null);
    const refused = await a.record(record(d, 4, 'retry')).then(() => null, (err: unknown) => err);
    expect((refused as DomainError).code).to.equal('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    // And one that never saw attempt 3 at all: its append of attempt 4 at revision 1 conflicts.
    const c = recorder();
    const e = newDelivery();
    await c.record(record(e, 1, 'retry'));
    await c.record(record(e, 2, 'retry'));
    expect(await recorder().record(record(e, 3, 'delivered'))).to.not.equal(null);
    const late = await c.record(record(e, 4, 'retry')).then(() => null, (err: unknown) => err);
    expect((late as DomainError).code).to.equal('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    expect(await attemptsIn(webhookDeliveryStream(d))).to.deep.equal([[0n, 1, 'retry'], [1n, 2, 'retry'], [2n, 3, 'failed']]);
    expect(await attemptsIn(webhookDeliveryStream(e))).to.deep.equal([[0n, 1, 'retry'], [1n, 2, 'retry'], [2n, 3, 'delivered']]);
  });

  it("goes on with a delivery whose first attempts are in its subscription's stream of before, which stays as it was", async () => {
    const d = newDelivery();
    const finished = newDelivery();
    const sub = record(d, 1, 'retry').subscriptionId;
    const legacy = webhookAttemptsStream(sub);
    const old = (r: AttemptRecord) => ({
      id: randomUUID(),
      type: WebhookDeliveryAttempted.type,
      schemaVersion: WebhookDeliveryAttempted.version,
      data: r,
      metadata: { occurredAt: r.attemptedAt, workspaceId: r.workspaceId, environment: r.environment, correlationId: r.eventId, causationId: null, actor: 'webhook-worker' },
    });
    await store.append(legacy, [old(record(d, 1, 'retry')), old(record(d, 2, 'retry')), old({ ...record(finished, 1, 'delivered'), subscriptionId: sub })], 'no_stream');
    expect(await recorder().record(record(d, 2, 'retry'))).to.equal(null);
    expect(await recorder().record(record(d, 3, 'delivered'))).to.not.equal(null);
    const refused = await recorder().record({ ...record(finished, 2, 'retry'), subscriptionId: sub }).then(() => null, (err: unknown) => err);
    expect((refused as DomainError).code).to.equal('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    expect(await attemptsIn(webhookDeliveryStream(d))).to.deep.equal([[0n, 3, 'delivered']]);
    expect(await attemptsIn(legacy)).to.deep.equal([[0n, 1, 'retry'], [1n, 2, 'retry'], [2n, 1, 'delivered']]);
  });

  it('records the attempts that finish together in shared transactions (group commit)', async () => {
    const r = recorder();
    const deliveries = Array.from({ length: 40 }, () => newDelivery());
    const positions = await Promise.all(deliveries.map((d) => r.record(record(d, 1, 'retry'))));
    expect(positions.every((p) => p !== null)).to.equal(true);
    expect(new Set(positions.map((p) => p!.commit)).size).to.be.lessThan(deliveries.length);
    const next = await Promise.all(deliveries.map((d) => r.record(record(d, 2, 'delivered'))));
    expect(new Set(next.map((p) => p!.commit)).size).to.be.lessThan(deliveries.length);
    for (const d of deliveries) expect(await attemptsIn(webhookDeliveryStream(d))).to.deep.equal([[0n, 1, 'retry'], [1n, 2, 'delivered']]);
  });
});
