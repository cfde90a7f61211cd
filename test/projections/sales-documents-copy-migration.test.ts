/**
 * Migration 0071: sales_documents drops its copies of the core document and the validation
 * report and keeps the issue date. An existing table converts into what a rebuild of the
 * documents projection writes, and the migration's down brings the copies back from the log.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { NewEvent } from '../../platform/eventstore/port.js';
import { documentsProjection } from '../../projections/documents.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { salesDocumentsNoDocumentCopyMigration } from '../../readmodels/migrations/0071_sales_documents_no_document_copy.js';
import { documentsCountsOnlyMigration } from '../../readmodels/migrations/0148_documents_counts_only.js';
import { migrateToLatest } from '../../readmodels/migrations/index.js';
import { openEventStoreBefore } from '../support/db.js';

const WORKSPACE = 'ws_salescopy';

/** Three documents whose issue dates the old rows only held inside their core documents. */
const DOCUMENTS = [
  { type: 'DocumentSubmitted', coreDocument: { header: { documentNumber: 'COPY-1', issueDate: '2026-03-01' } }, issueDate: '2026-03-01' },
  // A rejected document's issue date may be anything, null included (kept as absent).
  { type: 'DocumentRejected', coreDocument: { header: { documentNumber: 'COPY-2', issueDate: null } }, issueDate: null },
  { type: 'DocumentRejected', coreDocument: { header: { documentNumber: 'COPY-3', issueDate: 20260301 } }, issueDate: 20260301 },
  { type: 'DocumentRejected', coreDocument: ['not', 'an', 'object'], issueDate: null },
] as const;

describe('sales_documents without a copy of the document (migration 0071)', function () {
  this.timeout(120000);
  let own: Awaited<ReturnType<typeof openEventStoreBefore>>;
  let knex: Knex;
  let store: PostgresEventStore;
  const ids = DOCUMENTS.map(() => randomUUID());
  const validation = { success: false, errors: [{ ruleId: 'CORE-HEAD-001' }] };

  before(async () => {
    own = await openEventStoreBefore('salescopy', salesDocumentsNoDocumentCopyMigration);
    ({ knex, store } = own);
  });
  after(() => own?.drop());

  it('keeps the issue date as the document held it, drops both copies, equals a rebuild, and its down restores the copies from the log', async () => {
    const at = new Date(Date.UTC(2026, 2, 1, 12)).toISOString();
    for (const [i, d] of DOCUMENTS.entries()) {
      const data = {
        documentId: ids[i],
        uuid: randomUUID(),
        documentNumber: `COPY-${i + 1}`,
        country: 'AE',
        environment: 'sandbox',
        documentType: { base: 'tax_invoice', modifiers: [] },
        source: { name: 'erp', version: '1', companyId: null },
        format: 'new',
        externalId: null,
        destinations: ['PEPPOL'],
        coreDocument: d.coreDocument,
        validation,
        ...(d.type === 'DocumentSubmitted' ? { xml: null } : { errors: [] }),
      };
      const event: NewEvent = {
        id: randomUUID(),
        type: d.type,
        schemaVersion: d.type === 'DocumentSubmitted' ? 2 : 1,
        data,
        metadata: { correlationId: randomUUID(), causationId: null, occurredAt: at, workspaceId: WORKSPACE, environment: 'sandbox' },
      };
      await store.append(`document-${ids[i]}`, [event], 'no_stream');
      // The row as the projection's version 3 wrote it.
      await knex('sales_documents').insert({
        document_id: ids[i], workspace_id: WORKSPACE, environment: 'sandbox', country: 'AE', document_number: data.documentNumber, uuid: data.uuid,
        state: d.type === 'DocumentSubmitted' ? 'submitted' : 'rejected', format: 'new', external_id: null, document_type: JSON.stringify(data.documentType),
        source: JSON.stringify(data.source), company_id: null, destinations: JSON.stringify(data.destinations), core_document: JSON.stringify(d.coreDocument),
        validation: JSON.stringify(validation), errors: '[]', government: null, attempts: 0, received_at: at, last_updated_at: at,
      });
    }
    await knex('projection_checkpoints').insert({ projection: 'documents', version: 3 }).onConflict('projection').merge();

    await migrateToLatest(knex);

    const issueDates = async () => {
      const rows = await knex('sales_documents').whereIn('document_id', ids).select('document_id', 'issue_date');
      return ids.map((id) => rows.find((r) => r.document_id === id)!.issue_date);
    };
    expect(await issueDates()).to.deep.equal(DOCUMENTS.map((d) => d.issueDate));
    const row = await knex('sales_documents').where({ document_id: ids[0] }).first();
    expect(row).to.not.have.property('core_document');
    expect(row).to.not.have.property('validation');
    expect((await knex('projection_checkpoints').where({ projection: 'documents' }).first()).version).to.equal(documentsProjection.version);

    // What the projection writes from the same events: the same issue dates.
    await rebuildProjection(knex, store, documentsProjection);
    expect(await issueDates()).to.deep.equal(DOCUMENTS.map((d) => d.issueDate));

    // Down (after the later migration of the projection's tables): the copies come back from each document's first event.
    await documentsCountsOnlyMigration.down(knex);
    await salesDocumentsNoDocumentCopyMigration.down(knex);
    const restored = await knex('sales_documents').whereIn('document_id', ids).select('document_id', 'core_document', 'validation');
    expect(ids.map((id) => restored.find((r) => r.document_id === id)!.core_document)).to.deep.equal(DOCUMENTS.map((d) => d.coreDocument));
    for (const r of restored) expect(r.validation).to.deep.equal(validation);
    expect(await knex('sales_documents').where({ document_id: ids[0] }).first()).to.not.have.property('issue_date');
    expect((await knex('projection_checkpoints').where({ projection: 'documents' }).first()).version).to.equal(3);
  });
});
