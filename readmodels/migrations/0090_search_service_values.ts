/**
 * The search index's values become plain columns the service writes (readmodels/search/postgres.ts),
 * and the body and the state are stored as the JSON text the service wrote.
 *
 * Until now PostgreSQL parsed each body (about 10 KB of jsonb) and computed every catalogued
 * value in generated columns and expression indexes, lower-casing keywords with the `pg_c_utf8`
 * collation, which PostgreSQL 17 introduced. The service computes the same values for
 * Elasticsearch already; it now writes them into the columns itself, and no server version
 * needs a collation of its own.
 *
 * Up, in place (the service keeps its rows):
 * - the scalar value columns of migrations 0068 and 0072 stop being generated (their values
 *   stay; no rewrite);
 * - the multi-valued fields (`documentType.modifiers`, `…variants`) and the query layer's own
 *   `country` get columns of their own, filled from the stored documents by the functions of
 *   migration 0040 (one rewrite), then no longer generated either;
 * - `document` and `state` become text (one rewrite each), compressed with lz4 where the server
 *   has it;
 * - the indexes over expressions (multi-valued and trigram) are replaced by indexes over the
 *   columns (frozen list: the catalogue of the time).
 * The search projection's code is at version 3 and the checkpoint stays at 2: the service runs and
 * answers queries from the converted rows, and logs that `npm run rebuild -- search` is due,
 * which recomputes every value with the service's code into fresh tables and swaps them in
 * (queries are answered from the converted tables meanwhile).
 *
 * A new database runs this in the same run as 0040, before any row exists: on PostgreSQL 15 and
 * 16, where 0040's functions lower-case in "C", they never compute a stored value.
 *
 * Down: the columns are generated again from the documents (jsonb again) with the functions of
 * migration 0040, as migrations 0068 and 0072 left them (PostgreSQL 17 or newer).
 */
import type { Knex } from 'knex';
import { INDEXES_0040 } from './0040_search_documents.js';
import { COLUMNS_0068, INDEXES_0068 } from './0068_search_stored_values.js';

/** The columns this migration adds to `search_documents`, and what they were filled from. */
const NEW_COLUMNS: readonly (readonly [name: string, type: string, expression: string])[] = [
  ['sv_country', 'text collate "C"', "search_keyword(document #> '{country}')"],
  ['sv_document_type_modifiers', 'text[] collate "C"', "search_keywords(document #> '{documentType,modifiers}')"],
  ['sv_document_type_variants', 'text[] collate "C"', "search_keywords(document #> '{documentType,variants}')"],
];

/** The generated value columns before this migration (0068's, less the states' of 0072). */
const STATE_COLUMN_NAMES = [
  'sv_country_document_status',
  'sv_meta_statuses_business_current',
  'sv_meta_statuses_delivery_current',
  'sv_meta_statuses_document_current',
  'sv_meta_statuses_userfacing',
];
const BODY_COLUMN_NAMES = COLUMNS_0068.map(([name]) => name).filter((n) => !STATE_COLUMN_NAMES.includes(n));

/** The indexes after this migration (readmodels/search/postgres.ts searchIndexDefinitions, frozen). */
export const INDEXES_0090: readonly (readonly [table: string, name: string, definition: string])[] = [
  ['search_document_states', 'search_country_document_status_asc', 'btree (workspace_id, environment, type, sv_country_document_status asc nulls last, document_id)'],
  ['search_documents', 'search_document_id_asc', 'btree (workspace_id, environment, type, sv_document_id asc nulls last, document_id)'],
  ['search_documents', 'search_document_type_base_asc', 'btree (workspace_id, environment, type, sv_document_type_base asc nulls last, document_id)'],
  ['search_documents', 'search_document_type_modifiers', 'gin (sv_document_type_modifiers)'],
  ['search_documents', 'search_document_type_variants', 'gin (sv_document_type_variants)'],
  ['search_documents', 'search_header_currency_asc', 'btree (workspace_id, environment, type, sv_header_currency asc nulls last, document_id)'],
  ['search_documents', 'search_header_document_number_asc', 'btree (workspace_id, environment, type, sv_header_document_number asc nulls last, document_id)'],
  ['search_documents', 'search_header_document_number_trgm', 'gin (workspace_id, sv_header_document_number gin_trgm_ops)'],
  ['search_documents', 'search_header_issue_date_asc', 'btree (workspace_id, environment, type, sv_header_issue_date asc nulls last, document_id)'],
  ['search_documents', 'search_header_issue_date_desc', 'btree (workspace_id, environment, type, sv_header_issue_date desc nulls last, document_id)'],
  ['search_document_states', 'search_meta_statuses_business_current_asc', 'btree (workspace_id, environment, type, sv_meta_statuses_business_current asc nulls last, document_id)'],
  ['search_document_states', 'search_meta_statuses_delivery_current_asc', 'btree (workspace_id, environment, type, sv_meta_statuses_delivery_current asc nulls last, document_id)'],
  ['search_document_states', 'search_meta_statuses_document_current_asc', 'btree (workspace_id, environment, type, sv_meta_statuses_document_current asc nulls last, document_id)'],
  ['search_document_states', 'search_meta_statuses_userfacing_asc', 'btree (workspace_id, environment, type, sv_meta_statuses_userfacing asc nulls last, document_id)'],
  ['search_documents', 'search_parties_buyer_name_asc', 'btree (workspace_id, environment, type, sv_parties_buyer_name asc nulls last, document_id)'],
  ['search_documents', 'search_parties_buyer_name_trgm', 'gin (workspace_id, sv_parties_buyer_name gin_trgm_ops)'],
  ['search_documents', 'search_parties_seller_name_asc', 'btree (workspace_id, environment, type, sv_parties_seller_name asc nulls last, document_id)'],
  ['search_documents', 'search_parties_seller_name_trgm', 'gin (workspace_id, sv_parties_seller_name gin_trgm_ops)'],
  ['search_documents', 'search_totals_total_amount_including_tax_asc', 'btree (workspace_id, environment, type, sv_totals_total_amount_including_tax asc nulls last, document_id)'],
  ['search_documents', 'search_totals_total_amount_including_tax_desc', 'btree (workspace_id, environment, type, sv_totals_total_amount_including_tax desc nulls last, document_id)'],
];

