/**
 * The PostgreSQL adapter of the search-index port: each indexed document is two rows, its body
 * in `search_documents` and its state in `search_document_states` (the same key; the state row
 * carries the document's version, the statuses and status history as a partial document:
 * domain/query/indexed-document.ts `statePaths`). A status change rewrites the small state row
 * and leaves the body and its indexes alone. Written through the search projection's runner
 * transaction with unqualified table names (so a rebuild's search_path redirects them into
 * fresh tables), and queried with SQL that is always scoped by workspace, environment and type;
 * a query joins the states only when it filters or sorts on a state field, and a page's
 * documents are put together from both rows.
 *
 * Every catalogued field's value is a plain typed column (`sv_…`) of the row holding the field
 * (body or state), computed by the service from the document it writes, with the rules of
 * ./fields.ts that also feed Elasticsearch (`indexedValue`, `lowerKeyword`): text for dates
 * (`YYYY-MM-DD`), numeric for numbers, lower-cased text in the "C" collation for keywords, a
 * text[] of lower-cased keywords for the multi-valued fields. PostgreSQL parses no JSON on the
 * write path: the body and the state are stored as the JSON text the service wrote (`text`; a
 * body is compressed with lz4 where the server has it, else stored uncompressed, which costs
 * PostgreSQL less CPU than pglz: migration 0147) and parsed by the service when a page is read; the rows
 * go to PostgreSQL as one array parameter per column. Query parameters are lower-cased by the
 * service with the same function, so both engines agree on every Unicode case mapping.
 */
import type { Knex } from 'knex';
import { runWrites, type BatchWrite } from '../batch-writes.js';
import { QUERY_TYPES, queryFields, type QueryType } from '../../domain/query/fields.js';
import { isStateChange, MAX_RESULT_WINDOW, newestPerDocument, type IndexWrite, type SearchFilter, type SearchIndex, type SearchQuery, type SearchResult } from './port.js';
import { issueDateField } from '../../domain/query/fields.js';
import { splitIndexed, statePaths, withState, type IndexedState } from '../../domain/query/indexed-document.js';
import { indexedValue, lowerKeyword, resolvedFields, resolveField, type ResolvedField } from './fields.js';

export const SEARCH_TABLE = 'search_documents';
/** The documents' states (statuses and status history), one row per row of SEARCH_TABLE. */
export const SEARCH_STATES_TABLE = 'search_document_states';
/** The adapter's tables (the search projection rebuilds them with its facts). */
export const SEARCH_TABLES: readonly string[] = [SEARCH_TABLE, SEARCH_STATES_TABLE];

const KEY_COLUMNS = ['workspace_id', 'environment', 'type', 'document_id'] as const;

const CORE = 'coreDocument.';

/** The key of a field independent of the type: its path without the `coreDocument.` prefix. */
export function logicalKey(path: string): string {
  return path.startsWith(CORE) ? path.slice(CORE.length) : path;
}

/** The logical keys of the state's paths (`meta.statuses`, `statusHistory`, `countryDocumentStatus`). */
const STATE_KEYS: readonly string[] = [...new Set(QUERY_TYPES.flatMap((t) => statePaths(t).map((p) => logicalKey(p.join('.')))))];

/** Whether a logical field is part of a document's state (kept in SEARCH_STATES_TABLE). */
export const isStateKey = (key: string) => STATE_KEYS.some((k) => key === k || key.startsWith(`${k}.`));

/** A logical key in snake case, as column and index names carry it (`header_issue_date`). */
const snakeKey = (key: string) => key.replace(/\./g, '_').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The column holding a field's value, e.g. `sv_header_issue_date`. */
export function valueColumn(key: string): string {
  return `sv_${snakeKey(key)}`;
}

/**
 * The SQL value of a field in queries: its column (keywords compared in byte order, "C", which
 * the columns are in). Columns let an index serve a page without reading the rows it skips (an
 * index-only scan).
 */
export function valueExpression(field: Pick<ResolvedField, 'kind' | 'multi'>, key: string): string {
  return `"${valueColumn(key)}"`;
}

/**
 * The condition of a substring search on a field, with one parameter: the LIKE-escaped,
 * lower-cased term (`searchPattern`). The column holds the lower-cased value; its trigram
 * index serves the condition.
 */
export function searchCondition(key: string): string {
  return `"${valueColumn(key)}" like ('%' || ?::text || '%')`;
}

/** Escapes LIKE's wildcards so the term is matched literally (escape character `\`). */
export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The parameter of `searchCondition` for a caller's term. */
export const searchPattern = (term: string) => escapeLike(lowerKeyword(term));

