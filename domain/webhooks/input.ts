/**
 * Decoding of the webhook management requests (bodies, path ids, list and delivery-log
 * queries) into commands and filters; every refusal names the field. Pure.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { DomainError } from '../errors.js';
import { annotate, unknownMembers } from '../schema/json-schema.js';
import type { SubscriptionChanges } from './subscription.js';
import { REDELIVERY_ID } from './redelivery.js';
import { urlProblem, type TargetPolicy } from './targets.js';
import {
  DELIVERY_STATUSES,
  SIGNATURE_ALGORITHMS,
  SUBSCRIPTION_ID,
  TEST_EVENT_TYPE,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_LIMITS,
  WebhookErrorCodes,
  isWebhookEventType,
  type DeliveryStatus,
  type SignatureAlgorithm,
  type WebhookEventType,
} from './values.js';

type Path = readonly (string | number)[];

function invalid(path: Path, message: string): never {
  throw new DomainError('validation', WebhookErrorCodes.validation, message, path.map(String));
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function webhookUrlOf(value: unknown, policy: TargetPolicy): string {
  if (typeof value !== 'string' || value.trim() === '') invalid(['webhookUrl'], 'webhookUrl is required: an absolute https URL');
  const url = value as string;
  if (url.length > WEBHOOK_LIMITS.urlMax) invalid(['webhookUrl'], `webhookUrl must be at most ${WEBHOOK_LIMITS.urlMax} characters`);
  const problem = urlProblem(url, policy);
  if (problem) invalid(['webhookUrl'], problem);
  return new URL(url).toString();
}

function eventsOf(value: unknown): WebhookEventType[] {
  if (!Array.isArray(value) || value.length === 0) invalid(['events'], 'events must be a non-empty array of event types');
  const list = value as unknown[];
  if (list.length > WEBHOOK_LIMITS.eventsMax) invalid(['events'], `events may list at most ${WEBHOOK_LIMITS.eventsMax} event types`);
  const seen = new Set<string>();
  list.forEach((e, i) => {
    if (typeof e !== 'string') invalid(['events', i], 'an event type is a string');
    if (!isWebhookEventType(e)) invalid(['events', i], `unknown event type "${e.slice(0, 80)}"`);
    if (seen.has(e)) invalid(['events', i], `event type "${e}" is listed twice`);
    seen.add(e);
  });
  return list as WebhookEventType[];
}

function secretOf(value: unknown, nullable: boolean): string | null {
  if (value === null && nullable) return null;
  if (typeof value !== 'string' || value.length === 0) invalid(['secretKey'], nullable ? 'secretKey must be a non-empty string, or null to remove it' : 'secretKey must be a non-empty string');
  if ((value as string).length > WEBHOOK_LIMITS.secretKeyMax) invalid(['secretKey'], `secretKey must be at most ${WEBHOOK_LIMITS.secretKeyMax} characters`);
  return value as string;
}

function algorithmOf(value: unknown): SignatureAlgorithm {
  if (typeof value !== 'string' || !(SIGNATURE_ALGORITHMS as readonly string[]).includes(value)) invalid(['signatureAlgorithm'], 'signatureAlgorithm must be sha256 or sha512');
  return value as SignatureAlgorithm;
}

function descriptionOf(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') invalid(['description'], 'description must be a string or null');
  if ((value as string).length > WEBHOOK_LIMITS.descriptionMax) invalid(['description'], `description must be at most ${WEBHOOK_LIMITS.descriptionMax} characters`);
  return value as string;
}

export interface SubscriptionInput {
  webhookUrl: string;
  events: WebhookEventType[];
  secretKey: string | null;
  signatureAlgorithm: SignatureAlgorithm;
  description: string | null;
}

// The request bodies as io-ts codecs: the one description of their members, from which the
// OpenAPI document derives their schemas (domain/schema/json-schema.ts) and against which a body's
// unknown members are refused. The parsers below check each member with a precise message.
const WebhookUrl = annotate(t.string, { format: 'uri', maxLength: WEBHOOK_LIMITS.urlMax, description: 'https (production); no credentials; a public address' });
const EventTypes = annotate(t.array(t.keyof(Object.fromEntries(WEBHOOK_EVENT_TYPES.map((e) => [e, null])) as Record<WebhookEventType, null>)), {
  minItems: 1,
  maxItems: WEBHOOK_LIMITS.eventsMax,
  uniqueItems: true,
});
const SecretKey = annotate(t.string, { minLength: 1, maxLength: WEBHOOK_LIMITS.secretKeyMax, description: 'Write-only: never returned' });
const Algorithm = t.keyof({ sha256: null, sha512: null });
const Description = annotate(t.union([t.string, t.null]), { maxLength: WEBHOOK_LIMITS.descriptionMax });

export const SubscriptionCreateCodec = t.exact(
  t.intersection([
    t.type({ webhookUrl: WebhookUrl, events: EventTypes }),
    t.partial({ secretKey: SecretKey, signatureAlgorithm: annotate(Algorithm, { default: 'sha256' }), description: Description }),
  ]),
);
export const SubscriptionPatchCodec = annotate(
  t.exact(
    t.partial({
      webhookUrl: WebhookUrl,
      events: EventTypes,
      secretKey: annotate(t.union([SecretKey, t.null]), { description: 'A new secret rotates it; null removes it (deliveries are then unsigned)' }),
      signatureAlgorithm: Algorithm,
      description: Description,
      active: annotate(t.boolean, { description: 'false pauses the subscription (nothing is delivered), true resumes it' }),
    }),
  ),
  { minProperties: 1 },
);

const CREATE_FIELDS = ['webhookUrl', 'events', 'secretKey', 'signatureAlgorithm', 'description'] as const;
const PATCH_FIELDS = ['webhookUrl', 'events', 'secretKey', 'signatureAlgorithm', 'description', 'active'] as const;

/** Refuses the first member of `body` that `codec` does not name. */
function refuseUnknownMembers(codec: t.Mixed, body: Record<string, unknown>, allowed: readonly string[]): void {
  const [first] = unknownMembers(codec, body);
  if (first) invalid(first, `unknown field "${String(first[0]).slice(0, 40)}"; allowed: ${allowed.join(', ')}`);
}

