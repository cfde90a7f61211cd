/** Sales documents for tests: a minimal row of the documents projection's insert (readmodels/sales-documents.ts), and the data of a document's first event. */
import { randomUUID } from 'node:crypto';
import type { SalesDocumentInsert } from '../../readmodels/sales-documents.js';

/** Document `i` of a test named `label`: its ids, number and times derive from both. */
export function salesDocumentRow(label: string, i: number): SalesDocumentInsert {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  return {
    documentId: `doc_${label}_${i}`,
    workspaceId: `ws_${label}`,
    environment: 'sandbox',
    country: 'AE',
    documentNumber: `${label.toUpperCase()}-${i}`,
    uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    state: 'processing',
    format: 'unify',
    externalId: null,
    documentType: { base: 'invoice', variants: [], modifiers: [] },
    source: { name: label, version: 'v1', companyId: `co_${label}` },
    destinations: [{ type: 'PEPPOL' }],
    issueDate: at.slice(0, 10),
    errors: '[]',
    government: null,
    xmlSha256: null,
    tddXmlSha256: null,
    attempts: 0,
    nextAttemptAt: null,
    finalResultDueAt: null,
    receivedAt: at,
    lastUpdatedAt: at,
  };
}

/**
 * The data of a sales document's first event (DocumentSubmitted v1 or DocumentRejected) for
 * projection tests: `number` names it, a `receipt` variant makes it Malaysian.
 */
export function receivedDocumentData(documentId: string, options: { number: string; variant?: string | null; coreDocument: unknown; validation?: unknown }) {
  const variant = options.variant ?? null;
  return {
    documentId,
    uuid: randomUUID(),
    documentNumber: options.number,
    country: variant === 'receipt' ? 'MY' : 'AE',
    environment: 'sandbox',
    documentType: { base: 'tax_invoice', modifiers: [], variant },
    source: { name: 'ERP', version: 'v1', companyId: null },
    format: 'new',
    externalId: null,
    destinations: ['TAX_AUTHORITY'],
    coreDocument: options.coreDocument,
    validation: options.validation ?? { success: true, errors: [], warnings: [], metadata: {}, validatedAt: '2026-03-01T00:00:00.000Z' },
  };
}
