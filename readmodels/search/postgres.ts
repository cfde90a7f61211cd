/**
 * The PostgreSQL adapter of the search-index port: each indexed document is two rows, its body
 * in `search_documents` (workspace, environment, type, documentId, the document less its
 * state, as jsonb) and its state in `search_document_states` (the same key, the document's
 * version, the statuses and status history as a partial document: domain/query/indexed-document.ts
 * `statePaths`). A status change rewrites the small state row and leaves the body, its TOASTed
 * JSON and its 16 indexes alone. Written through the search projection's runner transaction with
 * unqualified table names (so a rebuild's search_path redirects them into fresh tables), and
 * queried with SQL that is always scoped by workspace, environment and type; a query joins the
 * states only when it filters or sorts on a state field, and a page's documents are put
 * together from both rows.
 *
 * Every catalogued field's value is one SQL expression over the field's jsonb value `j`:
 *   search_date(j) / search_number(j) / search_keyword(j) / search_keywords(j)
 * (functions of migration 0040 implementing the value rules of ./fields.ts). A scalar field's
 * value is stored in a generated column (`sv_…`, migrations 0068 and 0072) of the row holding
 * it (body or state), which its btree indexes cover and the queries read; the multi-valued and
 * the substring searches use the expressions, the same text in the indexes and in the queries
 * (so the planner matches them). Sales and purchases keep the core document under
 * `coreDocument`, receipts at the root: one expression serves all three types,
 * `case when type = 'receipts' then … end`.
 */
import type { Knex } from 'knex';
import { prepared } from '../prepared.js';
import { QUERY_TYPES, queryFields, type QueryType } from '../../domain/query/fields.js';
import { isStateChange, MAX_RESULT_WINDOW, newestPerDocument, type IndexWrite, type SearchFilter, type SearchIndex, type SearchQuery, type SearchResult } from './port.js';
import { issueDateField } from '../../domain/query/fields.js';
import { splitIndexed, statePaths, withState, type IndexedState } from '../../domain/query/indexed-document.js';
import { resolveField, type ResolvedField } from './fields.js';

export const SEARCH_TABLE = 'search_documents';
/** The documents' states (statuses and status history), one row per row of SEARCH_TABLE. */
export const SEARCH_STATES_TABLE = 'search_document_states';
/** The adapter's tables (the search projection rebuilds them with its facts). */
export const SEARCH_TABLES: readonly string[] = [SEARCH_TABLE, SEARCH_STATES_TABLE];

/**
 * The columns a body row is written with; the value columns are generated from `document`. No
 * version of its own: the body is fixed when the document is received, and its state row's
 * version orders the document's writes.
 */
export const SEARCH_ROW_COLUMNS = 'workspace_id, environment, type, document_id, document';
/** The columns a state row is written with; the value columns are generated from `state`. */
export const SEARCH_STATE_COLUMNS = 'workspace_id, environment, type, document_id, version, state';
const KEY_COLUMNS = ['workspace_id', 'environment', 'type', 'document_id'] as const;

const CORE = 'coreDocument.';

/** The key of a field independent of the type: its path without the `coreDocument.` prefix. */
export function logicalKey(path: string): string {
  return path.startsWith(CORE) ? path.slice(CORE.length) : path;
}

/** For each logical key, the types that keep it under `coreDocument` (from the catalogue). */
const PREFIXED: ReadonlyMap<string, ReadonlySet<QueryType>> = (() => {
  const map = new Map<string, Set<QueryType>>();
  for (const type of QUERY_TYPES) {
    for (const f of queryFields(type)) {
      const key = logicalKey(f.path);
      const set = map.get(key) ?? new Set<QueryType>();
      if (f.path.startsWith(CORE)) set.add(type);
      map.set(key, set);
    }
  }
  return map;
})();

const pathLiteral = (segments: readonly string[]) => `'{${segments.join(',')}}'`;

/** The logical keys of the state's paths (`meta.statuses`, `statusHistory`, `countryDocumentStatus`). */
const STATE_KEYS: readonly string[] = [...new Set(QUERY_TYPES.flatMap((t) => statePaths(t).map((p) => logicalKey(p.join('.')))))];

/** Whether a logical field is part of a document's state (kept in SEARCH_STATES_TABLE). */
export const isStateKey = (key: string) => STATE_KEYS.some((k) => key === k || key.startsWith(`${k}.`));

/** The row's jsonb column holding a logical field: `state` for a state field, else `document`. */
const jsonbColumn = (key: string) => (isStateKey(key) ? 'state' : 'document');

