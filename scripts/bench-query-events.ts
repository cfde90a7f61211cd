/**
 * The log events behind bench:query's documents, so that indexing is measured through the
 * search projection (reading the log, the sales facts table, shaping, the index write) and
 * not through the adapter alone. Each generated document (bench-query-documents.ts) becomes
 * the events its kind leaves in the log:
 *
 * - sales documents and receipts: `DocumentSubmitted` (or `DocumentRejected` for the documents
 *   needing correction) in `document-<id>`, then the state changes of its status (compliant:
 *   delivery started, delivered, finalized valid; non-compliant: … finalized invalid;
 *   processing: delivery started);
 * - purchases: `PurchaseInvoiceStored` in `purchase-<id>`.
 *
 * A document's events are one append (one stream), as a submit and its delivery leave them.
 */
import { randomUUID } from 'node:crypto';
import type { NewEvent, StreamAppend } from '../platform/eventstore/port.js';
import { eventMetadata } from '../commands/execute.js';
import { Delivered, DeliveryStarted, DocumentRejected, DocumentSubmitted, Finalized } from '../domain/document/document.js';
import { PURCHASE_STORED_STATUS, PurchaseInvoiceStored, supplierCountryOf } from '../domain/purchases/purchase.js';
import type { IndexedDocument } from '../readmodels/search/port.js';
import { makeDocument } from './bench-query-documents.js';

type Json = Record<string, unknown>;

function event(type: string, schemaVersion: number, data: unknown, d: IndexedDocument, at: Date): NewEvent {
  return {
    id: randomUUID(),
    type,
    schemaVersion,
    data,
    metadata: eventMetadata({ now: at, workspaceId: d.workspaceId, environment: d.environment, actor: 'bench' }),
  };
}

/** The stream and events of document `i` (`at`: when they happened). */
export function documentEvents(i: number, workspaces: number, at: Date = new Date()): StreamAppend & { document: IndexedDocument } {
  const d = makeDocument(i, workspaces);
  const doc = d.document as Json;
  if (d.type === 'purchases') {
    const { meta: _meta, ...core } = doc.coreDocument as Json;
    const header = core.header as Json;
    const seller = (core.parties as Json).seller as Json;
    const iso = at.toISOString();
    const data = {
      documentId: d.documentId,
      workspaceId: d.workspaceId,
      environment: d.environment,
      status: PURCHASE_STORED_STATUS,
      country: 'AE',
      receiverCountry: 'AE',
      supplierCountry: supplierCountryOf(core),
      documentType: { base: (doc.documentType as Json).base as string, modifiers: (doc.documentType as Json).modifiers as string[] },
      invoiceNumber: header.documentNumber as string,
      uuid: null,
      issueDate: header.issueDate as string,
      supplierName: seller.name as string,
      senderParticipantId: null,
      receiverParticipantId: null,
      attribution: { companyId: 'co_bench', sourceName: 'Bench ERP', sourceVersion: 'v1', branchId: null, userGivenBranchId: null },
      probableResendOf: [],
      coreDocument: core,
      xmlSha256: '0'.repeat(64),
      receivedAt: iso,
      storedAt: iso,
    };
    return { streamId: `purchase-${d.documentId}`, expected: 'no_stream', events: [event(PurchaseInvoiceStored.type, PurchaseInvoiceStored.version, data, d, at)], document: d };
  }
  const receipt = d.type === 'receipts';
  const meta = (receipt ? doc.meta : (doc.coreDocument as Json).meta) as Json;
  const { meta: _meta, ...core } = (receipt ? (({ documentId: _i, documentType: _t, statusHistory: _h, countryDocumentStatus: _c, ...rest }) => rest)(doc) : doc.coreDocument) as Json;
  const statuses = meta.statuses as { document: { current: string } };
  const documentType = doc.documentType as { base: string; modifiers: string[] };
  const received = {
    documentId: d.documentId,
    uuid: d.documentId,
    documentNumber: (core.header as Json).documentNumber as string,
    country: receipt ? 'MY' : 'AE',
    environment: d.environment,
    documentType: { base: documentType.base, modifiers: documentType.modifiers, ...(receipt ? { variant: 'receipt' } : {}) },
    source: { name: 'Bench ERP', version: 'v1', companyId: null },
    format: 'new' as const,
    externalId: null,
    destinations: [receipt ? 'myinvois' : 'uae'],
    coreDocument: core,
    validation: meta.coreValidation,
  };
  const events: NewEvent[] = [];
  const government = { reference: `gov-${d.documentId}` };
  switch (statuses.document.current) {
    case 'NEEDS_CORRECTION':
      events.push(event(DocumentRejected.type, DocumentRejected.version, { ...received, errors: [{ code: 'AE-BR-01', message: 'Seller TRN is required', path: ['parties', 'seller', 'taxIds'], source: 'validation' as const }] }, d, at));
      break;
    default:
      events.push(event(DocumentSubmitted.type, DocumentSubmitted.version, { ...received, xml: null }, d, at));
      events.push(event(DeliveryStarted.type, DeliveryStarted.version, { attempt: 1, destination: received.destinations[0] }, d, at));
      if (statuses.document.current === 'PROCESSING') break;
      events.push(event(Delivered.type, Delivered.version, { attempt: 1, government }, d, at));
      events.push(
        event(Finalized.type, Finalized.version, { outcome: statuses.document.current === 'COMPLIANT' ? 'valid' : 'invalid', government, errors: [] }, d, at),
      );
  }
  return { streamId: `document-${d.documentId}`, expected: 'no_stream', events, document: d };
}
