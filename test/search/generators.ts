/** Random documents and random valid queries (per the field catalogue) for the search-index property tests. */
import fc from 'fast-check';
import { queryFields, type QueryType } from '../../domain/query/fields.js';
import type { SearchFilter, SearchQuery, SearchSort, SearchTerm } from '../../readmodels/search/port.js';
import type { Scope } from './contract.js';

// ---------------------------------------------------------------------------------------------
// Random queries (valid per the catalogue) and random documents, shared by the properties below.

const DATES = ['2024-02-29', '2025-01-01', '2025-01-31', '2025-02-01', '2025-12-31', '2023-02-29', 'soon', ''];
// Unicode lower-casing must agree on both engines: accented Latin, German sharp s (and its
// capital), Turkish dotted and dotless i, Arabic (no case), Greek sigma.
const KEYWORDS = ['AED', 'aed', 'USD', 'Eur', 'é', 'É', 'İx', 'ıx', 'IX', 'Straße', 'STRAẞE', 'شركة', 'ΟΔΟΣ', 'COMPLIANT', 'compliant', 'NEEDS_CORRECTION', 'a%b', 'a_b', 'x*y', 'q?', 'back\\slash', ''];
const TEXT_CHARS = ['a', 'A', 'b', 'é', 'É', '%', '_', '*', '?', '\\', '-', ' ', '0', '1', 'İ', 'ı', 'I', 'i', 'ß', 'ẞ', 'ش', 'ر', 'Σ'];
const text = fc.array(fc.constantFrom(...TEXT_CHARS), { minLength: 0, maxLength: 8 }).map((cs) => cs.join(''));
// Terms lean on the common characters so that searches often match.
const term = fc
  .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom('a', 'A', 'é', 'b', 'i', 'ß') }, { weight: 1, arbitrary: fc.constantFrom(...TEXT_CHARS) }), { minLength: 1, maxLength: 2 })
  .map((cs) => cs.join(''));
const NUMBERS = [0, -3, 1.5, 100, 100.25, 1e6, 99.99];

/** A value for a field of the kind, sometimes absent, null or malformed. */
function valueFor(kind: string, multi: boolean): fc.Arbitrary<unknown> {
  const odd = fc.constantFrom(undefined, null, 42, { x: 1 }, [] as unknown[], true);
  if (multi) return fc.oneof(fc.array(fc.oneof(fc.constantFrom(...KEYWORDS), fc.constant(7)), { maxLength: 3 }), fc.constantFrom(...KEYWORDS), odd);
  switch (kind) {
    case 'date':
      return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...DATES) }, { weight: 1, arbitrary: odd });
    case 'number':
      return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NUMBERS) }, { weight: 1, arbitrary: fc.oneof(odd, fc.constant('100')) });
    case 'text':
      return fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: odd });
    default:
      return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KEYWORDS) }, { weight: 1, arbitrary: odd });
  }
}

const logical = (path: string) => (path.startsWith('coreDocument.') ? path.slice('coreDocument.'.length) : path);
const isMulti = (f: { kind: string; sort: boolean }) => f.kind === 'keyword' && !f.sort;

export function fieldsArbitrary(type: QueryType): fc.Arbitrary<Record<string, unknown>> {
  const entries = queryFields(type)
    .filter((f) => f.path !== 'documentId')
    .map((f) => [logical(f.path), valueFor(f.kind, isMulti(f))] as const);
  return fc.record(Object.fromEntries(entries) as Record<string, fc.Arbitrary<unknown>>);
}

function filterArbitrary(type: QueryType): fc.Arbitrary<SearchFilter> {
  return fc.constantFrom(...queryFields(type)).chain((f): fc.Arbitrary<SearchFilter> => {
    const exists = fc.boolean().map((e) => ({ field: f.path, exists: e }));
    if (f.kind === 'date') {
      const d = fc.constantFrom(...DATES.slice(0, 5));
      return fc.oneof(
        fc.array(d, { maxLength: 2 }).map((values) => ({ field: f.path, values })),
        fc.record({ gte: fc.option(d, { nil: undefined }), lte: fc.option(d, { nil: undefined }) }).map((range) => ({ field: f.path, range })),
        exists,
      );
    }
    if (f.kind === 'number') {
      const n = fc.constantFrom(...NUMBERS);
      return fc.oneof(
        fc.array(n, { maxLength: 2 }).map((values) => ({ field: f.path, values })),
        fc.record({ gte: fc.option(n, { nil: undefined }), lte: fc.option(n, { nil: undefined }) }).map((range) => ({ field: f.path, range })),
        exists,
      );
    }
    if (f.path === 'documentId') return fc.array(fc.constantFrom('d0', 'D1', 'd2', 'x'), { maxLength: 3 }).map((values) => ({ field: f.path, values }));
    return fc.oneof(fc.array(fc.constantFrom(...KEYWORDS), { maxLength: 3 }).map((values) => ({ field: f.path, values })), exists);
  });
}

export type QueryParts = Omit<SearchQuery, 'workspaceId' | 'environment' | 'type'>;

export function queryArbitrary(scope: Scope, type: QueryType): fc.Arbitrary<SearchQuery> {
  return queryPartsArbitrary(type).map((parts) => ({ ...scope, type, ...parts }));
}

export function queryPartsArbitrary(type: QueryType): fc.Arbitrary<QueryParts> {
  const fields = queryFields(type);
  const searchable = fields.filter((f) => f.search).map((f) => f.path);
  const sortable = fields.filter((f) => f.sort).map((f) => f.path);
  return fc.record({
    filters: fc.oneof({ weight: 2, arbitrary: fc.array(filterArbitrary(type), { maxLength: 1 }) }, { weight: 1, arbitrary: fc.array(filterArbitrary(type), { maxLength: 3 }) }),
    searches: fc.oneof(
      { weight: 3, arbitrary: fc.array(fc.record({ field: fc.constantFrom(...searchable), term }), { maxLength: 1 }) },
      { weight: 1, arbitrary: fc.array(fc.record({ field: fc.constantFrom(...searchable), term }), { maxLength: 2 }) },
    ) as fc.Arbitrary<SearchTerm[]>,
    sort: fc.option(fc.record({ field: fc.constantFrom(...sortable), order: fc.constantFrom('asc' as const, 'desc' as const) }), { nil: null }) as fc.Arbitrary<SearchSort | null>,
    offset: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat({ max: 8 }) }),
    limit: fc.integer({ min: 1, max: 25 }),
  });
}

