/**
 * ZATCA's e-invoicing (FATOORA) REST API, as its published contract defines it: the request
 * bodies, and codecs of every answer. An answer is decoded before anything reads it; one that
 * does not match the contract is a protocol error, never trusted raw.
 *
 * Endpoints (relative to an environment's base URL, `Accept-Version: V2` on every call):
 * - POST  /compliance                   OTP header, `{ csr }`                     → a compliance CSID
 * - POST  /compliance/invoices          Basic (compliance CSID), an invoice       → compliance check result
 * - POST  /production/csids             Basic (compliance CSID), `{ compliance_request_id }` → a production CSID
 * - PATCH /production/csids             Basic (production CSID), OTP, `{ csr }`   → a renewed production CSID
 * - POST  /invoices/clearance/single    Basic (production CSID), `Clearance-Status: 1`, an invoice → cleared invoice
 * - POST  /invoices/reporting/single    Basic (production CSID), `Clearance-Status: 0`, an invoice → reporting result
 *
 * Basic authentication is `binarySecurityToken:secret` of the CSID, Base64-encoded.
 */
import * as t from 'io-ts';

// The published base URLs per environment are in platform/config.ts (ZATCA_PUBLISHED_BASE_URLS).

/** The body of every invoice call (compliance check, clearance, reporting). */
export interface ZatcaInvoiceRequest {
  /** Base64 of the SHA-256 of the canonical invoice without its stamp parts. */
  invoiceHash: string;
  uuid: string;
  /** Base64 of the signed invoice XML. */
  invoice: string;
}

const nullable = <C extends t.Mixed>(c: C) => t.union([c, t.null]);

export const ValidationMessageCodec = t.intersection([
  t.type({ code: t.string, message: t.string }),
  t.partial({ type: nullable(t.string), category: nullable(t.string), status: nullable(t.string) }),
]);
export type ValidationMessage = t.TypeOf<typeof ValidationMessageCodec>;

const messages = t.union([t.array(ValidationMessageCodec), t.null]);

export const ValidationResultsCodec = t.intersection([
  t.type({ status: t.string }),
  t.partial({ infoMessages: messages, warningMessages: messages, errorMessages: messages }),
]);
export type ValidationResults = t.TypeOf<typeof ValidationResultsCodec>;

/** Answer of clearance, reporting and the compliance check (200, 202, 208, 400, 409). */
export const InvoiceAnswerCodec = t.intersection([
  t.type({ validationResults: ValidationResultsCodec }),
  t.partial({
    clearanceStatus: nullable(t.string),
    reportingStatus: nullable(t.string),
    /** Clearance: Base64 of the invoice XML as ZATCA cleared it (its stamp and QR added). */
    clearedInvoice: nullable(t.string),
    qrSellertStatus: nullable(t.string),
    qrBuyertStatus: nullable(t.string),
  }),
]);
export type InvoiceAnswer = t.TypeOf<typeof InvoiceAnswerCodec>;

/** Answer of /compliance and /production/csids (POST and PATCH). */
export const CsidAnswerCodec = t.intersection([
  t.type({
    requestID: t.union([t.number, t.string]),
    dispositionMessage: t.string,
    /** Base64 of the issued certificate (itself Base64 DER). */
    binarySecurityToken: t.string,
    secret: t.string,
  }),
  t.partial({ tokenType: nullable(t.string), errors: t.unknown }),
]);
export type CsidAnswer = t.TypeOf<typeof CsidAnswerCodec>;

/** The error body of 400/401/406/413/500/503 that are not validation results: `{ code, message }` or an errors list. */
export const ErrorAnswerCodec = t.union([
  t.intersection([t.type({ message: t.string }), t.partial({ code: nullable(t.string), category: nullable(t.string) })]),
  t.type({ errors: t.array(t.union([t.string, t.type({ code: t.string, message: t.string })])) }),
]);
export type ErrorAnswer = t.TypeOf<typeof ErrorAnswerCodec>;

/** The final statuses of an invoice call. */
export const CLEARED = 'CLEARED';
export const NOT_CLEARED = 'NOT_CLEARED';
export const REPORTED = 'REPORTED';
export const NOT_REPORTED = 'NOT_REPORTED';
/** Reporting: ZATCA's answer to a hash it already has (HTTP 409). */
export const REPORTED_SUCCESSFULLY_EARLIER = 'REPORTED_SUCCESSFULLY_EARLIER';

/** The category of the error message ZATCA sends with a duplicate (208 on clearance, 409 on reporting). */
export const DUPLICATE_INVOICE_CATEGORY = 'Duplicate-Invoice';

/** Credentials of a CSID as ZATCA issued them. */
export interface ZatcaCsid {
  binarySecurityToken: string;
  secret: string;
}

/** The certificate of a CSID (PEM), from its binarySecurityToken. */
export function certificatePemOf(binarySecurityToken: string): string {
  const der64 = Buffer.from(binarySecurityToken, 'base64').toString('utf8').replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${der64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}
