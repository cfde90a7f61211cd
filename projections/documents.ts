/**
 * Projects document streams into `sales_documents` (the facts behind the status object) and
 * the shared `documents` table that document counts read (written once, when the document is
 * received: no state change moves what counts read).
 *
 * A batch of events is applied with one statement (readmodels/sales-documents.ts, a write per table
 * and kind; the live runner folds it into the statement that moves the checkpoint): the
 * events are first folded per document in log order, so a document submitted and delivered (or
 * delivered and finalized) within one batch is inserted or updated once, in its final state. The
 * fold applies exactly what one statement per event did, in the same order: rebuild == live.
 *
 * Artifacts are named by hash (`xml_sha256`, `tdd_xml_sha256`); the status read joins the event
 * store's artifact table. Events written before artifacts were stored by hash (schema v1) carry
 * them inline: the projection stores those bytes in the artifact table (content-addressed, so
 * again and again is harmless) and keeps the hash, as for a new event.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import {
  DeliveryFailed,
  DeliveryStarted,
  Delivered,
  DocumentRejected,
  DocumentSubmitted,
  Finalized,
  BuyerResponded,
  Cancelled,
  documentDecider,
  type ArtifactRef,
} from '../domain/document/document.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { isRecord } from '../domain/validation/paths.js';
import { runWrites, type BatchWrite } from '../readmodels/batch-writes.js';
import {
  salesDocumentInserts,
  salesDocumentUpdates,
  storeInlineArtifacts,
  type SalesDocumentChange,
  type SalesDocumentInsert,
} from '../readmodels/sales-documents.js';
import { defineProjection } from './projection.js';

/** One event's change of an existing document; fields left undefined stay as they are. */
type Change = Omit<SalesDocumentChange, 'documentId'>;

/** Folds `next` (a later event's change) into `into`: later values win, unset fields keep earlier ones. */
function merge(into: Change, next: Change): Change {
  const merged: Change = { ...into };
  // A later delivery record alone replaces an earlier one written with the errors.
  if (next.government !== undefined && into.result !== undefined) {
    merged.result = { ...into.result, government: next.government };
    next = { ...next, government: undefined };
  }
  for (const [key, value] of Object.entries(next) as [keyof Change, unknown][]) if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  return merged;
}

/** A change applied to a row inserted in the same batch. */
function applyToInsert(row: SalesDocumentInsert, c: Change): void {
  if (c.state !== undefined) row.state = c.state;
  row.lastUpdatedAt = c.updatedAt;
  if (c.attempts !== undefined) row.attempts = c.attempts;
  if (c.nextAttemptAt !== undefined) row.nextAttemptAt = c.nextAttemptAt;
  if (c.government !== undefined) row.government = c.government;
  if (c.result !== undefined) {
    row.government = c.result.government;
    row.errors = c.result.errors;
  }
  if (c.finalResultDueAt !== undefined) row.finalResultDueAt = c.finalResultDueAt;
  if (c.xmlSha256 !== undefined) row.xmlSha256 = c.xmlSha256;
  if (c.tddXmlSha256 !== undefined) row.tddXmlSha256 = c.tddXmlSha256;
}

/** The core document's `header.issueDate` as it holds it, whatever its type (a rejected document's may be anything); null when absent. */
function issueDateOf(core: unknown): unknown {
  const header = isRecord(core) ? core.header : undefined;
  return isRecord(header) ? (header.issueDate ?? null) : null;
}

/** JSON text of a value as one statement per event wrote it (undefined as null). */
const json = (value: unknown) => JSON.stringify(value ?? null);

