/**
 * The delivery snapshot of a sales document (stream `deliverysnapshot-<documentId>`): what the
 * delivery worker needs to take the document's next step — its state as of a revision of its
 * stream, what the connectors need of the submission (without its artifacts), the last failure's
 * retry schedule and the delivery answer — so a retry or a final-result collection reads one
 * small event instead of the document's whole stream (with its XML).
 *
 * It is appended in the same (multi-stream) append as the document events of the steps after
 * which a document waits for the worker: a retryable failure and a delivery without its final
 * result. It is a cache, never the truth: the worker appends the next step with the snapshot's
 * revision as the expected revision, and when the stream has moved on (or no snapshot exists)
 * it falls back to reading the stream.
 */
import * as t from 'io-ts';
import { defineEvent } from '../events/envelope.js';

const nullableString = t.union([t.string, t.null]);

export const DeliverySnapshotTaken = defineEvent({
  type: 'DocumentDeliverySnapshot',
  version: 1,
  codec: t.type({
    /** The document stream's revision this snapshot describes (a decimal string). */
    documentRevision: t.string,
    state: t.type({ state: t.string, documentNumber: nullableString, attempts: t.number }),
    submission: t.intersection([
      t.type({
        documentId: t.string,
        uuid: t.string,
        documentNumber: nullableString,
        country: t.string,
        environment: t.string,
        documentType: t.intersection([t.type({ base: t.string, modifiers: t.array(t.string) }), t.partial({ variant: nullableString })]),
        sourceName: t.string,
        coreDocument: t.unknown,
      }),
      // The submission time (the Saudi XML's issue time); absent in snapshots taken before it was kept.
      t.partial({ submittedAt: nullableString }),
    ]),
    /** The metadata delivery events carry (from the DocumentSubmitted event). */
    context: t.type({ workspaceId: nullableString, correlationId: nullableString, causationId: nullableString }),
    lastFailure: t.union([t.type({ retryable: t.boolean, nextAttemptAt: nullableString }), t.null]),
    /** The destination's answer of the last delivery (for the final-result request). */
    deliveredGovernment: t.unknown,
  }),
});

export type DeliverySnapshot = t.TypeOf<typeof DeliverySnapshotTaken.codec>;

export const deliverySnapshotStream = (documentId: string) => `deliverysnapshot-${documentId}`;
