/**
 * The Elasticsearch adapter of the search-index port (`SEARCH_ENGINE=elasticsearch`).
 *
 * - One index per document type behind an alias `<prefix>-search-<type>`; a rebuild writes
 *   fresh indices and swaps the aliases in one `_aliases` request.
 * - Explicit mappings built from the field catalogue, `dynamic: false`. An Elasticsearch
 *   document is `{scope, document, <catalogued fields>}`: `scope` holds workspace, environment
 *   and documentId as exact keywords; `document` is the stored document, an object with
 *   `enabled: false` (kept in `_source` only, so caller payload fields never reach the
 *   mapping); the catalogued fields are copied beside it at their own paths, holding only the
 *   values ./fields.ts says are indexable (a malformed value in a rejected document is left
 *   out instead of failing the write, and both adapters agree on what counts).
 * - Keyword fields use the built-in `lowercase` normalizer; searches are `wildcard` queries
 *   `*term*` (escaped) with `case_insensitive: true`, which the integration-test
 *   distribution supports (no ngram tokenizer, no `wildcard` field type needed).
 * - Writes go through the client's bulk helper with external versioning (`version`): a write
 *   whose version is not above the stored one is refused by Elasticsearch as a version
 *   conflict, which is expected and ignored; any other failed item fails the batch. A batch
 *   whose body exceeds `bulk.maxBytes` (5 MB) is cut into several requests by the helper, at
 *   most `bulk.concurrency` (2) in flight; the write resolves only once every one is
 *   acknowledged, so the projection's checkpoint still commits after the whole batch is in the
 *   index. The answers are cut down (`filter_path`) to each item's id, status and error.
 * - Read-your-writes: a batch's write is answered only once its documents are searchable: a
 *   single bulk request is sent with `refresh: true`; several are sent without and followed by
 *   one refresh of the indices they wrote (`wait_for` would wait for the next scheduled
 *   refresh, up to a second per batch, which caps a serial projection at batch-size documents
 *   per second). A write told the documents need not be searchable at once (the projection
 *   catching up on a backlog nobody waits for) skips the refresh: a refresh per batch leaves
 *   a small segment each, and refreshing and merging those took most of the engine's time in
 *   a catch-up; the scheduled refresh (or the next search of an idle index, or the next
 *   refreshing write) makes them searchable. Rebuild writes skip the refresh (their indices
 *   have `refresh_interval: -1`); `complete()` restores the interval and refreshes once
 *   before the swap.
 * - Every query is built by `buildSearchRequest`, which puts the workspace and environment in
 *   the filter clauses.
 */
import { Client, errors, type estypes } from '@elastic/elasticsearch';
import type { Knex } from 'knex';
import { QUERY_TYPES, queryFields, issueDateField, type QueryType } from '../../domain/query/fields.js';
import { indexedValue, MAX_KEYWORD_BYTES, resolvedFields, resolveField, type ResolvedField } from './fields.js';
import { withState } from '../../domain/query/indexed-document.js';
import {
  isStateChange,
  MAX_RESULT_WINDOW,
  newestPerDocument,
  type IndexedDocument,
  type IndexedStateChange,
  type IndexWrite,
  type SearchFilter,
  type SearchIndex,
  type SearchQuery,
  type SearchRebuild,
  type SearchResult,
  type WriteOptions,
} from './port.js';

export const SCOPE_WORKSPACE = 'scope.workspaceId';
export const SCOPE_ENVIRONMENT = 'scope.environment';
export const SCOPE_DOCUMENT_ID = 'scope.documentId';

export const aliasName = (prefix: string, type: QueryType) => `${prefix}-search-${type}`;

const keyword = { type: 'keyword' } as const;

function fieldMapping(field: ResolvedField): estypes.MappingProperty {
  switch (field.kind) {
    case 'date':
      return { type: 'date', format: 'strict_date' };
    case 'number':
      return { type: 'double' };
    default:
      // ignore_above (in characters) is a backstop: values over MAX_KEYWORD_BYTES bytes are never sent.
      return { type: 'keyword', normalizer: 'lowercase', ignore_above: MAX_KEYWORD_BYTES };
  }
}

