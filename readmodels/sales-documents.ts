/**
 * Queries of the sales documents read model, and the batched writes of its projection
 * (projections/documents.ts). Every query is scoped by workspace in SQL.
 *
 * The artifacts (the e-invoice XML, the Tax Data Document) are not copied here: a row names them
 * by hash (`xml_sha256`, `tdd_xml_sha256`) and the status read joins the event store's artifact
 * table (es_artifacts), where they are stored once.
 */
import type { Knex } from 'knex';
import { unpackArtifact } from '../platform/eventstore/artifact-encoding.js';
import { runWrites, type BatchWrite } from './batch-writes.js';
import { prepared } from './prepared.js';
import type { DocumentErrorItem, DocumentState } from '../domain/document/document.js';

export interface SalesDocumentRow {
  documentId: string;
  workspaceId: string;
  environment: string;
  country: string;
  documentNumber: string | null;
  uuid: string | null;
  state: DocumentState;
  documentType: { base: string; modifiers: string[]; variant?: string | null };
  source: { name: string; version: string; companyId: string | null };
  externalId: string | null;
  /** The core document's `header.issueDate` as it holds it (any JSON value), null when absent. */
  issueDate: unknown;
  errors: DocumentErrorItem[];
  government: unknown;
  /** Hashes of the artifacts the document's events name. */
  xmlSha256: string | null;
  tddXmlSha256: string | null;
  /** Their bytes as base64, from the artifact store (null when none, or not found there). */
  xmlBase64: string | null;
  tddXmlBase64: string | null;
  receivedAt: Date;
  lastUpdatedAt: Date;
}

function toRow(r: any): SalesDocumentRow {
  return {
    documentId: r.document_id,
    workspaceId: r.workspace_id,
    environment: r.environment,
    country: r.country,
    documentNumber: r.document_number,
    uuid: r.uuid,
    state: r.state,
    documentType: r.document_type,
    source: r.source,
    externalId: r.external_id,
    issueDate: r.issue_date ?? null,
    errors: r.errors,
    government: r.government,
    xmlSha256: r.xml_sha256 ?? null,
    tddXmlSha256: r.tdd_xml_sha256 ?? null,
    xmlBase64: r.xml_content ? (r.xml_content as Buffer).toString('base64') : null,
    tddXmlBase64: r.tdd_xml_content ? (r.tdd_xml_content as Buffer).toString('base64') : null,
    receivedAt: r.received_at,
    lastUpdatedAt: r.last_updated_at,
  };
}

/**
 * One document with its artifacts (one query: the artifact store is joined by hash; it keeps them
 * compressed, platform/eventstore/artifact-encoding.ts).
 */
export async function findSalesDocument(knex: Knex, workspaceId: string, documentId: string): Promise<SalesDocumentRow | null> {
  const row = await knex('sales_documents as sd')
    .leftJoin('es_artifacts as xa', 'xa.hash', 'sd.xml_sha256')
    .leftJoin('es_artifacts as ta', 'ta.hash', 'sd.tdd_xml_sha256')
    .where({ 'sd.workspace_id': workspaceId, 'sd.document_id': documentId })
    .first('sd.*', 'xa.content as xml_content', 'xa.encoding as xml_encoding', 'ta.content as tdd_xml_content', 'ta.encoding as tdd_xml_encoding');
  if (!row) return null;
  if (row.xml_content) row.xml_content = unpackArtifact(row.xml_content, row.xml_encoding);
  if (row.tdd_xml_content) row.tdd_xml_content = unpackArtifact(row.tdd_xml_content, row.tdd_xml_encoding);
  return toRow(row);
}

/** A document as its first event inserts it (jsonb columns as values; errors and government as JSON text). */
export interface SalesDocumentInsert {
  documentId: string;
  workspaceId: string | null;
  environment: string;
  country: string;
  documentNumber: string | null;
  uuid: string;
  state: string;
  format: string;
  externalId: string | null;
  documentType: unknown;
  source: { name: string; version: string; companyId: string | null };
  destinations: unknown;
  issueDate: unknown;
  errors: string;
  government: string | null;
  xmlSha256: string | null;
  tddXmlSha256: string | null;
  attempts: number;
  nextAttemptAt: string | null;
  finalResultDueAt: string | null;
  receivedAt: string;
  lastUpdatedAt: string;
}

