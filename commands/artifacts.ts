/**
 * The document artifacts the service produces: the e-invoice XML at submission (docs/api/unify.md
 * `Base64XML`, 2.6 `artifacts`), the compliance identifiers of the status object, and the PDF
 * of a compliant document on `/status`.
 */
import { LRUCache } from 'lru-cache';
import { complianceIdentifiers, generateInvoiceXml, renderInvoicePdf, type CoreDocument } from '../domain/artifacts/index.js';
import { COMPLIANCE_COUNTRIES } from '../domain/document/status.js';
import type { SalesDocumentRow } from '../readmodels/sales-documents.js';
import type { EventStore } from '../platform/eventstore/port.js';
import { readSubmission, type XmlProducer } from './submissions.js';

/**
 * Countries whose XML is complete at submission. Saudi invoices carry the seller's invoice
 * counter and the previous invoice's hash, so their XML is produced when the document enters
 * the seller's chain on delivery; until then Base64XML is empty, as docs/api/unify.md allows.
 */
const XML_AT_SUBMISSION: ReadonlySet<string> = new Set(['AE', 'MY', 'BE', 'DE']);

export const produceInvoiceXml: XmlProducer = ({ country, documentType, document, uuid }) => {
  if (!XML_AT_SUBMISSION.has(country)) return null;
  return generateInvoiceXml({ country, documentType, document: document as CoreDocument, uuid }).bytes;
};

export function documentCompliance(country: string, documentType: { base: string; modifiers?: readonly string[]; variant?: string | null }) {
  return COMPLIANCE_COUNTRIES.has(country) ? complianceIdentifiers(country, documentType) : null;
}

/**
 * Rendered PDFs of final documents (a final document never changes), so clients polling
 * `/status` do not render the same PDF again on every call. Bounded; the least recently used go first.
 */
const pdfCache = new LRUCache<string, string>({ max: 256 });

/**
 * The PDF of a compliant (final_valid) document as base64; null otherwise, or when it cannot be
 * rendered. The read model keeps no copy of the document: it is read from its submission event.
 */
export async function renderCompliantPdf(store: Pick<EventStore, 'readStream'>, row: SalesDocumentRow): Promise<string | null> {
  if (row.state !== 'final_valid') return null;
  const cached = pdfCache.get(row.documentId);
  if (cached) return cached;
  const submission = await readSubmission(store, row.documentId);
  const rendered = submission ? await renderPdf(row, submission.data.coreDocument) : null;
  if (rendered) {
    pdfCache.set(row.documentId, rendered);
  }
  return rendered;
}

async function renderPdf(row: SalesDocumentRow, coreDocument: unknown): Promise<string | null> {
  try {
    const pdf = await renderInvoicePdf({
      country: row.country,
      documentType: row.documentType,
      document: coreDocument as CoreDocument,
      uuid: row.uuid ?? row.documentId,
      state: row.state,
    });
    return pdf.toString('base64');
  } catch {
    return null;
  }
}
