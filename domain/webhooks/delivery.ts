/**
 * Delivery of one event to one subscription (docs/api/webhooks.md): the request body and headers, the
 * signature, how an answer is judged, and the attempts as events of the delivery's stream
 * `webhookdelivery-<deliveryId>` (attempt n is revision n − 1). Pure.
 */
import { createHmac } from 'node:crypto';
import * as t from 'io-ts';
import { registerAggregate, registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { decodeEventData, defineEvent } from '../events/envelope.js';
import { oneOf } from '../connect/values.js';
import { retryDelayAfter, type SignatureAlgorithm } from './values.js';

const nullableString = t.union([t.string, t.null]);
const nullableNumber = t.union([t.number, t.null]);

export const ATTEMPT_OUTCOMES = ['delivered', 'retry', 'failed'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** Where a delivery stands after an attempt with this outcome: a retry leaves it pending. */
export const deliveryStatusAfter = (outcome: AttemptOutcome): 'delivered' | 'failed' | 'pending' => (outcome === 'retry' ? 'pending' : outcome);

/** One attempt: what was sent to whom, what came back, and what happens next. */
export const WebhookDeliveryAttempted = defineEvent({
  type: 'WebhookDeliveryAttempted',
  version: 1,
  codec: t.type({
    deliveryId: t.string,
    subscriptionId: t.string,
    workspaceId: t.string,
    environment: t.string,
    eventId: t.string,
    eventType: t.string,
    attempt: t.number,
    attemptedAt: t.string,
    statusCode: nullableNumber,
    durationMs: t.number,
    /** Why the attempt failed (time-out, network, refused target, status), null when delivered. */
    error: nullableString,
    /** The first bytes of the receiver's answer. */
    responseBody: nullableString,
    outcome: oneOf(ATTEMPT_OUTCOMES, 'AttemptOutcome'),
    nextAttemptAt: nullableString,
    /** Set on a test ping only (it has no scheduled delivery): the event it sent. */
    ping: t.union([t.type({ occurredAt: t.string, payload: t.record(t.string, t.unknown) }), t.null]),
  }),
});
export type AttemptRecord = t.TypeOf<typeof WebhookDeliveryAttempted.codec>;

/** Everything a sender needs of a subscription, the secret included (never shown in an answer). */
export interface WebhookTarget {
  subscriptionId: string;
  workspaceId: string;
  environment: 'sandbox' | 'production';
  webhookUrl: string;
  /** As stored: sealed (commands/webhooks/secrets.ts), or plain when written before sealing. */
  secretKey: string | null;
  signatureAlgorithm: SignatureAlgorithm;
}

/** An occurrence: one event of docs/api/webhooks.md (or 6), before it is fanned out to subscriptions. */
export interface Occurrence {
  eventId: string;
  type: string;
  workspaceId: string;
  environment: 'sandbox' | 'production';
  /** When it happened (the body's data.timestamp). */
  timestamp: string;
  payload: Record<string, unknown>;
}

/** The raw body of a delivery: `eventId` and `data` = {id, type, timestamp, data}. */
export function deliveryBody(o: Pick<Occurrence, 'eventId' | 'type' | 'timestamp' | 'payload'>): string {
  return JSON.stringify({ eventId: o.eventId, data: { id: o.eventId, type: o.type, timestamp: o.timestamp, data: o.payload } });
}

/** Hex HMAC of the raw body bytes with the subscription's secret and algorithm. */
export function signBody(body: string | Buffer, secret: string, algorithm: SignatureAlgorithm): string {
  return createHmac(algorithm, secret).update(body).digest('hex');
}

export function deliveryHeaders(o: { eventId: string; type: string }, body: string, deliveredAt: string, secret: string | null, algorithm: SignatureAlgorithm): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-Webhook-ID': o.eventId,
    'X-Webhook-Event': o.type,
    'X-Webhook-Timestamp': deliveredAt,
  };
  if (secret !== null) headers['X-Webhook-Signature'] = signBody(body, secret, algorithm);
  return headers;
}

/** What a sender observed. */
export type SendResult =
  | { kind: 'answered'; statusCode: number; durationMs: number; responseBody: string | null }
  | { kind: 'timeout'; durationMs: number }
  | { kind: 'network'; durationMs: number; error: string }
  /** The target may not be called (a private address, a scheme not allowed): permanent. */
  | { kind: 'refused'; durationMs: number; error: string };

