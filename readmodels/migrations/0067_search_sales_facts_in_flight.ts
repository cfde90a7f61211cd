/**
 * search_sales_facts keeps the facts of documents not yet final only (projections/search-sales.ts):
 * no event can change the indexed document of a rejected or finalized document, so its facts
 * are never read again. Drops the rows of documents already in such a state; the projection
 * writes no new ones. Down: nothing to restore (the rows are rebuilt from the log by
 * `npm run rebuild -- search` under the earlier code).
 */
import type { Knex } from 'knex';

export const searchSalesFactsInFlightMigration = {
  name: '0067_search_sales_facts_in_flight',
  async up(knex: Knex) {
    await knex.raw(`delete from search_sales_facts where facts -> 'transitions' -> -1 ->> 'state' in ('rejected', 'final_valid', 'final_invalid')`);
  },
  async down(_knex: Knex) {},
};
