/**
 * One delivery attempt: build the body and headers of SPEC.md 6.1, sign, send, judge the
 * answer, and record the attempt as an event of the subscription's attempts stream (its event
 * id derived from the delivery and the attempt number, so an attempt is recorded once whatever
 * happens).
 */
import { randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import {
  WebhookDeliveryAttempted,
  deliveryBody,
  deliveryHeaders,
  judgeAttempt,
  type AttemptRecord,
  type SendResult,
  type WebhookTarget,
} from '../../domain/webhooks/delivery.js';
import { PAYLOAD_SCHEMA_VERSION, TEST_EVENT_TYPE, deliveryIdFor, webhookAttemptsStream } from '../../domain/webhooks/values.js';
import type { Clock } from '../../platform/clock.js';
import { recordWebhookAttempt } from '../../platform/metrics.js';
import { DuplicateEventError, type EventStore, type NewEvent, type Position } from '../../platform/eventstore/port.js';
import { eventMetadata } from '../execute.js';
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

function attemptEvent(deps: WebhookDeliveryDeps, rec: AttemptRecord): NewEvent {
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

/**
 * Records attempts in the attempts stream of their subscription. Attempts that finish together
 * are appended together (one append per subscription), so recording costs far less than one
 * append per attempt. An attempt already recorded (its event id exists) is not recorded again.
 */
export class AttemptRecorder {
  private readonly queued = new Map<string, { event: NewEvent; resolve(p: Position | null): void; reject(err: unknown): void }[]>();
  private flushing = false;

  constructor(private readonly deps: WebhookDeliveryDeps) {}

  record(rec: AttemptRecord): Promise<Position | null> {
    return new Promise((resolve, reject) => {
      const list = this.queued.get(rec.subscriptionId) ?? [];
      list.push({ event: attemptEvent(this.deps, rec), resolve, reject });
      this.queued.set(rec.subscriptionId, list);
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queued.size > 0) {
      const batches = [...this.queued.entries()];
      this.queued.clear();
      await Promise.all(batches.map(([subscriptionId, items]) => this.append(subscriptionId, items)));
    }
    this.flushing = false;
  }

  private async append(subscriptionId: string, items: { event: NewEvent; resolve(p: Position | null): void; reject(err: unknown): void }[]): Promise<void> {
    const stream = webhookAttemptsStream(subscriptionId);
    try {
      const appended = await this.deps.store.append(stream, items.map((i) => i.event), 'any');
      for (const i of items) i.resolve(appended.replayed ? null : appended.position);
    } catch (err) {
      if (!(err instanceof DuplicateEventError) || items.length === 1) {
        // Recorded already (by a claimant whose claim had lapsed): nothing to add.
        if (err instanceof DuplicateEventError) items[0]!.resolve(null);
        else for (const i of items) i.reject(err);
        return;
      }
      for (const i of items) await this.append(subscriptionId, [i]);
    }
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
