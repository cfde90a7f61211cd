/**
 * Each search document's state in a row of its own (issue 19): `search_document_states` holds the
 * statuses and the status history (domain/query/indexed-document.ts `statePaths`) with their
 * stored value columns and indexes, and `search_documents` keeps the rest, the body, which never
 * changes once the document is received. A status change, by far the most frequent write of the
 * search projection (a document becomes final after it is indexed), then rewrites a row of about
 * a kilobyte with 6 index entries instead of the 11 KB body with its 21. The projection's facts of
 * documents in flight (`search_sales_facts`) no longer keep the submission's content, which only
 * the body needed: its version 2, whose tables this migration converts in place (its checkpoint is
 * marked as at version 2: the converted tables are what a rebuild produces).
 *
 * Frozen lists (the catalogue of the time, readmodels/search/postgres.ts): a later change of the
 * catalogue comes with a migration of its own. Rewrites `search_documents` once.
 *
 * Down: the states are put back into the documents, the columns and indexes of migration 0068
 * come back, and the facts get the submission's content back from each document's first event in
 * the PostgreSQL log (with EventStoreDB as the log, `npm run rebuild -- search` writes them).
 */
import type { Knex } from 'knex';
import { COLUMNS_0068, INDEXES_0068 } from './0068_search_stored_values.js';

const STATE_COLUMNS: readonly (readonly [name: string, type: string, expression: string])[] = [
  ["sv_country_document_status", "text collate \"C\"", "search_keyword((state #> '{countryDocumentStatus}'))"],
  ["sv_meta_statuses_business_current", "text collate \"C\"", "search_keyword((case when type in ('purchases', 'sales') then state #> '{coreDocument,meta,statuses,business,current}' else state #> '{meta,statuses,business,current}' end))"],
  ["sv_meta_statuses_delivery_current", "text collate \"C\"", "search_keyword((case when type in ('purchases', 'sales') then state #> '{coreDocument,meta,statuses,delivery,current}' else state #> '{meta,statuses,delivery,current}' end))"],
  ["sv_meta_statuses_document_current", "text collate \"C\"", "search_keyword((case when type in ('purchases', 'sales') then state #> '{coreDocument,meta,statuses,document,current}' else state #> '{meta,statuses,document,current}' end))"],
  ["sv_meta_statuses_userfacing", "text collate \"C\"", "search_keyword((case when type in ('purchases', 'sales') then state #> '{coreDocument,meta,statuses,userfacing}' else state #> '{meta,statuses,userfacing}' end))"],
];

const STATE_INDEXES: readonly (readonly [name: string, definition: string])[] = [
  ["search_country_document_status_asc", "btree (workspace_id, environment, type, sv_country_document_status asc nulls last, document_id)"],
  ["search_meta_statuses_business_current_asc", "btree (workspace_id, environment, type, sv_meta_statuses_business_current asc nulls last, document_id)"],
  ["search_meta_statuses_delivery_current_asc", "btree (workspace_id, environment, type, sv_meta_statuses_delivery_current asc nulls last, document_id)"],
  ["search_meta_statuses_document_current_asc", "btree (workspace_id, environment, type, sv_meta_statuses_document_current asc nulls last, document_id)"],
  ["search_meta_statuses_userfacing_asc", "btree (workspace_id, environment, type, sv_meta_statuses_userfacing asc nulls last, document_id)"],
];

/** Where the statuses sit in a document of the row's type (receipts keep the core document at the root). */
const statusesPath = (type: string) => `(case when ${type} = 'receipts' then '{meta,statuses}' else '{coreDocument,meta,statuses}' end)::text[]`;
const STATUSES = statusesPath('type');

