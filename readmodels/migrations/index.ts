/**
 * Every schema migration of the service, in order. A code-defined migration source keeps
 * migrations working identically under tsx, compiled output and tests.
 */
import type { Knex } from 'knex';
import { appendBatchMigration, appendMultiMigration, appendV2Migration, artifactsEncodingMigration, artifactsMigration, eventStoreMigration, jsonEventsMigration, newStreamRowsOnceMigration } from '../../platform/eventstore/postgres-schema.js';
import { projectionCheckpointsMigration } from './0002_projection_checkpoints.js';
import { workspacesKeysMigration } from './0003_workspaces_keys.js';
import { companiesMigration } from './0004_companies.js';
import { salesDocumentsMigration } from './0006_sales_documents.js';
import { creditsMigration } from './0007_credits.js';
import { deliveryMigration } from './0020_delivery.js';
import { searchDocumentsMigration } from './0040_search_documents.js';
import { searchSalesFactsMigration } from './0043_search_sales_facts.js';
import { purchasesMigration } from './0045_purchases.js';
import { webhooksMigration } from './0050_webhooks.js';
import { salesDocumentsArtifactsMigration } from './0061_sales_documents_artifacts.js';
import { searchSalesFactsJsonMigration } from './0062_search_sales_facts_json.js';
import { webhookDeliveryStateMigration } from './0065_webhook_delivery_state.js';
import { webhookDeliveryFloorsMigration } from './0066_webhook_delivery_floors.js';
import { searchSalesFactsInFlightMigration } from './0067_search_sales_facts_in_flight.js';
import { searchStoredValuesMigration } from './0068_search_stored_values.js';
import { companiesByParticipantMigration } from './0069_companies_by_participant.js';
import { salesDocumentsNoDocumentCopyMigration } from './0071_sales_documents_no_document_copy.js';
import { searchDocumentStatesMigration } from './0072_search_document_states.js';
import { purchasesReceiverCountryMigration } from './0080_purchases_receiver_country.js';
import { searchServiceValuesMigration } from './0090_search_service_values.js';
import { searchSupplierCountryMigration } from './0091_search_supplier_country.js';
import { myinvoisMigration } from './0130_myinvois.js';
import { salesDocumentsByNumberMigration } from './0140_sales_documents_by_number.js';
import { peppolUnmatchedResponsesMigration } from './0141_peppol_unmatched_responses.js';
import { webhookRedeliveriesMigration } from './0145_webhook_redeliveries.js';
import { salesDocumentsInterruptedMigration } from './0146_sales_documents_interrupted.js';
import { searchBodyStorageMigration } from './0147_search_body_storage.js';
import { documentsCountsOnlyMigration } from './0148_documents_counts_only.js';
import { searchPartialIndexesMigration } from './0151_search_partial_indexes.js';
import { salesDocumentsUnreadIndexesMigration } from './0152_sales_documents_unread_indexes.js';

interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export const migrations: readonly Migration[] = [
  eventStoreMigration,
  projectionCheckpointsMigration,
  workspacesKeysMigration,
  companiesMigration,
  appendV2Migration,
  salesDocumentsMigration,
  creditsMigration,
  deliveryMigration,
  appendBatchMigration,
  jsonEventsMigration,
  appendMultiMigration,
  searchDocumentsMigration,
  searchSalesFactsMigration,
  purchasesMigration,
  webhooksMigration,
  artifactsMigration,
  salesDocumentsArtifactsMigration,
  searchSalesFactsJsonMigration,
  webhookDeliveryStateMigration,
  webhookDeliveryFloorsMigration,
  searchSalesFactsInFlightMigration,
  searchStoredValuesMigration,
  companiesByParticipantMigration,
  artifactsEncodingMigration,
  salesDocumentsNoDocumentCopyMigration,
  searchDocumentStatesMigration,
  purchasesReceiverCountryMigration,
  searchServiceValuesMigration,
  searchSupplierCountryMigration,
  myinvoisMigration,
  salesDocumentsByNumberMigration,
  peppolUnmatchedResponsesMigration,
  webhookRedeliveriesMigration,
  salesDocumentsInterruptedMigration,
  searchBodyStorageMigration,
  documentsCountsOnlyMigration,
  newStreamRowsOnceMigration,
  searchPartialIndexesMigration,
  salesDocumentsUnreadIndexesMigration,
];

const source: Knex.MigrationSource<Migration> = {
  getMigrations: async () => [...migrations],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

/** Brings the schema to the latest version; safe to run from several processes at once (knex locks). */
export async function migrateToLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource: source })) as [number, string[]];
  return applied;
}
