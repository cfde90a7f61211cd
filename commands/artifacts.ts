/**
 * The document artifacts the service produces: the e-invoice XML at submission (SPEC.md 2.4
 * `Base64XML`, 2.6 `artifacts`), the compliance identifiers of the status object, and the PDF
 * of a compliant document on `/status`.
 */
import type { SalesDocumentRow } from '../readmodels/sales-documents.js';
import type { XmlProducer } from './submissions.js';

export const produceInvoiceXml: XmlProducer = () => null;

export function documentCompliance(_country: string, _documentType: unknown) {
  return null;
}

/** The PDF of a compliant (final_valid) document as base64; null otherwise or when rendering fails. */
export async function renderCompliantPdf(row: SalesDocumentRow): Promise<string | null> {
  if (row.state !== 'final_valid') return null;
  return null;
}
