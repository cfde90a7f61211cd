/**
 * Snapshots of the credits aggregate in PostgreSQL (table credit_snapshots): the folded state
 * at a revision, so a process that has not seen a workspace yet reads only the events after it.
 * A cache, never a source of truth: a newer snapshot replaces an older one, a missing or
 * outdated one only means reading more events.
 */
import type { Knex } from 'knex';
import type { EventStore } from '../eventstore/port.js';
import { creditsEngineFor, type CreditsEngine, type SnapshotStore } from './engine.js';

export function knexSnapshotStore(knex: Knex): SnapshotStore {
  return {
    async load(streamId) {
      const row = await knex('credit_snapshots').where({ stream_id: streamId }).first('revision', 'version', 'state');
      return row ? { revision: BigInt(row.revision), version: row.version, state: row.state } : null;
    },
    async save(streamId, revision, version, state) {
      await knex.raw(
        `insert into credit_snapshots (stream_id, revision, version, state, saved_at) values (?, ?, ?, ?::jsonb, now())
         on conflict (stream_id) do update set revision = excluded.revision, version = excluded.version, state = excluded.state, saved_at = now()
         where credit_snapshots.revision < excluded.revision or credit_snapshots.version <> excluded.version`,
        [streamId, revision.toString(), version, JSON.stringify(state)],
      );
    },
  };
}

/** The process's credits engine for this event store, with snapshots in this database. */
export function creditsEngine(deps: { store: EventStore; knex?: Knex | null }): CreditsEngine {
  return creditsEngineFor(deps.store, { snapshots: deps.knex ? knexSnapshotStore(deps.knex) : null });
}