/**
 * The merged change of one existing document: state and time always; a field left undefined
 * keeps its value (government and errors change together, as `result`, JSON text).
 */
export interface SalesDocumentChange {
  documentId: string;
  /** Undefined: the state stays (the buyer's answer to a document changes its record alone). */
  state?: string;
  updatedAt: string;
  attempts?: number;
  nextAttemptAt?: string | null;
  result?: { government: string; errors: string };
  /** The delivery record alone (JSON text), errors unchanged; `result` wins when both are set. */
  government?: string;
  finalResultDueAt?: string | null;
  xmlSha256?: string;
  tddXmlSha256?: string;
}

/**
 * The inserts of documents into sales_documents and documents (readmodels/batch-writes.ts): one
 * write each, from the same rows.
 */
export function salesDocumentInserts(rows: readonly SalesDocumentInsert[]): BatchWrite[] {
  if (rows.length === 0) return [];
  const batch = JSON.stringify(rows);
  // A JSON null in the recordset is SQL null; the old per-event insert wrote a JSON null there.
  // The batch is read as jsonb: PostgreSQL parses it once and hands the jsonb values over as they are.
  return [
    {
      rows: batch,
      rowsType: 'jsonb',
      bindings: [],
      sql: (rowsOf) => `insert into sales_documents (document_id, workspace_id, environment, country, document_number, uuid, state, format, external_id,
         document_type, source, company_id, destinations, issue_date, errors, government, xml_sha256, tdd_xml_sha256,
         attempts, next_attempt_at, final_result_due_at, received_at, last_updated_at)
       select v."documentId", v."workspaceId", v.environment, v.country, v."documentNumber", v.uuid, v.state, v.format, v."externalId",
         coalesce(v."documentType", 'null'::jsonb), coalesce(v.source, 'null'::jsonb), v.source->>'companyId', coalesce(v.destinations, 'null'::jsonb),
         v."issueDate", v.errors::jsonb, v.government::jsonb, v."xmlSha256", v."tddXmlSha256",
         v.attempts, v."nextAttemptAt", v."finalResultDueAt", v."receivedAt", v."lastUpdatedAt"
         from jsonb_to_recordset(${rowsOf}) as v("documentId" text, "workspaceId" text, environment text, country text,
           "documentNumber" text, uuid text, state text, format text, "externalId" text, "documentType" jsonb, source jsonb,
           destinations jsonb, "issueDate" jsonb, errors text, government text, "xmlSha256" text, "tddXmlSha256" text,
           attempts integer, "nextAttemptAt" timestamptz, "finalResultDueAt" timestamptz, "receivedAt" timestamptz, "lastUpdatedAt" timestamptz)`,
    },
    {
      rows: batch,
      rowsType: 'jsonb',
      bindings: [],
      sql: (rowsOf) => `insert into documents (document_id, workspace_id, environment, company_id, country, direction, document_base, document_number, created_at)
       select v."documentId", v."workspaceId", v.environment, v.source->>'companyId', v.country, 'sales', v."documentType"->>'base', v."documentNumber",
         v."receivedAt"
         from jsonb_to_recordset(${rowsOf}) as v("documentId" text, "workspaceId" text, environment text, source jsonb, country text,
           "documentNumber" text, "documentType" jsonb, "receivedAt" timestamptz)`,
    },
  ];
}

/** Inserts documents into sales_documents and documents: one statement. */
export async function insertSalesDocuments(trx: Knex.Transaction, rows: readonly SalesDocumentInsert[]): Promise<void> {
  await runWrites(trx, salesDocumentInserts(rows));
}

/**
 * The merged changes of existing documents to sales_documents (readmodels/batch-writes.ts): one
 * write. The shared `documents` table holds nothing a change moves (what counts read), so it is not
 * written again after the insert.
 */
