/**
 * A checked invoice query in the terms of the search-index port (readmodels/search/port.ts):
 * resolved field paths of the catalogue (fields.ts) and values of the kinds it gives them.
 */
import type { QueryType } from './fields.js';

/**
 * Filters (docs/api/invoice-query.md `filters`):
 * - `values`: the field equals any of the values (keyword fields compare case-insensitively;
 *   an array field such as `documentType.modifiers` matches when any element does). An empty
 *   list adds no condition.
 * - `range`: inclusive bounds, either or both (`YYYY-MM-DD` strings for dates, numbers for
 *   numbers). A document without the field does not match.
 * - `exists`: whether the field holds a value (not null, not absent, not an empty array).
 */
export type SearchFilter =
  | { readonly field: string; readonly values: readonly (string | number)[] }
  | { readonly field: string; readonly range: { readonly gte?: string | number; readonly lte?: string | number } }
  | { readonly field: string; readonly exists: boolean };

/** A case-insensitive substring search; every search of a query must match. */
export interface SearchTerm {
  readonly field: string;
  /** Matched literally: `%`, `_`, `*`, `?` and `\` are ordinary characters. Never empty. */
  readonly term: string;
}

export interface SearchSort {
  readonly field: string;
  readonly order: 'asc' | 'desc';
}

export interface SearchQuery {
  /** Every query is scoped to one workspace and one environment; no adapter may leave it out. */
  readonly workspaceId: string;
  readonly environment: string;
  readonly type: QueryType;
  readonly filters: readonly SearchFilter[];
  readonly searches: readonly SearchTerm[];
  /**
   * Null: newest issue date first. Whatever the sort, ties are broken by `documentId`
   * ascending, and documents lacking the sort field come last in both orders. Keyword
   * fields sort by their lowercased value in code-point (byte) order.
   */
  readonly sort: SearchSort | null;
  /** 0-based; `offset + limit` is at most MAX_RESULT_WINDOW. */
  readonly offset: number;
  readonly limit: number;
}

/** Deepest position a query may page to (Elasticsearch's default index.max_result_window). */
export const MAX_RESULT_WINDOW = 10_000;
