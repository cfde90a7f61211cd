/**
 * Projects document streams into `sales_documents` (the facts behind the status object) and
 * the shared `documents` table that document counts read.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../commands/eventstore/port.js';
import {
  DeliveryFailed,
  DeliveryStarted,
  Delivered,
  DocumentRejected,
  DocumentSubmitted,
  Finalized,
  documentDecider,
} from '../domain/document/document.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { defineProjection } from './projection.js';

async function setState(trx: Knex.Transaction, event: RecordedEvent, state: string, changes: Record<string, unknown> = {}) {
  const documentId = event.streamId.slice('document-'.length);
  const at = event.metadata.occurredAt;
  await trx('sales_documents').where({ document_id: documentId }).update({ state, last_updated_at: at, ...changes });
  await trx('documents').where({ document_id: documentId }).update({ state, updated_at: at });
}

const json = (value: unknown) => JSON.stringify(value ?? null);

export const documentsProjection = defineProjection({
  name: 'documents',
  // v2: delivery schedule (next attempt, final result due) and artifacts produced on delivery.
  version: 2,
  tables: ['sales_documents', 'documents'],
  eventTypes: new Set(Object.keys(documentDecider.events)),
  async apply(trx, event) {
    const at = event.metadata.occurredAt;
    switch (event.type) {
      case DocumentSubmitted.type:
      case DocumentRejected.type: {
        const submitted = event.type === DocumentSubmitted.type;
        const data = submitted
          ? decodeEventData(DocumentSubmitted, event.schemaVersion, event.data)
          : decodeEventData(DocumentRejected, event.schemaVersion, event.data);
        const state = submitted ? 'submitted' : 'rejected';
        await trx('sales_documents').insert({
          document_id: data.documentId,
          workspace_id: event.metadata.workspaceId,
          environment: data.environment,
          country: data.country,
          document_number: data.documentNumber,
          uuid: data.uuid,
          state,
          format: data.format,
          external_id: data.externalId,
          document_type: json(data.documentType),
          source: json(data.source),
          company_id: data.source.companyId,
          destinations: json(data.destinations),
          core_document: json(data.coreDocument),
          validation: json(data.validation),
          errors: json('errors' in data ? data.errors : []),
          government: null,
          xml_base64: 'xmlBase64' in data ? data.xmlBase64 : null,
          received_at: at,
          last_updated_at: at,
        });
        await trx('documents').insert({
          document_id: data.documentId,
          workspace_id: event.metadata.workspaceId,
          environment: data.environment,
          company_id: data.source.companyId,
          country: data.country,
          direction: 'sales',
          document_base: data.documentType.base,
          document_number: data.documentNumber,
          state,
          created_at: at,
          updated_at: at,
        });
        return;
      }
      case DeliveryStarted.type: {
        const data = decodeEventData(DeliveryStarted, event.schemaVersion, event.data);
        return setState(trx, event, 'processing', { attempts: data.attempt, next_attempt_at: null });
      }
      case Delivered.type: {
        const data = decodeEventData(Delivered, event.schemaVersion, event.data);
        return setState(trx, event, 'delivery_success', {
          government: json(data.government),
          errors: json([]),
          final_result_due_at: data.finalResultDueAt ?? null,
          ...(data.xmlBase64 ? { xml_base64: data.xmlBase64 } : {}),
          ...(data.tddXmlBase64 ? { tdd_xml_base64: data.tddXmlBase64 } : {}),
        });
      }
      case DeliveryFailed.type: {
        const data = decodeEventData(DeliveryFailed, event.schemaVersion, event.data);
        return setState(trx, event, 'delivery_failed', {
          government: json(data.government),
          errors: json([data.error]),
          next_attempt_at: data.retryable ? (data.nextAttemptAt ?? null) : null,
        });
      }
      case Finalized.type: {
        const data = decodeEventData(Finalized, event.schemaVersion, event.data);
        return setState(trx, event, data.outcome === 'valid' ? 'final_valid' : 'final_invalid', {
          government: json(data.government),
          errors: json(data.errors),
          next_attempt_at: null,
          final_result_due_at: null,
        });
      }
    }
  },
});
