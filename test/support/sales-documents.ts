/** A minimal row of the documents projection's insert (readmodels/sales-documents.ts), for the read model's own tests. */
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