/** The jsonb value of a logical field in a row (`document` or `state`, and `type`, are the row's columns). */
export function jsonbExpression(key: string): string {
  const segments = key.split('.');
  if (!segments.every((s) => /^[A-Za-z][A-Za-z0-9_]*$/.test(s))) throw new Error(`unsupported field path "${key}"`);
  const prefixed = PREFIXED.get(key);
  const column = jsonbColumn(key);
  const flat = `${column} #> ${pathLiteral(segments)}`;
  if (!prefixed || prefixed.size === 0) return `(${flat})`;
  const under = `${column} #> ${pathLiteral(['coreDocument', ...segments])}`;
  const types = [...prefixed].sort().map((t) => `'${t}'`).join(', ');
  return `(case when type in (${types}) then ${under} else ${flat} end)`;
}

/** A logical key in snake case, as column and index names carry it (`header_issue_date`). */
const snakeKey = (key: string) => key.replace(/\./g, '_').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The stored column holding a scalar field's value (migration 0068), e.g. `sv_header_issue_date`. */
export function valueColumn(key: string): string {
  return `sv_${snakeKey(key)}`;
}

/**
 * What a scalar field's stored column holds, computed by PostgreSQL from the document on every
 * write (a generated column): text for dates (`YYYY-MM-DD`, whose text order is the calendar
 * order), numeric for numbers, lowercased text for keywords. Null when the document holds no
 * indexable value.
 */
export function storedValueExpression(field: Pick<ResolvedField, 'kind'>, key: string): string {
  const j = jsonbExpression(key);
  switch (field.kind) {
    case 'date':
      return `search_date(${j})`;
    case 'number':
      return `search_number(${j})`;
    default:
      return `search_keyword(${j})`;
  }
}

/**
 * The SQL value of a field in queries: a scalar field's stored column (keywords compared in
 * byte order, "C"), a multi-valued keyword's text[] read from the document. Stored columns let
 * an index serve a page without reading the rows it skips (an index-only scan; an expression
 * index cannot, since the planner then wants the whole `document` for it).
 */
export function valueExpression(field: Pick<ResolvedField, 'kind' | 'multi'>, key: string): string {
  if (field.multi) return `search_keywords(${jsonbExpression(key)})`;
  // A field of the query layer's own (`country`) has no column: its expression, unindexed.
  const value = storedKeys().has(key) ? `"${valueColumn(key)}"` : storedValueExpression(field, key);
  return field.kind === 'keyword' || field.kind === 'text' ? `(${value} collate "C")` : value;
}

let stored: ReadonlySet<string> | undefined;
const storedKeys = () => (stored ??= new Set(indexedFields().filter(([, f]) => !f.multi).map(([key]) => key)));

/** The expression case-insensitive substring searches run on (and their trigram index covers). */
export function searchExpression(key: string): string {
  return `search_keyword(${jsonbExpression(key)})`;
}

/**
 * The condition of a substring search on a field, with one parameter: the LIKE-escaped term.
 * The pattern takes the database's default collation, as the trigram index does, so the
 * index can serve it.
 */
export function searchCondition(key: string): string {
  return `${searchExpression(key)} like (('%' || ${LOWER_PARAM} || '%') collate "default")`;
}

/** Escapes LIKE's wildcards so the term is matched literally (escape character `\`). */
export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Lowercases a text parameter exactly as the indexed values are lowercased. */
const LOWER_PARAM = `lower(?::text collate "pg_c_utf8")`;
const LOWER_PARAMS = `array(select lower(v collate "pg_c_utf8") from unnest(?::text[]) as v)`;

function applyFilter(q: Knex.QueryBuilder, type: QueryType, filter: SearchFilter): void {
  const field = resolveField(type, filter.field);
  const value = valueExpression(field, logicalKey(field.path));
  if ('values' in filter) {
    if (filter.values.length === 0) return;
    if (field.kind === 'date') q.whereRaw(`${value} = any(?::text[])`, [filter.values.map(String)]);
    else if (field.kind === 'number') q.whereRaw(`${value} = any(?::numeric[])`, [filter.values.map(Number)]);
    else if (field.multi) q.whereRaw(`${value} && ${LOWER_PARAMS}`, [filter.values.map(String)]);
    else q.whereRaw(`${value} = any(${LOWER_PARAMS})`, [filter.values.map(String)]);
  } else if ('range' in filter) {
    const bounds: [string, string | number | undefined][] = [
      ['>=', filter.range.gte],
      ['<=', filter.range.lte],
    ];
    if (field.multi) throw new Error(`range filters are not supported on the multi-valued field ${field.path}`);
    // A document without the field does not match a range, even an open one.
    q.whereRaw(`${value} is not null`);
    for (const [op, bound] of bounds) {
      if (bound === undefined) continue;
      if (field.kind === 'number') q.whereRaw(`${value} ${op} ?::numeric`, [Number(bound)]);
      else if (field.kind === 'date') q.whereRaw(`${value} ${op} ?::text`, [String(bound)]);
      else q.whereRaw(`${value} ${op} (${LOWER_PARAM} collate "C")`, [String(bound)]);
    }
  } else {
    const present = field.multi ? `cardinality(${value}) > 0` : `${value} is not null`;
    q.whereRaw(filter.exists ? present : `not (${present})`);
  }
}

