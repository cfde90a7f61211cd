/**
 * The webhook delivery worker. Due deliveries come from the webhooks read model (built from
 * the log: occurrences and recorded attempts), so a restarted worker resumes exactly where the
 * log says: nothing scheduled is lost, nothing recorded is attempted again. Each attempt is
 * claimed first (webhook_delivery_claims, one statement a round): of two service instances
 * only one makes a given attempt; a claim whose holder died lapses and the attempt is made by
 * another. Sends run in the background, at most `perSubscription` at once for one subscription
 * and `total` in all, so a slow or dead receiver holds only its own slots. A subscription whose
 * receiver answers fast keeps a queue of claimed deliveries, so a finished send is followed by
 * the next at once, without a round trip to the database; a slow one only claims what its slots
 * take. Time is the injected clock's: `tick(now)` is called
 * on an interval by the service and directly by tests, with `idle()` to wait for the sends.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { attemptDelivery, type WebhookDeliveryDeps } from '../commands/webhooks/deliver.js';
import { claimAttempts, dueDeliveries, pruneClaims, subscriptionsWithDueDeliveries, type DueDelivery } from '../readmodels/webhooks.js';
import type { Worker } from './reactor.js';

export interface WebhookWorkerOptions {
  /** Sends in flight for one subscription (default 16). */
  perSubscription?: number;
  /** Sends in flight in all (default 256). */
  total?: number;
  /** How long a claim holds an attempt (default 60 s, well above the attempt time-out). */
  claimMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface WebhookWorker extends Worker {
  /** Resolves when no send is in flight and no refill is running. */
  idle(): Promise<void>;
  /** Stops refilling; in-flight sends finish. */
  stop(): Promise<void>;
}

export function webhookDeliveryWorker(deps: WebhookDeliveryDeps & { knex: Knex }, options: WebhookWorkerOptions = {}): WebhookWorker {
  const perSubscription = Math.max(1, options.perSubscription ?? 16);
  const total = Math.max(1, options.total ?? 256);
  const claimMs = options.claimMs ?? 60_000;
  const owner = `worker_${randomUUID()}`;
  const log = options.log ?? (() => {});

  /** Per subscription: claimed deliveries waiting for a slot, sends in flight, and how long sends take. */
  const subs = new Map<string, { queue: DueDelivery[]; inflight: number; avgMs: number }>();
  const subOf = (id: string) => {
    let s = subs.get(id);
    if (!s) subs.set(id, (s = { queue: [], inflight: 0, avgMs: 1000 }));
    return s;
  };
  /**
   * How many claimed deliveries a subscription keeps at hand: a fast receiver gets many, so its
   * slots refill without waiting for the database; a slow one only its slots (its claims must
   * not lapse while they wait).
   */
  const depthOf = (s: { avgMs: number }) => (s.avgMs < 200 ? perSubscription * 16 : perSubscription);
  const held = new Set<string>(); // delivery ids queued or in flight here
  let inflightTotal = 0;
  const running = new Set<Promise<unknown>>();
  /**
   * Attempts this worker made whose record the read model may not show yet (a second guard
   * beside the claims, for a read model more than a claim's length behind); entries go after
   * ten claim lengths (of process time).
   */
  const made = new Map<string, { attempt: number; at: number }>();
  let madePrunedAt = performance.now();
  let stopped = false;
  let pumping: Promise<number> | null = null;
  let again = false;
  let lastPrune = 0;
  let idleWaiters: (() => void)[] = [];

  const checkIdle = () => {
    if (inflightTotal === 0 && !pumping && [...subs.values()].every((s) => s.queue.length === 0)) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const start = (due: DueDelivery) => {
    const attempt = due.attempts + 1;
    const sub = subOf(due.subscriptionId);
    sub.inflight++;
    inflightTotal++;
    const began = performance.now();
    const run = attemptDelivery(deps, due.target, {
      deliveryId: due.deliveryId,
      eventId: due.eventId,
      eventType: due.eventType,
      occurredAt: due.occurredAt,
      payload: due.payload,
      attempt,
    })
      .then(() => made.set(due.deliveryId, { attempt, at: performance.now() }))
      .catch((err) => log('webhook attempt could not be recorded; it is made again once its claim lapses', { deliveryId: due.deliveryId, attempt, error: String(err) }))
      .finally(() => {
        sub.avgMs = sub.avgMs * 0.8 + (performance.now() - began) * 0.2;
        held.delete(due.deliveryId);
        sub.inflight--;
        inflightTotal--;
        running.delete(run);
        dispatch();
        if (!stopped && sub.queue.length <= depthOf(sub) / 2) void pump(deps.clock.now());
        checkIdle();
      });
    running.add(run);
  };

  /** Starts queued deliveries while their subscription and the worker have free slots. */
  function dispatch(): void {
    if (stopped) return;
    for (const sub of subs.values()) {
      while (sub.queue.length > 0 && sub.inflight < perSubscription && inflightTotal < total) start(sub.queue.shift()!);
    }
  }

  const fill = async (now: Date): Promise<number> => {
    const due = await subscriptionsWithDueDeliveries(deps.knex, now);
    const wants = due
      .map((subscriptionId) => {
        const s = subOf(subscriptionId);
        return { subscriptionId, limit: depthOf(s) - s.queue.length - s.inflight };
      })
      .filter((w) => w.limit > 0);
    if (wants.length === 0) return 0;
    const rows = await dueDeliveries(deps.knex, wants, now);
    const picked: DueDelivery[] = [];
    for (const row of rows) {
      if (held.has(row.deliveryId)) continue;
      const madeHere = made.get(row.deliveryId);
      if (madeHere !== undefined) {
        if (madeHere.attempt > row.attempts) continue; // the read model has not caught up with our attempt yet
        made.delete(row.deliveryId);
      }
      picked.push(row);
    }
    if (picked.length === 0) return 0;
    const claimed = await claimAttempts(
      deps.knex,
      picked.map((p) => ({ deliveryId: p.deliveryId, attempt: p.attempts + 1 })),
      owner,
      now,
      new Date(now.getTime() + claimMs),
    );
    let queued = 0;
    for (const p of picked) {
      if (!claimed.has(p.deliveryId) || stopped) continue;
      held.add(p.deliveryId);
      subOf(p.subscriptionId).queue.push(p);
      queued++;
    }
    dispatch();
    return queued;
  };

  function pump(now: Date): Promise<number> {
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = (async () => {
      let started = 0;
      try {
        do {
          again = false;
          started += await fill(now);
          now = deps.clock.now() > now ? deps.clock.now() : now;
        } while (again && !stopped);
        if (performance.now() - madePrunedAt > claimMs) {
          madePrunedAt = performance.now();
          for (const [id, m] of made) if (madePrunedAt - m.at > 10 * claimMs) made.delete(id);
        }
        if (now.getTime() - lastPrune > claimMs) {
          lastPrune = now.getTime();
          await pruneClaims(deps.knex, new Date(now.getTime() - 10 * claimMs));
        }
      } catch (err) {
        log('webhook delivery round failed', { error: String(err) });
      } finally {
        pumping = null;
        checkIdle();
      }
      return started;
    })();
    return pumping;
  }

  return {
    name: 'webhook_delivery',
    tick: (now) => (stopped ? Promise.resolve(0) : pump(now)),
    idle() {
      if (inflightTotal === 0 && !pumping && [...subs.values()].every((s) => s.queue.length === 0)) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      // Queued claims are released by lapsing: another instance (or this one restarted) takes them.
      for (const s of subs.values()) s.queue.length = 0;
      await Promise.all(running);
      if (pumping) await pumping;
    },
  };
}