export function salesDocumentUpdates(changes: readonly SalesDocumentChange[]): BatchWrite[] {
  if (changes.length === 0) return [];
  const batch = JSON.stringify(
    changes.map((c) => ({
      documentId: c.documentId,
      state: c.state ?? null,
      updatedAt: c.updatedAt,
      attempts: c.attempts ?? null,
      setGovernment: c.government !== undefined,
      governmentOnly: c.government ?? null,
      setNext: c.nextAttemptAt !== undefined,
      nextAttemptAt: c.nextAttemptAt ?? null,
      setResult: c.result !== undefined,
      government: c.result?.government ?? null,
      errors: c.result?.errors ?? null,
      setDue: c.finalResultDueAt !== undefined,
      finalResultDueAt: c.finalResultDueAt ?? null,
      xmlSha256: c.xmlSha256 ?? null,
      tddXmlSha256: c.tddXmlSha256 ?? null,
    })),
  );
  // The planner cannot see how many rows a recordset holds (it assumes 100), and against a large
  // table it then hashes the whole table; the key list lets it fetch just these rows by index.
  const ids = changes.map((c) => c.documentId);
  return [
    {
      rows: batch,
      rowsType: 'json',
      bindings: [ids],
      sql: (rowsOf) => `update sales_documents sd set
         state = coalesce(v.state, sd.state),
         last_updated_at = v."updatedAt",
         attempts = coalesce(v.attempts, sd.attempts),
         next_attempt_at = case when v."setNext" then v."nextAttemptAt" else sd.next_attempt_at end,
         government = case when v."setResult" then v.government::jsonb when v."setGovernment" then v."governmentOnly"::jsonb else sd.government end,
         errors = case when v."setResult" then v.errors::jsonb else sd.errors end,
         final_result_due_at = case when v."setDue" then v."finalResultDueAt" else sd.final_result_due_at end,
         xml_sha256 = coalesce(v."xmlSha256", sd.xml_sha256),
         tdd_xml_sha256 = coalesce(v."tddXmlSha256", sd.tdd_xml_sha256)
       from json_to_recordset(${rowsOf}) as v("documentId" text, state text, "updatedAt" timestamptz, attempts integer,
         "setNext" boolean, "nextAttemptAt" timestamptz, "setResult" boolean, government text, errors text,
         "setGovernment" boolean, "governmentOnly" text, "setDue" boolean, "finalResultDueAt" timestamptz, "xmlSha256" text, "tddXmlSha256" text)
       where sd.document_id = v."documentId" and sd.document_id = any(?::text[])`,
    },
  ];
}

/** Applies the merged changes of existing documents to sales_documents: one statement. */
export async function updateSalesDocuments(trx: Knex.Transaction, changes: readonly SalesDocumentChange[]): Promise<void> {
  await runWrites(trx, salesDocumentUpdates(changes));
}

/**
 * Stores artifacts that events written before schema v2 carried inline (base64), by hash, in the
 * event store's artifact table (one statement; content-addressed, so storing one again is a
 * no-op; the table checks every hash against the bytes: they are stored as they are, `identity`).
 */
export async function storeInlineArtifacts(trx: Knex.Transaction, artifacts: readonly { sha256: string; base64: string }[]): Promise<void> {
  await prepared(
    trx.raw(
      `insert into es_artifacts (hash, content)
       select a.sha256, decode(a.base64, 'base64') from json_to_recordset(?::json) as a(sha256 text, base64 text)
        order by a.sha256
       on conflict (hash) do nothing`,
      [JSON.stringify(artifacts)],
    ),
  );
}

export async function listMalaysianDocuments(
  knex: Knex,
  q: { workspaceId: string; environment: string; uuid: string; documentId: string; page: number; limit: number; order: 'asc' | 'desc' },
) {
  const base = knex('sales_documents').where({ workspace_id: q.workspaceId, environment: q.environment, country: 'MY', uuid: q.uuid, document_id: q.documentId });
  const [counted] = await base.clone().count({ n: '*' });
  const rows = await base.clone().orderBy('received_at', q.order).offset((q.page - 1) * q.limit).limit(q.limit);
  return {
    total: Number(counted?.n ?? 0),
    rows: rows.map(toRow).map((r) => ({
      ...r,
      details: {
        documentNumber: r.documentNumber,
        state: r.state,
        documentType: r.documentType,
        externalId: r.externalId,
        issueDate: r.issueDate,
        createdAt: r.receivedAt.toISOString(),
        lastUpdatedAt: r.lastUpdatedAt.toISOString(),
      },
    })),
  };
}