/** The mapping of a type's index, from the catalogue. */
export function mappingFor(type: QueryType): estypes.MappingTypeMapping {
  const properties: Record<string, estypes.MappingProperty> = {
    scope: { type: 'object', properties: { workspaceId: keyword, environment: keyword, documentId: keyword } },
    document: { type: 'object', enabled: false },
  };
  for (const f of queryFields(type)) {
    const field = resolveField(type, f.path);
    let at = properties;
    for (const s of field.segments.slice(0, -1)) {
      const next = (at[s] ??= { type: 'object', properties: {} }) as estypes.MappingObjectProperty;
      at = next.properties!;
    }
    at[field.segments[field.segments.length - 1]!] = fieldMapping(field);
  }
  return { dynamic: false, properties };
}

const INDEX_SETTINGS: estypes.IndicesIndexSettings = { number_of_shards: 1, auto_expand_replicas: '0-1' };

/** The Elasticsearch document for an indexed document. */
export function toElasticDocument(d: IndexedDocument): Record<string, unknown> {
  const body: Record<string, unknown> = {
    scope: { workspaceId: d.workspaceId, environment: d.environment, documentId: d.documentId },
    document: d.document,
  };
  for (const field of resolvedFields(d.type)) {
    const value = indexedValue(field, d.document);
    if (value === undefined) continue;
    let at = body;
    for (const s of field.segments.slice(0, -1)) at = (at[s] ??= {}) as Record<string, unknown>;
    at[field.segments[field.segments.length - 1]!] = value;
  }
  return body;
}

export const elasticId = (d: Pick<IndexedDocument, 'workspaceId' | 'environment' | 'documentId'>) =>
  [d.workspaceId, d.environment, d.documentId].map(encodeURIComponent).join(':');

/** Escapes the wildcard query's special characters so the term matches literally. */
export function escapeWildcard(term: string): string {
  return term.replace(/[\\*?]/g, (c) => `\\${c}`);
}

function filterClause(type: QueryType, filter: SearchFilter): estypes.QueryDslQueryContainer | null {
  const field = resolveField(type, filter.field);
  if ('values' in filter) {
    if (filter.values.length === 0) return null;
    const values = field.kind === 'number' ? filter.values.map(Number) : filter.values.map(String);
    return { terms: { [field.path]: values } };
  }
  if ('range' in filter) {
    if (field.multi) throw new Error(`range filters are not supported on the multi-valued field ${field.path}`);
    const { gte, lte } = filter.range;
    if (gte === undefined && lte === undefined) return { exists: { field: field.path } };
    const range: estypes.QueryDslRangeQuery = {};
    if (gte !== undefined) (range as Record<string, unknown>).gte = field.kind === 'number' ? Number(gte) : String(gte);
    if (lte !== undefined) (range as Record<string, unknown>).lte = field.kind === 'number' ? Number(lte) : String(lte);
    if (field.kind === 'date') (range as Record<string, unknown>).format = 'strict_date';
    return { range: { [field.path]: range } };
  }
  return filter.exists ? { exists: { field: field.path } } : { bool: { must_not: [{ exists: { field: field.path } }] } };
}

/**
 * The one place search requests are built: workspace and environment are always the first
 * filter clauses, whatever the query.
 */
