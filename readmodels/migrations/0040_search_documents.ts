/**
 * The PostgreSQL search index (readmodels/search/postgres.ts): one row per indexed document,
 * the value functions every index and query reads fields through, and the indexes derived from
 * the query-field catalogue. Needs PostgreSQL 17 or newer with a UTF8 database (the
 * `pg_c_utf8` collation gives the simple Unicode case mapping Elasticsearch's `lowercase`
 * normalizer applies) and the `pg_trgm` and `btree_gin` extensions.
 */
import type { Knex } from 'knex';
import { MAX_KEYWORD_BYTES } from '../search/fields.js';
import { SEARCH_TABLE } from '../search/postgres.js';

/**
 * The indexes as this migration created them (the query-field catalogue of the time, each
 * field's value read through an expression): frozen here, since the catalogue's indexes have
 * changed since (migration 0068 reads the scalar fields from stored columns).
 */
export const INDEXES_0040: readonly (readonly [string, string])[] = [
  ["search_country_document_status_asc", "btree (workspace_id, environment, type, (search_keyword((document #> '{countryDocumentStatus}')) collate \"C\") asc nulls last, document_id)"],
  ["search_document_id_asc", "btree (workspace_id, environment, type, (search_keyword((document #> '{documentId}')) collate \"C\") asc nulls last, document_id)"],
  ["search_document_type_base_asc", "btree (workspace_id, environment, type, (search_keyword((document #> '{documentType,base}')) collate \"C\") asc nulls last, document_id)"],
  ["search_document_type_modifiers", "gin (search_keywords((document #> '{documentType,modifiers}')))"],
  ["search_document_type_variants", "gin (search_keywords((document #> '{documentType,variants}')))"],
  ["search_header_currency_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,header,currency}' else document #> '{header,currency}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_header_document_number_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,header,documentNumber}' else document #> '{header,documentNumber}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_header_document_number_trgm", "gin (workspace_id, search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,header,documentNumber}' else document #> '{header,documentNumber}' end)) gin_trgm_ops)"],
  ["search_header_issue_date_asc", "btree (workspace_id, environment, type, search_date((case when type in ('purchases', 'sales') then document #> '{coreDocument,header,issueDate}' else document #> '{header,issueDate}' end)) asc nulls last, document_id)"],
  ["search_header_issue_date_desc", "btree (workspace_id, environment, type, search_date((case when type in ('purchases', 'sales') then document #> '{coreDocument,header,issueDate}' else document #> '{header,issueDate}' end)) desc nulls last, document_id)"],
  ["search_meta_statuses_business_current_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,meta,statuses,business,current}' else document #> '{meta,statuses,business,current}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_meta_statuses_delivery_current_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,meta,statuses,delivery,current}' else document #> '{meta,statuses,delivery,current}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_meta_statuses_document_current_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,meta,statuses,document,current}' else document #> '{meta,statuses,document,current}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_meta_statuses_userfacing_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,meta,statuses,userfacing}' else document #> '{meta,statuses,userfacing}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_parties_buyer_name_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,parties,buyer,name}' else document #> '{parties,buyer,name}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_parties_buyer_name_trgm", "gin (workspace_id, search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,parties,buyer,name}' else document #> '{parties,buyer,name}' end)) gin_trgm_ops)"],
  ["search_parties_seller_name_asc", "btree (workspace_id, environment, type, (search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,parties,seller,name}' else document #> '{parties,seller,name}' end)) collate \"C\") asc nulls last, document_id)"],
  ["search_parties_seller_name_trgm", "gin (workspace_id, search_keyword((case when type in ('purchases', 'sales') then document #> '{coreDocument,parties,seller,name}' else document #> '{parties,seller,name}' end)) gin_trgm_ops)"],
  ["search_totals_total_amount_including_tax_asc", "btree (workspace_id, environment, type, search_number((case when type in ('purchases', 'sales') then document #> '{coreDocument,totals,totalAmountIncludingTax}' else document #> '{totals,totalAmountIncludingTax}' end)) asc nulls last, document_id)"],
  ["search_totals_total_amount_including_tax_desc", "btree (workspace_id, environment, type, search_number((case when type in ('purchases', 'sales') then document #> '{coreDocument,totals,totalAmountIncludingTax}' else document #> '{totals,totalAmountIncludingTax}' end)) desc nulls last, document_id)"],
];