/** Documents whose next delivery attempt is due (all workspaces: the delivery worker's scan). */
export async function dueDeliveryRetries(knex: Knex, now: Date, limit: number): Promise<string[]> {
  const rows = await knex('sales_documents')
    .where('state', 'delivery_failed')
    .whereNotNull('next_attempt_at')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .select('document_id');
  return rows.map((r) => r.document_id);
}

/**
 * Documents whose delivery attempt started before `startedBefore` and has no answer recorded:
 * the service stopped (a crash, a kill) between sending and recording, and no reaction will
 * come back to them (a retry's start was appended by the worker; the reactor is past them).
 */
export async function interruptedDeliveries(knex: Knex, startedBefore: Date, limit: number): Promise<string[]> {
  const rows = await knex('sales_documents')
    .where('state', 'processing')
    .where('last_updated_at', '<=', startedBefore)
    .orderBy('last_updated_at')
    .limit(limit)
    .select('document_id');
  return rows.map((r) => r.document_id);
}

/** Delivered documents whose final result is due. */
export async function dueFinalResults(knex: Knex, now: Date, limit: number): Promise<string[]> {
  const rows = await knex('sales_documents')
    .where('state', 'delivery_success')
    .whereNotNull('final_result_due_at')
    .where('final_result_due_at', '<=', now)
    .orderBy('final_result_due_at')
    .limit(limit)
    .select('document_id');
  return rows.map((r) => r.document_id);
}

/**
 * The delivered sales documents of an environment with this number, in any workspace (a buyer's
 * answer names the invoice by its number; the caller then checks the parties): newest first.
 */
export async function deliveredDocumentsByNumber(knex: Knex, environment: string, documentNumber: string): Promise<{ documentId: string; workspaceId: string | null }[]> {
  const rows = await knex('sales_documents')
    .select('document_id', 'workspace_id')
    .where({ environment, document_number: documentNumber })
    .whereNotIn('state', ['submitted', 'rejected'])
    .orderBy('received_at', 'desc')
    .limit(20);
  return rows.map((r: { document_id: string; workspace_id: string | null }) => ({ documentId: r.document_id, workspaceId: r.workspace_id }));
}

export interface UnmatchedResponseRow {
  xmlSha256: string;
  environment: string;
  channel: string;
  messageId: string | null;
  responseId: string | null;
  code: string | null;
  invoiceNumber: string | null;
  senderParticipantId: string | null;
  receiverParticipantId: string | null;
  reason: string;
  receivedAt: string;
}

/** Records kept unmatched responses (idempotent: a replayed event writes nothing new). */
export async function insertUnmatchedResponses(trx: Knex.Transaction, rows: readonly UnmatchedResponseRow[]): Promise<void> {
  if (rows.length === 0) return;
  await trx('peppol_unmatched_responses')
    .insert(
      rows.map((r) => ({
        xml_sha256: r.xmlSha256,
        environment: r.environment,
        channel: r.channel,
        message_id: r.messageId,
        response_id: r.responseId,
        code: r.code,
        invoice_number: r.invoiceNumber,
        sender_participant_id: r.senderParticipantId,
        receiver_participant_id: r.receiverParticipantId,
        reason: r.reason,
        received_at: r.receivedAt,
      })),
    )
    .onConflict('xml_sha256')
    .ignore();
}

/** The newest unmatched responses first. */
export async function listUnmatchedResponses(knex: Knex, options: { environment?: string | null; limit: number }): Promise<UnmatchedResponseRow[]> {
  const q = knex('peppol_unmatched_responses').select('*').orderBy('received_at', 'desc').limit(options.limit);
  if (options.environment) q.where({ environment: options.environment });
  const rows = await q;
  return rows.map((r: Record<string, any>) => ({
    xmlSha256: r.xml_sha256,
    environment: r.environment,
    channel: r.channel,
    messageId: r.message_id,
    responseId: r.response_id,
    code: r.code,
    invoiceNumber: r.invoice_number,
    senderParticipantId: r.sender_participant_id,
    receiverParticipantId: r.receiver_participant_id,
    reason: r.reason,
    receivedAt: new Date(r.received_at).toISOString(),
  }));
}
