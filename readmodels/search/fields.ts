/**
 * How both search-index adapters read a catalogued field (domain/query/fields.ts) out of an
 * indexed document, so that they agree on every value by construction:
 *
 * - `date`: a string `YYYY-MM-DD` naming a real calendar day of the years 0001–9999;
 * - `number`: a JSON number;
 * - `keyword` / `text`: a string of at most MAX_KEYWORD_BYTES UTF-8 bytes, compared and sorted
 *   lowercased (simple Unicode case mapping, code point by code point: `lowerKeyword`, which
 *   the PostgreSQL adapter stores and Elasticsearch's `lowercase` normalizer applies);
 * - a keyword field that may not be sorted on (`documentType.modifiers`, `…variants`) is
 *   multi-valued: a string or an array of strings (non-string elements are skipped).
 *
 * Any other value (a malformed date in a rejected document, a number sent as a string, an
 * object) counts as absent: it never matches a filter or search, `exists` is false for it and
 * it sorts last. The stored document itself is kept unchanged.
 */
import { queryField, queryFields, type FieldKind, type QueryType } from '../../domain/query/fields.js';

/** Longest keyword value that is indexed (PostgreSQL's btree entries and Lucene terms are bounded). */
export const MAX_KEYWORD_BYTES = 1024;

export interface ResolvedField {
  readonly path: string;
  readonly segments: readonly string[];
  readonly kind: FieldKind;
  readonly multi: boolean;
  readonly sort: boolean;
  readonly search: boolean;
}

export class UnknownSearchFieldError extends Error {
  override readonly name = 'UnknownSearchFieldError';
}

const resolved = new Map<string, ResolvedField>();

export function resolveField(type: QueryType, path: string): ResolvedField {
  const key = `${type}:${path}`;
  let found = resolved.get(key);
  if (!found) {
    found = resolve(type, path);
    resolved.set(key, found);
  }
  return found;
}

const catalogued = new Map<QueryType, readonly ResolvedField[]>();

/** Every catalogued field of a type, resolved. */
export function resolvedFields(type: QueryType): readonly ResolvedField[] {
  let fields = catalogued.get(type);
  if (!fields) {
    fields = queryFields(type).map((f) => resolveField(type, f.path));
    catalogued.set(type, fields);
  }
  return fields;
}

function resolve(type: QueryType, path: string): ResolvedField {
  const field = queryField(type, path);
  if (!field) throw new UnknownSearchFieldError(`"${path}" is not a query field of ${type}`);
  const segments = path.split('.');
  if (!segments.every((s) => /^[A-Za-z][A-Za-z0-9_]*$/.test(s))) throw new UnknownSearchFieldError(`unsupported field path "${path}"`);
  return {
    path,
    segments,
    kind: field.kind,
    multi: (field.kind === 'keyword' || field.kind === 'text') && !field.sort,
    sort: field.sort,
    search: field.search,
  };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `value` is a `YYYY-MM-DD` calendar day of the years 0001–9999. */
export function isIndexableDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day <= days;
}

const isKeyword = (v: unknown): v is string => typeof v === 'string' && Buffer.byteLength(v, 'utf8') <= MAX_KEYWORD_BYTES;

/** The value at a field's path as the index sees it (not lowercased), or undefined when absent. */
export function indexedValue(field: ResolvedField, document: Readonly<Record<string, unknown>>): string | number | string[] | undefined {
  let raw: unknown = document;
  for (const s of field.segments) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
    raw = (raw as Record<string, unknown>)[s];
  }
  switch (field.kind) {
    case 'date':
      return typeof raw === 'string' && isIndexableDate(raw) ? raw : undefined;
    case 'number':
      return typeof raw === 'number' && Number.isFinite(raw) ? raw : undefined;
    case 'keyword':
    case 'text':
      if (field.multi) {
        if (isKeyword(raw)) return [raw];
        if (Array.isArray(raw)) return raw.filter(isKeyword);
        return undefined;
      }
      return isKeyword(raw) ? raw : undefined;
  }
}

/** ASCII only: lowercased by the engine's fast path. */
const ASCII = /^[\x00-\x7f]*$/;

/**
 * A keyword's indexed form: the simple Unicode lower-case mapping of each code point (one code
 * point to one), as Elasticsearch's `lowercase` normalizer applies it (Java's
 * `Character.toLowerCase`). JavaScript's `toLowerCase` is the full mapping, which differs for
 * one code point: U+0130 (capital I with dot above) becomes two (`i` and a combining dot above)
 * where the simple mapping gives `i`. Context-free: a capital sigma is always `σ`, never the
 * final `ς` of the full mapping within a word.
 */
export function lowerKeyword(value: string): string {
  if (ASCII.test(value)) return value.toLowerCase();
  let out = '';
  for (const ch of value) {
    // The only unconditional one-to-many lower-casing of Unicode (SpecialCasing): U+0130.
    out += ch === '\u0130' ? 'i' : ch.toLowerCase();
  }
  return out;
}
