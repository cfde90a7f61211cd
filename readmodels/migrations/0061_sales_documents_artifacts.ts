/**
 * Artifacts stored once (issue 19): sales_documents kept a copy of each document's XML and Tax
 * Data Document (base64) besides the events that carried them. This moves every copy into the event
 * store's artifact table (keyed by the SHA-256 of the bytes, append-only; a stored artifact is left
 * as it is), replaces it with its hash, and drops the base64 columns. The documents projection
 * writes the same (its version 3), so its checkpoint is marked as at version 3: the converted
 * table is what a rebuild produces.
 */
import type { Knex } from 'knex';

export const salesDocumentsArtifactsMigration = {
  name: '0061_sales_documents_artifacts',
  async up(knex: Knex) {
    await knex.raw(`
      alter table sales_documents add column xml_sha256 text, add column tdd_xml_sha256 text;

      insert into es_artifacts (hash, content)
      select encode(sha256(a.content), 'hex'), a.content
        from (select decode(xml_base64, 'base64') as content from sales_documents where xml_base64 is not null and xml_base64 <> ''
              union
              select decode(tdd_xml_base64, 'base64') from sales_documents where tdd_xml_base64 is not null and tdd_xml_base64 <> '') a
       order by 1
      on conflict (hash) do nothing;

      update sales_documents set
        xml_sha256 = case when xml_base64 is not null and xml_base64 <> '' then encode(sha256(decode(xml_base64, 'base64')), 'hex') end,
        tdd_xml_sha256 = case when tdd_xml_base64 is not null and tdd_xml_base64 <> '' then encode(sha256(decode(tdd_xml_base64, 'base64')), 'hex') end
       where xml_base64 is not null or tdd_xml_base64 is not null;

      alter table sales_documents drop column xml_base64, drop column tdd_xml_base64;

      update projection_checkpoints set version = 3 where projection = 'documents' and version = 2;
    `);
  },
  async down(knex: Knex) {
    // The artifacts stay in es_artifacts (append-only); the copies come back from there.
    await knex.raw(`
      alter table sales_documents add column xml_base64 text, add column tdd_xml_base64 text;
      update sales_documents sd set
        xml_base64 = (select translate(encode(a.content, 'base64'), E'\\n', '') from es_artifacts a where a.hash = sd.xml_sha256),
        tdd_xml_base64 = (select translate(encode(a.content, 'base64'), E'\\n', '') from es_artifacts a where a.hash = sd.tdd_xml_sha256)
       where xml_sha256 is not null or tdd_xml_sha256 is not null;
      alter table sales_documents drop column xml_sha256, drop column tdd_xml_sha256;
      update projection_checkpoints set version = 2 where projection = 'documents' and version = 3;
    `);
  },
};
