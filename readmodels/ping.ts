/** The readiness probe's database check: one round trip to PostgreSQL. */
import type { Knex } from 'knex';

export async function pingDatabase(knex: Knex): Promise<void> {
  await knex.raw('select 1');
}
