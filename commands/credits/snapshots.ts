/** The credits engine with its snapshots kept in PostgreSQL (readmodels/credit-snapshots.ts). */
import type { Knex } from 'knex';
import { loadCreditSnapshot, saveCreditSnapshot } from '../../readmodels/credit-snapshots.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import { creditsEngineFor, type CreditsEngine, type SnapshotStore } from './engine.js';

export function knexSnapshotStore(knex: Knex): SnapshotStore {
  return {
    load: (streamId) => loadCreditSnapshot(knex, streamId) as ReturnType<SnapshotStore['load']>,
    save: (streamId, revision, version, state) => saveCreditSnapshot(knex, streamId, revision, version, state),
  };
}

/** The process's credits engine for this event store, with snapshots in this database. */
export function creditsEngine(deps: { store: EventStore; knex?: Knex | null }): CreditsEngine {
  return creditsEngineFor(deps.store, { snapshots: deps.knex ? knexSnapshotStore(deps.knex) : null });
}