export function buildSearchRequest(index: string, query: SearchQuery): estypes.SearchRequest {
  if (query.offset < 0 || query.limit < 0 || query.offset + query.limit > MAX_RESULT_WINDOW) {
    throw new RangeError(`offset + limit must be within 0..${MAX_RESULT_WINDOW}`);
  }
  const filter: estypes.QueryDslQueryContainer[] = [
    { term: { [SCOPE_WORKSPACE]: query.workspaceId } },
    { term: { [SCOPE_ENVIRONMENT]: query.environment } },
  ];
  for (const f of query.filters) {
    const clause = filterClause(query.type, f);
    if (clause) filter.push(clause);
  }
  for (const s of query.searches) {
    const field = resolveField(query.type, s.field);
    if (!field.search) throw new Error(`${field.path} cannot be searched`);
    filter.push({ wildcard: { [field.path]: { value: `*${escapeWildcard(s.term)}*`, case_insensitive: true } } });
  }
  const sort = query.sort ?? { field: issueDateField(query.type), order: 'desc' as const };
  const sortField = resolveField(query.type, sort.field);
  if (!sortField.sort) throw new Error(`${sortField.path} cannot be sorted on`);
  return {
    index,
    from: query.offset,
    size: query.limit,
    track_total_hits: true,
    query: { bool: { filter } },
    sort: [{ [sortField.path]: { order: sort.order === 'asc' ? 'asc' : 'desc', missing: '_last' } }, { [SCOPE_DOCUMENT_ID]: { order: 'asc' } }],
  };
}

/**
 * What a bulk answer is cut down to: whether any item failed and, of the items, only their
 * `_id`, `status` and `error` (the engine otherwise answers each document's index, version,
 * shard counts and sequence numbers, which are never read).
 */
const BULK_RESPONSE_FILTER = ['errors', 'items.*._id', 'items.*.status', 'items.*.error'];

export class ElasticsearchWriteError extends Error {
  override readonly name = 'ElasticsearchWriteError';
}

export interface BulkOptions {
  /** Largest bulk request body; a bigger batch is split into several requests (default 5 MB). */
  maxBytes: number;
  /** Bulk requests of one batch in flight at once (default 2). */
  concurrency: number;
}

export const DEFAULT_BULK: BulkOptions = { maxBytes: 5 * 1024 * 1024, concurrency: 2 };

export interface ElasticsearchSearchIndexOptions {
  /** Index and alias name prefix (ELASTICSEARCH_INDEX_PREFIX). */
  prefix: string;
  /** How a batch is cut into bulk requests (default DEFAULT_BULK). */
  bulk?: Partial<BulkOptions>;
}

/** Writes into and searches a set of indices (or aliases), one per type. */
class IndexSet implements SearchIndex {
  readonly engine = 'elasticsearch' as const;

  constructor(
    private readonly client: Client,
    private readonly names: Readonly<Record<QueryType, string>>,
    private readonly ready: () => Promise<void>,
    private readonly refresh: boolean,
    private readonly bulk: BulkOptions,
  ) {}

  async write(_trx: Knex.Transaction, writes: readonly IndexWrite[], options: WriteOptions = {}): Promise<void> {
    const newest = newestPerDocument(writes);
    const refresh = this.refresh && (options.searchableAtOnce ?? true);
    if (newest.length === 0) return;
    await this.ready();
    const changes = newest.filter(isStateChange);
    const latest = [...newest.filter((w): w is IndexedDocument => !isStateChange(w)), ...(await this.withBodies(changes))];
    if (latest.length === 0) return; // state changes of documents the index no longer holds only
    for (const d of latest) {
      if (d.version < 0n || d.version > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`version ${d.version} of ${d.documentId} is out of range`);
    }
    // The client's bulk helper cuts the batch into requests of `bulk.maxBytes` and keeps at most
    // `bulk.concurrency` in flight, retrying an item the engine refused for load (429). The
    // documents go to it serialized, so the batch's size is known first: one request refreshes
    // its own shards (`refresh: true`), several are followed by one refresh of their indices.
    const touched = new Set<string>();
    const actions = new Map<string, { index: estypes.BulkIndexOperation }>();
    let bytes = 0;
    for (const d of latest) {
      const index = this.names[d.type];
      touched.add(index);
      const source = JSON.stringify(toElasticDocument(d));
      const action = { index: { _index: index, _id: elasticId(d), version: Number(d.version), version_type: 'external' as const } };
      actions.set(source, action);
      // The request's bytes as the helper counts them: the action and the source line.
      bytes += Buffer.byteLength(source) + Buffer.byteLength(JSON.stringify(action));
    }
    const single = bytes < this.bulk.maxBytes;
    const failures: { id: string; type: string; reason: string }[] = [];
    await this.client.helpers.bulk<string>({
      datasource: [...actions.keys()],
      onDocument: (source) => actions.get(source)!,
      flushBytes: this.bulk.maxBytes,
      concurrency: this.bulk.concurrency,
      wait: 500,
      refresh: single && refresh,
      filter_path: BULK_RESPONSE_FILTER,
      onDrop: (dropped) => {
        // A write not newer than the stored version is expected (a replay, a late write).
        if (dropped.status === 409 && dropped.error?.type === 'version_conflict_engine_exception') return;
        const id = (dropped.operation as { index?: { _id?: string } }).index?._id ?? '?';
        failures.push({ id, type: dropped.error?.type ?? `status ${dropped.status}`, reason: dropped.error?.reason ?? '' });
      },
    });
    if (failures.length > 0) {
      const first = failures[0]!;
      throw new ElasticsearchWriteError(`${failures.length} of ${latest.length} index writes failed; first: ${first.id}: ${first.type}: ${first.reason}`);
    }
    if (!single && refresh) await this.client.indices.refresh({ index: [...touched] });
  }

