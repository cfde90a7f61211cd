/**
 * Received purchase invoices: the list read model (written by the purchases projection), the
 * projection's storage clock per workspace and environment (keeps storedAt strictly increasing in
 * the order purchases become visible in a list, so a cursor walk never skips one that arrives
 * meanwhile), and the key that signs the
 * purchase list's cursors (one random key per database, so cursors survive restarts and work on
 * every instance).
 */
import type { Knex } from 'knex';

export const purchasesMigration = {
  name: '0045_purchases',
  async up(knex: Knex) {
    await knex.raw(`
      create table purchase_invoices (
        document_id text primary key,
        workspace_id text not null,
        environment text not null,
        country text not null,
        company_id text null,
        document_base text not null,
        status text not null,
        invoice_number text null,
        supplier_name text null,
        issue_date text null,
        uuid text null,
        sender_participant_id text null,
        receiver_participant_id text null,
        attribution jsonb not null,
        received_at timestamptz not null,
        stored_at timestamptz not null
      );
      create index purchase_invoices_list on purchase_invoices (workspace_id, environment, stored_at, document_id);
      create index purchase_invoices_counts on purchase_invoices (workspace_id, environment, company_id, stored_at);

      create table purchase_store_clock (
        workspace_id text not null,
        environment text not null,
        last_stored_at timestamptz not null,
        primary key (workspace_id, environment)
      );

      create table purchase_cursor_keys (
        id smallint primary key check (id = 1),
        secret text not null
      );
      insert into purchase_cursor_keys (id, secret)
        values (1, encode(sha256(convert_to(random()::text || clock_timestamp()::text || pg_backend_pid()::text || random()::text, 'UTF8')), 'hex'));
    `);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists purchase_cursor_keys; drop table if exists purchase_store_clock; drop table if exists purchase_invoices;');
  },
};
