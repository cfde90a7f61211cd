/**
 * The search projection: feeds the search index (readmodels/search/port.ts) from the event
 * log. Each kind of document is one source module that turns its events into indexed
 * documents: sales documents and receipts (projections/search-sales.ts) and received purchase
 * invoices (projections/search-purchases.ts).
 *
 * A batch of events becomes one write to the index (one statement or one bulk request, or a
 * few side by side for a large batch), beside each source's one statement per facts table. With
 * the index in PostgreSQL, a batch whose facts the sources remember from earlier batches
 * (search-source.ts FactsMemo) reads nothing: its facts writes and index writes go with the
 * checkpoint as one statement (Projection.writes), applied only if the stored facts are still the
 * remembered ones (else the runner applies the batch by reading them).
 * Within a batch only the newest state of each document is written: the whole document when it
 * was received in the batch, else its new state alone (its body, indexed when it was received,
 * never changes). Index writes are versioned by the document's stream revision, so a replay or a
 * late write never overwrites a newer state; the runner commits the checkpoint in the same
 * transaction, after the index acknowledged the batch.
 */
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { BatchWrite } from '../readmodels/batch-writes.js';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { newestPerDocument, type IndexWrite, type SearchIndex } from '../readmodels/search/port.js';
import { defineProjection, type BatchContext, type BatchLimits, type Projection } from './projection.js';
import { purchasesSearchSource } from './search-purchases.js';
import { salesSearchSource } from './search-sales.js';
import type { RememberedFacts, SearchSource } from './search-source.js';

export type { SearchSource } from './search-source.js';

export const SEARCH_PROJECTION = 'search';

/**
 * The search projection's smallest batch while it catches up into Elasticsearch (the runner's
 * own limits apply when larger). Each batch costs the engine a refresh (the documents become
 * searchable before the checkpoint commits) and leaves a segment to merge: with the runner's 500
 * events (about 180 documents) that fixed cost outweighs the documents'. A backlog is read up to
 * 5,000 events or 8 MB a batch; a live projection reads whatever is new. The PostgreSQL engine
 * has no such fixed cost and keeps the runner's batches: larger ones gained it nothing and cost
 * the process about 90 MB more at its peak per 6 MB of events.
 */
export const SEARCH_BATCH: BatchLimits = { size: 5000, bytes: 8 * 1024 * 1024 };

/** The search projection's own batch limits on an engine (none: the runner's). */
export const searchBatchFor = (engine: SearchIndex['engine']): BatchLimits | undefined => (engine === 'elasticsearch' ? SEARCH_BATCH : undefined);

/**
 * How many documents' facts the search projection remembers (FactsMemo; a few hundred bytes
 * each): those in flight at a few thousand documents a minute. A document it no longer remembers
 * costs its next batch a read of the facts.
 */
export const FACTS_MEMO_DOCUMENTS = 20_000;

export const defaultSearchSources = (): SearchSource[] => [salesSearchSource, purchasesSearchSource];

export function searchProjection(
  index: SearchIndex,
  options: { sources?: readonly SearchSource[]; indexTables?: readonly string[]; batch?: BatchLimits } = {},
): Projection {
  const sources = options.sources ?? defaultSearchSources();
  // An index inside PostgreSQL: a batch whose facts the sources remember goes as one statement with its checkpoint.
  const batchWrites = index.batchWrites?.bind(index);
  const memo = batchWrites ? new LRUCache<string, RememberedFacts>({ max: FACTS_MEMO_DOCUMENTS }) : undefined;
  const writes = (events: readonly RecordedEvent[]): BatchWrite[] | null => {
    if (!batchWrites || !memo) return null;
    const changed: IndexWrite[] = [];
    const result: BatchWrite[] = [];
    for (const source of sources) {
      const mine = events.filter((e) => source.eventTypes.has(e.type));
      if (mine.length === 0) continue;
      const planned = source.plan?.(mine, memo);
      if (!planned) return null;
      changed.push(...planned.documents);
      result.push(...planned.writes);
    }
    result.push(...batchWrites(newestPerDocument(changed)));
    return result;
  };
  const applyMany = async (trx: Knex.Transaction, events: readonly RecordedEvent[], context?: BatchContext) => {
    const changed: IndexWrite[] = [];
    const writes: Promise<unknown>[] = [];
    for (const source of sources) {
      const mine = events.filter((e) => source.eventTypes.has(e.type));
      if (mine.length === 0) continue;
      const { documents, written } = await source.apply(trx, mine, memo);
      changed.push(...documents);
      writes.push(written);
    }
    const documents = newestPerDocument(changed);
    // The facts tables and the index are written side by side (an index outside PostgreSQL
    // works meanwhile); the batch, and so its checkpoint, completes only once both are done.
    // A backlog nobody waits for need not be searchable batch by batch (WriteOptions).
    if (documents.length > 0) writes.push(index.write(trx, documents, { searchableAtOnce: context?.awaited ?? true }));
    const settled = await Promise.allSettled(writes);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  return defineProjection({
    name: SEARCH_PROJECTION,
    // 2: the facts of documents in flight keep no submission content; states apart (migration 0072).
    // 3: purchases filed under the receiving company's country (migration 0080).
    // 4: the values are the service's, in plain columns; body and state as text (migration 0090).
    version: 3,
    batch: options.batch ?? searchBatchFor(index.engine),
    // The sources' facts, and the index's own tables when it keeps them in PostgreSQL.
    tables: [...sources.flatMap((s) => s.tables), ...(options.indexTables ?? [])],
    eventTypes: new Set(sources.flatMap((s) => [...s.eventTypes])),
    apply: (trx, event) => applyMany(trx, [event]),
    applyMany,
    ...(batchWrites ? { writes } : {}),
    // An engine outside PostgreSQL (Elasticsearch) rebuilds into fresh indices, swapped in with
    // the facts tables. Fresh indices of a rebuild that failed are dropped by the next rebuild.
    ...(index.beginRebuild
      ? {
          async beginRebuild() {
            const rebuild = await index.beginRebuild!();
            return { projection: searchProjection(rebuild.index, options), swap: () => rebuild.complete(), abandon: async () => {} };
          },
        }
      : {}),
  });
}
