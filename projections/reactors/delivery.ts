/**
 * The delivery process: a reactor that starts delivering each submitted sales document at
 * once, and a worker that runs the retries that are due (back-off measured on the injected
 * clock), resumes attempts a stopped service left `processing`, and collects final results the
 * destinations give later.
 */
import type { Knex } from 'knex';
import { completeFinalResult, deliverDocument, type DeliveryDeps } from '../../commands/delivery/deliver.js';
import { DocumentSubmitted } from '../../domain/document/document.js';
import { dueDeliveryRetries, dueFinalResults, interruptedDeliveries } from '../../readmodels/sales-documents.js';
import type { Reactor, Worker } from './reactor.js';

/**
 * How old (by the wall clock, as the log records it) a DocumentSubmitted event may be for the
 * reactor to deliver from the event alone. Reactions follow their events within milliseconds;
 * an older event is one the reactor replays (a restart, a rebuild), whose document has usually
 * been delivered since: it is decided from the stream, one read instead of an append that fails.
 * So is every event of a batch the runner may have run before (a catch-up after a start or a
 * takeover, a batch read again after a failure), however recent: from the event alone the
 * document would be sent before its append is refused.
 */
export const DELIVER_FROM_EVENT_WITHIN_MS = 10_000;

export function deliveryReactor(deps: DeliveryDeps, concurrency: number): Reactor {
  return {
    name: 'delivery',
    eventTypes: new Set([DocumentSubmitted.type]),
    concurrency,
    async react(event, { replaying }) {
      const replayed = replaying || Date.now() - event.recordedAt.getTime() > DELIVER_FROM_EVENT_WITHIN_MS;
      await deliverDocument(deps, event.streamId.slice('document-'.length), event, { fromStream: replayed });
    },
  };
}

/**
 * `resumeAfterMs`: how long an attempt may stay `processing` before it counts as interrupted and
 * is sent again under the same attempt (the destination recognises the document: the same UUID,
 * over Peppol the same AS4 message id); 0 never resumes.
 */
export function deliveryWorker(deps: DeliveryDeps, knex: Knex, options: { batchSize?: number; concurrency?: number; resumeAfterMs?: number } = {}): Worker {
  const batchSize = options.batchSize ?? 200;
  const resumeAfterMs = options.resumeAfterMs ?? 0;
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const each = async (ids: string[], work: (id: string) => Promise<unknown>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, ids.length) }, async () => {
        while (next < ids.length) await work(ids[next++]!);
      }),
    );
  };
  return {
    name: 'delivery',
    async tick(now) {
      const retries = await dueDeliveryRetries(knex, now, batchSize);
      await each(retries, (id) => deliverDocument(deps, id));
      // Only the stream knows an interrupted attempt (its snapshot, if any, is of the failure before it).
      const interrupted = resumeAfterMs > 0 ? await interruptedDeliveries(knex, new Date(now.getTime() - resumeAfterMs), batchSize) : [];
      await each(interrupted, (id) => deliverDocument(deps, id, undefined, { fromStream: true }));
      const finals = await dueFinalResults(knex, now, batchSize);
      await each(finals, (id) => completeFinalResult(deps, id));
      return retries.length + interrupted.length + finals.length;
    },
  };
}
