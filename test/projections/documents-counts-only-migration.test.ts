/**
 * Migration 0148: the shared `documents` table drops the document's state and last change, which
 * nothing read (counts read the rest). An existing table converts into what a rebuild of the
 * documents projection writes, the projection no longer touches a document's `documents` row when
 * its state changes, and the migration's down brings both columns back from `sales_documents`.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { NewEvent } from '../../platform/eventstore/port.js';
import { documentsProjection } from '../../projections/documents.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { documentsCountsOnlyMigration } from '../../readmodels/migrations/0148_documents_counts_only.js';
import { migrateToLatest } from '../../readmodels/migrations/index.js';
import { openEventStoreBefore } from '../support/db.js';

const WORKSPACE = 'ws_docscounts';
const COLUMNS = ['document_id', 'workspace_id', 'environment', 'company_id', 'country', 'direction', 'document_base', 'document_number', 'created_at'];

describe('documents without the state and last change (migration 0148)', function () {
  this.timeout(120000);
  let own: Awaited<ReturnType<typeof openEventStoreBefore>>;
  let knex: Knex;
  let store: PostgresEventStore;
  const ids = [randomUUID(), randomUUID()];
  const at = new Date(Date.UTC(2026, 2, 1, 12)).toISOString();
  const later = new Date(Date.UTC(2026, 2, 1, 12, 0, 5)).toISOString();

  before(async () => {
    own = await openEventStoreBefore('docscounts', documentsCountsOnlyMigration);
    ({ knex, store } = own);
  });
  after(() => own?.drop());

  const documentsRows = async () => knex('documents').whereIn('document_id', ids).orderBy('document_id').select(COLUMNS);

  it('keeps what counts read, equals a rebuild (after a state change too), and its down restores both columns from sales_documents', async () => {
    for (const [i, id] of ids.entries()) {
      const data = {
        documentId: id,
        uuid: randomUUID(),
        documentNumber: `COUNT-${i + 1}`,
        country: 'AE',
        environment: 'sandbox',
        documentType: { base: 'tax_invoice', modifiers: [] },
        source: { name: 'erp', version: '1', companyId: i === 0 ? 'co_counts' : null },
        format: 'new',
        externalId: null,
        destinations: ['PEPPOL'],
        coreDocument: { header: { documentNumber: `COUNT-${i + 1}`, issueDate: '2026-03-01' } },
        validation: { success: true, errors: [] },
        xml: null,
      };
      const event: NewEvent = {
        id: randomUUID(),
        type: 'DocumentSubmitted',
        schemaVersion: 2,
        data,
        metadata: { correlationId: randomUUID(), causationId: null, occurredAt: at, workspaceId: WORKSPACE, environment: 'sandbox' },
      };
      await store.append(`document-${id}`, [event], 'no_stream');
      // The rows as the projection's version 4 wrote them.
      const state = 'submitted';
      const updatedAt = at;
      await knex('sales_documents').insert({
        document_id: id, workspace_id: WORKSPACE, environment: 'sandbox', country: 'AE', document_number: data.documentNumber, uuid: data.uuid,
        state, format: 'new', external_id: null, document_type: JSON.stringify(data.documentType), source: JSON.stringify(data.source),
        company_id: data.source.companyId, destinations: JSON.stringify(data.destinations), issue_date: JSON.stringify('2026-03-01'), errors: '[]',
        government: null, attempts: 0, received_at: at, last_updated_at: updatedAt,
      });
      await knex('documents').insert({
        document_id: id, workspace_id: WORKSPACE, environment: 'sandbox', company_id: data.source.companyId, country: 'AE', direction: 'sales',
        document_base: 'tax_invoice', document_number: data.documentNumber, state, created_at: at, updated_at: updatedAt,
      });
    }
    await knex('projection_checkpoints').insert({ projection: 'documents', version: 4 }).onConflict('projection').merge();
    const before = await documentsRows();
    expect(before).to.have.length(2);

    await migrateToLatest(knex);

    const migrated = await knex('documents').where({ document_id: ids[0] }).first();
    expect(migrated).to.not.have.property('state');
    expect(migrated).to.not.have.property('updated_at');
    expect(await documentsRows()).to.deep.equal(before);
    expect((await knex('projection_checkpoints').where({ projection: 'documents' }).first()).version).to.equal(documentsProjection.version);

    // What the projection writes from the same events: the same rows.
    await rebuildProjection(knex, store, documentsProjection);
    expect(await documentsRows()).to.deep.equal(before);

    // After a state change (the delivery's start) a rebuild moves the sales_documents row; the documents row stays as it was.
    await store.append(
      `document-${ids[1]}`,
      [{ id: randomUUID(), type: 'DocumentDeliveryStarted', schemaVersion: 1, data: { attempt: 1, destination: 'PEPPOL' }, metadata: { correlationId: randomUUID(), causationId: null, occurredAt: later, workspaceId: WORKSPACE, environment: 'sandbox' } }],
      0n,
    );
    await rebuildProjection(knex, store, documentsProjection);
    expect((await knex('sales_documents').where({ document_id: ids[1] }).first()).state).to.equal('processing');
    expect(await documentsRows()).to.deep.equal(before);

    // Down: both columns come back from sales_documents.
    await documentsCountsOnlyMigration.down(knex);
    const restored = await knex('documents').whereIn('document_id', ids).select('document_id', 'state', 'updated_at');
    const byId = new Map(restored.map((r) => [r.document_id, r]));
    expect(byId.get(ids[0])!.state).to.equal('submitted');
    expect((byId.get(ids[0])!.updated_at as Date).toISOString()).to.equal(at);
    expect(byId.get(ids[1])!.state).to.equal('processing');
    expect((byId.get(ids[1])!.updated_at as Date).toISOString()).to.equal(later);
    expect((await knex('projection_checkpoints').where({ projection: 'documents' }).first()).version).to.equal(4);
  });
});
