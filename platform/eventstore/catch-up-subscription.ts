/**
 * A catch-up subscription built from readAll + waitForAppends: reads the log in batches
 * from a position, and when it reaches the end waits for the next append (or a short poll
 * interval, for events held back behind a transaction that was still in flight).
 */
import type { EventStore, EventSubscription, Position, RecordedEvent } from './port.js';

/**
 * At most one pending wait for appends at a time: take it before a read, await it only when
 * the read came back short. A full read leaves it pending for the next round, so busy loops
 * do not pile up timers and listeners, and an append during a read is never missed.
 */
export function wakeSource(
  store: Pick<EventStore, 'waitForAppends'>,
  pollIntervalMs: number,
  signal: AbortSignal,
): () => Promise<void> {
  let pending: Promise<void> | null = null;
  return () =>
    (pending ??= store.waitForAppends(pollIntervalMs, signal).finally(() => {
      pending = null;
    }));
}

export function catchUpSubscription(
  store: Pick<EventStore, 'readAll' | 'waitForAppends'>,
  after: Position,
  options: { batchSize?: number; pollIntervalMs?: number } = {},
): EventSubscription {
  const batchSize = options.batchSize ?? 500;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const abort = new AbortController();

  async function* events(): AsyncGenerator<RecordedEvent> {
    let position = after;
    const nextWake = wakeSource(store, pollIntervalMs, abort.signal);
    while (!abort.signal.aborted) {
      const wake = nextWake();
      const batch = await store.readAll(position, batchSize);
      for (const event of batch) {
        if (abort.signal.aborted) return;
        yield event;
        position = event.position;
      }
      if (batch.length < batchSize) await wake;
    }
  }

  const iterator = events();
  return {
    [Symbol.asyncIterator]: () => iterator,
    async close() {
      abort.abort();
    },
  };
}
