/**
 * One tick of a worker across every service instance sharing the database: the tick runs
 * inside a transaction holding a transaction-scoped advisory lock named after the worker, so
 * when two instances tick at once, one runs and the other skips; a crashed holder releases the
 * lock with its connection.
 */
import type { Knex } from 'knex';

export async function withWorkerLease<T>(knex: Knex, worker: string, run: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  return knex.transaction(async (trx) => {
    const lock = await trx.raw('select pg_try_advisory_xact_lock(hashtext(?)) as ok', [`worker:${worker}`]);
    if (!lock.rows[0].ok) return { ran: false as const };
    return { ran: true as const, value: await run() };
  });
}
