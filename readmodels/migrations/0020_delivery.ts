/**
 * Delivery scheduling on the sales documents read model (next attempt, expected final
 * result), and the receipts of the sandbox destinations (what the simulated authority or
 * access point has received, so it recognises a document sent again).
 */
import type { Knex } from 'knex';

export const deliveryMigration = {
  name: '0020_delivery',
  async up(knex: Knex) {
    await knex.raw(`
      alter table sales_documents add column next_attempt_at timestamptz;
      alter table sales_documents add column final_result_due_at timestamptz;
      create index sales_documents_retry_due on sales_documents (next_attempt_at) where state = 'delivery_failed' and next_attempt_at is not null;
      create index sales_documents_final_due on sales_documents (final_result_due_at) where state = 'delivery_success' and final_result_due_at is not null;

      create table sandbox_receipts (
        uuid text primary key,
        destination text not null,
        environment text not null,
        answer jsonb not null,
        received_at timestamptz not null
      );
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      drop table if exists sandbox_receipts;
      alter table sales_documents drop column if exists next_attempt_at;
      alter table sales_documents drop column if exists final_result_due_at;
    `);
  },
};
