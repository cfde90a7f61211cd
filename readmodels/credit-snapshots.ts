/**
 * Snapshots of the credits aggregate in PostgreSQL (table credit_snapshots): the folded state
 * at a revision, so a process that has not seen a workspace yet reads only the events after it.
 * A cache, never a source of truth: a newer snapshot replaces an older one, a missing or
 * outdated one only means reading more events.
 */
import type { Knex } from 'knex';

export interface CreditSnapshotRow {
  revision: bigint;
  version: number;
  state: unknown;
}

export async function loadCreditSnapshot(knex: Knex, streamId: string): Promise<CreditSnapshotRow | null> {
  const row = await knex('credit_snapshots').where({ stream_id: streamId }).first('revision', 'version', 'state');
  return row ? { revision: BigInt(row.revision), version: row.version, state: row.state } : null;
}

export async function saveCreditSnapshot(knex: Knex, streamId: string, revision: bigint, version: number, state: unknown): Promise<void> {
  await knex.raw(
    `insert into credit_snapshots (stream_id, revision, version, state, saved_at) values (?, ?, ?, ?::jsonb, now())
     on conflict (stream_id) do update set revision = excluded.revision, version = excluded.version, state = excluded.state, saved_at = now()
     where credit_snapshots.revision < excluded.revision or credit_snapshots.version <> excluded.version`,
    [streamId, revision.toString(), version, JSON.stringify(state)],
  );
}
