/**
 * The indexed document of docs/api/invoice-query.md, built from what is known of a sales document: the
 * submission (core document, validation report as the validator produced it at submit time,
 * source, document type) and the states it has gone through. Pure; the search projection
 * keeps the facts and hands them here on every change.
 *
 * Every type carries the document's country code at the root (`country`), which the query
 * layer filters on (the body's `country`).
 *
 * Sales documents are indexed as type `sales` with the core document under `coreDocument`
 * and the metadata under `coreDocument.meta`. Received purchase invoices are type `purchases`,
 * shaped like sales, plus their `attribution` at the root. Receipts (variant `receipt`,
 * `derivedFlags.isReceipt`) are type `receipts`: the core document's sections at the root,
 * the metadata under `meta`, and `countryDocumentStatus`.
 *
 * The core document is indexed as mapped at submit, whatever it holds: the search-index
 * adapters treat a catalogued field of the wrong kind (an issue date `31/12/2026` in a
 * rejected document) as absent, so it neither matches nor fails the write.
 */
import type { DocumentState } from '../document/document.js';
import type { PurchaseStoredData } from '../purchases/purchase.js';
import { derivedFlags } from '../validation/document-types.js';
import type { QueryType } from './fields.js';
import { PURCHASE_STORED_STATUS_VALUES, countryDocumentStatus, statusValues, type StatusValues } from './statuses.js';

export interface DocumentTransition {
  state: DocumentState;
  /** When it happened (the event's occurredAt, ISO 8601 UTC). */
  at: string;
  /** The business status the buyer's answer set (domain/peppol/invoice-response.ts), when one did. */
  business?: string;
}

export interface SalesDocumentFacts {
  documentId: string;
  workspaceId: string;
  environment: string;
  country: string;
  documentType: { base: string; modifiers: string[]; variant?: string | null };
  source: { name: string; version: string; companyId: string | null };
  /** The document in the core schema (after the source's mapping). */
  coreDocument: unknown;
  /** The stored validation report, exactly as produced at submit; null when there is none. */
  validation: unknown;
  /** Every state the document went through, oldest first (never empty). */
  transitions: DocumentTransition[];
}

export const isReceipt = (documentType: SalesDocumentFacts['documentType']) => derivedFlags(documentType).isReceipt;

