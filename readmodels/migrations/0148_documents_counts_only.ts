/**
 * The shared `documents` table keeps what document counts read (readmodels/connect.ts: workspace,
 * environment, company, country, direction, document type, creation time) and no longer the
 * document's state and last change. Nothing read those two columns; the status of a sales
 * document is `sales_documents`'. Keeping them meant that every state change of a sales document
 * (its delivery's start, its delivery, its final result) updated a `documents` row besides its
 * `sales_documents` row: about 1.2 updates a document, a third of them not HOT (two index entries
 * each), in the statement of every batch of the documents projection. The projection writes the
 * same (its version 5), so its checkpoint is marked as at version 5: the converted table is what a
 * rebuild produces.
 *
 * Down: the columns come back, filled from `sales_documents` (state and last change); a row
 * without one (none is written so) takes `submitted` and its creation time.
 */
import type { Knex } from 'knex';

export const documentsCountsOnlyMigration = {
  name: '0148_documents_counts_only',
  async up(knex: Knex) {
    await knex.raw(`
      alter table documents drop column state, drop column updated_at;
      update projection_checkpoints set version = 5 where projection = 'documents' and version = 4;
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      alter table documents add column state text, add column updated_at timestamptz;
      update documents d set state = sd.state, updated_at = sd.last_updated_at from sales_documents sd where sd.document_id = d.document_id;
      update documents set state = coalesce(state, 'submitted'), updated_at = coalesce(updated_at, created_at) where state is null or updated_at is null;
      alter table documents alter column state set not null, alter column updated_at set not null;
      update projection_checkpoints set version = 4 where projection = 'documents' and version = 5;
    `);
  },
};
