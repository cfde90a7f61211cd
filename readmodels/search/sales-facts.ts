/**
 * The statements of `search_sales_facts`, the facts the search projection keeps of each sales
 * document not yet final (projections/search-sales.ts): one read and one write per batch, each with a
 * single parameter (an array of ids; the rows as one JSON text), so a batch of thousands of
 * documents is neither thousands of bind parameters nor a statement per row. Unqualified table
 * name: a rebuild's search_path redirects it into the fresh table. Prepared (readmodels/prepared.ts):
 * they run in every batch.
 */
import type { Knex } from 'knex';
import { prepared } from '../prepared.js';

export const SALES_FACTS_TABLE = 'search_sales_facts';

export interface SalesFactsRow<F> {
  readonly documentId: string;
  readonly workspaceId: string;
  readonly environment: string;
  /** The document stream's revision the facts are at. */
  readonly revision: bigint;
  readonly facts: F;
}

/** The stored facts of these documents (those that have any). */
export async function readSalesFacts<F>(trx: Knex.Transaction, documentIds: readonly string[]): Promise<{ documentId: string; revision: bigint; facts: F }[]> {
  if (documentIds.length === 0) return [];
  const { rows } = await prepared(trx.raw(`select document_id, revision, facts from ${SALES_FACTS_TABLE} where document_id = any(?::text[])`, [[...documentIds]]));
  return (rows as { document_id: string; revision: string; facts: F }[]).map((r) => ({ documentId: r.document_id, revision: BigInt(r.revision), facts: r.facts }));
}

/**
 * Stores the facts of `rows` (one row each, replacing what was stored) and drops those of
 * `dropped`, in one statement.
 */
export async function writeSalesFacts<F>(trx: Knex.Transaction, rows: readonly SalesFactsRow<F>[], dropped: readonly string[] = []): Promise<void> {
  if (rows.length === 0 && dropped.length === 0) return;
  if (rows.length === 0) {
    await prepared(trx.raw(`delete from ${SALES_FACTS_TABLE} where document_id = any(?::text[])`, [[...dropped]]));
    return;
  }
  const json = JSON.stringify(rows.map((r) => ({ d: r.documentId, w: r.workspaceId, e: r.environment, r: r.revision.toString(), f: r.facts })));
  const upsert = `insert into ${SALES_FACTS_TABLE} (document_id, workspace_id, environment, revision, facts)
     select r.d, r.w, r.e, r.r, r.f from json_to_recordset(?::json) as r(d text, w text, e text, r bigint, f json)
     on conflict (document_id) do update
       set workspace_id = excluded.workspace_id, environment = excluded.environment, revision = excluded.revision, facts = excluded.facts`;
  if (dropped.length === 0) await prepared(trx.raw(upsert, [json]));
  else await prepared(trx.raw(`with dropped as (delete from ${SALES_FACTS_TABLE} where document_id = any(?::text[])) ${upsert}`, [[...dropped], json]));
}
