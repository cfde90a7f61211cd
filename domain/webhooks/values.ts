/**
 * The vocabulary of webhooks (docs/api/webhooks.md, docs/api/http.md): the subscribable event types, the
 * delivery schedule and limits, error codes, stream names and identifiers. Pure.
 */
import { createHash } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';

/** The ten credit event types, the purchase-stored event and the sales-document status event of docs/api/webhooks.md. */
export const WEBHOOK_EVENT_TYPES = [
  'isv.credits.allowance.changed',
  'isv.credits.allowance.paused',
  'isv.credits.allowance.resumed',
  'isv.credits.allowance.expired',
  'isv.credits.company.threshold',
  'isv.credits.company.exhausted',
  'isv.credits.pool.low',
  'isv.credits.pool.exhausted',
  'isv.credits.consumption.reversed',
  'isv.credits.bulk.completed',
  'purchase.invoice.stored',
  'document.status.changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export const isWebhookEventType = (s: string): s is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(s);

/** The ping of POST /v3/connect/webhooks/{id}/test: not subscribable, sent to one subscription on request. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Every payload carries it (docs/api/http.md). */
export const PAYLOAD_SCHEMA_VERSION = '1.0';

export const SIGNATURE_ALGORITHMS = ['sha256', 'sha512'] as const;
export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];

export const WEBHOOK_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type WebhookEnvironment = (typeof WEBHOOK_ENVIRONMENTS)[number];

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WEBHOOK_LIMITS = {
  /** docs/api/webhooks.md, docs/api/http.md: at most 5 attempts per subscription and event… */
  maxAttempts: 5,
  /** …waiting 60 s, 5 min, 15 min, then 15 min between the remaining attempts. */
  retryDelaysMs: [60_000, 5 * 60_000, 15 * 60_000, 15 * 60_000] as readonly number[],
  /** Time-out of one attempt (docs/api/webhooks.md leaves it open): connecting, sending and the answer's headers and body. */
  attemptTimeoutMs: 10_000,
  /** Bytes of a receiver's answer that are read (and kept in the delivery log); the rest is discarded. */
  responseBodyCap: 1024,
  secretKeyMax: 256,
  urlMax: 2048,
  descriptionMax: 500,
  eventsMax: WEBHOOK_EVENT_TYPES.length,
  listLimitDefault: 25,
  listLimitMax: 100,
} as const;

export const WebhookErrorCodes = {
  validation: 'CONNECT_VALIDATION_ERROR',
  invalidEnvironment: 'CONNECT_INVALID_ENVIRONMENT',
  /** Beyond the spec: no subscription with that id in the workspace (404). */
  notFound: 'CONNECT_WEBHOOK_NOT_FOUND',
} as const;

/** The delay before attempt `attempt + 1` after attempt `attempt` (1-based) failed, or null after the last. */
export function retryDelayAfter(attempt: number): number | null {
  if (attempt >= WEBHOOK_LIMITS.maxAttempts) return null;
  return WEBHOOK_LIMITS.retryDelaysMs[attempt - 1] ?? null;
}

export const webhookSubscriptionStream = (subscriptionId: string) => `webhooksub-${subscriptionId}`;
/**
 * The attempts of one delivery, in order (attempt n at revision n − 1): a small aggregate, so an
 * attempt is decided on its delivery's state and appended with an exact expected revision. Each
 * attempt's event id derives from its delivery and number: an attempt is recorded at most once.
 */
export const webhookDeliveryStream = (deliveryId: string) => `webhookdelivery-${deliveryId}`;
/** Where attempts were recorded before: one stream per subscription (still read, never written). */
export const webhookAttemptsStream = (subscriptionId: string) => `webhookattempts-${subscriptionId}`;

export const SUBSCRIPTION_ID = /^whk_[0-9a-f]{24}$/;

const OCCURRENCE_NAMESPACE = 'a3c1f0d2-58e4-5b7a-9d16-0e2f4c8b7a95';

/**
 * The event id of an occurrence: derived from the log event that caused it and the webhook
 * type (and, for pool.low, the threshold), so a replay or a rebuild gives the same id.
 */
export function occurrenceEventId(sourceEventId: string, type: string, discriminator: string | number | null = null): string {
  return uuidv5(`${sourceEventId}/${type}${discriminator === null ? '' : `/${discriminator}`}`, OCCURRENCE_NAMESPACE);
}

/** One delivery = one subscription and one event. */
export function deliveryIdFor(subscriptionId: string, eventId: string): string {
  return `whd_${createHash('sha256').update(`${subscriptionId}\n${eventId}`).digest('hex').slice(0, 24)}`;
}
