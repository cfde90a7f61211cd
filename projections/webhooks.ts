/**
 * The webhooks projection: subscriptions and the deliveries each occurrence causes.
 * Occurrences are produced here from the log by the occurrence sources
 * (domain/webhooks/occurrences), not by the HTTP handlers; doing it in the projection that
 * also applies the subscription events means an occurrence goes to exactly the subscriptions
 * that existed, were active and matched at its place in the log, so a rebuild produces the
 * same deliveries with the same ids. A delivery is due at once. Its attempts (events written
 * by the delivery worker, ten times as many as the occurrences when ten subscriptions match)
 * are the webhook_attempts projection's (projections/webhook-attempts.ts), so new deliveries
 * never wait behind their bookkeeping; this one reads an attempt only for a test ping's
 * delivery row. A redelivery request (WebhookRedeliveryRequested) adds new deliveries, due at
 * once, copied from their originals (earlier in the log, so there in a rebuild too). A batch
 * costs one statement per table; a batch whose workspaces' subscriptions the projection
 * remembers and that causes no delivery is one statement with its checkpoint (webhookWrites).
 */
import { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { requirement, type BatchWrite } from '../readmodels/batch-writes.js';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { WebhookDeliveryAttempted, type Occurrence } from '../domain/webhooks/delivery.js';
import { OCCURRENCE_SOURCES } from '../domain/webhooks/occurrences/index.js';
import { WebhookSubscriptionCreated, WebhookSubscriptionDeleted, WebhookSubscriptionUpdated } from '../domain/webhooks/subscription.js';
import { WebhookRedeliveryRequested } from '../domain/webhooks/redelivery.js';
import { deliveryIdFor } from '../domain/webhooks/values.js';
import {
  insertDeliveries,
  insertRedeliveries,
  subscriptionRecord,
  subscriptionsOfWorkspaces,
  subscriptionsStoredAs,
  writeSubscriptions,
  type SubscriptionMatch,
  type DeliveryRecord,
  type RedeliveryRecordRow,
  type SubscriptionRecord,
} from '../readmodels/webhooks.js';
import { defineProjection } from './projection.js';

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

/** Whether an attempt is a test ping's, without decoding it (the webhook_attempts projection decodes every attempt). */
const isPing = (event: RecordedEvent) => (event.data as { ping?: unknown }).ping != null;

/**
 * The live subscriptions (what decides their matches) of workspaces as the projection last read
 * or wrote them, by workspace, for up to 10,000 workspaces (least recently used dropped). Only
 * used under the condition that they are still stored so (subscriptionsStoredAs), which checks
 * every value the matching used: a batch computed from a remembered set that is no longer stored
 * is not applied, whichever instance or database it came from.
 */
const remembered = new LRUCache<string, readonly SubscriptionMatch[]>({ max: 10_000 });

/** Occurrences of the batch, and the workspaces whose subscriptions they need. */
function occurrencesOf(events: readonly RecordedEvent[]): { occurrences: Map<RecordedEvent, Occurrence[]>; workspaces: Set<string> } {
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
  return { occurrences, workspaces };
}

/** The deliveries an event's occurrences cause: one per live, active subscription of the environment listening to the type. */
function deliveriesOf(
  event: RecordedEvent,
  found: readonly Occurrence[],
  subscriptionsOf: (workspaceId: string) => readonly (SubscriptionMatch & { deleted?: boolean })[],
  fresh: Map<string, DeliveryRecord>,
): void {
  for (const o of found) {
    for (const s of subscriptionsOf(o.workspaceId)) {
      if (s.deleted || !s.active || s.environment !== o.environment || !s.events.includes(o.type)) continue;
      const deliveryId = deliveryIdFor(s.subscription_id, o.eventId);
      fresh.set(deliveryId, {
        delivery_id: deliveryId,
        subscription_id: s.subscription_id,
        workspace_id: o.workspaceId,
        environment: o.environment,
        event_id: o.eventId,
        event_type: o.type,
        occurred_at: o.timestamp,
        payload: JSON.stringify(o.payload),
        // Due at once: when the operation that caused it happened (its log event's time).
        next_attempt_at: event.metadata.occurredAt,
        log_commit: event.position.commit.toString(),
        log_prepare: event.position.prepare.toString(),
      });
    }
  }
}

/**
 * A batch of occurrences alone whose workspaces' subscriptions are remembered and match none of
 * them: nothing to write, so the batch is its checkpoint and the condition that the subscriptions
 * are still the remembered ones (one statement; Projection.writes). Null (read and write in a
 * transaction) for a batch with subscription changes, redeliveries or pings, for a workspace not
 * remembered, and for one that causes deliveries (the delivery worker is signalled after the
 * transaction commits).
 */
function webhookWrites(events: readonly RecordedEvent[]): BatchWrite[] | null {
  if (events.some((e) => !SOURCE_BY_TYPE.has(e.type))) return null;
  const subscriptions = new Map<string, readonly SubscriptionMatch[]>();
  // The events of workspaces remembered without an active subscription cause no delivery: their
  // occurrences (their payloads, their name-based ids) are not computed. The condition below
  // still checks those workspaces' subscriptions.
  const rest: RecordedEvent[] = [];
  for (const event of events) {
    const workspace = SOURCE_BY_TYPE.get(event.type)!.workspaceOf?.(event);
    if (workspace === null) continue;
    if (workspace !== undefined) {
      const known = remembered.get(workspace);
      if (!known) return null;
      subscriptions.set(workspace, known);
      if (!known.some((s) => s.active)) continue;
    }
    rest.push(event);
  }
  const { occurrences, workspaces } = occurrencesOf(rest);
  for (const w of workspaces) {
    const known = remembered.get(w);
    if (!known) return null;
    subscriptions.set(w, known);
  }
  if (subscriptions.size === 0) return [];
  const fresh = new Map<string, DeliveryRecord>();
  for (const [event, found] of occurrences) deliveriesOf(event, found, (w) => subscriptions.get(w) ?? [], fresh);
  if (fresh.size > 0) return null;
  return [requirement(subscriptionsStoredAs(subscriptions))];
}

async function applyWebhookEvents(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const { occurrences, workspaces } = occurrencesOf(events);
  const subs = new Map<string, SubscriptionRecord>(); // subscription id → row as of the current event
  const byWorkspace = new Map<string, Set<string>>();
  const index = (row: SubscriptionRecord) => {
    subs.set(row.subscription_id, row);
    let set = byWorkspace.get(row.workspace_id);
    if (!set) byWorkspace.set(row.workspace_id, (set = new Set()));
    set.add(row.subscription_id);
  };
  for (const r of await subscriptionsOfWorkspaces(trx, [...workspaces])) index(r);
  const changedSubs = new Map<string, SubscriptionRecord>();
  const fresh = new Map<string, DeliveryRecord>();
  const redelivered: RedeliveryRecordRow[] = [];

  for (const event of events) {
    if (SUBSCRIPTION_TYPES.has(event.type)) {
      let row: SubscriptionRecord | undefined;
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
        const before = subs.get(d.subscriptionId) ?? (await subscriptionRecord(trx, d.subscriptionId));
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
        const before = subs.get(d.subscriptionId) ?? (await subscriptionRecord(trx, d.subscriptionId));
        if (!before) continue;
        row = { ...before, deleted: true, active: false, updated_at: d.deletedAt };
      }
      index(row!);
      changedSubs.set(row!.subscription_id, row!);
      continue;
    }
    if (event.type === WebhookRedeliveryRequested.type) {
      // New deliveries of earlier events, due at once: copies of their originals (written by
      // earlier events of the log, or earlier in this batch), inserted after them below.
      const r = decodeEventData(WebhookRedeliveryRequested, event.schemaVersion, event.data);
      for (const d of r.deliveries) {
        redelivered.push({
          delivery_id: d.deliveryId,
          redelivery_of: d.redeliveryOf,
          redelivery_id: r.redeliveryId,
          next_attempt_at: r.requestedAt,
          log_commit: event.position.commit.toString(),
          log_prepare: event.position.prepare.toString(),
        });
      }
      continue;
    }
    if (event.type === WebhookDeliveryAttempted.type) {
      // A test ping has no occurrence: its attempt brings its delivery row (never due; its state
      // is the attempt's).
      if (!isPing(event)) continue;
      const a = decodeEventData(WebhookDeliveryAttempted, event.schemaVersion, event.data);
      if (!a.ping || fresh.has(a.deliveryId)) continue;
      fresh.set(a.deliveryId, {
        delivery_id: a.deliveryId,
        subscription_id: a.subscriptionId,
        workspace_id: a.workspaceId,
        environment: a.environment,
        event_id: a.eventId,
        event_type: a.eventType,
        occurred_at: a.ping.occurredAt,
        payload: JSON.stringify(a.ping.payload),
        next_attempt_at: null,
        log_commit: event.position.commit.toString(),
        log_prepare: event.position.prepare.toString(),
      });
      continue;
    }
    deliveriesOf(event, occurrences.get(event) ?? [], (w) => [...(byWorkspace.get(w) ?? [])].map((id) => subs.get(id)!), fresh);
  }
  // What the batch leaves stored of the subscriptions of the workspaces it read (SubscriptionsMemo).
  for (const w of workspaces) {
    remembered.set(w, [...(byWorkspace.get(w) ?? [])].map((id) => subs.get(id)!).filter((s) => !s.deleted).map(({ subscription_id, environment, events, active }) => ({ subscription_id, environment, events, active })));
  }
  for (const s of changedSubs.values()) if (!workspaces.has(s.workspace_id)) remembered.delete(s.workspace_id);

  await writeSubscriptions(trx, [...changedSubs.values()]);
  await insertDeliveries(trx, [...fresh.values()]);
  await insertRedeliveries(trx, redelivered);
  if ((fresh.size > 0 && occurrences.size > 0) || redelivered.length > 0) {
    // After the commit (the runner's transaction), never before: the worker must see the rows.
    trx.executionPromise?.then(
      () => deliveriesCommitted.emit('committed'),
      () => {},
    );
  }
}

export const webhooksProjection = defineProjection({
  name: 'webhooks',
  // 2: the deliveries' state and the attempt log are the webhook_attempts projection's.
  version: 2,
  tables: ['webhook_subscriptions', 'webhook_deliveries'],
  eventTypes: new Set([...SUBSCRIPTION_TYPES, WebhookDeliveryAttempted.type, WebhookRedeliveryRequested.type, ...SOURCE_BY_TYPE.keys()]),
  // Of the attempts, only a test ping's (it brings its delivery row): the others are skipped unread.
  accepts: (event) => event.type !== WebhookDeliveryAttempted.type || isPing(event),
  apply: (trx, event) => applyWebhookEvents(trx, [event]),
  applyMany: applyWebhookEvents,
  writes: webhookWrites,
});
