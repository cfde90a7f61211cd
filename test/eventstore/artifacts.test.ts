/**
 * Artifacts stored once (issue 19): the documents projection in batches (rebuild == live, old
 * events with inline artifacts included), the migration of an existing database, and the audit
 * of the artifact store against the log (npm run audit -- artifacts).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { artifactOf, type NewEvent, type RecordedEvent } from '../../platform/eventstore/port.js';
import { artifactsMigration } from '../../platform/eventstore/postgres-schema.js';
import { documentsProjection } from '../../projections/documents.js';
import { migrateToLatest } from '../../readmodels/migrations/index.js';
import { findSalesDocument } from '../../readmodels/sales-documents.js';
import { openEventStoreBefore, testDb } from '../support/db.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const b64 = (text: string) => Buffer.from(text).toString('base64');

function received(documentId: string, n: number) {
  return {
    documentId,
    uuid: randomUUID(),
    documentNumber: `INV-${n}`,
    country: 'AE',
    environment: 'sandbox',
    documentType: { base: 'tax_invoice', modifiers: [] },
    source: { name: 'erp', version: '1', companyId: n % 2 === 0 ? `co_${n}` : null },
    format: 'new',
    externalId: null,
    destinations: ['TAX_AUTHORITY'],
    coreDocument: { header: { documentNumber: `INV-${n}` } },
    validation: { success: true, errors: [] },
  };
}

const WORKSPACE = 'ws_artifacts';
let position = 0n;
const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 12, minute)).toISOString();

/** An event as the log hands it back (the projection needs no store). */
function recorded(documentId: string, type: string, schemaVersion: number, data: unknown, minute: number): RecordedEvent {
  position++;
  return {
    id: randomUUID(),
    type,
    schemaVersion,
    data,
    metadata: { correlationId: randomUUID(), causationId: null, occurredAt: at(minute), workspaceId: WORKSPACE, environment: 'sandbox' },
    streamId: `document-${documentId}`,
    revision: 0n,
    position: { commit: position, prepare: position },
    recordedAt: new Date(),
  };
}

/** Histories covering every event type, v1 (inline artifacts) and v2 (by hash), and a retry. */
function histories() {
  const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const xmlA = b64(`<Invoice>${a}</Invoice>`);
  const tddA = b64(`<TaxData>${a}</TaxData>`);
  const xmlB = artifactOf(Buffer.from(`<Invoice>${b}</Invoice>`));
  const tddB = artifactOf(Buffer.from(`<TaxData>${b}</TaxData>`));
  const err = { code: 'TIMEOUT', message: 'no answer', path: [], source: 'delivery' };
  const events = [
    // a: written before artifacts were stored by hash (schema v1, inline base64)
    recorded(a, 'DocumentSubmitted', 1, { ...received(a, 1), xmlBase64: xmlA }, 0),
    recorded(a, 'DocumentDeliveryStarted', 1, { attempt: 1, destination: 'PEPPOL' }, 1),
    recorded(a, 'DocumentDelivered', 1, { attempt: 1, government: { status: 'DELIVERED' }, xmlBase64: null, tddXmlBase64: tddA, finalResultDueAt: at(30) }, 2),
    // b: schema v2, a failed attempt, a retry, delivered with both artifacts by hash
    recorded(b, 'DocumentSubmitted', 2, { ...received(b, 2), xml: { sha256: xmlB.sha256 } }, 3),
    recorded(b, 'DocumentDeliveryStarted', 1, { attempt: 1, destination: 'ZATCA' }, 4),
    recorded(b, 'DocumentDeliveryFailed', 1, { attempt: 1, error: err, retryable: true, government: null, nextAttemptAt: at(20) }, 5),
    recorded(a, 'DocumentFinalized', 1, { outcome: 'valid', government: { status: 'APPROVED' }, errors: [] }, 6),
    recorded(b, 'DocumentDeliveryStarted', 1, { attempt: 2, destination: 'ZATCA' }, 7),
    recorded(b, 'DocumentDelivered', 2, { attempt: 2, government: { status: 'CLEARED' }, xml: { sha256: xmlB.sha256 }, tdd: { sha256: tddB.sha256 }, finalResultDueAt: null }, 8),
    // c: rejected; d: submitted without XML, failed for good and finalized invalid
    recorded(c, 'DocumentRejected', 1, { ...received(c, 3), errors: [{ ...err, source: 'validation' }] }, 9),
    recorded(d, 'DocumentSubmitted', 2, { ...received(d, 4), xml: null }, 10),
    recorded(d, 'DocumentDeliveryStarted', 1, { attempt: 1, destination: 'NONE' }, 11),
    recorded(d, 'DocumentDeliveryFailed', 1, { attempt: 1, error: err, retryable: false, government: null }, 12),
    recorded(d, 'DocumentFinalized', 1, { outcome: 'invalid', government: null, errors: [err] }, 13),
  ];
  return { ids: [a, b, c, d], events, inline: { xmlA, tddA }, stored: [xmlB, tddB] };
}

