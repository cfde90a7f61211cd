/**
 * The webhook_attempts projection: every attempt the delivery worker records
 * (WebhookDeliveryAttempted) into the attempt log (webhook_attempts) and the state of its
 * delivery (webhook_delivery_state: attempts made, outcome, next attempt), from which the worker
 * knows what is due. It is apart from the webhooks projection, which turns occurrences into
 * deliveries, so that new deliveries never wait behind the records of earlier attempts. A
 * delivery without a state row has had no attempt recorded: it is pending, its first attempt due
 * when its delivery row says. The state only moves to a later attempt, so it does not depend on
 * the order in which the two projections reach the log. A batch costs one statement per table.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { deliveryStatusAfter, WebhookDeliveryAttempted, type AttemptRecord } from '../domain/webhooks/delivery.js';
import { writeAttempts, type AttemptLogRecord, type DeliveryStateRecord } from '../readmodels/webhooks.js';
import { defineProjection } from './projection.js';

async function applyAttempts(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const attempts: AttemptLogRecord[] = [];
  const latest = new Map<string, AttemptRecord>(); // delivery id → its latest attempt in the batch
  for (const event of events) {
    const a = decodeEventData(WebhookDeliveryAttempted, event.schemaVersion, event.data);
    attempts.push({
      delivery_id: a.deliveryId,
      attempt: a.attempt,
      attempted_at: a.attemptedAt,
      status_code: a.statusCode,
      duration_ms: Math.round(a.durationMs),
      error: a.error,
      response_body: a.responseBody,
      outcome: a.outcome,
      next_attempt_at: a.nextAttemptAt,
    });
    const prior = latest.get(a.deliveryId);
    if (!prior || prior.attempt < a.attempt) latest.set(a.deliveryId, a);
  }
  const states: DeliveryStateRecord[] = [...latest.values()].map((a) => ({
    delivery_id: a.deliveryId,
    subscription_id: a.subscriptionId,
    status: deliveryStatusAfter(a.outcome),
    attempts: a.attempt,
    next_attempt_at: a.nextAttemptAt,
    last_attempt_at: a.attemptedAt,
    last_status_code: a.statusCode,
    last_error: a.error,
  }));
  await writeAttempts(trx, attempts, states);
}

export const webhookAttemptsProjection = defineProjection({
  name: 'webhook_attempts',
  version: 1,
  tables: ['webhook_attempts', 'webhook_delivery_state'],
  eventTypes: new Set([WebhookDeliveryAttempted.type]),
  apply: (trx, event) => applyAttempts(trx, [event]),
  applyMany: applyAttempts,
});
