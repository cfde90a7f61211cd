/**
 * Webhook redelivery (docs/api/webhooks.md): a workspace asks for one delivery, or every event a
 * subscription was sent since an instant, to be delivered again. A redelivery is an aggregate of
 * its own (stream `webhookredelivery-<redeliveryId>`, one event): the request and the deliveries
 * it creates, each a new delivery (its own id, attempts and entry in the delivery log) of the
 * original event, with the original event id, type, time and payload, so receivers de-duplicate
 * on the event id as for a retry. Decided on the subscription's state and on the deliveries the
 * request names (read from the delivery log by the caller). Pure.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { annotate, unknownMembers } from '../schema/json-schema.js';
import type { Subscription } from './subscription.js';
import { TEST_EVENT_TYPE, WebhookErrorCodes } from './values.js';

export const REDELIVERY_LIMITS = {
  /** How far back a redelivery reaches: events that occurred within the last 7 days. */
  windowMs: 7 * 24 * 60 * 60_000,
  /** Events one redelivery may carry; more since an instant is refused (narrow it with `until`). */
  maxEvents: 1000,
  /** Redelivery requests per workspace and minute (on top of the Connect rate limit). */
  perMinute: 10,
} as const;

export const RedeliveryErrorCodes = {
  deliveryNotFound: 'CONNECT_WEBHOOK_DELIVERY_NOT_FOUND',
  paused: 'CONNECT_WEBHOOK_PAUSED',
  pending: 'CONNECT_WEBHOOK_DELIVERY_PENDING',
  outOfWindow: 'CONNECT_WEBHOOK_REDELIVERY_WINDOW',
  notRedeliverable: 'CONNECT_WEBHOOK_NOT_REDELIVERABLE',
} as const;

export const REDELIVERY_ID = /^whr_[0-9a-f]{24}$/;
export const DELIVERY_ID = /^whd_[0-9a-f]{24}$/;

export const webhookRedeliveryStream = (redeliveryId: string) => `webhookredelivery-${redeliveryId}`;

/** A redelivery id from a seed (a random value, or the idempotent request's slot id). */
export const redeliveryIdFrom = (seed: string) => `whr_${createHash('sha256').update(seed).digest('hex').slice(0, 24)}`;

/** The new delivery of `originalDeliveryId` a redelivery creates. */
export function redeliveredDeliveryId(redeliveryId: string, originalDeliveryId: string): string {
  return `whd_${createHash('sha256').update(`${redeliveryId}\n${originalDeliveryId}`).digest('hex').slice(0, 24)}`;
}

const instant = (description: string) => annotate(t.string, { format: 'date-time', description });

/** The request body: exactly one of `deliveryId` and `since`; `until` only with `since`. */
export const RedeliveryRequestCodec = annotate(
  t.exact(
    t.partial({
      deliveryId: annotate(t.string, { pattern: DELIVERY_ID.source, description: 'Redeliver this delivery of the subscription (a redelivery names its original)' }),
      since: instant('Redeliver every event the subscription was sent that occurred at or after this instant (at most 7 days back)'),
      until: instant('With since: only events that occurred before this instant (default: now)'),
    }),
  ),
  { description: 'Exactly one of deliveryId and since.', minProperties: 1 },
);

export type RedeliveryRequest = { kind: 'delivery'; deliveryId: string } | { kind: 'since'; since: string; until: string };