  /**
   * State changes as whole documents: each with the body the index holds (one multi-get of the
   * batch's documents, in real time, so a write not yet refreshed is seen). A document the index
   * no longer holds (its indices were deleted since it was written) is skipped: only a rebuild
   * brings back what was lost, and the projection goes on indexing the others meanwhile.
   */
  private async withBodies(changes: readonly IndexedStateChange[]): Promise<IndexedDocument[]> {
    if (changes.length === 0) return [];
    const res = await this.client.mget<{ document: Record<string, unknown> }>({
      docs: changes.map((c) => ({ _index: this.names[c.type], _id: elasticId(c), _source: ['document'] })),
    });
    return changes.flatMap((c, i) => {
      const got = res.docs[i]!;
      if (!('found' in got) || !got.found || !got._source) return [];
      const { state, ...key } = c;
      return [{ ...key, document: withState(c.type, got._source.document, state) }];
    });
  }

  async search(query: SearchQuery): Promise<SearchResult> {
    await this.ready();
    const res = await this.client.search<{ document: Record<string, unknown> }>(buildSearchRequest(this.names[query.type], query));
    const total = res.hits.total;
    return {
      total: typeof total === 'number' ? total : (total?.value ?? 0),
      documents: res.hits.hits.map((h) => h._source!.document),
    };
  }
}

export class ElasticsearchSearchIndex implements SearchIndex {
  readonly engine = 'elasticsearch' as const;
  readonly aliases: Readonly<Record<QueryType, string>>;
  private readonly live: IndexSet;
  private readonly bulk: BulkOptions;
  private ensured: Promise<void> | null = null;

  constructor(
    readonly client: Client,
    private readonly options: ElasticsearchSearchIndexOptions,
  ) {
    this.aliases = Object.fromEntries(QUERY_TYPES.map((t) => [t, aliasName(options.prefix, t)])) as Record<QueryType, string>;
    this.bulk = { ...DEFAULT_BULK, ...options.bulk };
    this.live = new IndexSet(client, this.aliases, () => this.ensureIndices(), true, this.bulk);
  }

  static connect(url: string, options: ElasticsearchSearchIndexOptions): ElasticsearchSearchIndex {
    return new ElasticsearchSearchIndex(new Client({ node: url, requestTimeout: 30_000, maxRetries: 2 }), options);
  }

  write(trx: Knex.Transaction, documents: readonly IndexedDocument[], options?: WriteOptions): Promise<void> {
    return this.live.write(trx, documents, options);
  }

  search(query: SearchQuery): Promise<SearchResult> {
    return this.live.search(query);
  }

  /** Creates each type's first index behind its alias when the alias does not exist yet; adds newly catalogued fields to the mappings. */
  ensureIndices(): Promise<void> {
    this.ensured ??= this.createMissing().catch((err) => {
      this.ensured = null;
      throw err;
    });
    return this.ensured;
  }