export const searchDocumentStatesMigration = {
  name: '0072_search_document_states',
  async up(knex: Knex) {
    await knex.raw(`
      create table search_document_states (
        workspace_id text collate "C" not null,
        environment text collate "C" not null,
        type text collate "C" not null,
        document_id text collate "C" not null,
        version bigint not null,
        state jsonb not null,
        ${STATE_COLUMNS.map(([name, type, expression]) => `${name} ${type} generated always as (${expression}) stored`).join(',\n        ')},
        primary key (workspace_id, environment, type, document_id)
      )`);
    // The state as the projection writes it: only the paths the document has.
    await knex.raw(`
      insert into search_document_states (workspace_id, environment, type, document_id, version, state)
      select workspace_id, environment, type, document_id, version,
             (case when document #> ${STATUSES} is null then '{}'::jsonb
                   when type = 'receipts' then jsonb_build_object('meta', jsonb_build_object('statuses', document #> ${STATUSES}))
                   else jsonb_build_object('coreDocument', jsonb_build_object('meta', jsonb_build_object('statuses', document #> ${STATUSES}))) end)
             || (case when document \\? 'statusHistory' then jsonb_build_object('statusHistory', document -> 'statusHistory') else '{}'::jsonb end)
             || (case when type = 'receipts' and document \\? 'countryDocumentStatus' then jsonb_build_object('countryDocumentStatus', document -> 'countryDocumentStatus') else '{}'::jsonb end)
        from search_documents`);
    // Dropping the state's columns from the documents drops their indexes too. The state's
    // version orders a document's writes; the body, fixed at receipt, keeps none.
    await knex.raw(`alter table search_documents drop column version, ${STATE_COLUMNS.map(([name]) => `drop column ${name}`).join(', ')}`);
    await knex.raw(`
      update search_documents
         set document = case when type = 'receipts' then (document #- ${STATUSES}) - 'statusHistory' - 'countryDocumentStatus'
                             else (document #- ${STATUSES}) - 'statusHistory' end`);
    for (const [name, definition] of STATE_INDEXES) await knex.raw(`create index ${name} on search_document_states using ${definition}`);
    await knex.raw(`
      update search_sales_facts set facts = (facts::jsonb - 'coreDocument' - 'validation' - 'country' - 'source')::json;
      update projection_checkpoints set version = 2 where projection = 'search' and version = 1;
    `);
  },
  async down(knex: Knex) {
    const statuses = statusesPath('d.type');
    await knex.raw('alter table search_documents add column version bigint not null default 0');
    await knex.raw(`
      update search_documents d
         set version = s.version,
             document = case when s.state #> ${statuses} is null then d.document || (s.state - 'meta' - 'coreDocument')
                             else jsonb_set(d.document || (s.state - 'meta' - 'coreDocument'), ${statuses}, s.state #> ${statuses}) end
        from search_document_states s
       where s.workspace_id = d.workspace_id and s.environment = d.environment and s.type = d.type and s.document_id = d.document_id`);
    await knex.raw('alter table search_documents alter column version drop default');
    await knex.raw('drop table search_document_states');
    const columns = COLUMNS_0068.filter(([name]) => STATE_COLUMNS.some(([n]) => n === name));
    await knex.raw(`alter table search_documents ${columns.map(([name, type, expression]) => `add column ${name} ${type} generated always as (${expression}) stored`).join(', ')}`);
    for (const [name, definition] of INDEXES_0068.filter(([n]) => STATE_INDEXES.some(([s]) => s === n))) {
      await knex.raw(`create index ${name} on search_documents using ${definition}`);
    }
    await knex.raw(`
      update search_sales_facts f
         set facts = (f.facts::jsonb || jsonb_build_object(
               'coreDocument', coalesce(e.data::jsonb -> 'coreDocument', 'null'::jsonb),
               'validation', coalesce(e.data::jsonb -> 'validation', 'null'::jsonb),
               'country', e.data::jsonb -> 'country',
               'source', e.data::jsonb -> 'source'))::json
        from es_events e
       where e.stream_id = 'document-' || f.document_id and e.stream_revision = 0;
      update projection_checkpoints set version = 1 where projection = 'search' and version = 2;
    `);
  },
};