function invalid(path: readonly (string | number)[], message: string): never {
  throw new DomainError('validation', WebhookErrorCodes.validation, message, path.map(String));
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function instantOf(value: unknown, name: string): Date {
  if (typeof value !== 'string' || !ISO_INSTANT.test(value) || Number.isNaN(Date.parse(value))) {
    invalid([name], `${name} must be an ISO 8601 date-time with a time zone, e.g. 2026-09-01T08:00:00Z`);
  }
  return new Date(value as string);
}

/** Decodes a redelivery request; every refusal names the field. `now` bounds the instants. */
export function parseRedeliveryBody(body: unknown, now: Date): RedeliveryRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) invalid([], 'the request body must be a JSON object');
  const unknown = unknownMembers(RedeliveryRequestCodec, body);
  if (unknown.length > 0) invalid(unknown[0]!, `unknown field "${String(unknown[0]![0]).slice(0, 40)}"; allowed: deliveryId, since, until`);
  const b = body as Record<string, unknown>;
  const has = (k: string) => b[k] !== undefined;
  if (has('deliveryId') && has('since')) invalid(['since'], 'give either deliveryId or since, not both');
  if (has('deliveryId')) {
    if (has('until')) invalid(['until'], 'until goes with since, not with deliveryId');
    if (typeof b.deliveryId !== 'string' || !DELIVERY_ID.test(b.deliveryId)) invalid(['deliveryId'], 'deliveryId must be a delivery id of the delivery log (whd_ and 24 hex digits)');
    return { kind: 'delivery', deliveryId: b.deliveryId as string };
  }
  if (!has('since')) invalid([], 'give deliveryId (one delivery) or since (every event since an instant)');
  const since = instantOf(b.since, 'since');
  const oldest = now.getTime() - REDELIVERY_LIMITS.windowMs;
  if (since.getTime() < oldest) invalid(['since'], `since may be at most 7 days back (not before ${new Date(oldest).toISOString()})`);
  if (since.getTime() > now.getTime()) invalid(['since'], 'since is in the future');
  let until = now;
  if (has('until')) {
    until = instantOf(b.until, 'until');
    if (until.getTime() <= since.getTime()) invalid(['until'], 'until must be after since');
    if (until.getTime() > now.getTime()) until = now;
  }
  return { kind: 'since', since: since.toISOString(), until: until.toISOString() };
}

/** A delivery of the subscription a request names, as the delivery log shows it. */
export interface RedeliveryCandidate {
  deliveryId: string;
  eventId: string;
  eventType: string;
  occurredAt: string;
  /** A delivery of this event to this subscription (the original or a redelivery) is still being attempted. */
  pending: boolean;
}

const Item = t.type({ deliveryId: t.string, redeliveryOf: t.string, eventId: t.string, eventType: t.string });
const Skipped = t.type({ deliveryId: t.string, eventId: t.string, reason: t.literal('pending') });

export const WebhookRedeliveryRequested = defineEvent({
  type: 'WebhookRedeliveryRequested',
  version: 1,
  codec: t.type({
    redeliveryId: t.string,
    subscriptionId: t.string,
    workspaceId: t.string,
    environment: t.string,
    requestedAt: t.string,
    request: t.type({ deliveryId: t.union([t.string, t.null]), since: t.union([t.string, t.null]), until: t.union([t.string, t.null]) }),
    /** The new deliveries, each of an original delivery (same event id, type, time and payload). */
    deliveries: t.array(Item),
    /** Deliveries left out because their event is still being attempted. */
    skipped: t.array(Skipped),
  }),
});
export type RedeliveryRecord = t.TypeOf<typeof WebhookRedeliveryRequested.codec>;

export type RedeliveryCommand = {
  type: 'RequestRedelivery';
  redeliveryId: string;
  workspaceId: string;
  subscription: Subscription | null;
  request: RedeliveryRequest;
  /** For a single delivery: that delivery (resolved to its original); since an instant: every original in range, oldest first, up to maxEvents + 1. */
  candidates: readonly RedeliveryCandidate[];
  now: string;
};
export interface RedeliveryState {
  requested: boolean;
}
type RedeliveryEvent = DomainEvent<'WebhookRedeliveryRequested', RedeliveryRecord>;

/**
 * The deliveries a request creates and those it leaves out. A deleted (or another workspace's)
 * subscription is not found; a paused one is refused; one delivery must exist, not be a test
 * ping, lie within the window and not be pending; since an instant, pending events are skipped
 * and more than maxEvents refused.
 */
