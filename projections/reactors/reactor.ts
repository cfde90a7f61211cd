/**
 * Reactors (process managers) react to events by issuing commands: deliver a document,
 * meter a submission, cancel an allowance. A reactor runs like a projection (same runner,
 * checkpoint, one instance at a time), but its effects are appends to the event store, which
 * cannot share the checkpoint's transaction. So a reaction may run again after a crash, and
 * every reaction must be idempotent: decide from the aggregate's current state (the state
 * machine refuses a step taken twice) and pass the triggering event's id as `idSeed` to
 * `execute`, so that a replayed append is recognised by its event ids.
 *
 * Work that waits for time (retry back-off, allowance activation) is not a reactor but a
 * worker with an injected clock: `tick(now)` is called by a timer in the service and directly
 * by tests.
 */
import type { RecordedEvent } from '../../platform/eventstore/port.js';
import { defineProjection, type Projection } from '../projection.js';

export interface Reactor {
  readonly name: string;
  readonly eventTypes: ReadonlySet<string>;
  /** `context.replaying`: the runner may have run this reaction before (BatchContext.replaying). */
  react(event: RecordedEvent, context: { replaying: boolean }): Promise<void>;
  /**
   * How many events of one batch may be reacted to at once (default 1: in order). Only for
   * reactions to independent events, e.g. one per document.
   */
  readonly concurrency?: number;
}

/** A reactor as a projection without tables, so the projection runner drives it. */
export function reactorProjection(reactor: Reactor): Projection {
  const concurrency = Math.max(1, reactor.concurrency ?? 1);
  return defineProjection({
    name: reactor.name,
    version: 1,
    tables: [],
    eventTypes: reactor.eventTypes,
    actsOutside: true,
    apply: (_trx, event) => reactor.react(event, { replaying: true }),
    async applyMany(_trx, events, context) {
      const replaying = context?.replaying ?? true;
      let next = 0;
      const lane = async () => {
        while (next < events.length) await reactor.react(events[next++]!, { replaying });
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, events.length) }, lane));
    },
  });
}

export interface Worker {
  readonly name: string;
  /** Does whatever is due at `now`; returns how many items it handled. */
  tick(now: Date): Promise<number>;
  /** Waits for work the worker runs in the background (the service calls it when closing). */
  stop?(): Promise<void>;
  /**
   * Called once by the service when it starts the worker's timer: work the worker does between
   * ticks on signals of its own (e.g. new webhook deliveries committed in this process). Tests
   * that tick a worker by hand do not call it.
   */
  start?(): void;
}