/**
 * 2xx delivered; 4xx permanent; 5xx, time-outs and network failures retried while attempts
 * remain; a redirect (3xx) is not followed and is permanent (the URL needs changing); a refused
 * target is permanent.
 */
export function judgeAttempt(result: SendResult, attempt: number, attemptedAt: Date): { outcome: AttemptOutcome; error: string | null; nextAttemptAt: string | null } {
  let retryable: boolean;
  let error: string | null;
  if (result.kind === 'answered') {
    const s = result.statusCode;
    if (s >= 200 && s < 300) return { outcome: 'delivered', error: null, nextAttemptAt: null };
    retryable = s >= 500;
    error = s >= 300 && s < 400 ? `HTTP ${s}: redirects are not followed` : `HTTP ${s}`;
  } else if (result.kind === 'timeout') {
    retryable = true;
    error = 'TIMEOUT';
  } else if (result.kind === 'network') {
    retryable = true;
    error = result.error;
  } else {
    retryable = false;
    error = result.error;
  }
  const delay = retryable ? retryDelayAfter(attempt) : null;
  if (delay === null) return { outcome: 'failed', error, nextAttemptAt: null };
  return { outcome: 'retry', error, nextAttemptAt: new Date(attemptedAt.getTime() + delay).toISOString() };
}

// The attempts of one delivery as an aggregate (stream `webhookdelivery-<deliveryId>`, attempt n
// at revision n − 1 when all its attempts are there): its state is two numbers, so it is loaded
// with one short read and an attempt is appended with an exact expected revision.

export interface DeliveryAttemptsState {
  /** The number of the last attempt recorded (0: none). */
  attempts: number;
  /** Whether that attempt ended the delivery (delivered, or failed for good). */
  finished: boolean;
}

export type AttemptsCommand = { type: 'RecordAttempt'; record: AttemptRecord };
type AttemptsEvent = DomainEvent<'WebhookDeliveryAttempted', AttemptRecord>;

/**
 * Records the next attempt of a delivery. An attempt already recorded (a claimant whose claim
 * lapsed made it again) is a no-op; an attempt after the delivery finished, or one that skips a
 * number, is refused (WEBHOOK_ATTEMPT_OUT_OF_ORDER).
 */
export const attemptsDecider: Decider<AttemptsCommand, DeliveryAttemptsState, AttemptsEvent> = {
  category: 'webhookdelivery',
  initialState: { attempts: 0, finished: false },
  events: { WebhookDeliveryAttempted },
  decide(command, state) {
    const { attempt } = command.record;
    if (attempt <= state.attempts) return [];
    if (state.finished || attempt !== state.attempts + 1) {
      throw new DomainError('conflict', 'WEBHOOK_ATTEMPT_OUT_OF_ORDER', `attempt ${attempt} does not follow attempt ${state.attempts}${state.finished ? ' (the delivery is finished)' : ''}`);
    }
    return [{ type: 'WebhookDeliveryAttempted', data: command.record }];
  },
  evolve(state, event) {
    const r = event.data;
    return r.attempt < state.attempts ? state : { attempts: r.attempt, finished: r.outcome !== 'retry' };
  },
};

registerDecider(attemptsDecider);

/**
 * The attempts streams of a subscription (`webhookattempts-<subscriptionId>`), where attempts
 * were recorded before each delivery had its own stream: still folded by the audit tool (stored
 * events are never rewritten), per delivery, and read once for a delivery whose attempts began
 * there (see commands/webhooks/deliver.ts).
 */
export const legacyAttemptsFold = registerAggregate<Readonly<Record<string, DeliveryAttemptsState>>>({
  category: 'webhookattempts',
  initialState: {},
  evolve(state, event) {
    if (event.type !== WebhookDeliveryAttempted.type) return state;
    const r = decodeEventData(WebhookDeliveryAttempted, event.schemaVersion, event.data);
    const before = state[r.deliveryId] ?? attemptsDecider.initialState;
    return { ...state, [r.deliveryId]: attemptsDecider.evolve(before, { type: 'WebhookDeliveryAttempted', data: r }) };
  },
});
