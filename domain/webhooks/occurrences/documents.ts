/**
 * The sales-document status webhook (`document.status.changed`, docs/api/webhooks.md): one
 * occurrence per event of a document stream that changes the document's state (submitted,
 * rejected, delivery started, delivered, delivery failed, finalized, cancelled by the seller). The state a change reaches
 * is read from the event alone (the state machine of domain/document/document.ts gives every
 * event type one target state; a finalization names its outcome), so the source stays pure and a
 * rebuild gives the same occurrences with the same ids. Only subscriptions that name this type
 * receive it: a workspace that does not subscribe gets no sales-document webhook. Pure.
 */
import { decodeEventData } from '../../events/envelope.js';
import {
  Cancelled,
  DeliveryFailed,
  DeliveryStarted,
  Delivered,
  DocumentRejected,
  DocumentSubmitted,
  Finalized,
  isTerminal,
  type DocumentErrorItem,
  type DocumentState,
} from '../../document/document.js';
import { changedStep } from '../../document/status.js';
import type { Occurrence } from '../delivery.js';
import { PAYLOAD_SCHEMA_VERSION, occurrenceEventId } from '../values.js';
import { dataEnvironment, type OccurrenceSource, type SourceEvent } from './source.js';

export const DOCUMENT_STATUS_EVENT = 'document.status.changed';
const STREAM_PREFIX = 'document-';

interface Change {
  state: DocumentState;
  errors: DocumentErrorItem[];
  /** The environment the event itself names (the first event of a document does). */
  environment?: string;
}

/** The state each document event moves to, and the errors it records. */
const CHANGES: Record<string, (event: SourceEvent) => Change> = {
  [DocumentSubmitted.type]: (e) => {
    const d = decodeEventData(DocumentSubmitted, e.schemaVersion, e.data);
    return { state: 'submitted', errors: [], environment: d.environment };
  },
  [DocumentRejected.type]: (e) => {
    const d = decodeEventData(DocumentRejected, e.schemaVersion, e.data);
    return { state: 'rejected', errors: d.errors, environment: d.environment };
  },
  [DeliveryStarted.type]: () => ({ state: 'processing', errors: [] }),
  [Delivered.type]: () => ({ state: 'delivery_success', errors: [] }),
  [DeliveryFailed.type]: (e) => ({ state: 'delivery_failed', errors: [decodeEventData(DeliveryFailed, e.schemaVersion, e.data).error] }),
  [Finalized.type]: (e) => {
    const d = decodeEventData(Finalized, e.schemaVersion, e.data);
    return { state: d.outcome === 'valid' ? 'final_valid' : 'final_invalid', errors: d.errors };
  },
  // The seller's cancellation at the authority: a final_valid document ends final_invalid.
  [Cancelled.type]: (e) => ({ state: 'final_invalid', errors: [decodeEventData(Cancelled, e.schemaVersion, e.data).error] }),
};

const publicError = ({ code, message, path, source }: DocumentErrorItem) => ({ code, message, path, source });

export const documentStatusOccurrences: OccurrenceSource = {
  name: 'documents',
  eventTypes: new Set(Object.keys(CHANGES)),
  workspaceOf: (event) => (event.streamId.startsWith(STREAM_PREFIX) ? (event.metadata.workspaceId ?? null) : null),
  occurrencesOf(event): Occurrence[] {
    if (!event.streamId.startsWith(STREAM_PREFIX)) return [];
    const workspaceId = event.metadata.workspaceId;
    // Events written without a workspace (none are, since documents have one) announce nothing.
    if (!workspaceId) return [];
    const change = CHANGES[event.type]!(event);
    const errors = change.errors.map(publicError);
    const step = changedStep(change.state, change.errors);
    const environment = dataEnvironment(change.environment ?? event.metadata.environment) ?? 'production';
    return [
      {
        eventId: occurrenceEventId(event.id, DOCUMENT_STATUS_EVENT),
        type: DOCUMENT_STATUS_EVENT,
        workspaceId,
        environment,
        timestamp: event.metadata.occurredAt,
        payload: {
          schemaVersion: PAYLOAD_SCHEMA_VERSION,
          documentId: event.streamId.slice(STREAM_PREFIX.length),
          state: change.state,
          isTerminal: isTerminal(change.state),
          errors,
          step: { name: step.name, status: step.status, error: step.error },
          environment,
          occurredAt: event.metadata.occurredAt,
        },
      },
    ];
  },
};
