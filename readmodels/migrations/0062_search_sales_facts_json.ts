/**
 * search_sales_facts.facts as json rather than jsonb: the search projection only stores each
 * document's facts whole and reads them back whole (never a path or an operator inside them),
 * so the binary form's conversion on every write is cost without use; json keeps the text the
 * projection wrote. Compressed with lz4 where the server has it (the facts are about the size
 * at which PostgreSQL compresses a value; lz4 costs a fraction of the default pglz).
 * A rebuild's fresh table copies both (`like … including all`).
 */
import type { Knex } from 'knex';

export const searchSalesFactsJsonMigration = {
  name: '0062_search_sales_facts_json',
  async up(knex: Knex) {
    await knex.raw(`
      alter table search_sales_facts alter column facts type json using facts::json;
      do $$
      begin
        if exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
          alter table search_sales_facts alter column facts set compression lz4;
        end if;
      end $$;
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      alter table search_sales_facts alter column facts set compression default;
      alter table search_sales_facts alter column facts type jsonb using facts::jsonb;
    `);
  },
};
