/**
 * The request body of the invoice query (docs/api/invoice-query.md): its io-ts codec (the shape) and the
 * rules 1–7 (field names per type, wildcards, value kinds, paging), checked into the port's
 * `SearchQuery` plus the column selectors. Pure.
 *
 * Every problem names the offending entry: its path (`["filters", 2, "id"]`) and, in the
 * message, its index and value.
 */
import * as t from 'io-ts';
import { annotate, describeCodec } from '../schema/json-schema.js';
import { MAX_RESULT_WINDOW, type SearchFilter, type SearchQuery, type SearchSort, type SearchTerm } from './search-query.js';
import { parseColumns, type Selector } from './columns.js';
import { COUNTRY_FIELD, QUERY_TYPES, publicQueryField as queryField, publicQueryFields as queryFields, type QueryField, type QueryType } from './fields.js';
import { isCalendarDate } from './indexed-document.js';

/** Largest page size (docs/api/http.md leaves the maximum open). */
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;
/** Bounds on the size of a query (the spec names none): entries per list, values per filter, term length. */
export const MAX_FILTERS = 50;
export const MAX_FILTER_VALUES = 100;
export const MAX_SEARCHES = 20;
export const MAX_COLUMNS = 200;
export const MAX_TERM_LENGTH = 200;
/** Environments a query may name; the key must serve the one named (sandbox keys: sandbox and simulation). */
export const QUERY_ENVIRONMENTS = ['sandbox', 'simulation', 'production'] as const;
export type QueryEnvironment = (typeof QUERY_ENVIRONMENTS)[number];

const keyOf = <V extends string>(values: readonly V[], name: string) =>
  describeCodec(
    new t.Type<V, V, unknown>(
      name,
      (u): u is V => typeof u === 'string' && (values as readonly string[]).includes(u),
      (u, c) => (typeof u === 'string' && (values as readonly string[]).includes(u) ? t.success(u as V) : t.failure(u, c, `expected one of ${values.join(', ')}`)),
      t.identity,
    ),
    { type: 'string', enum: [...values] },
  );

const PositiveInteger = describeCodec(
  new t.Type<number, number, unknown>(
    'positive integer',
    (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= 1,
    (u, c) => (typeof u === 'number' && Number.isSafeInteger(u) && u >= 1 ? t.success(u) : t.failure(u, c, 'expected a whole number of at least 1')),
    t.identity,
  ),
  { type: 'integer', minimum: 1 },
);

const CountryCode = describeCodec(
  new t.Type<string, string, unknown>(
    'country',
    (u): u is string => typeof u === 'string' && /^[A-Z]{2}$/.test(u),
    (u, c) => (typeof u === 'string' && /^[A-Z]{2}$/.test(u) ? t.success(u) : t.failure(u, c, 'expected a two-letter country code in capitals (ISO 3166-1 alpha-2)')),
    t.identity,
  ),
  { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, in capitals' },
);

/**
 * An object whose members `checkInvoiceQuery` checks (so that each problem names the entry and
 * its value); `schema` is the shape it enforces there, which the OpenAPI document shows.
 */
const entryOf = (name: string, schema: Record<string, unknown>) =>
  describeCodec(
    new t.Type<Record<string, unknown>, Record<string, unknown>, unknown>(
      name,
      (u): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u),
      (u, c) => (typeof u === 'object' && u !== null && !Array.isArray(u) ? t.success(u as Record<string, unknown>) : t.failure(u, c, 'expected an object')),
      t.identity,
    ),
    schema,
  );

const closed = (required: Record<string, unknown>, optional: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { ...required, ...optional },
  required: Object.keys(required),
  additionalProperties: false,
});
const fieldName = { type: 'string', minLength: 1, description: 'An accessor key of the query type (the field catalogue of the invoice query), no wildcards' };
const bound = { type: ['string', 'number'], description: 'A date YYYY-MM-DD or a number, as the field holds' };

