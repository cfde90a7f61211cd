/**
 * The status metadata of an indexed document (docs/api/invoice-query.md `meta.statuses`), derived from the
 * sales document state machine (docs/api/unify.md, domain/document/document.ts). The spec names
 * some values (document `NEEDS_CORRECTION`, `NON_COMPLIANT`; delivery and business
 * `NOT_STARTED`) and leaves their transitions open; this table is the whole mapping, and the
 * docs/api/invoice-query.md repeats it.
 *
 * | state | document | delivery | business | userfacing |
 * | - | - | - | - | - |
 * | submitted | VALIDATED | NOT_STARTED | NOT_STARTED | Draft or Ready |
 * | rejected | NEEDS_CORRECTION | NOT_STARTED | NOT_STARTED | Needs Correction |
 * | processing | VALIDATED | IN_PROGRESS | NOT_STARTED | Processing |
 * | delivery_success | VALIDATED | DELIVERED | PENDING | Processing |
 * | delivery_failed | VALIDATED | FAILED | NOT_STARTED | Processing |
 * | final_valid | COMPLIANT | DELIVERED | ACCEPTED | Compliant |
 * | final_invalid (after delivery_success) | NON_COMPLIANT | DELIVERED | REJECTED | Non-Compliant |
 * | final_invalid (after delivery_failed) | NON_COMPLIANT | FAILED | NOT_STARTED | Non-Compliant |
 *
 * `internal` is the state machine's own value (`submitted`, …).
 */
import type { DocumentState } from '../document/document.js';

export interface StatusValues {
  document: string;
  delivery: string;
  business: string;
  userfacing: string;
}

/** Portal labels of docs/api/unify.md (`delivery_success` and `delivery_failed` are still processing). */
export const USERFACING_LABELS: Readonly<Record<DocumentState, string>> = {
  submitted: 'Draft or Ready',
  rejected: 'Needs Correction',
  processing: 'Processing',
  delivery_success: 'Processing',
  delivery_failed: 'Processing',
  final_valid: 'Compliant',
  final_invalid: 'Non-Compliant',
};

/**
 * The status values of a document in `state`; `previous` is the state before it (it tells a
 * refusal after delivery from a delivery that never succeeded).
 */
export function statusValues(state: DocumentState, previous: DocumentState | null): StatusValues {
  const userfacing = USERFACING_LABELS[state];
  switch (state) {
    case 'submitted':
      return { document: 'VALIDATED', delivery: 'NOT_STARTED', business: 'NOT_STARTED', userfacing };
    case 'rejected':
      return { document: 'NEEDS_CORRECTION', delivery: 'NOT_STARTED', business: 'NOT_STARTED', userfacing };
    case 'processing':
      return { document: 'VALIDATED', delivery: 'IN_PROGRESS', business: 'NOT_STARTED', userfacing };
    case 'delivery_success':
      return { document: 'VALIDATED', delivery: 'DELIVERED', business: 'PENDING', userfacing };
    case 'delivery_failed':
      return { document: 'VALIDATED', delivery: 'FAILED', business: 'NOT_STARTED', userfacing };
    case 'final_valid':
      return { document: 'COMPLIANT', delivery: 'DELIVERED', business: 'ACCEPTED', userfacing };
    case 'final_invalid':
      return previous === 'delivery_failed'
        ? { document: 'NON_COMPLIANT', delivery: 'FAILED', business: 'NOT_STARTED', userfacing }
        : { document: 'NON_COMPLIANT', delivery: 'DELIVERED', business: 'REJECTED', userfacing };
  }
}

/** Receipts (docs/api/invoice-query.md `countryDocumentStatus`): issued once accepted; a rejected receipt was never issued. */
export function countryDocumentStatus(state: DocumentState): 'ISSUED' | 'NOT_ISSUED' {
  return state === 'rejected' ? 'NOT_ISSUED' : 'ISSUED';
}

/**
 * A received purchase invoice (stored once, `PurchaseInvoiceStored`) has no state machine of
 * its own: it arrived through the network or the import and passed the UBL 2.1 schemas, no
 * country rule set is run on it, and the service sends no business response for it. Hence:
 *
 * | state | document | delivery | business | userfacing |
 * | - | - | - | - | - |
 * | stored | VALIDATED | DELIVERED | NOT_STARTED | Received |
 *
 * `internal` is `{state: 'stored', updatedAt: storedAt}`.
 */
export const PURCHASE_STORED_STATUS_VALUES: Readonly<StatusValues> = {
  document: 'VALIDATED',
  delivery: 'DELIVERED',
  business: 'NOT_STARTED',
  userfacing: 'Received',
};
