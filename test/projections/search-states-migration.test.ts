/**
 * Migration 0072: each search document's state (statuses, status history) moves into
 * `search_document_states`, the body stays in `search_documents` without a version, and the facts
 * of documents in flight lose the submission's content. The migration's down and up are each
 * other's inverse on what the projection writes, and a state change after the migration applies
 * to the migrated rows.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { NewEvent } from '../../platform/eventstore/port.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { searchProjection } from '../../projections/search.js';
import { searchDocumentStatesMigration } from '../../readmodels/migrations/0072_search_document_states.js';
import { searchServiceValuesMigration } from '../../readmodels/migrations/0090_search_service_values.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import type { SearchQuery } from '../../readmodels/search/port.js';
import { PostgresSearchIndex, SEARCH_STATES_TABLE, SEARCH_TABLE } from '../../readmodels/search/postgres.js';
import { SALES_FACTS_TABLE } from '../../readmodels/search/sales-facts.js';
import { newEvent } from '../eventstore/contract.js';
import { openEventStoreBefore } from '../support/db.js';
import { receivedDocumentData } from '../support/sales-documents.js';
import { makeDocument } from '../search/contract.js';

const WORKSPACE = 'ws_searchstates';

describe('search documents with their states apart (migration 0072)', function () {
  this.timeout(120000);
  let own: Awaited<ReturnType<typeof openEventStoreBefore>>;
  let knex: Knex;
  let store: PostgresEventStore;

  before(async () => {
    own = await openEventStoreBefore('searchstates', searchDocumentStatesMigration, { latestFirst: true });
    ({ knex, store } = own);
  });
  after(() => own?.drop());

  const at = (s: number) => `2026-03-01T00:00:${String(s).padStart(2, '0')}.000Z`;
  const ev = (type: string, data: unknown, s: number): NewEvent => {
    const e = newEvent(type, data);
    return { ...e, metadata: { ...e.metadata, workspaceId: WORKSPACE, occurredAt: at(s) } };
  };
  const received = (id: string, variant: string | null) => ({
    ...receivedDocumentData(id, {
      number: `ST-${id.slice(0, 6)}`,
      variant,
      coreDocument: { header: { documentNumber: `ST-${id.slice(0, 6)}`, issueDate: '2026-03-01', currency: 'AED' }, parties: { seller: { name: 'Seller' } } },
    }),
    xmlBase64: null,
  });
  const query = (type: SearchQuery['type']): SearchQuery => ({ workspaceId: WORKSPACE, environment: 'sandbox', type, filters: [], searches: [], sort: { field: 'documentId', order: 'asc' }, offset: 0, limit: 100 });

  /** Every row of the index's tables and the facts, keyed, as parsed JSON. */
  const parsed = <R extends Record<string, unknown>>(rows: R[], column: string) => rows.map((r) => ({ ...r, [column]: typeof r[column] === 'string' ? JSON.parse(r[column] as string) : r[column] }));
  const snapshot = async () => ({
    bodies: parsed(await knex(SEARCH_TABLE).orderBy(['type', 'document_id']).select('type', 'document_id', 'document'), 'document'),
    states: parsed(await knex(SEARCH_STATES_TABLE).orderBy(['type', 'document_id']).select('type', 'document_id', 'version', 'state', 'sv_meta_statuses_document_current', 'sv_country_document_status'), 'state'),
    facts: await knex(SALES_FACTS_TABLE).orderBy('document_id').select('document_id', 'revision', 'facts'),
  });
  const searches = async (index: PostgresSearchIndex) => Promise.all((['sales', 'receipts', 'purchases'] as const).map((t) => index.search(query(t))));

  it('down gives the one-row documents and full facts, up gives back what the projection writes, and state changes apply after it', async () => {
    const [finalId, inFlightId, receiptId] = ['a-final', 'b-flight', 'c-receipt'].map((p) => `${p}-${randomUUID()}`);
    await store.append(`document-${finalId}`, [
      ev('DocumentSubmitted', received(finalId!, null), 0),
      ev('DocumentDeliveryStarted', { attempt: 1, destination: 'TAX_AUTHORITY' }, 1),
      ev('DocumentDelivered', { attempt: 1, government: null }, 2),
      ev('DocumentFinalized', { outcome: 'valid', government: null, errors: [] }, 3),
    ], 'no_stream');
    await store.append(`document-${inFlightId}`, [ev('DocumentSubmitted', received(inFlightId!, null), 0), ev('DocumentDeliveryStarted', { attempt: 1, destination: 'TAX_AUTHORITY' }, 1)], 'no_stream');
    await store.append(`document-${receiptId}`, [ev('DocumentSubmitted', received(receiptId!, 'receipt'), 0)], 'no_stream');
    const index = new PostgresSearchIndex(knex);
    const projection = searchProjection(index);
    await new ProjectionRunner(knex, store, [projection]).catchUp();
    // A purchase, written whole (its source's own events are not needed for the tables' shape).
    await knex.transaction((trx) => index.write(trx, [makeDocument({ workspaceId: WORKSPACE, environment: 'sandbox' }, 'purchases', { documentId: 'd-purchase' })]));
    const written = await snapshot();
    const answers = await searches(index);
    expect(answers.map((a) => a.total)).to.deep.equal([2, 1, 1]);
    expect(written.facts.map((f) => f.document_id)).to.deep.equal([inFlightId, receiptId]);

    // Down to the layout migration 0072 made (migration 0090's down: jsonb, generated values).
    await searchServiceValuesMigration.down(knex);
    expect(await snapshot()).to.deep.equal(written);
    expect((await knex('projection_checkpoints').where({ projection: 'search' }).first()).version).to.equal(2);

    // Down: one row per document, whole, with the state's version; the facts whole again.
    await searchDocumentStatesMigration.down(knex);
    expect((await knex.raw(`select to_regclass(?) as t`, [SEARCH_STATES_TABLE])).rows[0].t).to.equal(null);
    const whole = await knex(SEARCH_TABLE).orderBy(['type', 'document_id']).select('type', 'document_id', 'version', 'document', 'sv_meta_statuses_document_current');
    const documents = answers.flatMap((a) => a.documents);
    const byId = (id: unknown) => documents.find((d) => d.documentId === id);
    for (const row of whole) expect(row.document, row.document_id).to.deep.equal(byId(row.document_id));
    expect(whole.map((r) => r.version)).to.deep.equal(written.states.map((s) => s.version));
    expect(whole.find((r) => r.document_id === finalId).sv_meta_statuses_document_current).to.equal('compliant');
    const fullFacts = await knex(SALES_FACTS_TABLE).where({ document_id: inFlightId }).first('facts');
    expect(fullFacts.facts.coreDocument).to.deep.equal(received(inFlightId!, null).coreDocument);
    expect(fullFacts.facts.validation).to.deep.equal(received(inFlightId!, null).validation);
    expect(fullFacts.facts.source).to.deep.equal({ name: 'ERP', version: 'v1', companyId: null });
    expect((await knex('projection_checkpoints').where({ projection: 'search' }).first()).version).to.equal(1);

    // Up: exactly what the projection wrote, and the same answers.
    await searchDocumentStatesMigration.up(knex);
    expect(await snapshot()).to.deep.equal(written);
    expect((await knex('projection_checkpoints').where({ projection: 'search' }).first()).version).to.equal(2);
    // And up again to the service's values (0090), then rebuilt by the projection's code.
    await searchServiceValuesMigration.up(knex);
    expect(await snapshot()).to.deep.equal(written);
    expect(await searches(index)).to.deep.equal(answers);
    await rebuildProjection(knex, store, projection);
    expect(await snapshot()).to.deep.equal(written);
    expect((await knex('projection_checkpoints').where({ projection: 'search' }).first()).version).to.equal(projection.version);

    // The document in flight becomes final from its migrated facts: new statuses, same body, facts dropped.
    await store.append(`document-${inFlightId}`, [
      ev('DocumentDelivered', { attempt: 1, government: null }, 4),
      ev('DocumentFinalized', { outcome: 'invalid', government: null, errors: [] }, 5),
    ], 1n);
    const events = await store.readStream(`document-${inFlightId}`, { fromRevision: 2n });
    await knex.transaction((trx) => projection.applyMany!(trx, events));
    const [sales] = await searches(index);
    const final = sales!.documents.find((d) => d.documentId === inFlightId) as any;
    const before = byId(inFlightId) as any;
    expect(final.coreDocument.meta.statuses.internal.state).to.equal('final_invalid');
    expect(final.statusHistory.map((h: { state: string }) => h.state)).to.deep.equal(['submitted', 'processing', 'delivery_success', 'final_invalid']);
    expect({ ...final.coreDocument, meta: null }).to.deep.equal({ ...before.coreDocument, meta: null });
    expect(final.coreDocument.meta.source).to.deep.equal(before.coreDocument.meta.source);
    expect(await knex(SALES_FACTS_TABLE).where({ document_id: inFlightId }).first()).to.equal(undefined);
  });
});