export const searchDocumentsMigration = {
  name: '0040_search_documents',
  async up(knex: Knex) {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.raw('create extension if not exists btree_gin');
    // The rules of readmodels/search/fields.ts, in SQL. Immutable, so they may be indexed.
    // PostgreSQL 15 and 16 have no `pg_c_utf8`: there the functions lower-case in "C" (ASCII
    // only). No row is ever written through them on such a server: the service refused those
    // versions before migration 0090, which replaces them with values the service computes, and
    // a new database runs 0090 in the same migration run, before the service writes anything.
    const { rows } = await knex.raw(`select 1 from pg_collation where collname = 'pg_c_utf8'`);
    const lowering = rows.length > 0 ? 'pg_c_utf8' : 'C';
    await knex.raw(`
      create or replace function search_keyword(v jsonb) returns text language sql immutable parallel safe as $$
        select case when jsonb_typeof(v) = 'string' and octet_length(v #>> '{}') <= ${MAX_KEYWORD_BYTES}
                    then lower((v #>> '{}') collate "${lowering}") end
      $$;
      create or replace function search_keywords(v jsonb) returns text[] language sql immutable parallel safe as $$
        select case jsonb_typeof(v)
          when 'string' then array(select lower((v #>> '{}') collate "${lowering}") where octet_length(v #>> '{}') <= ${MAX_KEYWORD_BYTES})
          when 'array' then array(select lower((e #>> '{}') collate "${lowering}") from jsonb_array_elements(v) as e
                                   where jsonb_typeof(e) = 'string' and octet_length(e #>> '{}') <= ${MAX_KEYWORD_BYTES})
          else '{}'::text[] end
      $$;
      create or replace function search_number(v jsonb) returns numeric language sql immutable parallel safe as $$
        select case when jsonb_typeof(v) = 'number' then v::numeric end
      $$;
      create or replace function search_date(v jsonb) returns text language sql immutable parallel safe as $$
        select case
          when jsonb_typeof(v) is distinct from 'string' then null
          when (v #>> '{}') !~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' then null
          when substr(v #>> '{}', 1, 4) = '0000' then null
          when substr(v #>> '{}', 9, 2)::int <= case substr(v #>> '{}', 6, 2)::int
                 when 2 then case when (substr(v #>> '{}', 1, 4)::int % 4 = 0 and substr(v #>> '{}', 1, 4)::int % 100 <> 0)
                                        or substr(v #>> '{}', 1, 4)::int % 400 = 0 then 29 else 28 end
                 when 4 then 30 when 6 then 30 when 9 then 30 when 11 then 30
                 else 31 end
            then v #>> '{}'
          end
      $$;
    `);
    await knex.raw(`
      create table ${SEARCH_TABLE} (
        workspace_id text collate "C" not null,
        environment text collate "C" not null,
        type text collate "C" not null,
        document_id text collate "C" not null,
        version bigint not null,
        document jsonb not null,
        primary key (workspace_id, environment, type, document_id)
      )
    `);
    for (const [name, definition] of INDEXES_0040) {
      await knex.raw(`create index ${name} on ${SEARCH_TABLE} using ${definition}`);
    }
  },
  async down(knex: Knex) {
    await knex.raw(`drop table if exists ${SEARCH_TABLE}`);
    await knex.raw('drop function if exists search_keyword(jsonb), search_keywords(jsonb), search_number(jsonb), search_date(jsonb)');
  },
};
