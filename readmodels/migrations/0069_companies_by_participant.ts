/**
 * The sandbox Peppol network finds the companies that receive a delivered document by the
 * participant id of its buyer endpoint, across workspaces, once per delivery: an index on that id
 * (with the environment the lookup also names), so the lookup does not read every company.
 */
import type { Knex } from 'knex';

export const companiesByParticipantMigration = {
  name: '0069_companies_by_participant',
  async up(knex: Knex) {
    await knex.raw('create index if not exists connect_companies_participant on connect_companies (peppol_participant_id, platform_environment)');
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists connect_companies_participant');
  },
};
