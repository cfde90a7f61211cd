/**
 * Sales documents by number and environment: a buyer's answer (Peppol Invoice Response) names
 * the invoice it answers by its number, and the receiving side finds the delivered document by it.
 */
import type { Knex } from 'knex';

export const salesDocumentsByNumberMigration = {
  name: '0140_sales_documents_by_number',
  async up(knex: Knex) {
    await knex.raw('create index if not exists sales_documents_by_number on sales_documents (document_number, environment)');
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists sales_documents_by_number');
  },
};
