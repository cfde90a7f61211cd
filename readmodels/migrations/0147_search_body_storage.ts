/**
 * The search index's bodies (`search_documents.document`, the indexed document less its state as
 * JSON text, about 10 KB) are stored out of line without compression on a server built without
 * lz4, instead of compressed with pglz.
 *
 * Migration 0090 made the body text compressed with lz4 where the server has it. Without lz4,
 * PostgreSQL compresses each body with pglz as it stores it: a quarter of its CPU for the search
 * projection's writes, measured on PostgreSQL 18 built without lz4 (0.24 ms a document with pglz,
 * 0.17 ms without compression), where lz4 on PostgreSQL 15 costs what no compression costs (0.16
 * ms). The body is read back only for the documents of a page, so no query reads more of it. It
 * takes about twice the space pglz left (the rows are written by the service, never updated).
 *
 * Only rows written from now on are stored so; the rest stay compressed and readable as they
 * are, and `npm run rebuild -- search` rewrites them all (a rebuild's fresh tables copy the
 * column's storage: `like … including all`). On a server with lz4 nothing changes.
 *
 * Down: the column's default storage again (extended: compressed when large).
 */
import type { Knex } from 'knex';

export const searchBodyStorageMigration = {
  name: '0147_search_body_storage',
  async up(knex: Knex) {
    await knex.raw(`
      do $$
      begin
        if not exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
          alter table search_documents alter column document set storage external;
        end if;
      end $$`);
  },
  async down(knex: Knex) {
    await knex.raw('alter table search_documents alter column document set storage extended');
  },
};
