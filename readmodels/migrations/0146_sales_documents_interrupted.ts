/**
 * Delivery attempts left `processing` by a stopped service: the delivery worker looks for those
 * that started long enough ago (by the time of their start) to send them again.
 */
import type { Knex } from 'knex';

export const salesDocumentsInterruptedMigration = {
  name: '0146_sales_documents_interrupted',
  async up(knex: Knex) {
    await knex.raw("create index if not exists sales_documents_processing on sales_documents (last_updated_at) where state = 'processing'");
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists sales_documents_processing');
  },
};