export function parseSubscriptionBody(body: unknown, policy: TargetPolicy): SubscriptionInput {
  if (!isPlainObject(body)) invalid([], 'the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  refuseUnknownMembers(SubscriptionCreateCodec, b, CREATE_FIELDS);
  return {
    webhookUrl: webhookUrlOf(b.webhookUrl, policy),
    events: eventsOf(b.events),
    secretKey: b.secretKey === undefined ? null : secretOf(b.secretKey, false),
    signatureAlgorithm: b.signatureAlgorithm === undefined ? 'sha256' : algorithmOf(b.signatureAlgorithm),
    description: b.description === undefined ? null : descriptionOf(b.description),
  };
}

export function parseSubscriptionPatch(body: unknown, policy: TargetPolicy): SubscriptionChanges {
  if (!isPlainObject(body)) invalid([], 'the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  refuseUnknownMembers(SubscriptionPatchCodec, b, PATCH_FIELDS);
  if (Object.keys(b).length === 0) invalid([], `an update names at least one of: ${PATCH_FIELDS.join(', ')}`);
  const changes: SubscriptionChanges = {};
  if (b.webhookUrl !== undefined) changes.webhookUrl = webhookUrlOf(b.webhookUrl, policy);
  if (b.events !== undefined) changes.events = eventsOf(b.events);
  if (b.secretKey !== undefined) changes.secretKey = secretOf(b.secretKey, true);
  if (b.signatureAlgorithm !== undefined) changes.signatureAlgorithm = algorithmOf(b.signatureAlgorithm);
  if (b.description !== undefined) changes.description = descriptionOf(b.description);
  if (b.active !== undefined) {
    if (typeof b.active !== 'boolean') invalid(['active'], 'active must be true or false');
    changes.active = b.active as boolean;
  }
  return changes;
}

export function parseSubscriptionId(raw: string): string {
  if (!SUBSCRIPTION_ID.test(raw)) {
    throw new DomainError('not_found', WebhookErrorCodes.notFound, 'no webhook subscription with that id in the workspace', ['path', 'id']);
  }
  return raw;
}

// Queries ---------------------------------------------------------------------------------------

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | null {
  const v = query[name];
  if (v === undefined) return null;
  if (Array.isArray(v)) invalid(['query', name], `${name} may be given once`);
  return v as string;
}

function refuseUnknownParams(query: Query, allowed: readonly string[]): void {
  for (const key of Object.keys(query)) {
    if (!allowed.includes(key)) invalid(['query', key], `unknown query parameter "${key.slice(0, 40)}"; allowed: ${allowed.join(', ')}`);
  }
}

function limitOf(query: Query): number {
  const raw = single(query, 'limit');
  if (raw === null) return WEBHOOK_LIMITS.listLimitDefault;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > WEBHOOK_LIMITS.listLimitMax) invalid(['query', 'limit'], `limit must be an integer from 1 to ${WEBHOOK_LIMITS.listLimitMax}`);
  return Number(raw);
}

const fingerprint = (filters: unknown) => createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);

