/**
 * A projection batch's writes as data-modifying statements, each reading the batch's rows from one
 * JSON value. They go to PostgreSQL as one statement (a common table expression each), or folded
 * by the projection runner into the statement that takes the projection's lock and moves its
 * checkpoint (readmodels/checkpoints.ts): a batch of a projection whose writes need no reads then
 * costs one statement, with no explicit transaction around it (a statement is a transaction of its
 * own, committed durably like any other).
 *
 * A write's statement is an insert, update or delete without a WITH of its own (PostgreSQL allows
 * data-modifying statements in WITH only at the top level) and without RETURNING. Its rows are
 * null when the batch is not to be applied (the checkpoint did not move): reading them through
 * `json(b)_to_recordset` then yields no row, so it changes nothing.
 *
 * A write computed from what the projection remembers of the stored rows rather than from a read
 * of them carries the condition under which it is right (`requires`: the stored rows are as
 * remembered). Folded with the checkpoint, the checkpoint moves, and so the batch is applied,
 * only if every condition holds in the statement's snapshot; otherwise nothing changes and the
 * runner applies the batch by reading (Projection.applyMany).
 */
import type { Knex } from 'knex';
import { prepared } from './prepared.js';

export interface BatchWrite {
  /** The rows the statement writes, as JSON text. */
  readonly rows: string;
  /** How the statement reads them. */
  readonly rowsType: 'json' | 'jsonb';
  /** The statement, reading its rows from the SQL expression `rows` (of type rowsType, or null). */
  readonly sql: (rows: string) => string;
  /** The statement's own parameters (`?`), in the order they appear in it. */
  readonly bindings: readonly Knex.Value[];
  /**
   * A condition on the stored rows the write was computed under (SQL, a boolean, with its own
   * parameters): the batch is applied only where it holds. Only with the checkpoint
   * (readmodels/checkpoints.ts lockAndAdvanceCheckpoint); runWrites refuses it.
   */
  readonly requires?: { readonly sql: string; readonly bindings: readonly Knex.Value[] };
  /** Set by `requirement`: the write is its condition alone and changes no row. */
  readonly conditionOnly?: true;
}

/** A write that writes nothing and carries a condition (a batch computed from remembered rows that writes nothing). */
export function requirement(requires: NonNullable<BatchWrite['requires']>): BatchWrite {
  return { rows: 'null', rowsType: 'json', sql: () => 'select', bindings: [], requires, conditionOnly: true };
}

/** Whether the writes are conditions alone (a batch computed from remembered rows that changes none): it then stores nothing but its position. */
export function writesNothing(writes: readonly BatchWrite[]): boolean {
  return writes.length > 0 && writes.every((w) => w.conditionOnly === true);
}

/**
 * Whether the writes' conditions hold now: one read-only statement (no transaction id, no WAL,
 * nothing to flush at its commit), for a batch that writes nothing.
 */
export async function conditionsHold(knex: Knex, writes: readonly BatchWrite[]): Promise<boolean> {
  const { sql, bindings } = writeConditions(writes);
  if (sql === 'true') return true;
  const { rows } = await prepared(knex.raw(`select (${sql}) as ok`, bindings));
  return (rows as { ok: boolean }[])[0]?.ok === true;
}

/** The writes' conditions, as one SQL boolean with its parameters (`true` when none). */
export function writeConditions(writes: readonly BatchWrite[]): { sql: string; bindings: Knex.Value[] } {
  const conditions = writes.flatMap((w) => (w.requires ? [w.requires] : []));
  if (conditions.length === 0) return { sql: 'true', bindings: [] };
  return { sql: conditions.map((c) => `(${c.sql})`).join(' and '), bindings: conditions.flatMap((c) => [...c.bindings]) };
}

/**
 * The writes as common table expressions (`r0 as (…), w0 as (…), …`, to follow other ones after a
 * comma) with their parameters. `gate`: a preceding expression's name; the rows are then null
 * unless it returned a row.
 */
export function writeExpressions(writes: readonly BatchWrite[], gate: string | null): { sql: string; bindings: Knex.Value[] } {
  const parts: string[] = [];
  const bindings: Knex.Value[] = [];
  writes.forEach((w, i) => {
    parts.push(`r${i} as (select ?::${w.rowsType} as batch${gate ? ` from ${gate} limit 1` : ''})`);
    parts.push(`w${i} as (${w.sql(`(select batch from r${i})`)})`);
    bindings.push(w.rows, ...w.bindings);
  });
  return { sql: parts.join(',\n'), bindings };
}

/** Runs the writes as one statement (none for no write). */
export async function runWrites(trx: Knex.Transaction, writes: readonly BatchWrite[]): Promise<void> {
  if (writes.length === 0) return;
  if (writes.some((w) => w.requires)) throw new Error('a conditional batch write goes only with its checkpoint');
  const { sql, bindings } = writeExpressions(writes, null);
  await prepared(trx.raw(`with ${sql}\nselect 1`, bindings));
}
