/**
 * The webhook delivery worker. Due deliveries come from the webhooks read model (built from
 * the log: occurrences and recorded attempts), so a restarted worker resumes exactly where the
 * log says: nothing scheduled is lost, nothing recorded is attempted again. Each attempt is
 * claimed first (webhook_delivery_claims, one statement a round): of two service instances
 * only one makes a given attempt; a claim whose holder died lapses and the attempt is made by
 * another. Sends run in the background, at most `perSubscription` at once for one subscription
 * and `total` in all, so a slow or dead receiver holds only its own slots; a finished send
 * refills at once while deliveries are due. Time is the injected clock's: `tick(now)` is called
 * on an interval by the service and directly by tests, with `idle()` to wait for the sends.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { attemptDelivery, type WebhookDeliveryDeps } from '../commands/webhooks/deliver.js';
import { claimAttempts, dueDeliveries, pruneClaims, subscriptionsWithDueDeliveries, type DueDelivery } from '../readmodels/webhooks.js';
import type { Worker } from './reactor.js';

export interface WebhookWorkerOptions {
  /** Sends in flight for one subscription (default 8). */
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
  const perSubscription = Math.max(1, options.perSubscription ?? 8);
  const total = Math.max(1, options.total ?? 256);
  const claimMs = options.claimMs ?? 60_000;
  const owner = `worker_${randomUUID()}`;
  const log = options.log ?? (() => {});

  const inflightBySub = new Map<string, number>();
  const inflight = new Set<string>(); // delivery ids
  const running = new Set<Promise<unknown>>();
  /** Attempts this worker made whose record the read model may not show yet. */
  const made = new Map<string, number>();
  let stopped = false;
  let pumping: Promise<number> | null = null;
  let again = false;
  let lastPrune = 0;
  let idleWaiters: (() => void)[] = [];

  const checkIdle = () => {
    if (inflight.size === 0 && !pumping) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const start = (due: DueDelivery) => {
    const attempt = due.attempts + 1;
    inflight.add(due.deliveryId);
    inflightBySub.set(due.subscriptionId, (inflightBySub.get(due.subscriptionId) ?? 0) + 1);
    const run = attemptDelivery(deps, due.target, {
      deliveryId: due.deliveryId,
      eventId: due.eventId,
      eventType: due.eventType,
      occurredAt: due.occurredAt,
      payload: due.payload,
      attempt,
    })
      .then(() => made.set(due.deliveryId, attempt))
      .catch((err) => log('webhook attempt could not be recorded; it is made again once its claim lapses', { deliveryId: due.deliveryId, attempt, error: String(err) }))
      .finally(() => {
        inflight.delete(due.deliveryId);
        const n = (inflightBySub.get(due.subscriptionId) ?? 1) - 1;
        if (n <= 0) inflightBySub.delete(due.subscriptionId);
        else inflightBySub.set(due.subscriptionId, n);
        running.delete(run);
        if (!stopped) void pump(deps.clock.now());
        checkIdle();
      });
    running.add(run);
  };

  const fill = async (now: Date): Promise<number> => {
    const freeTotal = total - inflight.size;
    if (freeTotal <= 0) return 0;
    const subs = await subscriptionsWithDueDeliveries(deps.knex, now);
    const wants = subs
      .map((subscriptionId) => ({ subscriptionId, free: perSubscription - (inflightBySub.get(subscriptionId) ?? 0) }))
      .filter((w) => w.free > 0)
      // Ask for a few more than the free slots: some may be in flight or just attempted.
      .map((w) => ({ subscriptionId: w.subscriptionId, limit: w.free + perSubscription, free: w.free }));
    if (wants.length === 0) return 0;
    const rows = await dueDeliveries(deps.knex, wants, now);
    const free = new Map(wants.map((w) => [w.subscriptionId, w.free]));
    const picked: DueDelivery[] = [];
    let budget = freeTotal;
    for (const row of rows) {
      if (budget <= 0) break;
      if (inflight.has(row.deliveryId)) continue;
      const madeHere = made.get(row.deliveryId);
      if (madeHere !== undefined) {
        if (madeHere > row.attempts) continue; // the read model has not caught up with our attempt yet
        made.delete(row.deliveryId);
      }
      const left = free.get(row.subscriptionId) ?? 0;
      if (left <= 0) continue;
      free.set(row.subscriptionId, left - 1);
      picked.push(row);
      budget--;
    }
    if (picked.length === 0) return 0;
    const claimed = await claimAttempts(
      deps.knex,
      picked.map((p) => ({ deliveryId: p.deliveryId, attempt: p.attempts + 1 })),
      owner,
      now,
      new Date(now.getTime() + claimMs),
    );
    let started = 0;
    for (const p of picked) {
      if (!claimed.has(p.deliveryId) || stopped) continue;
      start(p);
      started++;
    }
    return started;
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
      if (inflight.size === 0 && !pumping) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      await Promise.all(running);
      if (pumping) await pumping;
    },
  };
}
