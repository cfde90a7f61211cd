/**
 * The supplier's country of a received purchase (`coreDocument.parties.seller.address.country`,
 * a multi-valued keyword of the catalogue since migration 0080) as a plain column the service
 * writes, like every other catalogued value since migration 0090, with its GIN index. Migration
 * 0080 indexed it as an expression over the jsonb body; 0090 turned the body into text and
 * dropped that index, so the column is filled here once from the stored bodies (purchases only;
 * every other row holds the empty array the service writes for a field its type lacks). The
 * search projection's rebuild recomputes it with the service's code like every other value.
 */
import type { Knex } from 'knex';

const COLUMN = 'sv_parties_seller_address_country';
const INDEX = 'search_parties_seller_address_country';

export const searchSupplierCountryMigration = {
  name: '0091_search_supplier_country',
  async up(knex: Knex) {
    await knex.raw(`alter table search_documents add column if not exists ${COLUMN} text[] collate "C"`);
    await knex.raw(`drop index if exists ${INDEX}`);
    await knex.raw(`
      update search_documents
         set ${COLUMN} = case when type = 'purchases'
                              then coalesce(search_keywords(document::jsonb #> '{coreDocument,parties,seller,address,country}'), '{}')
                              else '{}' end`);
    await knex.raw(`create index ${INDEX} on search_documents using gin (${COLUMN})`);
  },
  async down(knex: Knex) {
    await knex.raw(`drop index if exists ${INDEX}`);
    await knex.raw(`alter table search_documents drop column if exists ${COLUMN}`);
  },
};