export class PostgresSearchIndex implements SearchIndex {
  readonly engine = 'postgres' as const;

  constructor(private readonly knex: Knex) {}

  async write(trx: Knex.Transaction, writes: readonly IndexWrite[]): Promise<void> {
    // A whole document is cut into its body and its state; a state change has no body.
    const rows = newestPerDocument(writes).map((w) => {
      const { body, state } = isStateChange(w) ? { body: null, state: w.state } : splitIndexed(w.type, w.document);
      return { w: w.workspaceId, e: w.environment, t: w.type, d: w.documentId, v: w.version.toString(), b: body, s: state };
    });
    if (rows.length === 0) return;
    // One statement for the batch. The state's version orders the document's writes: a write
    // not newer than the stored state changes nothing (the body is checked against the state
    // as it was before the statement; its sub-statements see the same snapshot).
    await prepared(
      trx.raw(
        `with r as (select * from jsonb_to_recordset(?::jsonb) as r(w text, e text, t text, d text, v bigint, b jsonb, s jsonb)),
         bodies as (
           insert into ${SEARCH_TABLE} as x (${SEARCH_ROW_COLUMNS})
           select r.w, r.e, r.t, r.d, r.b from r
            where r.b is not null
              and not exists (select from ${SEARCH_STATES_TABLE} t
                               where t.workspace_id = r.w and t.environment = r.e and t.type = r.t and t.document_id = r.d and t.version >= r.v)
           on conflict (${KEY_COLUMNS.join(', ')}) do update set document = excluded.document)
         insert into ${SEARCH_STATES_TABLE} as x (${SEARCH_STATE_COLUMNS})
         select r.w, r.e, r.t, r.d, r.v, r.s from r
         on conflict (${KEY_COLUMNS.join(', ')})
         do update set version = excluded.version, state = excluded.state
         where x.version < excluded.version`,
        [JSON.stringify(rows)],
      ),
    );
  }

  async search(query: SearchQuery): Promise<SearchResult> {
    if (query.offset < 0 || query.limit < 0 || query.offset + query.limit > MAX_RESULT_WINDOW) {
      throw new RangeError(`offset + limit must be within 0..${MAX_RESULT_WINDOW}`);
    }
    const sort = query.sort ?? { field: issueDateField(query.type), order: 'desc' as const };
    const sortField = resolveField(query.type, sort.field);
    if (!sortField.sort) throw new Error(`${sortField.path} cannot be sorted on`);
    // The states are joined only when a filter or the sort reads one (USING: the key columns
    // stay unqualified); otherwise the body's indexes alone serve the query.
    const named = [...query.filters.map((f) => f.field), ...query.searches.map((s) => s.field), sort.field];
    const joinsStates = named.some((path) => isStateKey(logicalKey(resolveField(query.type, path).path)));
    const from = joinsStates ? this.knex.raw(`${SEARCH_TABLE} join ${SEARCH_STATES_TABLE} using (${KEY_COLUMNS.join(', ')})`) : SEARCH_TABLE;
    const where = this.knex.queryBuilder().from(from).where({ workspace_id: query.workspaceId, environment: query.environment, type: query.type });
    for (const filter of query.filters) applyFilter(where, query.type, filter);
    for (const s of query.searches) {
      const field = resolveField(query.type, s.field);
      if (!field.search) throw new Error(`${field.path} cannot be searched`);
      where.whereRaw(searchCondition(logicalKey(field.path)), [escapeLike(s.term)]);
    }
    const order = sort.order === 'asc' ? 'asc' : 'desc';
    const key = valueExpression(sortField, logicalKey(sortField.path));
    // The page's keys first, from the sort's index alone where it can (the rows a deep page
    // skips are never read), then the documents of those keys only.
    const keys = where
      .clone()
      .select('workspace_id', 'environment', 'type', 'document_id', this.knex.raw(`${key} as sort_key`))
      .orderByRaw(`${key} ${order} nulls last, document_id asc`)
      .offset(query.offset)
      .limit(query.limit);
    const page = this.knex
      .select('s.document', 't.state')
      .from(keys.as('p'))
      .join({ s: SEARCH_TABLE }, (on) => {
        for (const c of KEY_COLUMNS) on.on(`s.${c}`, `p.${c}`);
      })
      .leftJoin({ t: SEARCH_STATES_TABLE }, (on) => {
        for (const c of KEY_COLUMNS) on.on(`t.${c}`, `p.${c}`);
      })
      .orderByRaw(`p.sort_key ${order} nulls last, p.document_id asc`);
    const count = where.clone().count<{ count: string }[]>({ count: '*' });
    const [rows, counted] = await Promise.all([query.limit > 0 ? page : Promise.resolve([]), count]);
    return {
      total: Number(counted[0]!.count),
      documents: (rows as { document: Record<string, unknown>; state: IndexedState | null }[]).map((r) => withState(query.type, r.document, r.state ?? {})),
    };
  }
}

