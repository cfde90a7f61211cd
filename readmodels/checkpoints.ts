/**
 * The projections' checkpoints (projection_checkpoints) and the transaction-scoped advisory lock
 * a batch holds: the statements of the projection runner (projections/runner.ts).
 */
import type { Knex } from 'knex';
import type { Position } from '../platform/eventstore/port.js';
import { writeConditions, writeExpressions, type BatchWrite } from './batch-writes.js';
import { prepared } from './prepared.js';

const positionOf = (row: { commit_position: string; prepare_position: string }): Position => ({ commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) });

export async function ensureCheckpoint(knex: Knex, checkpoint: string, version: number): Promise<void> {
  await knex('projection_checkpoints').insert({ projection: checkpoint, version }).onConflict('projection').ignore();
}

export async function readCheckpoint(knex: Knex, checkpoint: string): Promise<Position | null> {
  const row = await knex('projection_checkpoints').where({ projection: checkpoint }).first();
  return row ? positionOf(row) : null;
}

/** The version of the tables a checkpoint was written for (null: no checkpoint). */
export async function checkpointVersion(knex: Knex, checkpoint: string): Promise<number | null> {
  const row = await knex('projection_checkpoints').where({ projection: checkpoint }).first('version');
  return row ? Number(row.version) : null;
}

/** Takes the transaction's advisory lock named `lock` if it is free. */
export async function tryTransactionLock(trx: Knex.Transaction, lock: string): Promise<boolean> {
  const { rows } = await trx.raw('select pg_try_advisory_xact_lock(hashtext(?)) as ok', [lock]);
  return rows[0].ok === true;
}

/** Points the rest of the transaction at `schema` (a rebuild's fresh tables) before public. */
export async function useSchema(trx: Knex.Transaction, schema: string): Promise<void> {
  await trx.raw(`set local search_path to "${schema}", public`);
}

/**
 * The lock and the checkpoint in one round trip (a batch that moves its checkpoint last). The
 * statement's snapshot may predate the commit of the transaction that held the lock just before:
 * advanceCheckpoint's compare-and-set then fails, so a stale read never applies a batch twice.
 */
export async function lockAndReadCheckpoint(trx: Knex.Transaction, lock: string, checkpoint: string): Promise<{ locked: false } | { locked: true; stored: Position | null }> {
  const { rows } = await prepared(
    trx.raw(
      `select pg_try_advisory_xact_lock(hashtext(?)) as ok, c.commit_position, c.prepare_position
         from (select 1) as one left join projection_checkpoints c on c.projection = ?`,
      [lock, checkpoint],
    ),
  );
  const row = rows[0] as { ok: boolean; commit_position: string | null; prepare_position: string | null };
  if (!row.ok) return { locked: false };
  return { locked: true, stored: row.commit_position === null ? null : positionOf({ commit_position: row.commit_position, prepare_position: row.prepare_position! }) };
}

/**
 * The lock, and the checkpoint moved to `to` when it stands at or before `from` (the usual case:
 * the batch read on from where its runner's checkpoint stood), in one round trip. The update
 * re-checks the newest committed checkpoint however old the statement's snapshot is, so a batch
 * another runner applied meanwhile is never applied twice: `advanced` is then false, and the
 * caller reads the checkpoint afresh. Between a checkpoint before `from` and `from` the runner
 * read only events the projection ignores, so the batch applies all of its events. The row stays
 * locked until the batch ends; whoever else writes a checkpoint holds the projection's advisory
 * lock first (a rebuild's swap), so nobody waits for it.
 *
 * `writes`: the batch's own writes (readmodels/batch-writes.ts), made in the same statement only
 * when the checkpoint moved; the checkpoint moves only where the writes' conditions (`requires`)
 * hold, so a batch computed from remembered rows that are no longer stored is not applied
 * (`advanced` false, and the caller applies it by reading). Sent on `knex` outside a transaction, the statement is then the whole
 * batch: the lock, the checkpoint and the writes commit together or not at all.
 */
export async function lockAndAdvanceCheckpoint(
  trx: Knex | Knex.Transaction,
  lock: string,
  checkpoint: string,
  from: Position,
  to: Position,
  applied: number,
  writes: readonly BatchWrite[] = [],
): Promise<{ locked: boolean; advanced: boolean }> {
  const folded = writeExpressions(writes, 'u');
  const required = writeConditions(writes);
  const { rows } = await prepared(
    trx.raw(
      `with l as (select pg_try_advisory_xact_lock(hashtext(?)) as ok),
            u as (update projection_checkpoints c
                     set commit_position = ?, prepare_position = ?, events_applied = c.events_applied + ?, updated_at = now()
                    from l
                   where l.ok and c.projection = ? and (c.commit_position, c.prepare_position) <= (?::numeric, ?::numeric)${required.sql !== 'true' ? `
                     and ${required.sql}` : ''}
                  returning 1)${writes.length > 0 ? `,
${folded.sql}` : ''}
       select l.ok, exists (select 1 from u) as advanced from l`,
      [lock, to.commit.toString(), to.prepare.toString(), applied, checkpoint, from.commit.toString(), from.prepare.toString(), ...required.bindings, ...folded.bindings],
    ),
  );
  const row = rows[0] as { ok: boolean; advanced: boolean };
  return { locked: row.ok, advanced: row.ok && row.advanced };
}

/** Moves the checkpoint from `from` to `to` (compare-and-set); false when it no longer stood at `from`. */
export async function advanceCheckpoint(trx: Knex.Transaction, checkpoint: string, from: Position, to: Position, applied: number): Promise<boolean> {
  const updated = await prepared(
    trx('projection_checkpoints')
      .where({ projection: checkpoint, commit_position: from.commit.toString(), prepare_position: from.prepare.toString() })
      .update({
        commit_position: to.commit.toString(),
        prepare_position: to.prepare.toString(),
        events_applied: trx.raw('events_applied + ?', [applied]),
        updated_at: trx.fn.now(),
      }),
  );
  return updated === 1;
}
