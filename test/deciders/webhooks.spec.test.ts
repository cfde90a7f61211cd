/** The webhook subscription and attempts deciders as given / when / then specifications (no I/O). */
import { expect } from 'chai';
import { attemptsDecider, type AttemptRecord } from '../../domain/webhooks/delivery.js';
import { subscriptionDecider } from '../../domain/webhooks/subscription.js';
import { deciderSpecification } from '../support/decider-spec.js';

const now = '2026-05-01T10:00:00.000Z';
const create = {
  type: 'CreateSubscription' as const,
  subscriptionId: 'wh_1',
  workspaceId: 'ws_a',
  environment: 'sandbox' as const,
  webhookUrl: 'https://example.com/hook',
  events: ['isv.credits.allowance.changed' as const],
  secretKey: null,
  signatureAlgorithm: 'sha256' as const,
  description: null,
  now,
};
const { type: _t, now: _n, ...fields } = create;
const created = { type: 'WebhookSubscriptionCreated' as const, data: { ...fields, active: true, createdAt: now } };

describe('decider specification: webhook subscriptions and attempts', () => {
  const given = deciderSpecification(subscriptionDecider);

  it('creates a subscription once; a second create is CONNECT_WEBHOOK_EXISTS', () => {
    given([]).when(create).then([created] as never);
    given([created] as never).when(create).thenThrows('CONNECT_WEBHOOK_EXISTS');
  });

  it('records no event for an update that changes nothing, and names the changed fields otherwise', () => {
    given([created] as never).when({ type: 'UpdateSubscription', workspaceId: 'ws_a', changes: { webhookUrl: 'https://example.com/hook' }, now }).thenNothingHappened();
    given([created] as never)
      .when({ type: 'UpdateSubscription', workspaceId: 'ws_a', changes: { active: false }, now })
      .then((events) => expect(events.map((e) => (e.data as { changed: string[] }).changed)).to.deep.equal([['active']]));
  });

  it('does not let another workspace or a deleted subscription be changed', () => {
    given([created] as never).when({ type: 'DeleteSubscription', workspaceId: 'ws_b', now }).thenThrows('CONNECT_WEBHOOK_NOT_FOUND');
    const deleted = { type: 'WebhookSubscriptionDeleted', data: { subscriptionId: 'wh_1', workspaceId: 'ws_a', deletedAt: now } };
    given([created, deleted] as never).when({ type: 'DeleteSubscription', workspaceId: 'ws_a', now }).thenThrows('CONNECT_WEBHOOK_NOT_FOUND');
  });

  it('records attempts of a delivery in order, and none after it finished', () => {
    const attempts = deciderSpecification(attemptsDecider);
    const record = (attempt: number, outcome: AttemptRecord['outcome']): AttemptRecord => ({
      deliveryId: 'd_1', subscriptionId: 'wh_1', workspaceId: 'ws_a', environment: 'sandbox', eventId: 'e_1', eventType: 'isv.credits.allowance.changed',
      attempt, attemptedAt: now, statusCode: outcome === 'delivered' ? 200 : 500, durationMs: 5, error: null, responseBody: null, outcome, nextAttemptAt: null, ping: null,
    });
    const attempted = (r: AttemptRecord) => ({ type: 'WebhookDeliveryAttempted' as const, data: r });
    attempts([]).when({ type: 'RecordAttempt', record: record(1, 'retry') }).then([attempted(record(1, 'retry'))]);
    attempts([attempted(record(1, 'retry'))]).when({ type: 'RecordAttempt', record: record(3, 'retry') }).thenThrows('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
    attempts([attempted(record(1, 'delivered'))]).when({ type: 'RecordAttempt', record: record(2, 'retry') }).thenThrows('WEBHOOK_ATTEMPT_OUT_OF_ORDER');
  });
});
