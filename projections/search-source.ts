/** A kind of document the search projection indexes (projections/search.ts). */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
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
  apply(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<SourceChanges>;
}

export interface SourceChanges {
  readonly documents: IndexWrite[];
  readonly written: Promise<unknown>;
}