function applyFilter(q: Knex.QueryBuilder, type: QueryType, filter: SearchFilter): void {
  const field = resolveField(type, filter.field);
  const value = valueExpression(field, logicalKey(field.path));
  if ('values' in filter) {
    if (filter.values.length === 0) return;
    if (field.kind === 'date') q.whereRaw(`${value} = any(?::text[])`, [filter.values.map(String)]);
    else if (field.kind === 'number') q.whereRaw(`${value} = any(?::numeric[])`, [filter.values.map(Number)]);
    else if (field.multi) q.whereRaw(`${value} && ?::text[]`, [filter.values.map((v) => lowerKeyword(String(v)))]);
    else q.whereRaw(`${value} = any(?::text[])`, [filter.values.map((v) => lowerKeyword(String(v)))]);
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
      else q.whereRaw(`${value} ${op} ?::text`, [lowerKeyword(String(bound))]);
    }
  } else {
    const present = field.multi ? `cardinality(${value}) > 0` : `${value} is not null`;
    q.whereRaw(filter.exists ? present : `not (${present})`);
  }
}

/** A column of the index's tables holding a field's value. */
export interface StoredValueColumn {
  readonly name: string;
  /** The table it is a column of (SEARCH_TABLE or SEARCH_STATES_TABLE). */
  readonly table: string;
  /** The column's SQL type (keywords in the "C" collation). */
  readonly type: string;
  /** The logical key of the field it holds. */
  readonly key: string;
  /** The catalogued field (of some type) it holds, as resolved. */
  readonly field: ResolvedField;
}

/** Every catalogued field of every type, by logical key, in key order (the query layer's own included). */
function catalogued(filter: (publicField: boolean) => boolean): [string, ResolvedField][] {
  const fields = new Map<string, ResolvedField>();
  for (const type of QUERY_TYPES) {
    for (const f of queryFields(type)) if (filter(f.public)) fields.set(logicalKey(f.path), resolveField(type, f.path));
  }
  return [...fields].sort(([a], [b]) => (a < b ? -1 : 1));
}

/** The table holding a logical field: the states' for a state field, else the bodies'. */
const tableOf = (key: string) => (isStateKey(key) ? SEARCH_STATES_TABLE : SEARCH_TABLE);

const columnType = (field: ResolvedField) =>
  field.multi ? 'text[] collate "C"' : field.kind === 'date' ? 'text' : field.kind === 'number' ? 'numeric' : 'text collate "C"';

/** The value column of each catalogued field, on the table holding it (migration 0090 creates them). */
export function storedValueColumns(): StoredValueColumn[] {
  return catalogued(() => true).map(([key, field]) => ({ name: valueColumn(key), table: tableOf(key), type: columnType(field), key, field }));
}

let columnsOf: ((table: string) => StoredValueColumn[]) | undefined;
const tableColumns = (table: string) => (columnsOf ??= ((all) => (t: string) => all.filter((c) => c.table === t))(storedValueColumns()))(table);

/** The columns a body row is written with (the value columns are the service's). */
export const SEARCH_ROW_COLUMNS = ['workspace_id', 'environment', 'type', 'document_id', 'document', ...tableColumns(SEARCH_TABLE).map((c) => c.name)].join(', ');
/** The columns a state row is written with. */
export const SEARCH_STATE_COLUMNS = ['workspace_id', 'environment', 'type', 'document_id', 'version', 'state', ...tableColumns(SEARCH_STATES_TABLE).map((c) => c.name)].join(', ');

/** A text[] value as an array literal (the multi-valued columns, sent as one text each). */
const arrayLiteral = (values: readonly string[]) => `{${values.map((v) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`;

/** What a value column holds for a document (or a state: a partial document) of `type`. */
function columnValue(field: ResolvedField, document: Readonly<Record<string, unknown>>): string | number | null {
  const value = indexedValue(field, document);
  if (field.multi) return arrayLiteral(((value as string[] | undefined) ?? []).map(lowerKeyword));
  if (value === undefined) return null;
  return field.kind === 'keyword' || field.kind === 'text' ? lowerKeyword(value as string) : (value as string | number);
}

/** The resolved field of `type` stored in each column of `table` (undefined: the type has no such field). */
const fieldsByColumn = new Map<string, (ResolvedField | undefined)[]>();
function typeFields(type: QueryType, table: string): (ResolvedField | undefined)[] {
  const k = `${type}:${table}`;
  let found = fieldsByColumn.get(k);
  if (!found) {
    const byKey = new Map(resolvedFields(type).map((f) => [logicalKey(f.path), f]));
    found = tableColumns(table).map((c) => byKey.get(c.key));
    fieldsByColumn.set(k, found);
  }
  return found;
}

