/**
 * One delivery attempt: build the body and headers of docs/api/webhooks.md, sign, send, judge the
 * answer, and record the attempt, decided by the delivery's attempts decider, as an event of
 * the delivery's stream with an exact expected revision (its event id derived from the delivery
 * and the attempt number, so an attempt is recorded once whatever happens).
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { v5 as uuidv5 } from 'uuid';
import { fold } from '../../domain/decider.js';
import {
  WebhookDeliveryAttempted,
  attemptsDecider,
  legacyAttemptsFold,
  type DeliveryAttemptsState,
  deliveryBody,
  deliveryHeaders,
  judgeAttempt,
  type AttemptRecord,
  type SendResult,
  type WebhookTarget,
} from '../../domain/webhooks/delivery.js';
import { PAYLOAD_SCHEMA_VERSION, TEST_EVENT_TYPE, deliveryIdFor, webhookAttemptsStream, webhookDeliveryStream } from '../../domain/webhooks/values.js';
import type { Clock } from '../../platform/clock.js';
import { recordWebhookAttempt } from '../../platform/metrics.js';
import { DuplicateEventError, isWrongExpectedVersion, type AppendResult, type EventStore, type NewEvent, type Position } from '../../platform/eventstore/port.js';
import { eventMetadata, loadAggregate, type Loaded } from '../execute.js';
import { retryOnConflict } from '../retry.js';
import type { SecretBox } from './secrets.js';
import { sendWebhook, type SenderOptions } from './sender.js';

const ATTEMPT_NAMESPACE = '5b0e9f3c-2d71-5a48-8e6b-c49a1f07d2e3';

export interface WebhookDeliveryDeps {
  store: EventStore;
  clock: Clock;
  sender: SenderOptions;
  /** Opens the sealed signing secrets. */
  secrets: SecretBox;
}

export interface DeliveryToAttempt {
  deliveryId: string;
  eventId: string;
  eventType: string;
  occurredAt: string;
  payload: Record<string, unknown>;
  /** 1-based number of this attempt. */
  attempt: number;
}

export interface AttemptOutcome {
  record: AttemptRecord;
  position: Position | null;
}

async function send(deps: WebhookDeliveryDeps, target: WebhookTarget, d: DeliveryToAttempt): Promise<{ result: SendResult; at: Date }> {
  const at = deps.clock.now();
  const body = deliveryBody({ eventId: d.eventId, type: d.eventType, timestamp: d.occurredAt, payload: d.payload });
  const secret = target.secretKey === null ? null : deps.secrets.open(target.subscriptionId, target.secretKey);
  const headers = deliveryHeaders({ eventId: d.eventId, type: d.eventType }, body, at.toISOString(), secret, target.signatureAlgorithm);
  const result = await sendWebhook(target.webhookUrl, body, headers, target.environment, deps.sender);
  return { result, at };
}

function attemptEvent(deps: Pick<WebhookDeliveryDeps, 'clock'>, rec: AttemptRecord): NewEvent {
  return {
    id: uuidv5(`${rec.deliveryId}/${rec.attempt}`, ATTEMPT_NAMESPACE),
    type: WebhookDeliveryAttempted.type,
    schemaVersion: WebhookDeliveryAttempted.version,
    data: rec,
    metadata: eventMetadata({
      now: deps.clock.now(),
      workspaceId: rec.workspaceId,
      environment: rec.environment,
      correlationId: rec.eventId,
      actor: 'webhook-worker',
    }),
  };
}

/** Deliveries whose attempts state and stream revision are kept (a few hundred bytes each). */
const KNOWN_DELIVERIES = 20_000;
/** A second claimant of the same delivery is the only rival writer: one reload settles it. */
const CONFLICT_ATTEMPTS = 3;

/**
 * Records attempts through the delivery's decider (domain/webhooks/delivery.ts), each in its
 * delivery's stream with the exact expected revision. The state and revision of recent
 * deliveries are kept in a bounded cache, so an attempt costs no read: a delivery's first
 * attempt expects no stream, a later one the revision of the attempt before it, which this
 * process usually recorded itself. On a miss, or after a wrong expected revision, the delivery's
 * stream is read (at most five events). Attempts finishing together are committed together by
 * the event store's group commit. An attempt recorded already (its event id exists, or the
 * decider finds it recorded) is not recorded again: the answer is then null.
 */
export class AttemptRecorder {
  private readonly known = new LRUCache<string, Loaded<DeliveryAttemptsState>>({ max: KNOWN_DELIVERIES });

  constructor(private readonly deps: Pick<WebhookDeliveryDeps, 'store' | 'clock'>) {}

