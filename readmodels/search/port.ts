/**
 * The search-index port: where the invoice query (docs/api/invoice-query.md) finds documents. Two
 * adapters implement it — PostgreSQL (the embedded default: one jsonb row per document with
 * btree and pg_trgm indexes) and Elasticsearch (`SEARCH_ENGINE=elasticsearch`) — and both pass
 * one contract suite, so for the same writes and the same query they return the same
 * documents in the same order.
 *
 * The port speaks in resolved, already-validated terms: field paths come from the catalogue
 * in `domain/query/fields.ts`, values have the kind the catalogue gives them. Checking a
 * caller's query (unknown fields, wildcards, bad values) and shaping the returned documents
 * (columns, the fields API keys never see) happen before and after, not here.
 */
import type { Knex } from 'knex';
import type { BatchWrite } from '../batch-writes.js';
import type { QueryType } from '../../domain/query/fields.js';
import { withState, type IndexedState } from '../../domain/query/indexed-document.js';
import type { SearchQuery } from '../../domain/query/search-query.js';

// The query the port answers is the domain's (a checked invoice query); re-exported for the adapters.
export { MAX_RESULT_WINDOW, type SearchFilter, type SearchQuery, type SearchSort, type SearchTerm } from '../../domain/query/search-query.js';

/** One document as stored in the index. */
export interface IndexedDocument {
  readonly workspaceId: string;
  readonly environment: string;
  readonly type: QueryType;
  readonly documentId: string;
  /**
   * Grows with every change of this document (the revision of the document's own stream).
   * A write whose version is not above the stored one is ignored, so a replayed or late
   * write never overwrites a newer state (Elasticsearch: external versioning).
   */
  readonly version: bigint;
  /** The indexed document of docs/api/invoice-query.md, stored whole (unknown payload fields included). */
  readonly document: Readonly<Record<string, unknown>>;
}

/**
 * A document's new state alone (domain/query/indexed-document.ts `statePaths`: its statuses and
 * status history), versioned like a whole document: its body was indexed whole when it was
 * received and never changes, so a status change need not send or rewrite it.
 */
export interface IndexedStateChange {
  readonly workspaceId: string;
  readonly environment: string;
  readonly type: QueryType;
  readonly documentId: string;
  readonly version: bigint;
  readonly state: IndexedState;
}

/** What the search projection writes of a document: all of it, or its new state. */
export type IndexWrite = IndexedDocument | IndexedStateChange;

export const isStateChange = (w: IndexWrite): w is IndexedStateChange => 'state' in w;

/**
 * The newest write of each document of a batch (by workspace, environment, type and id; the
 * first of equal versions). A newer state change of a document written whole in the same batch
 * becomes the whole document with that state, so the body is not lost.
 */
export function newestPerDocument(writes: readonly IndexWrite[]): IndexWrite[] {
  const newest = new Map<string, IndexWrite>();
  for (const w of writes) {
    const key = `${w.workspaceId}\u0000${w.environment}\u0000${w.type}\u0000${w.documentId}`;
    const seen = newest.get(key);
    if (seen && seen.version >= w.version) continue;
    const whole = seen && !isStateChange(seen) && isStateChange(w) ? { ...seen, version: w.version, document: withState(w.type, seen.document, w.state) } : w;
    newest.set(key, whole);
  }
  return [...newest.values()];
}

export interface SearchResult {
  /** Exact number of matching documents. */
  readonly total: number;
  /** The stored documents of the page, in order. */
  readonly documents: readonly Readonly<Record<string, unknown>>[];
}


export interface WriteOptions {
  /**
   * Whether the documents must be searchable when the write resolves (default true). False
   * while the search projection catches up on a backlog nobody waits for: an engine that makes
   * writes searchable by a refresh (Elasticsearch) then skips the refresh each write would
   * cost, and the documents become searchable at its scheduled refresh (within a second, or at
   * the next search of an idle index) or with the next write that refreshes.
   */
  readonly searchableAtOnce?: boolean;
}

export interface SearchIndex {
  readonly engine: 'postgres' | 'elasticsearch';
  /**
   * Writes a batch (one statement or one bulk request for the whole batch), idempotently and
   * ordered by `version`: whole documents, and state changes of documents written whole before.
   * Called by the search projection inside its runner transaction: the PostgreSQL adapter
   * writes through `trx` (unqualified table names, so a rebuild's search_path redirects it);
   * the Elasticsearch adapter ignores `trx` and resolves only once the engine has acknowledged
   * every write, so the checkpoint commits after it.
   */
  write(trx: Knex.Transaction, writes: readonly IndexWrite[], options?: WriteOptions): Promise<void>;
  /**
   * An engine inside PostgreSQL (the PostgreSQL adapter): `write`'s statements as a batch's writes
   * (readmodels/batch-writes.ts), so the search projection can send them with its checkpoint.
   */
  batchWrites?(writes: readonly IndexWrite[]): readonly BatchWrite[];
  search(query: SearchQuery): Promise<SearchResult>;
  /**
   * Rebuild hook of engines whose index lives outside PostgreSQL (Elasticsearch): opens fresh,
   * empty indices beside the live ones and answers an index writing into them; the live index
   * keeps answering searches until `complete()` swaps the fresh indices in, in one step (and
   * drops the old ones). The PostgreSQL adapter has none: the generic rebuild's fresh tables
   * and swap cover it.
   */
  beginRebuild?(): Promise<SearchRebuild>;
}

export interface SearchRebuild {
  /** Writes into the fresh indices; its `search` reads them (for checks before the swap). */
  readonly index: SearchIndex;
  /** Makes the fresh indices the live ones, atomically, and removes the replaced ones. */
  complete(): Promise<void>;
}
