/**
 * The webhook delivery worker. Due deliveries come from the webhooks read models (built from the
 * log: the deliveries the occurrences cause, by the webhooks projection, and the state their
 * recorded attempts give them, by the webhook_attempts projection), so a restarted worker resumes
 * exactly where the log says: nothing scheduled is lost, nothing recorded is attempted again.
 * Each attempt is claimed first (webhook_delivery_claims, one statement a round): of two service
 * instances only one makes a given attempt; a claim whose holder died lapses and the attempt is
 * made by another. Sends run in the background, at most `perSubscription` at once for one
 * subscription and `total` in all, so a slow or dead receiver holds only its own slots. A
 * subscription whose receiver answers fast keeps a queue of claimed deliveries, so a finished
 * send is followed by the next at once, without a round trip to the database; a slow one only
 * claims what its slots take. Two kinds of round find work: the full round (`tick(now)`, on the
 * service's interval and directly by tests, with `idle()` to wait for the sends) looks at every
 * due attempt — retries, lapsed claims, first attempts not recorded yet (from a floor per
 * subscription before which every delivery has a recorded attempt); the fast round reads only the
 * deliveries written since the last one, in log order from a cursor per subscription, and runs
 * when the webhooks projection commits new deliveries in this process (after `start()`) and when
 * a subscription's queue runs low, so a new delivery is picked up at once and the cost of a round
 * does not grow with the deliveries whose attempt the projection has not recorded yet. Time is
 * the injected clock's.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { attemptDelivery, type WebhookDeliveryDeps } from '../../commands/webhooks/deliver.js';
import {
  activeSubscriptionIds,
  claimAttempts,
  dueDeliveries,
  freshDeliveries,
  latestDeliveryCursors,
  pruneClaims,
  readFloors,
  saveFloors,
  compareCursors,
  START_CURSOR,
  type DeliveryCursor,
  type DueDelivery,
} from '../../readmodels/webhooks.js';
import type { Worker } from './reactor.js';
import { onWebhookDeliveriesCommitted } from '../webhooks.js';

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
  /** Takes new deliveries committed in this process at once (the service calls it; tests that tick by hand do not). */
  start(): void;
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
  let lastPrune = 0;
  let idleWaiters: (() => void)[] = [];

  const checkIdle = () => {
    if (running.size === 0 && !pumping && [...subs.values()].every((s) => s.queue.length === 0)) {
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
    // The slot is the receiver's: it is freed once the answer is in (or the attempt failed), while
    // the attempt's record is appended (group-committed with the others that finish together) in the background.
    let slotFreed = false;
    const freeSlot = () => {
      if (slotFreed) return;
      slotFreed = true;
      sub.avgMs = sub.avgMs * 0.8 + (performance.now() - began) * 0.2;
      sub.inflight--;
      inflightTotal--;
      dispatch();
      if (!stopped && sub.queue.length <= depthOf(sub) / 2) void pump(deps.clock.now(), 'fast');
    };
    const run = attemptDelivery(
      deps,
      due.target,
      {
        deliveryId: due.deliveryId,
        eventId: due.eventId,
        eventType: due.eventType,
        occurredAt: due.occurredAt,
        payload: due.payload,
        attempt,
      },
      { onAnswered: freeSlot },
    )
      .then(() => made.set(due.deliveryId, { attempt, at: performance.now() }))
      .catch((err) => log('webhook attempt could not be recorded; it is made again once its claim lapses', { deliveryId: due.deliveryId, attempt, error: String(err) }))
      .finally(() => {
        // Held until recorded, so no round takes it again meanwhile.
        held.delete(due.deliveryId);
        running.delete(run);
        freeSlot();
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

  /**
   * Where the fast round of each subscription reads from (deliveries after it are new to this
   * worker); set for every active subscription by the full round.
   */
  const cursors = new Map<string, DeliveryCursor | null>();

  /**
   * Where the full round of each subscription looks for first attempts not recorded yet: every
   * delivery before it has a recorded attempt (from the delivery state), so the round does not
   * step over the whole history each time. Read from webhook_delivery_floors for a subscription
   * new to the worker (before every delivery when none is stored), moved on by each round and
   * stored when it moved.
   */
  const floors = new Map<string, DeliveryCursor>();

  /** Claims the picked attempts and queues those claimed. */
  const claimAndQueue = async (rows: readonly DueDelivery[], now: Date): Promise<number> => {
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

  const room = (subscriptionId: string) => {
    const s = subOf(subscriptionId);
    return depthOf(s) - s.queue.length - s.inflight;
  };

  /**
   * The full round (each tick): every due attempt of every active subscription — retries, lapsed
   * claims, deliveries of subscriptions new to this worker. Its cost grows with the deliveries
   * waiting for their attempt's record, so it runs on the tick only.
   */
  const fillAll = async (now: Date): Promise<number> => {
    const active = await activeSubscriptionIds(deps.knex);
    const known = new Set(active);
    for (const id of cursors.keys()) if (!known.has(id)) cursors.delete(id);
    for (const id of floors.keys()) if (!known.has(id)) floors.delete(id);
    const unknown = active.filter((id) => !cursors.has(id));
    if (unknown.length > 0) for (const [id, c] of await latestDeliveryCursors(deps.knex, unknown)) cursors.set(id, c);
    const noFloor = active.filter((id) => !floors.has(id));
    if (noFloor.length > 0) {
      const stored = await readFloors(deps.knex, noFloor);
      for (const id of noFloor) floors.set(id, stored.get(id) ?? START_CURSOR);
    }
    const wants = active
      .map((subscriptionId) => ({ subscriptionId, limit: room(subscriptionId), floor: floors.get(subscriptionId) ?? START_CURSOR }))
      .filter((w) => w.limit > 0);
    if (wants.length === 0) return 0;
    const { due, floors: found } = await dueDeliveries(deps.knex, wants, now);
    const moved = new Map<string, DeliveryCursor>();
    for (const [id, floor] of found) {
      const before = floors.get(id);
      if (known.has(id) && (!before || compareCursors(floor, before) > 0)) {
        floors.set(id, floor);
        moved.set(id, floor);
      }
    }
    const queued = await claimAndQueue(due, now);
    await saveFloors(deps.knex, moved);
    return queued;
  };

  /**
   * The fast round (on new deliveries committed here, and when a subscription's queue runs low):
   * only the first attempts of deliveries written after each subscription's cursor, so its cost
   * does not grow with a backlog of attempts the projection has not recorded yet.
   */
  const fillFresh = async (now: Date): Promise<number> => {
    const wants: { subscriptionId: string; limit: number; after: DeliveryCursor }[] = [];
    for (const [subscriptionId, after] of cursors) {
      const limit = room(subscriptionId);
      if (limit > 0) wants.push({ subscriptionId, limit, after: after ?? START_CURSOR });
    }
    if (wants.length === 0) return 0;
    const { due, cursors: moved } = await freshDeliveries(deps.knex, wants, now);
    for (const [id, c] of moved) if (cursors.has(id)) cursors.set(id, c);
    return claimAndQueue(due, now);
  };

  /** Runs a round; a round asked for while one runs follows it (a full one wins over a fast one). */
  let requested: 'fast' | 'full' | null = null;
  function pump(now: Date, kind: 'fast' | 'full'): Promise<number> {
    if (pumping) {
      if (requested !== 'full') requested = kind;
      return pumping;
    }
    pumping = (async () => {
      let started = 0;
      try {
        let round: 'fast' | 'full' | null = kind;
        while (round && !stopped) {
          requested = null;
          started += round === 'full' ? await fillAll(now) : await fillFresh(now);
          now = deps.clock.now() > now ? deps.clock.now() : now;
          round = requested;
        }
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

  let unsubscribe: (() => void) | null = null;

  return {
    name: 'webhook_delivery',
    tick: (now) => (stopped ? Promise.resolve(0) : pump(now, 'full')),
    start() {
      // New deliveries committed in this process are taken at once, not at the next tick.
      unsubscribe ??= onWebhookDeliveriesCommitted(() => {
        if (!stopped) void pump(deps.clock.now(), 'fast');
      });
    },
    idle() {
      if (running.size === 0 && !pumping && [...subs.values()].every((s) => s.queue.length === 0)) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      unsubscribe?.();
      // Queued claims are released by lapsing: another instance (or this one restarted) takes them.
      for (const s of subs.values()) s.queue.length = 0;
      await Promise.all(running);
      if (pumping) await pumping;
    },
  };
}
