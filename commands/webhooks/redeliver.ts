/**
 * Webhook redelivery (docs/api/webhooks.md): load the subscription, read the deliveries the
 * request names from the delivery log, decide (domain/webhooks/redelivery.ts) and append the
 * redelivery's one event to its own stream. The webhooks projection turns it into new
 * deliveries of the original events, which the delivery worker sends like any other. Under an
 * Idempotency-Key the redelivery is recorded with the key in the same append, and a retry of the
 * request answers from it instead of redelivering again.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { decodeEventData } from '../../domain/events/envelope.js';
import {
  REDELIVERY_LIMITS,
  WebhookRedeliveryRequested,
  decideRedelivery,
  planRedelivery,
  redeliveryDecider,
  redeliveryIdFrom,
  webhookRedeliveryStream,
  type RedeliveryCommand,
  type RedeliveryRecord,
  type RedeliveryRequest,
} from '../../domain/webhooks/redelivery.js';
import { subscriptionDecider } from '../../domain/webhooks/subscription.js';
import { webhookSubscriptionStream } from '../../domain/webhooks/values.js';
import type { EventStore, NewEvent, Position } from '../../platform/eventstore/port.js';
import { redeliveryCandidates } from '../../readmodels/webhooks.js';
import { eventMetadata, loadAggregate, seededEventId, type CommandContext } from '../execute.js';
import { appendWithEffect, takeSlot } from '../idempotent-unit.js';

export interface RedeliveryDeps {
  store: EventStore;
  knex: Knex;
}

export interface RedeliveryOutcome {
  /** Null when nothing was redelivered (every event in range still pending, or none in range). */
  redeliveryId: string | null;
  requestedAt: string;
  deliveries: RedeliveryRecord['deliveries'];
  skipped: RedeliveryRecord['skipped'];
  position: Position | null;
}

export async function requestRedelivery(
  deps: RedeliveryDeps,
  input: { workspaceId: string; subscriptionId: string; request: RedeliveryRequest },
  ctx: CommandContext,
): Promise<RedeliveryOutcome> {
  const slot = takeSlot<{ redeliveryId: string }>();
  if (slot?.recorded) {
    const [event] = await deps.store.readStream(webhookRedeliveryStream(slot.recorded.redeliveryId), { maxCount: 1 });
    if (!event) throw new Error(`the idempotency record names redelivery ${slot.recorded.redeliveryId}, whose stream is empty`);
    const r = decodeEventData(WebhookRedeliveryRequested, event.schemaVersion, event.data);
    return { redeliveryId: r.redeliveryId, requestedAt: r.requestedAt, deliveries: r.deliveries, skipped: r.skipped, position: event.position };
  }
  const seed = slot ? slot.id('redelivery') : randomUUID();
  const redeliveryId = redeliveryIdFrom(seed);
  const subscription = (await loadAggregate(deps.store, subscriptionDecider, webhookSubscriptionStream(input.subscriptionId))).state.subscription;
  const candidates = await redeliveryCandidates(deps.knex, input.subscriptionId, input.request, REDELIVERY_LIMITS.maxEvents + 1);
  const command: RedeliveryCommand = {
    type: 'RequestRedelivery',
    redeliveryId,
    workspaceId: input.workspaceId,
    subscription,
    request: input.request,
    candidates,
    now: ctx.now.toISOString(),
  };
  const plan = planRedelivery(command);
  const events = decideRedelivery(command, redeliveryDecider.initialState);
  const requestedAt = command.now;
  if (events.length === 0) return { redeliveryId: null, requestedAt, deliveries: [], skipped: plan.skipped, position: null };
  const eventCtx: CommandContext = { ...ctx, workspaceId: input.workspaceId, environment: plan.subscription.environment };
  const toAppend: NewEvent[] = events.map((e, i) => ({
    id: seededEventId(seed, i),
    type: e.type,
    schemaVersion: WebhookRedeliveryRequested.version,
    data: e.data,
    metadata: eventMetadata(eventCtx),
  }));
  const [appended] = await appendWithEffect(
    deps.store,
    [{ streamId: webhookRedeliveryStream(redeliveryId), events: toAppend, expected: 'no_stream' }],
    slot ? { slot, record: { redeliveryId }, ctx: eventCtx } : null,
  );
  return { redeliveryId, requestedAt, deliveries: plan.deliveries, skipped: plan.skipped, position: appended!.position };
}