export interface SearchIndexDefinition {
  readonly name: string;
  /** The table it indexes: SEARCH_TABLE (the body's fields) or SEARCH_STATES_TABLE (the state's). */
  readonly table: string;
  /** The index's method and key list, e.g. `btree (workspace_id, …)`. */
  readonly definition: string;
}

/** The catalogued fields the table indexes, by logical key, in key order. */
function indexedFields(): [string, ResolvedField][] {
  const fields = new Map<string, ResolvedField>();
  for (const type of QUERY_TYPES) {
    // The query layer's own fields (`country`) get no index of their own: the country is one
    // equality on top of the scope, matching nearly every row of a workspace, so the scope's
    // and the other fields' indexes serve the query and the condition is checked on their rows.
    for (const f of queryFields(type)) if (f.public) fields.set(logicalKey(f.path), resolveField(type, f.path));
  }
  return [...fields].sort(([a], [b]) => (a < b ? -1 : 1));
}

/** The table holding a logical field: the states' for a state field, else the bodies'. */
const tableOf = (key: string) => (isStateKey(key) ? SEARCH_STATES_TABLE : SEARCH_TABLE);

export interface StoredValueColumn {
  readonly name: string;
  /** The table it is a column of (SEARCH_TABLE or SEARCH_STATES_TABLE). */
  readonly table: string;
  /** The column's SQL type (keywords in the "C" collation). */
  readonly type: string;
  /** What PostgreSQL stores in it (`generated always as (…) stored`). */
  readonly expression: string;
}

/** The stored column of each scalar catalogued field (migrations 0068 and 0072 add them). */
export function storedValueColumns(): StoredValueColumn[] {
  return indexedFields()
    .filter(([, field]) => !field.multi)
    .map(([key, field]) => ({
      name: valueColumn(key),
      table: tableOf(key),
      type: field.kind === 'date' ? 'text' : field.kind === 'number' ? 'numeric' : 'text collate "C"',
      expression: storedValueExpression(field, key),
    }));
}

/**
 * The indexes the queries need, derived from the catalogue (migrations 0040, 0068 and 0072
 * create them), each on the table holding its field: per scalar field a btree behind the scope
 * (workspace, environment, type) over its stored column, ending in `document_id`, so a filtered
 * or sorted page walks the index in the query's order (dates and amounts both ways, keywords
 * ascending); per multi-valued field a GIN over its array; per searchable field a pg_trgm GIN
 * (behind the workspace) for the substring search.
 */
export function searchIndexDefinitions(): SearchIndexDefinition[] {
  const defs: SearchIndexDefinition[] = [];
  const scope = 'workspace_id, environment, type';
  for (const [key, field] of indexedFields()) {
    const name = `search_${snakeKey(key)}`.slice(0, 50);
    const table = tableOf(key);
    if (field.multi) {
      defs.push({ name, table, definition: `gin (${valueExpression(field, key)})` });
      continue;
    }
    const column = valueColumn(key);
    defs.push({ name: `${name}_asc`, table, definition: `btree (${scope}, ${column} asc nulls last, document_id)` });
    if (field.kind === 'date' || field.kind === 'number') {
      defs.push({ name: `${name}_desc`, table, definition: `btree (${scope}, ${column} desc nulls last, document_id)` });
    }
    // The workspace as a GIN entry too (btree_gin), so a search reads the trigram postings of
    // one workspace rather than every workspace's matches.
    if (field.search) defs.push({ name: `${name}_trgm`, table, definition: `gin (workspace_id, ${searchExpression(key)} gin_trgm_ops)` });
  }
  return defs;
}