export function planRedelivery(command: Omit<RedeliveryCommand, 'type'>): { subscription: Subscription; deliveries: RedeliveryRecord['deliveries']; skipped: RedeliveryRecord['skipped'] } {
  const s = command.subscription;
  if (!s || s.deleted || s.workspaceId !== command.workspaceId) {
    throw new DomainError('not_found', WebhookErrorCodes.notFound, 'no webhook subscription with that id in the workspace', ['path', 'id']);
  }
  if (!s.active) throw new DomainError('conflict', RedeliveryErrorCodes.paused, 'the subscription is paused (active: false): resume it with PATCH before asking for a redelivery');
  const now = Date.parse(command.now);
  const deliveries: RedeliveryRecord['deliveries'] = [];
  const skipped: RedeliveryRecord['skipped'] = [];
  const item = (d: RedeliveryCandidate) => ({ deliveryId: redeliveredDeliveryId(command.redeliveryId, d.deliveryId), redeliveryOf: d.deliveryId, eventId: d.eventId, eventType: d.eventType });
  if (command.request.kind === 'delivery') {
    const d = command.candidates[0];
    if (!d) throw new DomainError('not_found', RedeliveryErrorCodes.deliveryNotFound, "no delivery with that id in this subscription's delivery log", ['deliveryId']);
    if (d.eventType === TEST_EVENT_TYPE) throw new DomainError('conflict', RedeliveryErrorCodes.notRedeliverable, 'a webhook.test ping is not redelivered: send a new one with POST /v3/connect/webhooks/{id}/test', ['deliveryId']);
    if (Date.parse(d.occurredAt) < now - REDELIVERY_LIMITS.windowMs) {
      throw new DomainError('conflict', RedeliveryErrorCodes.outOfWindow, `the event occurred at ${d.occurredAt}, more than 7 days ago: it is no longer redelivered`, ['deliveryId']);
    }
    if (d.pending) throw new DomainError('conflict', RedeliveryErrorCodes.pending, 'this event is still being delivered to the subscription (a first attempt or a retry is scheduled): wait for its outcome', ['deliveryId']);
    deliveries.push(item(d));
  } else {
    if (command.candidates.length > REDELIVERY_LIMITS.maxEvents) {
      throw new DomainError('validation', WebhookErrorCodes.validation, `more than ${REDELIVERY_LIMITS.maxEvents} events occurred between since and until: give a later since or an earlier until`, ['since']);
    }
    for (const d of command.candidates) {
      if (d.pending) skipped.push({ deliveryId: d.deliveryId, eventId: d.eventId, reason: 'pending' });
      else deliveries.push(item(d));
    }
  }
  return { subscription: s, deliveries, skipped };
}

/** The redelivery's one event; a request that finds nothing to redeliver appends nothing. */
export function decideRedelivery(command: RedeliveryCommand, state: RedeliveryState): RedeliveryEvent[] {
  if (state.requested) return []; // recorded already (the same idempotent request)
  const { subscription: s, deliveries, skipped } = planRedelivery(command);
  if (deliveries.length === 0) return [];
  const r = command.request;
  return [
    {
      type: 'WebhookRedeliveryRequested',
      data: {
        redeliveryId: command.redeliveryId,
        subscriptionId: s.subscriptionId,
        workspaceId: s.workspaceId,
        environment: s.environment,
        requestedAt: command.now,
        request: r.kind === 'delivery' ? { deliveryId: r.deliveryId, since: null, until: null } : { deliveryId: null, since: r.since, until: r.until },
        deliveries,
        skipped,
      },
    },
  ];
}

export const redeliveryDecider: Decider<RedeliveryCommand, RedeliveryState, RedeliveryEvent> = {
  category: 'webhookredelivery',
  initialState: { requested: false },
  events: { WebhookRedeliveryRequested },
  decide: decideRedelivery,
  evolve: () => ({ requested: true }),
};

registerDecider(redeliveryDecider);
