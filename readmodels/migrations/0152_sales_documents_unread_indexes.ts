/**
 * Two indexes of `sales_documents` that no read of the service uses are dropped:
 * `sales_documents_workspace` (workspace, environment, received_at) and
 * `sales_documents_country_uuid` (workspace, country, uuid). Every read of the table names the
 * document id (the primary key: the status object, the Malaysian listing, the documents
 * projection's updates), the document number (the Peppol response's lookup,
 * `sales_documents_by_number`) or a delivery state (the delivery worker's scans, the partial
 * indexes). Their cost was an entry in each at every insert and at every update of a document: a
 * state change is never a HOT update (the worker's partial indexes name `state`), so each of the
 * 1.1 updates a document wrote an entry into every index of the table.
 *
 * A rebuild's fresh tables copy the live table's indexes (`like … including all`).
 *
 * Down: both indexes again.
 */
import type { Knex } from 'knex';

export const salesDocumentsUnreadIndexesMigration = {
  name: '0152_sales_documents_unread_indexes',
  async up(knex: Knex) {
    await knex.raw('drop index if exists sales_documents_workspace');
    await knex.raw('drop index if exists sales_documents_country_uuid');
  },
  async down(knex: Knex) {
    await knex.raw('create index if not exists sales_documents_workspace on sales_documents (workspace_id, environment, received_at)');
    await knex.raw('create index if not exists sales_documents_country_uuid on sales_documents (workspace_id, country, uuid)');
  },
};
