/**
 * Projects the buyer's answers that matched no sales document (`PeppolResponseUnmatched`,
 * domain/peppol/unmatched-response.ts) into `peppol_unmatched_responses`, which operators list with
 * `admin peppol unmatched-responses`. The response's bytes stay in the event store's artifacts.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { UnmatchedResponseKept } from '../domain/peppol/unmatched-response.js';
import { insertUnmatchedResponses } from '../readmodels/sales-documents.js';
import { defineProjection } from './projection.js';

async function apply(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const rows = events
    .filter((e) => e.type === UnmatchedResponseKept.type)
    .map((e) => {
      const d = decodeEventData(UnmatchedResponseKept, e.schemaVersion, e.data);
      return {
        xmlSha256: d.xml.sha256,
        environment: d.environment,
        channel: d.channel,
        messageId: d.messageId,
        responseId: d.responseId,
        code: d.code,
        invoiceNumber: d.invoiceNumber,
        senderParticipantId: d.senderParticipantId,
        receiverParticipantId: d.receiverParticipantId,
        reason: d.reason,
        receivedAt: d.receivedAt,
      };
    });
  await insertUnmatchedResponses(trx, rows);
}

export const peppolResponsesProjection = defineProjection({
  name: 'peppol_responses',
  version: 1,
  tables: ['peppol_unmatched_responses'],
  eventTypes: new Set([UnmatchedResponseKept.type]),
  apply: (trx, event) => apply(trx, [event]),
  applyMany: apply,
});