/** Joins the rows' JSON texts into one parameter (see WRITE_SQL). */
const JOINER = '\u0001';

/** The array cast of a column's parameter and the expression reading it from the unnested row. */
const paramCast = (c: StoredValueColumn) => (c.field.multi ? 'text[]' : c.type === 'numeric' ? 'numeric[]' : 'text[]');
const rowValue = (c: StoredValueColumn, alias: string) => (c.field.multi ? `${alias}::text[]` : alias);

/**
 * The batch's write: two data-modifying statements (readmodels/batch-writes.ts), run as one
 * statement or folded into the search projection's checkpoint statement, each unnesting one array
 * parameter per column: the bodies (keys, version, body and the body's value columns; whole
 * documents only) and the states (keys, version, state and the state's value columns). The
 * state's version orders the document's writes: a write not newer than the stored state changes
 * nothing (the body is checked against the state as it was before the statement; the statement's
 * parts see the same snapshot). `batch`: the batch's gate (null when it is not to be applied).
 *
 * The bodies and states (JSON text, about 10 KB and 1 KB) go as one text each, joined by U+0001
 * (which JSON text never holds raw), and are split by PostgreSQL: as array elements they would be
 * escaped by the driver and unescaped by the server, character by character (measured: 70% of the
 * write's time in the driver's escaping).
 */
const JOINED = `string_to_array(?::text, chr(1))`;
const KEY_PARAMS = ['text[]', 'text[]', 'text[]', 'text[]', 'bigint[]'].map((t) => `?::${t}`);
const BODIES_SQL = (batch: string) => {
  const body = tableColumns(SEARCH_TABLE);
  const params = [...KEY_PARAMS, JOINED, ...body.map((c) => `?::${paramCast(c)}`)];
  const aliases = ['w', 'e', 't', 'd', 'v', 'b', ...body.map((_, i) => `b${i}`)];
  return `insert into ${SEARCH_TABLE} as x (${SEARCH_ROW_COLUMNS})
       select r.w, r.e, r.t, r.d, r.b${body.map((c, i) => `, ${rowValue(c, `r.b${i}`)}`).join('')}
         from unnest(${params.join(', ')}) as r(${aliases.join(', ')})
        where ${batch} is not null
          and not exists (select from ${SEARCH_STATES_TABLE} t
                           where t.workspace_id = r.w and t.environment = r.e and t.type = r.t and t.document_id = r.d and t.version >= r.v)
       on conflict (${KEY_COLUMNS.join(', ')}) do update set document = excluded.document${body.map((c) => `, ${c.name} = excluded.${c.name}`).join('')}`;
};
const STATES_SQL = (batch: string) => {
  const state = tableColumns(SEARCH_STATES_TABLE);
  const params = [...KEY_PARAMS, JOINED, ...state.map((c) => `?::${paramCast(c)}`)];
  const aliases = ['w', 'e', 't', 'd', 'v', 's', ...state.map((_, i) => `s${i}`)];
  return `insert into ${SEARCH_STATES_TABLE} as x (${SEARCH_STATE_COLUMNS})
       select r.w, r.e, r.t, r.d, r.v, r.s${state.map((c, i) => `, ${rowValue(c, `r.s${i}`)}`).join('')}
         from unnest(${params.join(', ')}) as r(${aliases.join(', ')})
        where ${batch} is not null
       on conflict (${KEY_COLUMNS.join(', ')})
       do update set version = excluded.version, state = excluded.state${state.map((c) => `, ${c.name} = excluded.${c.name}`).join('')}
       where x.version < excluded.version`;
};

