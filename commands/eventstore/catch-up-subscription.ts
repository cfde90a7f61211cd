/**
 * A catch-up subscription built from readAll + waitForAppends: reads the log in batches
 * from a position, and when it reaches the end waits for the next append (or a short poll
 * interval, for events held back behind a transaction that was still in flight).
 */
import type { EventStore, EventSubscription, Position, RecordedEvent } from './port.js';

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
    while (!abort.signal.aborted) {
      // Registered before the read, so an append committed during the read still wakes us.
      const wake = store.waitForAppends(pollIntervalMs, abort.signal);
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