const FilterEntry = entryOf('filter', {
  description: 'Exactly one of `value` (exact match, any of the values; an empty list adds no condition), `range` (inclusive bounds) or `exists`',
  oneOf: [
    closed({ id: fieldName, value: { type: 'array', items: { type: ['string', 'number', 'boolean'] }, maxItems: MAX_FILTER_VALUES } }),
    { ...closed({ id: fieldName, range: { ...closed({}, { gte: bound, lte: bound }), minProperties: 1 } }) },
    closed({ id: fieldName, exists: { type: 'boolean' } }),
  ],
});
const SearchEntry = entryOf('search', closed({ field: fieldName, term: { type: 'string', minLength: 1, maxLength: MAX_TERM_LENGTH } }));
const SortEntry = entryOf('sort', closed({ field: fieldName }, { order: { type: 'string', enum: ['asc', 'desc'], description: 'asc when absent' } }));

/**
 * The shape of the body; the rules of each entry are checked by `checkInvoiceQuery`. The OpenAPI
 * document's `InvoiceQuery` is this codec's JSON Schema.
 */
export const InvoiceQueryBody = t.exact(
  t.intersection([
    t.type({
      country: CountryCode,
      type: keyOf(QUERY_TYPES, 'type'),
      environment: keyOf(QUERY_ENVIRONMENTS, 'environment'),
    }),
    t.partial({
      page: PositiveInteger,
      limit: annotate(PositiveInteger, { maximum: MAX_LIMIT, description: `Documents a page (${DEFAULT_LIMIT} when absent)` }),
      filters: annotate(t.array(FilterEntry), { maxItems: MAX_FILTERS }),
      searches: annotate(t.array(SearchEntry), { maxItems: MAX_SEARCHES }),
      columns: annotate(t.array(t.string), { maxItems: MAX_COLUMNS, description: 'Accessor keys of the fields to return' }),
      sort: t.union([SortEntry, t.null]),
    }),
  ]),
);
export type InvoiceQueryBody = t.TypeOf<typeof InvoiceQueryBody>;

/** The body fields; any other top-level field is refused (a typo such as `filter` would otherwise be ignored). */
export const BODY_FIELDS = ['country', 'type', 'environment', 'page', 'limit', 'filters', 'searches', 'columns', 'sort'] as const;

export interface QueryProblem {
  message: string;
  path: (string | number)[];
}

export interface InvoiceQuery {
  country: string;
  type: QueryType;
  environment: QueryEnvironment;
  page: number;
  limit: number;
  filters: SearchFilter[];
  searches: SearchTerm[];
  sort: SearchSort | null;
  /** Null: no columns, the stored documents unshaped. */
  columns: Selector[] | null;
}

const show = (value: unknown) => {
  const s = JSON.stringify(value);
  return s === undefined ? String(value) : s.length > 120 ? `${s.slice(0, 117)}...` : s;
};

type Usage = 'filter' | 'search' | 'sort';
const USAGE_NAMES: Record<Usage, string> = { filter: 'filters', search: 'searches', sort: 'sort' };

/** The catalogued field `name` names for `usage`, or why not (rules 1–5). */
export function resolveField(type: QueryType, name: unknown, usage: Usage): { ok: true; field: QueryField } | { ok: false; message: string } {
  const where = USAGE_NAMES[usage];
  if (typeof name !== 'string' || name === '') return { ok: false, message: 'expected a field name (a non-empty string)' };
  if (name.includes('*')) return { ok: false, message: `wildcards are not allowed in ${where}; name the exact accessor key` };
  const allowed = queryFields(type).filter((f) => usage === 'filter' || (usage === 'search' ? f.search : f.sort));
  const list = () => allowed.map((f) => f.path).join(', ');
  const found = queryField(type, name);
  if (found && allowed.includes(found)) return { ok: true, field: found };
  if (found) {
    return { ok: false, message: `"${name}" cannot be used in ${where}; ${usage === 'search' ? 'text searches' : 'sort'} accept ${list()}` };
  }
  if (type !== 'receipts' && queryField(type, `coreDocument.${name}`)) {
    return { ok: false, message: `${type} use "coreDocument."-prefixed paths: "coreDocument.${name}"` };
  }
  if (type === 'receipts' && name.startsWith('coreDocument.') && queryField(type, name.slice('coreDocument.'.length))) {
    return { ok: false, message: `receipts use flat paths without "coreDocument.": "${name.slice('coreDocument.'.length)}"` };
  }
  return { ok: false, message: `unsupported field "${name}" for ${type} ${where}; supported: ${list()}` };
}