/** The batch's writes (the newest write of each document) as the index's two data-modifying statements. */
export function searchIndexWrites(writes: readonly IndexWrite[]): BatchWrite[] {
  const newest = newestPerDocument(writes);
  if (newest.length === 0) return [];
  const bodyColumns = tableColumns(SEARCH_TABLE);
  const stateColumns = tableColumns(SEARCH_STATES_TABLE);
  const keys = (ws: readonly IndexWrite[]) => [ws.map((w) => w.workspaceId), ws.map((w) => w.environment), ws.map((w) => w.type), ws.map((w) => w.documentId), ws.map((w) => w.version.toString())];
  const bodies: { w: IndexWrite; body: Record<string, unknown> }[] = [];
  const states: { w: IndexWrite; state: IndexedState }[] = [];
  for (const w of newest) {
    // A whole document is cut into its body and its state; a state change has no body.
    if (isStateChange(w)) {
      states.push({ w, state: w.state });
      continue;
    }
    const { body, state } = splitIndexed(w.type, w.document);
    bodies.push({ w, body });
    states.push({ w, state });
  }
  const result: BatchWrite[] = [];
  if (bodies.length > 0) {
    const values = bodyColumns.map((_, i) => bodies.map(({ w, body }) => {
      const f = typeFields(w.type, SEARCH_TABLE)[i];
      return f ? columnValue(f, body) : bodyColumns[i]!.field.multi ? '{}' : null;
    }));
    const bindings = [...keys(bodies.map((b) => b.w)), bodies.map((b) => JSON.stringify(b.body)).join(JOINER), ...values];
    result.push({ rows: 'true', rowsType: 'json', sql: BODIES_SQL, bindings: bindings as Knex.Value[] });
  }
  const values = stateColumns.map((_, i) => states.map(({ w, state }) => {
    const f = typeFields(w.type, SEARCH_STATES_TABLE)[i];
    return f ? columnValue(f, state) : null;
  }));
  const bindings = [...keys(states.map((s) => s.w)), states.map((s) => JSON.stringify(s.state)).join(JOINER), ...values];
  result.push({ rows: 'true', rowsType: 'json', sql: STATES_SQL, bindings: bindings as Knex.Value[] });
  return result;
}

export class PostgresSearchIndex implements SearchIndex {
  readonly engine = 'postgres' as const;

  constructor(private readonly knex: Knex) {}

  async write(trx: Knex.Transaction, writes: readonly IndexWrite[]): Promise<void> {
    await runWrites(trx, searchIndexWrites(writes));
  }

  batchWrites(writes: readonly IndexWrite[]): readonly BatchWrite[] {
    return searchIndexWrites(writes);
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
      where.whereRaw(searchCondition(logicalKey(field.path)), [searchPattern(s.term)]);
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
      documents: (rows as { document: string; state: string | null }[]).map((r) =>
        withState(query.type, JSON.parse(r.document) as Record<string, unknown>, r.state === null ? {} : (JSON.parse(r.state) as IndexedState)),
      ),
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

/**
 * The indexes the queries need, derived from the catalogue's public fields (migration 0090
 * creates them), each on the table holding its field: per scalar field a btree behind the scope
 * (workspace, environment, type) over its column, ending in `document_id`, so a filtered or
 * sorted page walks the index in the query's order (dates and amounts both ways, keywords
 * ascending); per multi-valued field a GIN over its array; per searchable field a pg_trgm GIN
 * (behind the workspace) over its lower-cased column for the substring search. The query
 * layer's own fields (`country`) get none: the country is one equality on top of the scope,
 * matching nearly every row of a workspace, so the scope's and the other fields' indexes serve
 * the query and the condition is checked on their rows.
 */
export function searchIndexDefinitions(): SearchIndexDefinition[] {
  const defs: SearchIndexDefinition[] = [];
  const scope = 'workspace_id, environment, type';
  for (const [key, field] of catalogued((p) => p)) {
    const name = `search_${snakeKey(key)}`.slice(0, 50);
    const table = tableOf(key);
    const column = valueColumn(key);
    if (field.multi) {
      defs.push({ name, table, definition: `gin (${column})` });
      continue;
    }
    // A scalar field only some types have is indexed for the rows of those types alone (every
    // query names its type, which proves the predicate): the other types' rows, whose value is
    // always null, skip the index when they are written. (Not a multi-valued field's GIN: the
    // planner takes a partial GIN for a cheap way to the type's rows and scans it whole.)
    const types = QUERY_TYPES.filter((t) => queryFields(t).some((f) => logicalKey(f.path) === key));
    const where = types.length === QUERY_TYPES.length ? '' : ` where ${types.length === 1 ? `type = '${types[0]}'` : `type in (${types.map((t) => `'${t}'`).join(', ')})`}`;
    defs.push({ name: `${name}_asc`, table, definition: `btree (${scope}, ${column} asc nulls last, document_id)${where}` });
    if (field.kind === 'date' || field.kind === 'number') {
      defs.push({ name: `${name}_desc`, table, definition: `btree (${scope}, ${column} desc nulls last, document_id)${where}` });
    }
    // The workspace as a GIN entry too (btree_gin), so a search reads the trigram postings of
    // one workspace rather than every workspace's matches.
    if (field.search) defs.push({ name: `${name}_trgm`, table, definition: `gin (workspace_id, ${column} gin_trgm_ops)${where}` });
  }
  return defs;
}