export function salesQueryType(documentType: SalesDocumentFacts['documentType']): QueryType {
  return isReceipt(documentType) ? 'receipts' : 'sales';
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function history(values: { value: string; at: string }[]) {
  const out: { value: string; at: string }[] = [];
  for (const v of values) if (out.length === 0 || out[out.length - 1]!.value !== v.value) out.push(v);
  return out;
}

/** `meta.statuses` with the current values and their histories. */
export function statusesOf(transitions: readonly DocumentTransition[]) {
  const steps: (StatusValues & { at: string; state: DocumentState })[] = transitions.map((t, i) => {
    const values = statusValues(t.state, i > 0 ? transitions[i - 1]!.state : null);
    return { ...values, ...(t.business ? { business: t.business } : {}), at: t.at, state: t.state };
  });
  const last = steps[steps.length - 1];
  if (!last) throw new Error('a document has at least one state');
  const track = (k: 'document' | 'delivery' | 'business') => ({
    current: last[k],
    history: history(steps.map((s) => ({ value: s[k], at: s.at }))),
  });
  return {
    document: track('document'),
    delivery: track('delivery'),
    business: track('business'),
    userfacing: last.userfacing,
    internal: { state: last.state, updatedAt: last.at },
  };
}

/**
 * What of a sales document's facts its statuses need: the facts less the submission's content
 * (the search projection keeps only these for a document in flight, its body being indexed).
 */
export type SalesStateFacts = Pick<SalesDocumentFacts, 'documentId' | 'workspaceId' | 'environment' | 'documentType' | 'transitions'> &
  /** Kept only for a document its seller may still cancel at the authority (a production MY one, whose final_valid may change). */
  Partial<Pick<SalesDocumentFacts, 'country'>>;

/**
 * The parts of an indexed document that change after it is received (its state), where they
 * sit in each type's document: the statuses, the status history and receipts'
 * `countryDocumentStatus`. The rest, the body, is fixed when the document is received; a
 * status change rewrites the state alone.
 */
export function statePaths(type: QueryType): readonly (readonly string[])[] {
  return type === 'receipts' ? RECEIPT_STATE_PATHS : DOCUMENT_STATE_PATHS;
}

const DOCUMENT_STATE_PATHS = [['coreDocument', 'meta', 'statuses'], ['statusHistory']] as const;
const RECEIPT_STATE_PATHS = [['meta', 'statuses'], ['statusHistory'], ['countryDocumentStatus']] as const;

/** A document's state: a partial document holding the state paths of its type only. */
export type IndexedState = Record<string, unknown>;

/** `doc` with `value` at `path` (objects copied along the path, missing ones created); `doc` is left as it is. */
function setPath(doc: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  const out = { ...doc };
  if (rest.length === 0) out[head!] = value;
  else out[head!] = setPath(isObject(doc[head!]) ? (doc[head!] as Record<string, unknown>) : {}, rest, value);
  return out;
}

function getPath(doc: unknown, path: readonly string[]): unknown {
  let at = doc;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  return at;
}

/** `doc` without the value at `path` (objects copied along the path); `doc` is left as it is. */
function deletePath(doc: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const [head, ...rest] = path;
  if (!(head! in doc)) return doc;
  const out = { ...doc };
  if (rest.length === 0) delete out[head!];
  else if (isObject(doc[head!])) out[head!] = deletePath(doc[head!] as Record<string, unknown>, rest);
  return out;
}

/** An indexed document cut into its body and its state (`withState` puts them together again). */
export function splitIndexed(type: QueryType, document: Readonly<Record<string, unknown>>): { body: Record<string, unknown>; state: IndexedState } {
  let body: Record<string, unknown> = document;
  let state: IndexedState = {};
  for (const path of statePaths(type)) {
    const value = getPath(document, path);
    if (value === undefined) continue;
    state = setPath(state, path, value);
    body = deletePath(body, path);
  }
  return { body: body === document ? { ...document } : body, state };
}

/** The indexed document of a body and a state: the state's paths set in the body. */
export function withState(type: QueryType, body: Readonly<Record<string, unknown>>, state: IndexedState): Record<string, unknown> {
  let document: Record<string, unknown> = { ...body };
  for (const path of statePaths(type)) {
    const value = getPath(state, path);
    if (value !== undefined) document = setPath(document, path, value);
  }
  return document;
}

/** A sales document's state (its query type's state paths) after its transitions. */
export function indexedSalesState(facts: SalesStateFacts): { type: QueryType; state: IndexedState } {
  const type = salesQueryType(facts.documentType);
  const statuses = statusesOf(facts.transitions);
  const statusHistory = facts.transitions.map((t) => ({ state: t.state, at: t.at }));
  if (type === 'receipts') {
    const state = facts.transitions[facts.transitions.length - 1]!.state;
    return { type, state: { meta: { statuses }, statusHistory, countryDocumentStatus: countryDocumentStatus(state) } };
  }
  return { type, state: { coreDocument: { meta: { statuses } }, statusHistory } };
}

/** The indexed document (docs/api/invoice-query.md) and its query type: the submission's body with the state of its transitions. */
export function indexedSalesDocument(facts: SalesDocumentFacts): { type: QueryType; document: Record<string, unknown> } {
  const { type, state } = indexedSalesState(facts);
  const core = isObject(facts.coreDocument) ? facts.coreDocument : {};
  const variant = facts.documentType.variant ?? null;
  const meta: Record<string, unknown> = {
    source: { name: facts.source.name, version: facts.source.version },
    ...(facts.validation !== null && facts.validation !== undefined ? { coreValidation: facts.validation } : {}),
  };
  const head = {
    documentId: facts.documentId,
    documentType: { base: facts.documentType.base, modifiers: [...facts.documentType.modifiers], variants: variant ? [variant] : [] },
    country: facts.country,
  };
  // The core document's own fields at the state's places give way to the state, as to the head.
  const body = type === 'receipts' ? { ...splitIndexed(type, core).body, ...head, meta } : { ...head, coreDocument: { ...core, meta } };
  return { type, document: withState(type, body, state) };
}

/**
 * The indexed document of a received purchase invoice (type `purchases`), from its
 * `PurchaseInvoiceStored` data, filed under `receiverCountry`, the receiving company's country
 * (the query's `country`; the supplier's own is `coreDocument.parties.seller.address.country`): the parsed core document under `coreDocument` with `meta`
 * {`source` (the receiving company's source of the attribution), `statuses` (docs/api/invoice-query.md: one row,
 * `stored`)}, `attribution` at the root, `statusHistory` received → stored. No validation
 * report: a received document is checked against the UBL schemas only.
 */
export function indexedPurchaseDocument(data: PurchaseStoredData, receiverCountry: string): Record<string, unknown> {
  const core = isObject(data.coreDocument) ? data.coreDocument : {};
  const v = PURCHASE_STORED_STATUS_VALUES;
  const track = (value: string) => ({ current: value, history: [{ value, at: data.storedAt }] });
  const meta = {
    source: { name: data.attribution.sourceName, version: data.attribution.sourceVersion },
    statuses: {
      document: track(v.document),
      delivery: track(v.delivery),
      business: track(v.business),
      userfacing: v.userfacing,
      internal: { state: 'stored', updatedAt: data.storedAt },
    },
  };
  return {
    documentId: data.documentId,
    documentType: { base: data.documentType.base, modifiers: [...data.documentType.modifiers], variants: [] },
    country: receiverCountry,
    coreDocument: { ...core, meta },
    attribution: { ...data.attribution },
    probableResendOf: [...data.probableResendOf],
    statusHistory: [
      { state: 'received', at: data.receivedAt },
      { state: 'stored', at: data.storedAt },
    ],
  };
}
