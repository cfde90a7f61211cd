/**
 * Migration 0080 and a rebuild move an existing database: purchases stored when they were filed
 * under their supplier's country (events of PurchaseInvoiceStored v1, rows written by the
 * projections of the time) become findable under their receiving company's country, with the
 * supplier's country a filter.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import type { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { indexedPurchaseDocument, splitIndexed } from '../../domain/query/indexed-document.js';
import { PurchaseInvoiceStored } from '../../domain/purchases/purchase.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { purchasesProjection } from '../../projections/purchases.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { searchProjection } from '../../projections/search.js';
import { purchasesReceiverCountryMigration } from '../../readmodels/migrations/0080_purchases_receiver_country.js';
import { migrateToLatest } from '../../readmodels/migrations/index.js';
import type { SearchQuery } from '../../readmodels/search/port.js';
import { PostgresSearchIndex, SEARCH_STATES_TABLE, SEARCH_TABLE, SEARCH_TABLES } from '../../readmodels/search/postgres.js';
import { newEvent } from '../eventstore/contract.js';
import { openEventStoreBefore } from '../support/db.js';

const WORKSPACE = 'ws_purchase0080';
const COMPANY = 'c0ffee00c0ffee00c0ffee00';

describe('purchases filed under the receiving company\'s country (migration 0080 and a rebuild)', function () {
  this.timeout(180000);
  let own: Awaited<ReturnType<typeof openEventStoreBefore>>;
  let knex: Knex;
  let store: PostgresEventStore;

  before(async () => {
    own = await openEventStoreBefore('purchase0080', purchasesReceiverCountryMigration);
    ({ knex, store } = own);
  });
  after(() => own?.drop());

  const query = (country: string, filters: SearchQuery['filters'] = []): SearchQuery => ({
    workspaceId: WORKSPACE,
    environment: 'sandbox',
    type: 'purchases',
    filters: [{ field: 'country', values: [country] }, ...filters],
    searches: [],
    sort: { field: 'documentId', order: 'asc' },
    offset: 0,
    limit: 10,
  });

  it('moves the rows of purchases stored under their supplier\'s country, and a rebuild from the log gives the same and more', async () => {
    const documentId = 'pur_00000000000000000000000000000080';
    const at = '2026-03-01T10:00:00.000Z';
    await knex('connect_companies').insert({
      company_id: COMPANY,
      workspace_id: WORKSPACE,
      country_code: 'AE',
      tin: '1000000080',
      peppol_participant_id: '0235:1000000080',
      platform_environment: 'sandbox',
      contact_person_email: 'a@example.com',
      onboarding_status: 'onboarded',
      search_text: '',
      created_at: at,
      updated_at: at,
    });
    // A purchase as the code of the time stored it: event v1, filed under the supplier's country (SG).
    const storedV1 = {
      documentId,
      workspaceId: WORKSPACE,
      environment: 'sandbox',
      status: 'purchase.invoice.stored',
      country: 'SG',
      documentType: { base: 'tax_invoice', modifiers: [] },
      invoiceNumber: 'SG-1',
      uuid: null,
      issueDate: '2026-03-01',
      supplierName: 'Merlion Supplies Pte Ltd',
      senderParticipantId: '0195:SGUEN201912345K',
      receiverParticipantId: '0235:1000000080',
      attribution: { companyId: COMPANY, sourceName: null, sourceVersion: null, branchId: null, userGivenBranchId: null },
      coreDocument: { header: { documentNumber: 'SG-1', issueDate: '2026-03-01' }, parties: { seller: { name: 'Merlion Supplies Pte Ltd', address: { country: 'SG' } } } },
      xmlSha256: 'a'.repeat(64),
      receivedAt: at,
      storedAt: at,
    };
    const ev = { ...newEvent('PurchaseInvoiceStored', storedV1), schemaVersion: 1, metadata: { ...newEvent('x', {}).metadata, workspaceId: WORKSPACE, occurredAt: at } };
    await store.append(`purchase-${documentId}`, [ev], 'no_stream');
    const index = new PostgresSearchIndex(knex);
    // The rows the projections of the time wrote.
    await knex('purchase_invoices').insert({
      document_id: documentId,
      workspace_id: WORKSPACE,
      environment: 'sandbox',
      country: 'SG',
      company_id: COMPANY,
      document_base: 'tax_invoice',
      status: 'purchase.invoice.stored',
      invoice_number: 'SG-1',
      supplier_name: storedV1.supplierName,
      issue_date: '2026-03-01',
      uuid: null,
      sender_participant_id: storedV1.senderParticipantId,
      receiver_participant_id: storedV1.receiverParticipantId,
      attribution: JSON.stringify(storedV1.attribution),
      received_at: at,
      stored_at: at,
    });
    // The indexed document of the time: under the supplier's country, without the re-send flag.
    const { probableResendOf: _none, ...old } = indexedPurchaseDocument(decodeEventData(PurchaseInvoiceStored, 1, storedV1), 'SG');
    // Written as the tables of the time held it (migration 0072's layout: jsonb body and state, values
    // generated by PostgreSQL), since today's index code writes the later layout (migration 0090).
    const { body, state } = splitIndexed('purchases', old);
    const key = { workspace_id: WORKSPACE, environment: 'sandbox', type: 'purchases', document_id: documentId };
    await knex(SEARCH_TABLE).insert({ ...key, document: JSON.stringify(body) });
    await knex(SEARCH_STATES_TABLE).insert({ ...key, version: 0, state: JSON.stringify(state) });
    expect((await knex(SEARCH_TABLE).where(key).first()).document.country).to.equal('SG');

    // The migration: filed under the company's country at once.
    await migrateToLatest(knex);
    expect((await knex('purchase_invoices').where({ document_id: documentId }).first('country')).country).to.equal('AE');
    expect((await index.search(query('AE'))).total).to.equal(1);
    expect((await index.search(query('SG'))).total).to.equal(0);
    const supplierSg = [{ field: 'coreDocument.parties.seller.address.country', values: ['SG'] }];
    const migrated = await index.search(query('AE', supplierSg));
    expect(migrated.total).to.equal(1);
    expect(migrated.documents[0]).to.include({ country: 'AE' });
    expect(migrated.documents[0]!.probableResendOf).to.deep.equal([]);

    // The rebuild from the log: the same filing, the supplier's country and the re-send flag filled.
    await rebuildProjection(knex, store, purchasesProjection, { batchSize: 10 });
    await rebuildProjection(knex, store, searchProjection(index, { indexTables: SEARCH_TABLES }), { batchSize: 10 });
    const row = await knex('purchase_invoices').where({ document_id: documentId }).first('country', 'supplier_country', 'probable_resend_of');
    expect(row).to.deep.equal({ country: 'AE', supplier_country: 'SG', probable_resend_of: [] });
    const found = await index.search(query('AE', supplierSg));
    expect(found.total).to.equal(1);
    expect(found.documents[0]).to.include({ documentId, country: 'AE' });
    // The rebuild gives exactly what the migration made of the old row.
    expect(found.documents[0]).to.deep.equal(migrated.documents[0]);
    expect((await index.search(query('AE', [{ field: 'coreDocument.parties.seller.address.country', values: ['JP'] }]))).total).to.equal(0);
  });
});