  record(rec: AttemptRecord): Promise<Position | null> {
    return retryOnConflict(
      async (n) => {
        const loaded = (n === 1 ? this.cached(rec) : null) ?? (await this.load(rec));
        const events = attemptsDecider.decide({ type: 'RecordAttempt', record: rec }, loaded.state);
        if (events.length === 0) return null;
        const state = fold(attemptsDecider, events, loaded.state);
        let appended: AppendResult;
        try {
          appended = await this.deps.store.append(webhookDeliveryStream(rec.deliveryId), [attemptEvent(this.deps, rec)], loaded.revision);
        } catch (err) {
          this.known.delete(rec.deliveryId);
          // Stored already elsewhere (in the subscription's stream of before, by a claimant whose claim had lapsed).
          if (err instanceof DuplicateEventError) return null;
          throw err;
        }
        if (appended.replayed) {
          // Recorded already, by another claimant whose answer may have differed: known no more.
          this.known.delete(rec.deliveryId);
          return null;
        }
        this.known.set(rec.deliveryId, { state, revision: appended.nextExpectedRevision });
        return appended.position;
      },
      { isConflict: isWrongExpectedVersion, maxAttempts: CONFLICT_ATTEMPTS },
    );
  }

  /** The kept state; for a first attempt not kept, the empty stream (the append's 'no_stream' checks it). */
  private cached(rec: AttemptRecord): Loaded<DeliveryAttemptsState> | null {
    const kept = this.known.get(rec.deliveryId);
    if (kept) return kept;
    return rec.attempt === 1 ? { state: attemptsDecider.initialState, revision: 'no_stream' } : null;
  }

  private async load(rec: AttemptRecord): Promise<Loaded<DeliveryAttemptsState>> {
    const loaded = await loadAggregate(this.deps.store, attemptsDecider, webhookDeliveryStream(rec.deliveryId));
    if (loaded.revision === 'no_stream' && rec.attempt > 1) {
      // A delivery whose earlier attempts were recorded in its subscription's stream, before each
      // delivery had its own: that stream is read once, and the attempts go on in the new one.
      const recorded = await this.deps.store.readStream(webhookAttemptsStream(rec.subscriptionId));
      const legacy = recorded.reduce((s, e) => legacyAttemptsFold.evolve(s, { ...e, occurredAt: e.metadata.occurredAt }), legacyAttemptsFold.initialState);
      const state = legacy[rec.deliveryId];
      if (state) return { state, revision: 'no_stream' };
    }
    this.known.set(rec.deliveryId, loaded);
    return loaded;
  }
}

const recorders = new WeakMap<EventStore, AttemptRecorder>();
function recorderFor(deps: WebhookDeliveryDeps): AttemptRecorder {
  let r = recorders.get(deps.store);
  if (!r) recorders.set(deps.store, (r = new AttemptRecorder(deps)));
  return r;
}

const record = (deps: WebhookDeliveryDeps, rec: AttemptRecord) => recorderFor(deps).record(rec);

function attemptRecord(target: WebhookTarget, d: DeliveryToAttempt, result: SendResult, at: Date, judged: ReturnType<typeof judgeAttempt>, ping: AttemptRecord['ping']): AttemptRecord {
  return {
    deliveryId: d.deliveryId,
    subscriptionId: target.subscriptionId,
    workspaceId: target.workspaceId,
    environment: target.environment,
    eventId: d.eventId,
    eventType: d.eventType,
    attempt: d.attempt,
    attemptedAt: at.toISOString(),
    statusCode: result.kind === 'answered' ? result.statusCode : null,
    durationMs: result.durationMs,
    error: judged.error,
    responseBody: result.kind === 'answered' ? result.responseBody : null,
    outcome: judged.outcome,
    nextAttemptAt: judged.nextAttemptAt,
    ping,
  };
}

/**
 * Makes one attempt of a scheduled delivery and records it. `onAnswered` is called once the
 * send is over (answer, time-out or network failure), before the record is appended.
 */
export async function attemptDelivery(
  deps: WebhookDeliveryDeps,
  target: WebhookTarget,
  d: DeliveryToAttempt,
  options: { onAnswered?: () => void } = {},
): Promise<AttemptOutcome> {
  const { result, at } = await send(deps, target, d);
  options.onAnswered?.();
  const judged = judgeAttempt(result, d.attempt, at);
  // Counted once the attempt is made, whether or not its record then reaches the log.
  recordWebhookAttempt(d.eventType, judged.outcome === 'delivered' ? 'success' : judged.outcome);
  const rec = attemptRecord(target, d, result, at, judged, null);
  return { record: rec, position: await record(deps, rec) };
}

/**
 * POST /v3/connect/webhooks/{id}/test: a signed webhook.test event sent through the same path
 * as every delivery, attempted once (a ping is not retried) and recorded like any attempt.
 */
export async function sendTestPing(deps: WebhookDeliveryDeps, target: WebhookTarget): Promise<AttemptOutcome> {
  const eventId = randomUUID();
  const now = deps.clock.now().toISOString();
  const d: DeliveryToAttempt = {
    deliveryId: deliveryIdFor(target.subscriptionId, eventId),
    eventId,
    eventType: TEST_EVENT_TYPE,
    occurredAt: now,
    payload: { schemaVersion: PAYLOAD_SCHEMA_VERSION, subscriptionId: target.subscriptionId, message: 'test delivery' },
    attempt: 1,
  };
  const { result, at } = await send(deps, target, d);
  const judged = judgeAttempt(result, 1, at);
  const final = judged.outcome === 'retry' ? { ...judged, outcome: 'failed' as const, nextAttemptAt: null } : judged;
  const rec = attemptRecord(target, d, result, at, final, { occurredAt: now, payload: d.payload });
  return { record: rec, position: await record(deps, rec) };
}
