/**
 * Received purchases are filed under the receiving company's country (they were under their
 * supplier's, so a purchase from a country the service does not serve could never be found by
 * the invoice query), with the supplier's country a field of its own and the probable re-send
 * flag on each purchase.
 *
 * - `purchase_invoices`: `supplier_country` and `probable_resend_of` columns; every row's
 *   `country` becomes its company's.
 * - `search_documents`: every purchase's `country` becomes its company's (attribution.companyId),
 *   it gets `probableResendOf` (empty: purchases stored before had no flag), and the supplier's country (`coreDocument.parties.seller.address.country`, a multi-valued
 *   keyword of the catalogue) gets its GIN index (frozen text of readmodels/search/postgres.ts
 *   `searchIndexDefinitions`).
 *
 * The rows are right at once; the projections' versions move too (purchases 2, search 3): a
 * rebuild of both (`npm run rebuild -- purchases`, `… -- search`) fills the supplier's country
 * and the re-send flags from the log, and moves an Elasticsearch index, which this migration
 * cannot reach.
 */
import type { Knex } from 'knex';

export const SUPPLIER_COUNTRY_INDEX_0080 = [
  'search_parties_seller_address_country',
  "gin (search_keywords((case when type in ('purchases') then document #> '{coreDocument,parties,seller,address,country}' else document #> '{parties,seller,address,country}' end)))",
] as const;

export const purchasesReceiverCountryMigration = {
  name: '0080_purchases_receiver_country',
  async up(knex: Knex) {
    await knex.raw(`
      alter table purchase_invoices
        add column if not exists supplier_country text null,
        add column if not exists probable_resend_of jsonb not null default '[]'::jsonb;
      update purchase_invoices p set country = c.country_code
        from connect_companies c
       where c.company_id = p.company_id and p.country is distinct from c.country_code;
      update search_documents d set document = jsonb_set(d.document, '{country}', to_jsonb(c.country_code))
        from connect_companies c
       where d.type = 'purchases' and c.company_id = d.document #>> '{attribution,companyId}'
         and d.document ->> 'country' is distinct from c.country_code;
      update search_documents set document = document || '{"probableResendOf": []}'::jsonb
       where type = 'purchases' and document -> 'probableResendOf' is null;
    `);
    const [name, definition] = SUPPLIER_COUNTRY_INDEX_0080;
    await knex.raw(`create index if not exists ${name} on search_documents using ${definition}`);
  },
  async down(knex: Knex) {
    await knex.raw(`drop index if exists ${SUPPLIER_COUNTRY_INDEX_0080[0]}`);
    await knex.raw('alter table purchase_invoices drop column if exists supplier_country, drop column if exists probable_resend_of');
  },
};
