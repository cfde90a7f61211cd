/**
 * The webhooks projection: subscriptions, the deliveries each occurrence causes, and their
 * attempts. Occurrences are produced here from the log by the occurrence sources
 * (domain/webhooks/occurrences), not by the HTTP handlers; doing it in the projection that
 * also applies the subscription events means an occurrence goes to exactly the subscriptions
 * that existed, were active and matched at its place in the log, so a rebuild produces the
 * same deliveries with the same ids. A delivery is due at once; its attempts (events written
 * by the delivery worker) move it on. A batch costs one statement per table.
 */
import { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import type { RecordedEvent } from '../commands/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { WebhookDeliveryAttempted, type AttemptRecord, type Occurrence } from '../domain/webhooks/delivery.js';
import { OCCURRENCE_SOURCES } from '../domain/webhooks/occurrences/index.js';
import { WebhookSubscriptionCreated, WebhookSubscriptionDeleted, WebhookSubscriptionUpdated } from '../domain/webhooks/subscription.js';
import { deliveryIdFor } from '../domain/webhooks/values.js';
import { defineProjection } from './projection.js';

interface SubRow {
  subscription_id: string;
  workspace_id: string;
  environment: string;
  webhook_url: string;
  events: string[];
  secret_key: string | null;
  signature_algorithm: string;
  description: string | null;
  active: boolean;
  deleted: boolean;
  created_at: string;
  updated_at: string;
}

interface DeliveryRow {
  delivery_id: string;
  subscription_id: string;
  workspace_id: string;
  environment: string;
  event_id: string;
  event_type: string;
  occurred_at: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  log_commit: string;
  log_prepare: string;
}

const SUBSCRIPTION_TYPES = new Set([WebhookSubscriptionCreated.type, WebhookSubscriptionUpdated.type, WebhookSubscriptionDeleted.type]);
const SOURCE_BY_TYPE = new Map(OCCURRENCE_SOURCES.flatMap((s) => [...s.eventTypes].map((t) => [t, s] as const)));

/**
 * Signals, in this process, that a batch committed new deliveries (due at once): the delivery
 * worker listens (`onDue`) so they are picked up without waiting for its next interval.
 * Deliveries committed by another instance are found at the interval as before.
 */
const deliveriesCommitted = new EventEmitter().setMaxListeners(0);
export function onWebhookDeliveriesCommitted(listener: () => void): () => void {
  deliveriesCommitted.on('committed', listener);
  return () => void deliveriesCommitted.off('committed', listener);
}

const statusOf = (a: AttemptRecord) => (a.outcome === 'delivered' ? 'delivered' : a.outcome === 'failed' ? 'failed' : 'pending');

function applyAttempt(row: DeliveryRow, a: AttemptRecord): void {
  if (a.attempt <= row.attempts) return;
  row.attempts = a.attempt;
  row.status = statusOf(a);
  row.next_attempt_at = a.nextAttemptAt;
  row.last_attempt_at = a.attemptedAt;
  row.last_status_code = a.statusCode;
  row.last_error = a.error;
}

async function chunked<T>(rows: readonly T[], size: number, write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += size) await write(rows.slice(i, i + size));
}

