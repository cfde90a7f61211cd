/**
 * The indexed document of SPEC.md 2.8, built from what is known of a sales document: the
 * submission (core document, validation report as the validator produced it at submit time,
 * source, document type) and the states it has gone through. Pure; the search projection
 * keeps the facts and hands them here on every change.
 *
 * Sales documents are indexed as type `sales` with the core document under `coreDocument`
 * and the metadata under `coreDocument.meta`. Receipts (variant `receipt`,
 * `derivedFlags.isReceipt`) are type `receipts`: the core document's sections at the root,
 * the metadata under `meta`, and `countryDocumentStatus`.
 */
import type { DocumentState } from '../document/document.js';
import { derivedFlags } from '../validation/document-types.js';
import { queryFields, type FieldKind, type QueryType } from './fields.js';
import { countryDocumentStatus, statusValues, type StatusValues } from './statuses.js';

export interface DocumentTransition {
  state: DocumentState;
  /** When it happened (the event's occurredAt, ISO 8601 UTC). */
  at: string;
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

/**
 * A catalogued value of the right kind, or undefined. A rejected document may carry anything
 * (`"31/12/2026"` as issue date, an object as name); the index maps and indexes these fields
 * by kind, so a value of the wrong kind is left out of the indexed document rather than
 * failing the write. Numbers in keyword fields become strings.
 */
function sanitize(kind: FieldKind, value: unknown): unknown {
  switch (kind) {
    case 'date':
      return isCalendarDate(value) ? value : undefined;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
    case 'keyword':
    case 'text':
      if (typeof value === 'string') return value;
      return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Copy-on-write: `root` with the value at `path` replaced (or removed when undefined). */
function withValue(root: Record<string, unknown>, path: readonly string[], fix: (v: unknown) => unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  if (head === undefined || !(head in root)) return root;
  const current = root[head];
  if (rest.length === 0) {
    const fixed = fix(current);
    if (fixed === current) return root;
    const copy = { ...root };
    if (fixed === undefined) delete copy[head];
    else copy[head] = fixed;
    return copy;
  }
  if (!isObject(current)) return root;
  const inner = withValue(current, rest, fix);
  return inner === current ? root : { ...root, [head]: inner };
}

/** The core document with its catalogued fields (header, totals, party names) of the right kind. */
function sanitizedCore(type: QueryType, core: unknown): Record<string, unknown> {
  let doc: Record<string, unknown> = isObject(core) ? core : {};
  const prefix = type === 'receipts' ? '' : 'coreDocument.';
  for (const f of queryFields(type)) {
    if (!f.path.startsWith(prefix)) continue;
    const relative = f.path.slice(prefix.length);
    if (!/^(header|parties|totals)\./.test(relative)) continue;
    doc = withValue(doc, relative.split('.'), (v) => sanitize(f.kind, v));
  }
  return doc;
}

function history(values: { value: string; at: string }[]) {
  const out: { value: string; at: string }[] = [];
  for (const v of values) if (out.length === 0 || out[out.length - 1]!.value !== v.value) out.push(v);
  return out;
}

/** `meta.statuses` with the current values and their histories. */
export function statusesOf(transitions: readonly DocumentTransition[]) {
  const steps: (StatusValues & { at: string; state: DocumentState })[] = transitions.map((t, i) => ({
    ...statusValues(t.state, i > 0 ? transitions[i - 1]!.state : null),
    at: t.at,
    state: t.state,
  }));
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

/** The indexed document (SPEC.md 2.8) and its query type. */
export function indexedSalesDocument(facts: SalesDocumentFacts): { type: QueryType; document: Record<string, unknown> } {
  const type = salesQueryType(facts.documentType);
  const core = sanitizedCore(type, facts.coreDocument);
  const variant = facts.documentType.variant ?? null;
  const meta: Record<string, unknown> = {
    source: { name: facts.source.name, version: facts.source.version },
    ...(facts.validation !== null && facts.validation !== undefined ? { coreValidation: facts.validation } : {}),
    statuses: statusesOf(facts.transitions),
  };
  const head = {
    documentId: facts.documentId,
    documentType: { base: facts.documentType.base, modifiers: [...facts.documentType.modifiers], variants: variant ? [variant] : [] },
  };
  const statusHistory = facts.transitions.map((t) => ({ state: t.state, at: t.at }));
  if (type === 'receipts') {
    const state = facts.transitions[facts.transitions.length - 1]!.state;
    return {
      type,
      document: { ...core, ...head, meta, statusHistory, countryDocumentStatus: countryDocumentStatus(state) },
    };
  }
  return { type, document: { ...head, coreDocument: { ...core, meta }, statusHistory } };
}