export function encodeCursor(key: readonly string[], filters: unknown): string {
  return Buffer.from(JSON.stringify({ v: 1, k: key, f: fingerprint(filters) })).toString('base64url');
}

function cursorOf(query: Query, filters: unknown, size: number): string[] | null {
  const raw = single(query, 'cursor');
  if (raw === null) return null;
  let parsed: any;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    invalid(['query', 'cursor'], 'cursor is not a cursor this service issued');
  }
  if (!isPlainObject(parsed) || parsed.v !== 1 || !Array.isArray(parsed.k) || parsed.k.length !== size || !parsed.k.every((x: unknown) => typeof x === 'string')) {
    invalid(['query', 'cursor'], 'cursor is not a cursor this service issued');
  }
  if (parsed.f !== fingerprint(filters)) invalid(['query', 'cursor'], 'this cursor was issued for other filters: keep the filters unchanged while paging');
  return parsed.k as string[];
}

export interface SubscriptionListQuery {
  limit: number;
  after: string | null;
}

export function parseSubscriptionListQuery(query: Query): SubscriptionListQuery {
  refuseUnknownParams(query, ['cursor', 'limit']);
  const limit = limitOf(query);
  const after = cursorOf(query, {}, 1);
  return { limit, after: after ? after[0]! : null };
}

export interface DeliveryFilters {
  eventType: string | null;
  outcome: DeliveryStatus | null;
  eventId: string | null;
  /** Only the deliveries of this redelivery (absent: every delivery). */
  redeliveryId?: string;
}

export interface DeliveryListQuery {
  limit: number;
  /** [log commit, log prepare, deliveryId] of the last item of the previous page. */
  after: [string, string, string] | null;
  filters: DeliveryFilters;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseDeliveryListQuery(query: Query): DeliveryListQuery {
  refuseUnknownParams(query, ['cursor', 'limit', 'eventType', 'outcome', 'eventId', 'redeliveryId']);
  const eventType = single(query, 'eventType');
  if (eventType !== null && !isWebhookEventType(eventType) && eventType !== TEST_EVENT_TYPE) invalid(['query', 'eventType'], `unknown event type "${eventType.slice(0, 80)}"`);
  const outcome = single(query, 'outcome');
  if (outcome !== null && !(DELIVERY_STATUSES as readonly string[]).includes(outcome)) invalid(['query', 'outcome'], `outcome must be one of ${DELIVERY_STATUSES.join(', ')}`);
  const eventId = single(query, 'eventId');
  if (eventId !== null && !UUID.test(eventId)) invalid(['query', 'eventId'], 'eventId must be an event id (a UUID)');
  const redeliveryId = single(query, 'redeliveryId');
  if (redeliveryId !== null && !REDELIVERY_ID.test(redeliveryId)) invalid(['query', 'redeliveryId'], 'redeliveryId must be a redelivery id (whr_ and 24 hex digits)');
  // The key is left out when not given, so cursors issued before this filter existed stay valid.
  const filters: DeliveryFilters = { eventType, outcome: outcome as DeliveryStatus | null, eventId: eventId?.toLowerCase() ?? null, ...(redeliveryId !== null ? { redeliveryId } : {}) };
  const limit = limitOf(query);
  const after = cursorOf(query, filters, 3);
  if (after && !(/^\d+$/.test(after[0]!) && /^\d+$/.test(after[1]!))) invalid(['query', 'cursor'], 'cursor is not a cursor this service issued');
  return { limit, after: after as [string, string, string] | null, filters };
}
