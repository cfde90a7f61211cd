/** The attempts of one webhook delivery as given / when / then specifications (no I/O). */
import { expect } from 'chai';
import { aggregateFor } from '../../domain/aggregates.js';
import { attemptsDecider, legacyAttemptsFold, type AttemptRecord } from '../../domain/webhooks/delivery.js';
import { webhookAttemptsStream, webhookDeliveryStream } from '../../domain/webhooks/values.js';
import { deciderSpecification } from '../support/decider-spec.js';

const at = '2026-05-01T10:00:00.000Z';
const record = (attempt: number, outcome: AttemptRecord['outcome'], deliveryId = 'whd_1'): AttemptRecord => ({
  deliveryId,
  subscriptionId: 'whk_1',
  workspaceId: 'ws_a',
  environment: 'sandbox',
  eventId: 'e_1',
  eventType: 'isv.credits.allowance.changed',
  attempt,
  attemptedAt: at,
  statusCode: outcome === 'delivered' ? 200 : outcome === 'failed' ? 400 : 503,
  durationMs: 5,
  error: outcome === 'delivered' ? null : 'HTTP 503',
  responseBody: null,
  outcome,
  nextAttemptAt: outcome === 'retry' ? '2026-05-01T10:01:00.000Z' : null,
  ping: null,
});
const attempted = (r: AttemptRecord) => ({ type: 'WebhookDeliveryAttempted' as const, data: r });
const attempt = (r: AttemptRecord) => ({ type: 'RecordAttempt' as const, record: r });

describe('decider specification: the attempts of a webhook delivery', () => {
  const given = deciderSpecification(attemptsDecider);

  it('records the first attempt of a new delivery, and each next one while it is retried', () => {
    given([]).when(attempt(record(1, 'retry'))).then([attempted(record(1, 'retry'))]);
    given([attempted(record(1, 'retry')), attempted(record(2, 'retry'))])
      .when(attempt(record(3, 'delivered')))
      .then((events, state) => {
        expect(events).to.deep.equal([attempted(record(3, 'delivered'))]);
        expect(state).to.deep.equal({ attempts: 3, finished: true });
      });
  });

  it('records nothing for an attempt recorded already (a claimant whose claim lapsed made it again)', () => {
    given([attempted(record(1, 'retry'))]).when(attempt(record(1, 'retry'))).thenNothingHappened();
    given([attempted(record(1, 'retry')), attempted(record(2, 'delivered'))]).when(attempt(record(2, 'delivered'))).thenNothingHappened();
    given([attempted(record(1, 'retry')), attempted(record(2, 'failed'))]).when(attempt(record(1, 'retry'))).thenNothingHappened();
  });

  it('refuses an attempt after the delivery was delivered or failed for good', () => {
    given([attempted(record(1, 'delivered'))]).when(attempt(record(2, 'retry'))).thenThrows('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    given([attempted(record(1, 'retry')), attempted(record(2, 'failed'))]).when(attempt(record(3, 'retry'))).thenThrows((err) => {
      expect(String(err)).to.match(/finished/);
    });
  });

  it('refuses an attempt that skips a number', () => {
    given([]).when(attempt(record(2, 'retry'))).thenThrows('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    given([attempted(record(1, 'retry'))]).when(attempt(record(3, 'retry'))).thenThrows('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
  });

  it('is the fold of a delivery stream; the subscription streams of before fold per delivery', () => {
    expect(aggregateFor(webhookDeliveryStream('whd_1'))?.category).to.equal(attemptsDecider.category);
    expect(aggregateFor(webhookAttemptsStream('whk_1'))).to.equal(legacyAttemptsFold);
    const stored = [record(1, 'retry'), record(1, 'delivered', 'whd_2'), record(2, 'retry')].map((r) => ({ type: 'WebhookDeliveryAttempted', schemaVersion: 1, data: r, occurredAt: at }));
    const state = stored.reduce((s, e) => legacyAttemptsFold.evolve(s, e), legacyAttemptsFold.initialState);
    expect(state).to.deep.equal({ whd_1: { attempts: 2, finished: false }, whd_2: { attempts: 1, finished: true } });
    // A delivery that began in its subscription's stream goes on from there.
    deciderSpecification({ ...attemptsDecider, initialState: state.whd_1! })([]).when(attempt(record(3, 'delivered'))).then([attempted(record(3, 'delivered'))]);
  });
});
