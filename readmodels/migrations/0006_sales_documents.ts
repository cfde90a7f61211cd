/** The facts of each submitted sales document, from which the status object is shaped on read. */
import type { Knex } from 'knex';

export const salesDocumentsMigration = {
  name: '0006_sales_documents',
  async up(knex: Knex) {
    await knex.raw(`
      create table sales_documents (
        document_id text primary key,
        workspace_id text not null,
        environment text not null,
        country text not null,
        document_number text,
        uuid text,
        state text not null,
        format text not null,
        external_id text,
        document_type jsonb not null,
        source jsonb not null,
        company_id text,
        destinations jsonb not null,
        core_document jsonb not null,
        validation jsonb not null,
        errors jsonb not null,
        government jsonb,
        xml_base64 text,
        tdd_xml_base64 text,
        attempts integer not null default 0,
        received_at timestamptz not null,
        last_updated_at timestamptz not null
      );
      create index sales_documents_workspace on sales_documents (workspace_id, environment, received_at);
      create index sales_documents_country_uuid on sales_documents (workspace_id, country, uuid);
    `);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists sales_documents');
  },
};