async function applyWebhookEvents(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  // Occurrences of the batch, and the workspaces whose subscriptions they need.
  const occurrences = new Map<RecordedEvent, Occurrence[]>();
  const workspaces = new Set<string>();
  for (const event of events) {
    const source = SOURCE_BY_TYPE.get(event.type);
    if (source) {
      const found = source.occurrencesOf(event);
      if (found.length > 0) {
        occurrences.set(event, found);
        for (const o of found) workspaces.add(o.workspaceId);
      }
    }
  }
  const subs = new Map<string, SubRow>(); // subscription id → row as of the current event
  const byWorkspace = new Map<string, Set<string>>();
  const index = (row: SubRow) => {
    subs.set(row.subscription_id, row);
    let set = byWorkspace.get(row.workspace_id);
    if (!set) byWorkspace.set(row.workspace_id, (set = new Set()));
    set.add(row.subscription_id);
  };
  if (workspaces.size > 0) {
    const rows: SubRow[] = await trx('webhook_subscriptions').whereIn('workspace_id', [...workspaces]).andWhere('deleted', false);
    for (const r of rows) index(r);
  }
  const changedSubs = new Map<string, SubRow>();
  const fresh = new Map<string, DeliveryRow>();
  const updates = new Map<string, AttemptRecord>();
  const attempts: Record<string, unknown>[] = [];

  for (const event of events) {
    if (SUBSCRIPTION_TYPES.has(event.type)) {
      let row: SubRow | undefined;
      if (event.type === WebhookSubscriptionCreated.type) {
        const d = decodeEventData(WebhookSubscriptionCreated, event.schemaVersion, event.data);
        row = {
          subscription_id: d.subscriptionId,
          workspace_id: d.workspaceId,
          environment: d.environment,
          webhook_url: d.webhookUrl,
          events: d.events,
          secret_key: d.secretKey,
          signature_algorithm: d.signatureAlgorithm,
          description: d.description,
          active: d.active,
          deleted: false,
          created_at: d.createdAt,
          updated_at: d.createdAt,
        };
      } else if (event.type === WebhookSubscriptionUpdated.type) {
        const d = decodeEventData(WebhookSubscriptionUpdated, event.schemaVersion, event.data);
        const before = subs.get(d.subscriptionId) ?? (await trx('webhook_subscriptions').where({ subscription_id: d.subscriptionId }).first());
        if (!before) continue;
        row = {
          ...before,
          webhook_url: d.webhookUrl,
          events: d.events,
          secret_key: d.secretKey,
          signature_algorithm: d.signatureAlgorithm,
          description: d.description,
          active: d.active,
          updated_at: d.updatedAt,
        };
      } else {
        const d = decodeEventData(WebhookSubscriptionDeleted, event.schemaVersion, event.data);
        const before = subs.get(d.subscriptionId) ?? (await trx('webhook_subscriptions').where({ subscription_id: d.subscriptionId }).first());
        if (!before) continue;
        row = { ...before, deleted: true, active: false, updated_at: d.deletedAt };
      }
      index(row!);
      changedSubs.set(row!.subscription_id, row!);
      continue;
    }
    if (event.type === WebhookDeliveryAttempted.type) {
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
      let row = fresh.get(a.deliveryId);
      if (!row && a.ping) {
        row = {
          delivery_id: a.deliveryId,
          subscription_id: a.subscriptionId,
          workspace_id: a.workspaceId,
          environment: a.environment,
          event_id: a.eventId,
          event_type: a.eventType,
          occurred_at: a.ping.occurredAt,
          payload: JSON.stringify(a.ping.payload),
          status: 'pending',
          attempts: 0,
          next_attempt_at: null,
          last_attempt_at: null,
          last_status_code: null,
          last_error: null,
          log_commit: event.position.commit.toString(),
          log_prepare: event.position.prepare.toString(),
        };
        fresh.set(a.deliveryId, row);
      }
      if (row) applyAttempt(row, a);
      else {
        const prior = updates.get(a.deliveryId);
        if (!prior || prior.attempt < a.attempt) updates.set(a.deliveryId, a);
      }
      continue;
    }
    for (const o of occurrences.get(event) ?? []) {
      for (const id of byWorkspace.get(o.workspaceId) ?? []) {
        const s = subs.get(id)!;
        if (s.deleted || !s.active || s.environment !== o.environment || !s.events.includes(o.type)) continue;
        const deliveryId = deliveryIdFor(id, o.eventId);
        fresh.set(deliveryId, {
          delivery_id: deliveryId,
          subscription_id: id,
          workspace_id: o.workspaceId,
          environment: o.environment,
          event_id: o.eventId,
          event_type: o.type,
          occurred_at: o.timestamp,
          payload: JSON.stringify(o.payload),
          status: 'pending',
          attempts: 0,
          // Due at once: when the operation that caused it happened (its log event's time).
          next_attempt_at: event.metadata.occurredAt,
          last_attempt_at: null,
          last_status_code: null,
          last_error: null,
          log_commit: event.position.commit.toString(),
          log_prepare: event.position.prepare.toString(),
        });
      }
    }
  }

  if (changedSubs.size > 0) {
    await trx('webhook_subscriptions').insert([...changedSubs.values()]).onConflict('subscription_id').merge();
  }
  await chunked([...fresh.values()], 1000, (chunk) => trx('webhook_deliveries').insert(chunk).onConflict('delivery_id').ignore());
  if (fresh.size > 0 && occurrences.size > 0) {
    // After the commit (the runner's transaction), never before: the worker must see the rows.
    trx.executionPromise?.then(
      () => deliveriesCommitted.emit('committed'),
      () => {},
    );
  }
  await chunked(attempts, 1000, (chunk) => trx('webhook_attempts').insert(chunk).onConflict(['delivery_id', 'attempt']).ignore());
  if (updates.size > 0) {
    const values = [...updates.values()].map((a) => ({
      id: a.deliveryId,
      status: statusOf(a),
      attempts: a.attempt,
      next: a.nextAttemptAt,
      at: a.attemptedAt,
      code: a.statusCode,
      error: a.error,
    }));
    await chunked(values, 5000, (chunk) =>
      trx.raw(
        `update webhook_deliveries d
            set status = v.status, attempts = v.attempts, next_attempt_at = v.next, last_attempt_at = v.at, last_status_code = v.code, last_error = v.error
           from json_to_recordset(?::json) as v(id text, status text, attempts integer, next timestamptz, at timestamptz, code integer, error text)
          where d.delivery_id = v.id and d.attempts < v.attempts`,
        [JSON.stringify(chunk)],
      ),
    );
  }
}

export const webhooksProjection = defineProjection({
  name: 'webhooks',
  version: 1,
  tables: ['webhook_subscriptions', 'webhook_deliveries', 'webhook_attempts'],
  eventTypes: new Set([...SUBSCRIPTION_TYPES, WebhookDeliveryAttempted.type, ...SOURCE_BY_TYPE.keys()]),
  apply: (trx, event) => applyWebhookEvents(trx, [event]),
  applyMany: applyWebhookEvents,
});