/** What a batch writes: artifacts stored inline by old events, new documents, and the merged changes of the others. */
function foldBatch(events: readonly RecordedEvent[]) {
  const inserts: SalesDocumentInsert[] = [];
  const inserted = new Map<string, SalesDocumentInsert>();
  const changes = new Map<string, Change>();
  const inline = new Map<string, string>();
  const hashOf = (ref: ArtifactRef | null | undefined): string | undefined => {
    if (!ref) return undefined;
    if (ref.inlineBase64 !== undefined) inline.set(ref.sha256, ref.inlineBase64);
    return ref.sha256;
  };
  const change = (event: RecordedEvent, c: Change) => {
    const documentId = event.streamId.slice('document-'.length);
    const row = inserted.get(documentId);
    if (row) applyToInsert(row, c);
    else changes.set(documentId, changes.has(documentId) ? merge(changes.get(documentId)!, c) : c);
  };

  for (const event of events) {
    const at = event.metadata.occurredAt;
    switch (event.type) {
      case DocumentSubmitted.type:
      case DocumentRejected.type: {
        const submitted = event.type === DocumentSubmitted.type;
        const data = submitted
          ? decodeEventData(DocumentSubmitted, event.schemaVersion, event.data)
          : decodeEventData(DocumentRejected, event.schemaVersion, event.data);
        const row: SalesDocumentInsert = {
          documentId: data.documentId,
          workspaceId: event.metadata.workspaceId ?? null,
          environment: data.environment,
          country: data.country,
          documentNumber: data.documentNumber,
          uuid: data.uuid,
          state: submitted ? 'submitted' : 'rejected',
          format: data.format,
          externalId: data.externalId,
          documentType: data.documentType,
          source: data.source,
          destinations: data.destinations,
          issueDate: issueDateOf(data.coreDocument),
          errors: json('errors' in data ? data.errors : []),
          government: null,
          xmlSha256: ('xml' in data ? hashOf(data.xml) : undefined) ?? null,
          tddXmlSha256: null,
          attempts: 0,
          nextAttemptAt: null,
          finalResultDueAt: null,
          receivedAt: at,
          lastUpdatedAt: at,
        };
        inserts.push(row);
        inserted.set(row.documentId, row);
        break;
      }
      case DeliveryStarted.type: {
        const data = decodeEventData(DeliveryStarted, event.schemaVersion, event.data);
        change(event, { state: 'processing', updatedAt: at, attempts: data.attempt, nextAttemptAt: null });
        break;
      }
      case Delivered.type: {
        const data = decodeEventData(Delivered, event.schemaVersion, event.data);
        change(event, {
          state: 'delivery_success',
          updatedAt: at,
          result: { government: json(data.government), errors: json([]) },
          finalResultDueAt: data.finalResultDueAt ?? null,
          xmlSha256: hashOf(data.xml),
          tddXmlSha256: hashOf(data.tdd),
        });
        break;
      }
      case DeliveryFailed.type: {
        const data = decodeEventData(DeliveryFailed, event.schemaVersion, event.data);
        change(event, {
          state: 'delivery_failed',
          updatedAt: at,
          result: { government: json(data.government), errors: json([data.error]) },
          nextAttemptAt: data.retryable ? (data.nextAttemptAt ?? null) : null,
        });
        break;
      }
      case Finalized.type: {
        const data = decodeEventData(Finalized, event.schemaVersion, event.data);
        change(event, {
          state: data.outcome === 'valid' ? 'final_valid' : 'final_invalid',
          updatedAt: at,
          result: { government: json(data.government), errors: json(data.errors) },
          nextAttemptAt: null,
          finalResultDueAt: null,
        });
        break;
      }
      case BuyerResponded.type: {
        // The answer's record; the state moves only with a DocumentFinalized of the same append.
        const data = decodeEventData(BuyerResponded, event.schemaVersion, event.data);
        change(event, { updatedAt: at, government: json(data.government) });
        break;
      }
      case Cancelled.type: {
        // The seller's cancellation at the authority: final_invalid, its one error item, the record with the cancellation.
        const data = decodeEventData(Cancelled, event.schemaVersion, event.data);
        change(event, { state: 'final_invalid', updatedAt: at, result: { government: json(data.government), errors: json([data.error]) }, nextAttemptAt: null, finalResultDueAt: null });
        break;
      }
    }
  }

  const writes = [...salesDocumentInserts(inserts), ...salesDocumentUpdates([...changes].map(([documentId, c]) => ({ documentId, ...c })))];
  return { inline: [...inline].map(([sha256, base64]) => ({ sha256, base64 })), writes };
}

async function applyBatch(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const { inline, writes } = foldBatch(events);
  if (inline.length > 0) await storeInlineArtifacts(trx, inline);
  await runWrites(trx, writes);
}

/** The batch's writes as one statement with the checkpoint's (Projection.writes); not for old events with inline artifacts. */
function batchWrites(events: readonly RecordedEvent[]): BatchWrite[] | null {
  const { inline, writes } = foldBatch(events);
  return inline.length > 0 ? null : writes;
}

export const documentsProjection = defineProjection({
  name: 'documents',
  // v2: delivery schedule (next attempt, final result due) and artifacts produced on delivery.
  // v3: artifacts by hash (xml_sha256, tdd_xml_sha256) instead of inline base64.
  // v4: no copy of the core document and its validation report; the issue date alone.
  // v5: `documents` without the state and last change (counts read neither): no update of it after the insert.
  version: 5,
  tables: ['sales_documents', 'documents'],
  eventTypes: new Set(Object.keys(documentDecider.events)),
  apply: (trx, event) => applyBatch(trx, [event]),
  applyMany: applyBatch,
  writes: batchWrites,
});
