/** A kind of document the search projection indexes (projections/search.ts). */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import type { BatchWrite } from '../readmodels/batch-writes.js';
import type { IndexWrite } from '../readmodels/search/port.js';

export interface SearchSource {
  /** Names the source in errors. */
  readonly name: string;
  /** The event types it reads. */
  readonly eventTypes: ReadonlySet<string>;
  /** Tables only this source writes (created by a migration; rebuilt with the projection). */
  readonly tables: readonly string[];
  /**
   * Applies a batch of its events (in log order) to its facts with one statement per table,
   * and returns the index writes they make (whole documents or state changes; any order, one
   * or more per document) as
   * soon as they are known, with `written`: the facts' write, still running in `trx`, which
   * the projection awaits beside the index write (before the checkpoint commits).
   */
  apply(trx: Knex.Transaction, events: readonly RecordedEvent[], memo?: FactsMemo): Promise<SourceChanges>;
  /**
   * The same batch's index writes and facts writes without reading the facts, from those `memo`
   * remembers, or null when it remembers too little. The writes carry the condition that the
   * stored facts are the remembered ones (BatchWrite.requires): the batch is applied only then.
   */
  plan?(events: readonly RecordedEvent[], memo: FactsMemo): PlannedChanges | null;
}

/**
 * What a source remembers of its stored facts across batches, by document id: the facts and the
 * revision they are at as the source last wrote or read them, or no row (both null). A pure memo
 * of the document's events up to that revision; bounded (least recently used dropped); used only
 * under the condition that the stored row is still at that revision, so it never serves stale
 * facts. Kept per projection instance.
 */
export interface FactsMemo {
  get(documentId: string): RememberedFacts | undefined;
  set(documentId: string, facts: RememberedFacts): unknown;
}

export interface RememberedFacts {
  readonly revision: bigint | null;
  readonly facts: unknown;
}

export interface PlannedChanges {
  readonly documents: IndexWrite[];
  /** The facts writes and the condition they were planned under (at least one write). */
  readonly writes: BatchWrite[];
}

export interface SourceChanges {
  readonly documents: IndexWrite[];
  readonly written: Promise<unknown>;
}
