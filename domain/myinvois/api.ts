/**
 * The MyInvois e-Invoice API as the service uses it (LHDNM's MyInvois SDK, API v1.0): the
 * published limits, the answers' shapes (io-ts codecs: an answer that does not match is a
 * protocol error, never guessed at), the mapping of validation errors onto the interface's error
 * items, and the validation link. Pure.
 *
 * Published limits (SDK "Submit Documents" and "Integration Practices"):
 * - a submission holds at most 100 documents and 5 MB; a document at most 300 KB;
 * - the access token lives 60 minutes and is reused until it expires;
 * - submission status is polled with Get Submission every 3-5 seconds; Get Document Details is used
 *   only for the errors of invalid documents;
 * - a document can be cancelled by its issuer within 72 hours of its validation.
 * Rate limits per client id (SDK "API Rate Limiting"), requests per minute: login 12, submit 100,
 * get submission 300, get document details 125, cancel 12, get recent documents 12.
 */
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import type { DocumentErrorItem } from '../document/document.js';

export const MYINVOIS_LIMITS = {
  documentsPerSubmission: 100,
  bytesPerSubmission: 5 * 1024 * 1024,
  bytesPerDocument: 300 * 1024,
  tokenLifetimeSeconds: 3600,
  pollIntervalMs: 3000,
  cancellationWindowMs: 72 * 3600 * 1000,
} as const;

export type MyInvoisOperation = 'login' | 'submit' | 'getSubmission' | 'getDocumentDetails' | 'cancel' | 'recentDocuments';

/** Requests per minute per client id. */
export const MYINVOIS_RATE_LIMITS: Readonly<Record<MyInvoisOperation, number>> = {
  login: 12,
  submit: 100,
  getSubmission: 300,
  getDocumentDetails: 125,
  cancel: 12,
  recentDocuments: 12,
};

/** The validation link of a valid document, as the SDK publishes it: `{portal}/{uuid}/share/{longId}`. */
export function validationLink(portalBaseUrl: string, uuid: string, longId: string): string {
  return `${portalBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(uuid)}/share/${encodeURIComponent(longId)}`;
}

const nullable = <C extends t.Mixed>(c: C) => t.union([c, t.null, t.undefined]);

export const TokenAnswer = t.type({ access_token: t.string, token_type: t.string, expires_in: t.number });

/** The standard error object (and the error of a rejected document). */
export interface ApiError {
  code?: string | null;
  message?: string | null;
  target?: string | null;
  propertyPath?: string | null;
  details?: ApiError[] | null;
}
export const ApiErrorCodec: t.Type<ApiError> = t.recursion('ApiError', () =>
  t.partial({ code: nullable(t.string), message: nullable(t.string), target: nullable(t.string), propertyPath: nullable(t.string), details: nullable(t.array(ApiErrorCodec)) }),
);
export const ErrorAnswer = t.type({ error: ApiErrorCodec });

export const SubmitAnswer = t.type({
  submissionUid: nullable(t.string),
  acceptedDocuments: t.array(t.type({ uuid: t.string, invoiceCodeNumber: t.string })),
  rejectedDocuments: t.array(t.type({ invoiceCodeNumber: t.string, error: ApiErrorCodec })),
});
export type SubmitAnswer = t.TypeOf<typeof SubmitAnswer>;

export const DocumentSummary = t.intersection([
  t.type({ uuid: t.string, submissionUid: t.string, internalId: t.string, status: t.string }),
  t.partial({
    longId: nullable(t.string),
    issuerTin: nullable(t.string),
    dateTimeReceived: nullable(t.string),
    dateTimeValidated: nullable(t.string),
    documentStatusReason: nullable(t.string),
    cancelDateTime: nullable(t.string),
  }),
]);
export type DocumentSummary = t.TypeOf<typeof DocumentSummary>;

export const SubmissionAnswer = t.type({
  submissionUid: t.string,
  documentCount: t.number,
  overallStatus: t.string,
  documentSummary: t.array(DocumentSummary),
});
export type SubmissionAnswer = t.TypeOf<typeof SubmissionAnswer>;

/** One validation error of Get Document Details (its inner errors nest the same shape). */
export interface StepError {
  propertyName?: string | null;
  propertyPath?: string | null;
  errorCode?: string | null;
  error?: string | null;
  errorMS?: string | null;
  innerError?: StepError[] | null;
}
const StepErrorCodec: t.Type<StepError> = t.recursion('StepError', () =>
  t.partial({
    propertyName: nullable(t.string),
    propertyPath: nullable(t.string),
    errorCode: nullable(t.string),
    error: nullable(t.string),
    errorMS: nullable(t.string),
    innerError: nullable(t.array(StepErrorCodec)),
  }),
);

