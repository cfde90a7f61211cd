/**
 * Document artifacts (issue 6, items 4 and 5): the e-invoice XML per country, the UAE Tax Data
 * Document, the compliance identifiers and the invoice PDF. Pure library code: no I/O, no clock.
 *
 * | country | XML                                              | extras                 |
 * | ------- | ------------------------------------------------ | ---------------------- |
 * | AE      | Peppol PINT AE billing 1.0.4 (Invoice/CreditNote) | TDD, compliance ids    |
 * | SA      | ZATCA UBL 2.1 (Invoice)                          | hash chain, QR payload |
 * | MY      | MyInvois UBL 2.1 v1.0 (Invoice)                  |                        |
 * | BE, DE  | Peppol BIS Billing 3.0 (Invoice/CreditNote)      | compliance ids         |
 */
import type { ArtifactDocumentType, CoreDocument } from './core-document.js';
import { buildMyInvoisInvoice } from './myinvois.js';
import { resolveDocumentType } from './normalize.js';
import { buildPeppolBisDocument } from './peppol-bis.js';
import { pintAeContext, writePintAeDocument } from './pint-ae.js';
import { buildTaxDataDocument, type TaxDataDocumentOptions } from './tdd-ae.js';
import { newXmlDocument, serialize, xmlOutput, type XmlOutput } from './xml.js';
import { buildZatcaInvoice, type ZatcaStamper } from './zatca.js';

export type * from './core-document.js';
export { complianceIdentifiers, type ComplianceIdentifiers } from './compliance.js';
export { renderInvoicePdf, type RenderInvoicePdfInput } from './pdf.js';
export {
  PINT_AE_CUSTOMIZATION_ID,
  PINT_AE_PROFILE_ID,
  PINT_AE_PREDEFINED_ENDPOINTS,
  UAE_TRANSACTION_FLAG_ORDER,
  uaeTransactionTypeFlags,
} from './pint-ae.js';
export {
  PEPPOL_BIS_CUSTOMIZATION_ID,
  PEPPOL_BIS_PROFILE_ID,
  PEPPOL_SELF_BILLING_CUSTOMIZATION_ID,
  PEPPOL_SELF_BILLING_PROFILE_ID,
  XRECHNUNG_CUSTOMIZATION_ID,
} from './peppol-bis.js';
export { TDD_CUSTOMIZATION_ID, TDD_PROFILE_ID, TDD_NAMESPACE, type TaxDataDocumentOptions } from './tdd-ae.js';
export { ZATCA_INITIAL_PREVIOUS_INVOICE_HASH, ZATCA_PROFILE_ID, decodeZatcaQr, zatcaQrPayload, type ZatcaStamper } from './zatca.js';

/** Countries with an XML generator. */
export const ARTIFACT_COUNTRIES = ['AE', 'SA', 'MY', 'BE', 'DE'] as const;

export class UnsupportedArtifactCountryError extends Error {
  override readonly name = 'UnsupportedArtifactCountryError';
  constructor(readonly country: string) {
    super(`no e-invoice XML generator for country ${country}`);
  }
}

export interface GenerateInvoiceXmlInput {
  country: string;
  documentType: ArtifactDocumentType;
  document: CoreDocument;
  /** The e-invoice UUID (cbc:UUID; not written for MyInvois, which assigns its own). */
  uuid: string;
  /** When the document was issued (ISO timestamp): issue time for SA and MY when the header has none. */
  issueTimestamp?: string;
  /** SA: the previous invoice's hash in this seller's chain; absent for the first invoice. */
  previousInvoiceHash?: string;
  /** SA: the invoice counter value (ICV) of this document in the seller's chain; default 1. */
  invoiceCounter?: number;
  /** SA: the cryptographic stamp (domain/zatca/stamp.ts `zatcaStamper`); absent: unstamped. */
  stamp?: ZatcaStamper;
}

export interface GeneratedXml extends XmlOutput {
  /** SA: the invoice hash (Base64 SHA-256), the next invoice's PIH. */
  hash?: string;
  /** SA: the QR payload (Base64 TLV). */
  qr?: string;
}

export function generateInvoiceXml(input: GenerateInvoiceXmlInput): GeneratedXml {
  const country = input.country.trim().toUpperCase();
  const dt = resolveDocumentType(input.documentType);
  const doc = input.document ?? {};
  switch (country) {
    case 'AE': {
      const xmlDoc = newXmlDocument();
      writePintAeDocument(xmlDoc, pintAeContext(doc, dt, input.uuid));
      const xml = serialize(xmlDoc);
      return xmlOutput(xml);
    }
    case 'SA':
      return buildZatcaInvoice({
        doc,
        dt,
        uuid: input.uuid,
        issueTimestamp: input.issueTimestamp,
        previousInvoiceHash: input.previousInvoiceHash,
        invoiceCounter: input.invoiceCounter,
        stamp: input.stamp,
      });
    case 'MY':
      return buildMyInvoisInvoice({ doc, dt, uuid: input.uuid, issueTimestamp: input.issueTimestamp });
    case 'BE':
    case 'DE':
      return buildPeppolBisDocument({ country, doc, dt, uuid: input.uuid });
    default:
      throw new UnsupportedArtifactCountryError(country);
  }
}

export interface GenerateTaxDataDocumentInput extends TaxDataDocumentOptions {
  documentType: ArtifactDocumentType;
  document: CoreDocument;
  uuid: string;
}

/** The UAE Tax Data Document reporting a delivered PINT AE document to the FTA (see tdd-ae.ts). */
export function generateTaxDataDocument(input: GenerateTaxDataDocumentInput): GeneratedXml {
  const { documentType, document, uuid, ...options } = input;
  return buildTaxDataDocument(document ?? {}, resolveDocumentType(documentType), uuid, options);
}
