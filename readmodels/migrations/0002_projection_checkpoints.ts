/**
 * Checkpoints of the projections: the position of the last event each projection applied,
 * written in the same transaction as the read-model rows it produced.
 */
import type { Knex } from 'knex';

export const projectionCheckpointsMigration = {
  name: '0002_projection_checkpoints',
  async up(knex: Knex) {
    await knex.raw(`
      create table projection_checkpoints (
        projection text primary key,
        commit_position numeric(20, 0) not null default 0,
        prepare_position numeric(20, 0) not null default 0,
        version integer not null,
        events_applied bigint not null default 0,
        updated_at timestamptz not null default now()
      );
    `);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists projection_checkpoints');
  },
};