export const DocumentDetailsAnswer = t.intersection([
  DocumentSummary,
  t.partial({
    validationResults: nullable(
      t.type({ status: t.string, validationSteps: t.array(t.intersection([t.type({ status: t.string, name: t.string }), t.partial({ error: nullable(StepErrorCodec) })])) }),
    ),
  }),
]);
export type DocumentDetailsAnswer = t.TypeOf<typeof DocumentDetailsAnswer>;

export const RecentDocumentsAnswer = t.type({ result: t.array(DocumentSummary) });

export const CancelAnswer = t.type({ uuid: t.string, status: t.string });

/** Decodes an answer body, or says precisely what did not match. */
export function decodeAnswer<A>(codec: t.Type<A, unknown>, body: unknown, what: string): { ok: true; value: A } | { ok: false; reason: string } {
  const r = codec.decode(body);
  if (isLeft(r)) {
    const first = r.left[0];
    const at = first ? first.context.map((c) => c.key).filter((k) => k !== '').join('.') : '';
    return { ok: false, reason: `${what}: unexpected answer${at ? ` at ${at}` : ''}` };
  }
  return { ok: true, value: r.right };
}

/**
 * A MyInvois property path (`Invoice.AccountingSupplierParty.Party…`, or the JSON form
 * `$.Invoice[0].AccountingSupplierParty[0]…`) as the interface's path segments.
 */
export function pathSegments(propertyPath: string | null | undefined): (string | number)[] {
  if (!propertyPath) return [];
  return propertyPath
    .replace(/^\$\.?/, '')
    .split(/\.|\[(\d+)\]/)
    .filter((s): s is string => s !== undefined && s !== '')
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** The leaves of a validation error tree (an error with inner errors stands for them). */
function leaves(e: StepError): StepError[] {
  return e.innerError && e.innerError.length > 0 ? e.innerError.flatMap(leaves) : [e];
}

/** The validation errors of an invalid document, one error item per innermost error. */
export function validationErrors(details: DocumentDetailsAnswer): DocumentErrorItem[] {
  const out: DocumentErrorItem[] = [];
  for (const step of details.validationResults?.validationSteps ?? []) {
    if (step.status.toLowerCase() !== 'invalid' || !step.error) continue;
    for (const leaf of leaves(step.error)) {
      out.push({
        code: leaf.errorCode || 'MYINVOIS_VALIDATION',
        message: `${step.name}: ${leaf.error || leaf.errorMS || 'invalid'}`,
        path: pathSegments(leaf.propertyPath),
        payloadPath: leaf.propertyPath ?? null,
        source: 'government',
      });
    }
  }
  if (out.length === 0) out.push({ code: 'MYINVOIS_INVALID', message: details.documentStatusReason || 'MyInvois found the document invalid', path: [], source: 'government' });
  return out;
}

/** The error items of a document the submission rejected at once (standard error object). */
export function rejectionErrors(error: ApiError): DocumentErrorItem[] {
  const inner = error.details && error.details.length > 0 ? error.details : [error];
  return inner.map((d) => ({
    code: d.code || error.code || 'MYINVOIS_REJECTED',
    message: d.message || error.message || 'MyInvois rejected the document',
    path: pathSegments(d.propertyPath ?? d.target),
    payloadPath: d.propertyPath ?? d.target ?? null,
    source: 'government' as const,
  }));
}

/** Retry-After as seconds or an HTTP date, in milliseconds from `now` (null when absent or unreadable). */
export function retryAfterMs(header: string | null | undefined, now: Date): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/** The TIN of the document's supplier (`cac:AccountingSupplierParty … cbc:ID schemeID="TIN"`), as the core document holds it. */
export function supplierTin(coreDocument: unknown): string | null {
  const seller = (coreDocument as { parties?: { seller?: { taxIds?: { type?: unknown; value?: unknown }[] } } })?.parties?.seller;
  const ids = seller?.taxIds ?? [];
  const tin = ids.find((i) => String(i.type ?? '').toUpperCase() === 'TIN') ?? ids.find((i) => typeof i.value === 'string' && i.value !== '');
  return typeof tin?.value === 'string' && tin.value !== '' ? tin.value : null;
}
