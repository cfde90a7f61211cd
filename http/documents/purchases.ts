/**
 * Shapes of the purchase answers: the list item (docs/api/purchases.md) and the single received purchase
 * invoice (the spec does not show it; its fields are listed in docs/api/purchases.md).
 */
import type { RecordedEvent } from '../../platform/eventstore/port.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { microsToDisplay } from '../../domain/purchases/list-query.js';
import { PurchaseInvoiceReceived, PurchaseInvoiceStored, purchaseStream, type PurchaseResponseData } from '../../domain/purchases/purchase.js';
import { responseView } from '../../domain/peppol/invoice-response.js';
import { findPurchase, type PurchaseRow } from '../../readmodels/purchases.js';
import { artifactBase64 } from '../../commands/submissions.js';
import type { HttpDeps } from '../app.js';

const PURCHASE_ID = /^pur_[0-9a-f]{32}$/;

export function purchaseListItem(row: PurchaseRow) {
  return {
    documentId: row.documentId,
    receivedAt: row.receivedAt,
    storedAt: microsToDisplay(row.storedAtMicros),
    status: row.status,
    country: row.country,
    environment: row.environment,
    invoiceNumber: row.invoiceNumber,
    supplierName: row.supplierName,
    issueDate: row.issueDate,
  };
}

function eventOf<A>(events: RecordedEvent[], def: { type: string } & Parameters<typeof decodeEventData<A>>[0]): A | null {
  const e = events.find((x) => x.type === def.type);
  return e ? decodeEventData(def, e.schemaVersion, e.data) : null;
}

/** The single received purchase invoice of the workspace and environment, or null (unknown, foreign, a sales id). */
export async function readPurchase(deps: HttpDeps, workspaceId: string, environment: string, documentId: string) {
  if (!PURCHASE_ID.test(documentId)) return null;
  const row = await findPurchase(deps.knex, workspaceId, environment, documentId);
  if (!row) return null;
  const events = await deps.store.readStream(purchaseStream(documentId));
  const received = eventOf(events, PurchaseInvoiceReceived);
  const stored = eventOf(events, PurchaseInvoiceStored);
  if (!received || !stored || stored.workspaceId !== workspaceId) return null;
  return {
    ...purchaseListItem(row),
    documentType: stored.documentType,
    supplierCountry: stored.supplierCountry,
    probableResendOf: stored.probableResendOf,
    uuid: stored.uuid,
    channel: received.channel,
    senderParticipantId: stored.senderParticipantId,
    receiverParticipantId: stored.receiverParticipantId,
    attribution: stored.attribution,
    coreDocument: stored.coreDocument,
    artifacts: {
      invoiceXmlBase64: await artifactBase64(deps.store, received.xml),
      invoiceXmlEncoding: 'base64',
      invoiceXmlSha256: received.xmlSha256,
      invoiceXmlBytes: received.xmlBytes,
    },
  };
}

/** One answer the buyer sent (docs/api/invoice-response.md). */
export function purchaseResponseView(r: PurchaseResponseData) {
  return { ...responseView(r, { sentAt: r.sentAt, channel: r.channel }), responseXmlSha256: r.xml.sha256, transmission: r.transmission };
}
