/** Queries of the sales documents read model. Every query is scoped by workspace in SQL. */
import type { Knex } from 'knex';
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
  coreDocument: unknown;
  validation: unknown;
  errors: DocumentErrorItem[];
  government: unknown;
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
    coreDocument: r.core_document,
    validation: r.validation,
    errors: r.errors,
    government: r.government,
    xmlBase64: r.xml_base64,
    tddXmlBase64: r.tdd_xml_base64,
    receivedAt: r.received_at,
    lastUpdatedAt: r.last_updated_at,
  };
}

export async function findSalesDocument(knex: Knex, workspaceId: string, documentId: string): Promise<SalesDocumentRow | null> {
  const row = await knex('sales_documents').where({ workspace_id: workspaceId, document_id: documentId }).first();
  return row ? toRow(row) : null;
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
        issueDate: (r.coreDocument as { header?: { issueDate?: unknown } })?.header?.issueDate ?? null,
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