function checkValue(field: QueryField, value: unknown): string | null {
  switch (field.kind) {
    case 'date':
      return isCalendarDate(value) ? null : 'expected a date YYYY-MM-DD';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'expected a number';
    default:
      return typeof value === 'string' ? null : 'expected a string';
  }
}

function checkFilter(type: QueryType, raw: Record<string, unknown>, path: (string | number)[], problems: QueryProblem[]): SearchFilter | null {
  const at = (...rest: (string | number)[]) => [...path, ...rest];
  const entry = `${path.join('.').replace(/\.(\d+)/g, '[$1]')} ${show(raw)}`;
  const fail = (message: string, where = path) => {
    problems.push({ message: `${entry}: ${message}`, path: where });
    return null;
  };
  const forms = ['value', 'range', 'exists'].filter((k) => k in raw);
  const unknown = Object.keys(raw).filter((k) => k !== 'id' && !forms.includes(k));
  if (unknown.length > 0) return fail(`unknown member "${unknown[0]}"; a filter is {id, value: [...]}, {id, range: {gte, lte}} or {id, exists}`, at(unknown[0]!));
  if (!('id' in raw)) return fail('a filter needs an "id"', at('id'));
  const resolved = resolveField(type, raw.id, 'filter');
  if (!resolved.ok) return fail(resolved.message, at('id'));
  const field = resolved.field;
  if (forms.length !== 1) return fail('a filter has exactly one of "value", "range" or "exists"');
  const form = forms[0]!;
  if (form === 'exists') {
    if (typeof raw.exists !== 'boolean') return fail('"exists" is true or false', at('exists'));
    return { field: field.path, exists: raw.exists };
  }
  if (form === 'value') {
    if (!Array.isArray(raw.value)) return fail('"value" is an array of values (exact match, any of them)', at('value'));
    if (raw.value.length > MAX_FILTER_VALUES) return fail(`at most ${MAX_FILTER_VALUES} values per filter`, at('value'));
    for (const [i, v] of raw.value.entries()) {
      const why = checkValue(field, v);
      if (why) return fail(`value[${i}] ${show(v)}: ${why} for ${field.path}`, at('value', i));
    }
    return { field: field.path, values: raw.value as (string | number)[] };
  }
  if (field.kind !== 'date' && field.kind !== 'number') return fail(`range filters apply to dates and numbers; ${field.path} is not one`, at('range'));
  const range = raw.range;
  if (typeof range !== 'object' || range === null || Array.isArray(range)) return fail('"range" is an object {gte, lte}', at('range'));
  const bounds = range as Record<string, unknown>;
  const extra = Object.keys(bounds).filter((k) => k !== 'gte' && k !== 'lte');
  if (extra.length > 0) return fail(`unknown bound "${extra[0]}"; a range has "gte" and/or "lte" (inclusive)`, at('range', extra[0]!));
  const out: { gte?: string | number; lte?: string | number } = {};
  for (const bound of ['gte', 'lte'] as const) {
    if (!(bound in bounds) || bounds[bound] === null) continue;
    const why = checkValue(field, bounds[bound]);
    if (why) return fail(`range.${bound} ${show(bounds[bound])}: ${why} for ${field.path}`, at('range', bound));
    out[bound] = bounds[bound] as string | number;
  }
  if (out.gte === undefined && out.lte === undefined) return fail('a range needs "gte", "lte" or both', at('range'));
  return { field: field.path, range: out };
}

function checkSearch(type: QueryType, raw: Record<string, unknown>, path: (string | number)[], problems: QueryProblem[]): SearchTerm | null {
  const entry = `${path.join('.').replace(/\.(\d+)/g, '[$1]')} ${show(raw)}`;
  const fail = (message: string, where: (string | number)[]) => {
    problems.push({ message: `${entry}: ${message}`, path: where });
    return null;
  };
  const unknown = Object.keys(raw).filter((k) => k !== 'field' && k !== 'term');
  if (unknown.length > 0) return fail(`unknown member "${unknown[0]}"; a search is {field, term}`, [...path, unknown[0]!]);
  const resolved = resolveField(type, raw.field, 'search');
  if (!resolved.ok) return fail(resolved.message, [...path, 'field']);
  if (typeof raw.term !== 'string' || raw.term === '') return fail('"term" is a non-empty string', [...path, 'term']);
  if (raw.term.length > MAX_TERM_LENGTH) return fail(`"term" is at most ${MAX_TERM_LENGTH} characters`, [...path, 'term']);
  return { field: resolved.field.path, term: raw.term };
}

