/**
 * The purchase webhook (`purchase.invoice.stored`, docs/api/webhooks.md): one occurrence per
 * `PurchaseInvoiceStored` event, i.e. per received purchase invoice stored once (a duplicate
 * transmission appends nothing, so it announces nothing). A document sharing its supplier, type
 * and number with earlier purchases is announced like any other, with `probableResendOf` naming
 * them. Pure.
 */
import { decodeEventData } from '../../events/envelope.js';
import { PurchaseInvoiceStored } from '../../purchases/purchase.js';
import type { Occurrence } from '../delivery.js';
import { PAYLOAD_SCHEMA_VERSION, occurrenceEventId } from '../values.js';
import { dataEnvironment, type OccurrenceSource } from './source.js';

const TYPE = 'purchase.invoice.stored';

export const purchaseOccurrences: OccurrenceSource = {
  name: 'purchases',
  eventTypes: new Set([PurchaseInvoiceStored.type]),
  occurrencesOf(event): Occurrence[] {
    const d = decodeEventData(PurchaseInvoiceStored, event.schemaVersion, event.data);
    const workspaceId = d.workspaceId || event.metadata.workspaceId;
    if (!workspaceId) return [];
    return [
      {
        eventId: occurrenceEventId(event.id, TYPE),
        type: TYPE,
        workspaceId,
        environment: dataEnvironment(d.environment || event.metadata.environment) ?? 'production',
        timestamp: d.storedAt,
        payload: {
          schemaVersion: PAYLOAD_SCHEMA_VERSION,
          documentId: d.documentId,
          receivedAt: d.receivedAt,
          storedAt: d.storedAt,
          invoiceNumber: d.invoiceNumber,
          supplierName: d.supplierName,
          companyId: d.attribution.companyId,
          probableResendOf: d.probableResendOf,
        },
      },
    ];
  },
};