  private async createMissing(): Promise<void> {
    for (const type of QUERY_TYPES) {
      const alias = this.aliases[type];
      if (await this.client.indices.existsAlias({ name: alias })) {
        // Newly catalogued fields are added (documents indexed before need a rebuild to carry
        // them); a field whose kind changed cannot be remapped in place: the rebuild's fresh
        // indices have the new mapping, so that is not an error here.
        await this.client.indices.putMapping({ index: alias, ...mappingFor(type) }).catch((err: unknown) => {
          if (!(err instanceof errors.ResponseError && err.statusCode === 400)) throw err;
        });
        continue;
      }
      try {
        await this.client.indices.create({
          index: `${alias}-initial`,
          settings: INDEX_SETTINGS,
          mappings: mappingFor(type),
          aliases: { [alias]: {} },
        });
      } catch (err) {
        // Another process created it first.
        if (!(err instanceof errors.ResponseError && err.body?.error?.type === 'resource_already_exists_exception')) throw err;
      }
    }
    await this.client.cluster.health({ index: Object.values(this.aliases), wait_for_status: 'yellow', timeout: '30s' });
  }

  async beginRebuild(): Promise<SearchRebuild> {
    await this.ensureIndices();
    const live = await this.liveIndices();
    // Fresh indices of an earlier rebuild that never completed are dropped.
    const stale = await this.client.indices.get({ index: `${this.options.prefix}-search-*`, expand_wildcards: ['open', 'closed'] });
    const orphans = Object.keys(stale).filter((name) => !Object.values(live).flat().includes(name));
    if (orphans.length > 0) await this.client.indices.delete({ index: orphans });

    const stamp = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
    const fresh = Object.fromEntries(QUERY_TYPES.map((t) => [t, `${this.aliases[t]}-${stamp}`])) as Record<QueryType, string>;
    for (const type of QUERY_TYPES) {
      await this.client.indices.create({
        index: fresh[type],
        settings: { ...INDEX_SETTINGS, refresh_interval: '-1' },
        mappings: mappingFor(type),
      });
    }
    await this.client.cluster.health({ index: Object.values(fresh), wait_for_status: 'yellow', timeout: '30s' });
    const index = new IndexSet(this.client, fresh, async () => {}, false, this.bulk);
    // Its own searches see its writes: refresh before each (a rebuild searches rarely).
    const search = index.search.bind(index);
    index.search = async (q) => {
      await this.client.indices.refresh({ index: fresh[q.type] });
      return search(q);
    };
    return {
      index,
      complete: async () => {
        const names = Object.values(fresh);
        await this.client.indices.putSettings({ index: names, settings: { refresh_interval: null as unknown as string } });
        await this.client.indices.refresh({ index: names });
        const current = await this.liveIndices();
        const actions: estypes.IndicesUpdateAliasesAction[] = [];
        for (const type of QUERY_TYPES) {
          for (const old of current[type]) actions.push({ remove: { index: old, alias: this.aliases[type] } });
          actions.push({ add: { index: fresh[type], alias: this.aliases[type] } });
        }
        await this.client.indices.updateAliases({ actions });
        const replaced = Object.values(current).flat();
        if (replaced.length > 0) await this.client.indices.delete({ index: replaced, ignore_unavailable: true });
      },
    };
  }

  /** The concrete indices behind each alias. */
  async liveIndices(): Promise<Record<QueryType, string[]>> {
    const res = await this.client.indices.getAlias({ name: Object.values(this.aliases) });
    const out = Object.fromEntries(QUERY_TYPES.map((t) => [t, [] as string[]])) as Record<QueryType, string[]>;
    for (const [index, { aliases }] of Object.entries(res)) {
      for (const type of QUERY_TYPES) if (aliases[this.aliases[type]]) out[type].push(index);
    }
    return out;
  }

  /** Deletes every index of this prefix (tests, benchmarks). */
  async dropAll(): Promise<void> {
    // Deleting by wildcard is refused by default (action.destructive_requires_name): name them.
    const found = await this.client.indices.get({ index: `${this.options.prefix}-search-*`, expand_wildcards: ['open', 'closed'] });
    if (Object.keys(found).length > 0) await this.client.indices.delete({ index: Object.keys(found) });
    this.ensured = null;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
