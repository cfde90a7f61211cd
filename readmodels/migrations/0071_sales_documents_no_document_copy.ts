/**
 * The document stored fewer times (issue 19): sales_documents kept a copy of each document's core
 * document (about 8 KB of JSON) and of its validation report (about 3 KB), which PostgreSQL
 * parsed and compressed on every insert. No read needs them whole: the earlier format's listing
 * of Malaysian documents shows the issue date, and the PDF of a compliant document is rendered
 * from the submission event (commands/artifacts.ts). This keeps the issue date (as the document
 * holds it, any JSON value) and drops both copies. The documents projection writes the same (its
 * version 4), so its checkpoint is marked as at version 4: the converted table is what a rebuild
 * produces.
 *
 * Down: the copies come back from each document's first event in the PostgreSQL log, as the
 * projection's version 3 wrote them (with EventStoreDB as the log, `npm run rebuild -- documents`
 * writes them).
 */
import type { Knex } from 'knex';

export const salesDocumentsNoDocumentCopyMigration = {
  name: '0071_sales_documents_no_document_copy',
  async up(knex: Knex) {
    await knex.raw(`
      alter table sales_documents add column issue_date jsonb;
      update sales_documents set issue_date = nullif(core_document #> '{header,issueDate}', 'null'::jsonb);
      alter table sales_documents drop column core_document, drop column validation;
      update projection_checkpoints set version = 4 where projection = 'documents' and version = 3;
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      alter table sales_documents add column core_document jsonb not null default 'null', add column validation jsonb not null default 'null';
      update sales_documents sd set
        core_document = coalesce(e.data::jsonb -> 'coreDocument', 'null'::jsonb),
        validation = coalesce(e.data::jsonb -> 'validation', 'null'::jsonb)
        from es_events e
       where e.stream_id = 'document-' || sd.document_id and e.stream_revision = 0;
      alter table sales_documents alter column core_document drop default, alter column validation drop default, drop column issue_date;
      update projection_checkpoints set version = 3 where projection = 'documents' and version = 4;
    `);
  },
};