/** Sets lz4 compression on a column where the server was built with it (else the default, pglz). */
const lz4 = (table: string, column: string) => `
  do $$
  begin
    if exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
      alter table ${table} alter column ${column} set compression lz4;
    end if;
  end $$;`;

/** The index names of a table other than its primary key's. */
async function secondaryIndexes(knex: Knex, table: string): Promise<string[]> {
  const { rows } = await knex.raw(
    `select i.relname as name from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
      where t.relname = ? and t.relnamespace = current_schema()::regnamespace and not x.indisprimary`,
    [table],
  );
  return (rows as { name: string }[]).map((r) => r.name);
}

export const searchServiceValuesMigration = {
  name: '0090_search_service_values',
  async up(knex: Knex) {
    for (const table of ['search_documents', 'search_document_states']) {
      for (const name of await secondaryIndexes(knex, table)) await knex.raw(`drop index ${name}`);
    }
    await knex.raw(`alter table search_documents ${NEW_COLUMNS.map(([name, type, expression]) => `add column ${name} ${type} generated always as (${expression}) stored`).join(', ')}`);
    await knex.raw(`alter table search_documents ${[...BODY_COLUMN_NAMES, ...NEW_COLUMNS.map(([n]) => n)].map((n) => `alter column ${n} drop expression`).join(', ')}`);
    await knex.raw(`alter table search_document_states ${STATE_COLUMN_NAMES.map((n) => `alter column ${n} drop expression`).join(', ')}`);
    await knex.raw('alter table search_documents alter column document type text using document::text');
    await knex.raw('alter table search_document_states alter column state type text using state::text');
    await knex.raw(lz4('search_documents', 'document'));
    for (const [table, name, definition] of INDEXES_0090) await knex.raw(`create index ${name} on ${table} using ${definition}`);
  },
  async down(knex: Knex) {
    for (const table of ['search_documents', 'search_document_states']) {
      for (const name of await secondaryIndexes(knex, table)) await knex.raw(`drop index ${name}`);
    }
    await knex.raw(`alter table search_documents alter column document set compression default`);
    await knex.raw('alter table search_documents alter column document type jsonb using document::jsonb');
    await knex.raw('alter table search_document_states alter column state type jsonb using state::jsonb');
    const expressionOf = new Map(COLUMNS_0068.map(([name, , expression]) => [name, expression]));
    const typeOf = new Map(COLUMNS_0068.map(([name, type]) => [name, type]));
    await knex.raw(
      `alter table search_documents ${[...BODY_COLUMN_NAMES, ...NEW_COLUMNS.map(([n]) => n)].map((n) => `drop column ${n}`).join(', ')}, ` +
        BODY_COLUMN_NAMES.map((n) => `add column ${n} ${typeOf.get(n)} generated always as (${expressionOf.get(n)}) stored`).join(', '),
    );
    await knex.raw(
      `alter table search_document_states ${STATE_COLUMN_NAMES.map((n) => `drop column ${n}`).join(', ')}, ` +
        STATE_COLUMN_NAMES.map((n) => `add column ${n} ${typeOf.get(n)} generated always as (${expressionOf.get(n)!.replace(/document #>/g, 'state #>')}) stored`).join(', '),
    );
    const byName = new Map(INDEXES_0068);
    for (const [name, definition] of INDEXES_0040) {
      const table = STATE_COLUMN_NAMES.some((c) => byName.get(name)?.includes(c)) ? 'search_document_states' : 'search_documents';
      await knex.raw(`create index ${name} on ${table} using ${byName.get(name) ?? definition}`);
    }
    await knex.raw(`update projection_checkpoints set version = 2 where projection = 'search' and version >= 3`);
  },
};
