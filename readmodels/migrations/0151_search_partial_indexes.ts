/**
 * One index entry fewer per search state write: `search_country_document_status_asc` (receipts'
 * `countryDocumentStatus`, on the states) holds the receipts' rows alone. A sales document's or
 * purchase's state row, whose value there is always null, no longer gets an entry when it is
 * inserted and again each time its status changes (about 1.2 times a sales document; those
 * updates are never HOT, as the status columns they change are indexed).
 *
 * Every query names its type (`type = ?`, which proves the predicate), so the same query shapes
 * use the same index. (The purchases-only GIN of the supplier's country stays whole: made
 * partial, the planner took it for a cheap way to the purchases' rows and scanned it whole in
 * the purchases' name searches, 0.4 ms became 6 ms.) Frozen definitions (the catalogue of the time,
 * readmodels/search/postgres.ts `searchIndexDefinitions`). A rebuild's fresh tables copy the
 * indexes with their predicates (`like … including all`).
 *
 * Down: the index over every row again (migration 0090).
 */
import type { Knex } from 'knex';

const INDEXES_0151: readonly (readonly [table: string, name: string, partial: string, whole: string])[] = [
  [
    'search_document_states',
    'search_country_document_status_asc',
    "btree (workspace_id, environment, type, sv_country_document_status asc nulls last, document_id) where type = 'receipts'",
    'btree (workspace_id, environment, type, sv_country_document_status asc nulls last, document_id)',
  ],
];

export const searchPartialIndexesMigration = {
  name: '0151_search_partial_indexes',
  async up(knex: Knex) {
    for (const [table, name, partial] of INDEXES_0151) {
      await knex.raw(`drop index if exists ${name}`);
      await knex.raw(`create index ${name} on ${table} using ${partial}`);
    }
  },
  async down(knex: Knex) {
    for (const [table, name, , whole] of INDEXES_0151) {
      await knex.raw(`drop index if exists ${name}`);
      await knex.raw(`create index ${name} on ${table} using ${whole}`);
    }
  },
};