function checkSort(type: QueryType, raw: Record<string, unknown>, problems: QueryProblem[]): SearchSort | null {
  const entry = `sort ${show(raw)}`;
  const fail = (message: string, where: (string | number)[]) => {
    problems.push({ message: `${entry}: ${message}`, path: where });
    return null;
  };
  const unknown = Object.keys(raw).filter((k) => k !== 'field' && k !== 'order');
  if (unknown.length > 0) return fail(`unknown member "${unknown[0]}"; sort is {field, order}`, ['sort', unknown[0]!]);
  const resolved = resolveField(type, raw.field, 'sort');
  if (!resolved.ok) return fail(resolved.message, ['sort', 'field']);
  const order = raw.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') return fail('"order" is "asc" or "desc"', ['sort', 'order']);
  return { field: resolved.field.path, order };
}

/** Checks a decoded body against rules 1–7 and the paging bounds. */
export function checkInvoiceQuery(body: InvoiceQueryBody): { ok: true; query: InvoiceQuery } | { ok: false; problems: QueryProblem[] } {
  const problems: QueryProblem[] = [];
  const type = body.type;
  const page = body.page ?? 1;
  const limit = body.limit ?? DEFAULT_LIMIT;
  if (limit > MAX_LIMIT) problems.push({ message: `limit ${limit}: at most ${MAX_LIMIT} documents a page`, path: ['limit'] });
  else if (page * limit > MAX_RESULT_WINDOW) {
    problems.push({
      message: `page ${page} with limit ${limit} reaches past document ${MAX_RESULT_WINDOW}, the deepest a query pages to; narrow the query with filters`,
      path: ['page'],
    });
  }
  const lists: [keyof InvoiceQueryBody, number][] = [
    ['filters', MAX_FILTERS],
    ['searches', MAX_SEARCHES],
    ['columns', MAX_COLUMNS],
  ];
  for (const [name, max] of lists) {
    const list = body[name] as unknown[] | undefined;
    if (list && list.length > max) problems.push({ message: `${name}: at most ${max} entries`, path: [name] });
  }
  const filters: SearchFilter[] = [];
  (body.filters ?? []).forEach((raw, i) => {
    const f = checkFilter(type, raw, ['filters', i], problems);
    // An empty value list adds no condition (docs/api/invoice-query.md).
    if (f && !('values' in f && f.values.length === 0)) filters.push(f);
  });
  const searches: SearchTerm[] = [];
  (body.searches ?? []).forEach((raw, i) => {
    const s = checkSearch(type, raw, ['searches', i], problems);
    if (s) searches.push(s);
  });
  const sort = body.sort ? checkSort(type, body.sort, problems) : null;
  let columns: Selector[] | null = null;
  if (body.columns && body.columns.length > 0) {
    const parsed = parseColumns(type, body.columns);
    if (parsed.ok) columns = parsed.selectors;
    else for (const p of parsed.problems) problems.push({ message: `columns[${p.index}] ${show(p.value)}: ${p.message}`, path: ['columns', p.index] });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, query: { country: body.country, type, environment: body.environment, page, limit, filters, searches, sort, columns } };
}

/** The port's query for a checked request, scoped to the caller's workspace. */
export function toSearchQuery(q: InvoiceQuery, workspaceId: string): SearchQuery {
  return {
    workspaceId,
    environment: q.environment,
    type: q.type,
    // The body's country narrows every query (a field callers cannot name themselves).
    filters: [{ field: COUNTRY_FIELD, values: [q.country] }, ...q.filters],
    searches: q.searches,
    sort: q.sort,
    offset: (q.page - 1) * q.limit,
    limit: q.limit,
  };
}

/** Top-level members of a body that the query does not know (refused with 400). */
export function unknownBodyFields(raw: unknown): string[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return [];
  return Object.keys(raw).filter((k) => !(BODY_FIELDS as readonly string[]).includes(k));
}