/** Fresh copies of the projection's tables in a schema of their own; `fn` runs with it first on the search_path. */
async function inSchema<T>(knex: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<{ schema: string; result: T }> {
  const schema = `art_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await knex.raw(`create schema "${schema}"`);
  for (const table of documentsProjection.tables) await knex.raw(`create table "${schema}"."${table}" (like public."${table}" including all)`);
  const result = await knex.transaction(async (trx) => {
    await trx.raw(`set local search_path to "${schema}", public`);
    return fn(trx);
  });
  return { schema, result };
}

async function rows(knex: Knex, schema: string) {
  const sales = await knex.withSchema(schema).from('sales_documents').orderBy('document_id');
  const docs = await knex.withSchema(schema).from('documents').orderBy('document_id');
  return { sales, docs };
}

function runAudit(url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/audit.ts', 'artifacts'],
      { env: { ...process.env, DATABASE_URL: url, EVENTSTORE_URL: '', LOG_LEVEL: 'silent' }, timeout: 90000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe('artifacts stored once: the documents projection in batches', () => {
  it('writes the same rows whether the events come one per batch or all in one, storing inline artifacts by hash', async () => {
    const knex = testDb().knex;
    const h = histories();
    const one = await inSchema(knex, async (trx) => {
      for (const e of h.events) await documentsProjection.apply(trx, e);
    });
    const all = await inSchema(knex, (trx) => documentsProjection.applyMany!(trx, h.events));
    // Split in the middle of documents' histories: rows inserted by one batch, updated by the next.
    const split = await inSchema(knex, async (trx) => {
      await documentsProjection.applyMany!(trx, h.events.slice(0, 5));
      await documentsProjection.applyMany!(trx, h.events.slice(5));
    });
    const [r1, r2, r3] = [await rows(knex, one.schema), await rows(knex, all.schema), await rows(knex, split.schema)];
    expect(r1.sales).to.have.length(4);
    expect(r2).to.deep.equal(r1);
    expect(r3).to.deep.equal(r1);

    const [a, b, c, d] = h.ids.map((id) => r1.sales.find((r: { document_id: string }) => r.document_id === id));
    expect(a).to.include({ state: 'final_valid', xml_sha256: sha256(Buffer.from(h.inline.xmlA, 'base64')), tdd_xml_sha256: sha256(Buffer.from(h.inline.tddA, 'base64')), attempts: 1 });
    expect(a.final_result_due_at).to.equal(null);
    expect(a.government).to.deep.equal({ status: 'APPROVED' });
    expect(b).to.include({ state: 'delivery_success', xml_sha256: h.stored[0]!.sha256, tdd_xml_sha256: h.stored[1]!.sha256, attempts: 2 });
    expect(b.next_attempt_at).to.equal(null);
    expect(b.errors).to.deep.equal([]);
    expect(c).to.include({ state: 'rejected', xml_sha256: null });
    expect(c.errors).to.have.length(1);
    expect(d).to.include({ state: 'final_invalid', xml_sha256: null, attempts: 1 });
    // The shared documents table: one row per document with what counts read (no state).
    expect(r1.docs.map((r: { document_id: string }) => r.document_id).sort()).to.deep.equal([...h.ids].sort());
    expect(r1.docs[0]).to.not.have.property('state');
    expect(r1.docs.find((r: { document_id: string }) => r.document_id === h.ids[0]).created_at.toISOString()).to.equal(at(0));

    // The inline bytes of the v1 events are now in the artifact store, under their hash.
    const stored = await knex('es_artifacts').whereIn('hash', [a.xml_sha256, a.tdd_xml_sha256]);
    expect(stored).to.have.length(2);
    for (const s of stored) expect(sha256(s.content)).to.equal(s.hash);
    for (const schema of [one.schema, all.schema, split.schema]) await knex.raw(`drop schema "${schema}" cascade`);
  });
});

describe('artifacts stored once: migrating an existing database, and the audit', function () {
  this.timeout(120000);
  let own: Awaited<ReturnType<typeof openEventStoreBefore>>;
  let url: string;
  let knex: Knex;
  let store: PostgresEventStore;

  before(async function () {
    // The schema as it was before artifacts were stored by hash.
    own = await openEventStoreBefore('artifacts', artifactsMigration);
    ({ knex, url, store } = own);
  });
  after(() => own?.drop());

  const event = (type: string, schemaVersion: number, data: unknown): NewEvent => ({
    id: randomUUID(),
    type,
    schemaVersion,
    data,
    metadata: { correlationId: randomUUID(), causationId: null, occurredAt: new Date().toISOString(), workspaceId: WORKSPACE, environment: 'sandbox' },
  });

  it('moves the read model copies into the artifact store, keeps their hashes, and the status read finds the same bytes', async () => {
    const id = randomUUID();
    const xml = b64(`<Invoice>${id}</Invoice>`);
    const tdd = b64(`<TaxData>${id}</TaxData>`);
    // The log and the read model as the earlier code wrote them: inline in the events, copied into sales_documents.
    await store.append(`document-${id}`, [event('DocumentSubmitted', 1, { ...received(id, 7), xmlBase64: xml })], 'no_stream');
    await store.append(`document-${id}`, [event('DocumentDeliveryStarted', 1, { attempt: 1, destination: 'PEPPOL' })], 0n);
    await store.append(`document-${id}`, [event('DocumentDelivered', 1, { attempt: 1, government: {}, xmlBase64: null, tddXmlBase64: tdd })], 1n);
    const r = received(id, 7);
    await knex('sales_documents').insert({
      document_id: id, workspace_id: WORKSPACE, environment: 'sandbox', country: 'AE', document_number: r.documentNumber, uuid: r.uuid,
      state: 'delivery_success', format: 'new', external_id: null, document_type: JSON.stringify(r.documentType), source: JSON.stringify(r.source),
      company_id: null, destinations: JSON.stringify(r.destinations), core_document: JSON.stringify(r.coreDocument), validation: JSON.stringify(r.validation),
      errors: '[]', government: '{}', xml_base64: xml, tdd_xml_base64: tdd, attempts: 1, received_at: new Date(), last_updated_at: new Date(),
    });
    await knex('projection_checkpoints').insert({ projection: 'documents', version: 2 }).onConflict('projection').merge();

    await migrateToLatest(knex);

    const row = await knex('sales_documents').where({ document_id: id }).first();
    expect(row).to.not.have.property('xml_base64');
    expect(row).to.not.have.property('tdd_xml_base64');
    expect(row.xml_sha256).to.equal(sha256(Buffer.from(xml, 'base64')));
    expect(row.tdd_xml_sha256).to.equal(sha256(Buffer.from(tdd, 'base64')));
    const found = await findSalesDocument(knex, WORKSPACE, id);
    expect(found!.xmlBase64).to.equal(xml);
    expect(found!.tddXmlBase64).to.equal(tdd);
    expect((await knex('projection_checkpoints').where({ projection: 'documents' }).first()).version).to.equal(documentsProjection.version);
  });

  it('audits every artifact against its key and every reference of the log against the store, and names what is wrong', async () => {
    // New events name their artifacts by hash; the bytes go in with the append.
    const id = randomUUID();
    const xml = artifactOf(Buffer.from(`<Invoice>${id}</Invoice>`));
    await store.append(`document-${id}`, [event('DocumentSubmitted', 2, { ...received(id, 8), xml: { sha256: xml.sha256 } })], 'no_stream', { artifacts: [xml] });

    // A received purchase names its XML by hash (v2); one received before carries it inline (v1), with the hash it recorded.
    const bought = artifactOf(Buffer.from(`<Invoice>purchase ${id}</Invoice>`));
    const purchase = { documentId: `pur_${id}`, workspaceId: WORKSPACE, environment: 'sandbox', channel: 'peppol_as4', senderParticipantId: null, receiverParticipantId: null, xmlSha256: bought.sha256, xmlBytes: bought.content.byteLength, transmission: null, receivedAt: new Date().toISOString() };
    await store.append(`purchase-${id}`, [event('PurchaseInvoiceReceived', 2, { ...purchase, xml: { sha256: bought.sha256 } })], 'no_stream', { artifacts: [bought] });
    await store.append(`purchase-v1-${id}`, [event('PurchaseInvoiceReceived', 1, { ...purchase, xmlBase64: bought.content.toString('base64') })], 'no_stream');

    const clean = await runAudit(url);
    expect(clean.code, clean.stderr).to.equal(0);
    const report = JSON.parse(clean.stdout);
    // Stored: the migrated XML and TDD, the new XML and the purchase's; referenced inline by the three v1 events, by hash by the two new ones.
    expect(report).to.include({ stored: 4, verified: 4, references: 5, resolved: 2, inline: 3, unreferenced: 0 });
    expect(report.problems).to.deep.equal([]);

    // An event naming an artifact that is not stored.
    const missing = sha256(Buffer.from('never stored'));
    const other = randomUUID();
    await store.append(`document-${other}`, [event('DocumentSubmitted', 2, { ...received(other, 9), xml: { sha256: missing } })], 'no_stream');
    // Stored bytes changed behind the store's back (the triggers and the hash check switched off by hand).
    await knex.raw(`alter table es_artifacts disable trigger es_artifacts_append_only; alter table es_artifacts drop constraint es_artifacts_content_hash`);
    await knex('es_artifacts').where({ hash: xml.sha256 }).update({ content: Buffer.from('<Invoice>tampered</Invoice>') });

    // A purchase whose v1 inline bytes do not hash as it recorded.
    await store.append(`purchase-v1-bad-${id}`, [event('PurchaseInvoiceReceived', 1, { ...purchase, xmlBase64: Buffer.from('<Invoice>other</Invoice>').toString('base64') })], 'no_stream');

    const dirty = await runAudit(url);
    expect(dirty.code).to.equal(1);
    const problems = JSON.parse(dirty.stdout).problems as { kind: string; sha256: string; streamId?: string }[];
    expect(problems.map((p) => [p.kind, p.sha256]).sort()).to.deep.equal([['hash_mismatch', xml.sha256], ['missing', missing], ['inline_mismatch', bought.sha256]].sort());
    expect(problems.find((p) => p.kind === 'missing')!.streamId).to.equal(`document-${other}`);
    expect(problems.find((p) => p.kind === 'inline_mismatch')!.streamId).to.equal(`purchase-v1-bad-${id}`);
    expect(dirty.stderr).to.contain('3 artifact problem(s)');
  });
});
