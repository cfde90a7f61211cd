/**
 * What the search projection knows of each sales document (submission and states gone
 * through), so a state change rebuilds the indexed document without reading another read
 * model. Owned by the search projection alone (rebuilt with it).
 */
import type { Knex } from 'knex';

export const searchSalesFactsMigration = {
  name: '0043_search_sales_facts',
  async up(knex: Knex) {
    await knex.raw(`
      create table search_sales_facts (
        document_id text primary key,
        workspace_id text not null,
        environment text not null,
        revision bigint not null,
        facts jsonb not null
      )
    `);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists search_sales_facts');
  },
};
