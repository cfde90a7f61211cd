/**
 * The statements of `search_sales_facts`, the facts the search projection keeps of each sales
 * document not yet final (projections/search-sales.ts): one read and one write per batch (no read
 * when the projection remembers the facts: the write then carries the condition that they are
 * still stored as remembered, `salesFactsStoredAs`), each with a single parameter (an array of ids; the rows as one JSON text), so a batch of thousands of
 * documents is neither thousands of bind parameters nor a statement per row. Unqualified table
 * name: a rebuild's search_path redirects it into the fresh table. Prepared (readmodels/prepared.ts):
 * they run in every batch.
 */
import type { Knex } from 'knex';
import { prepared } from '../prepared.js';
import { runWrites, type BatchWrite } from '../batch-writes.js';

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
 * `dropped`, as one statement.
 */
export async function writeSalesFacts<F>(trx: Knex.Transaction, rows: readonly SalesFactsRow<F>[], dropped: readonly string[] = []): Promise<void> {
  await runWrites(trx, salesFactsWrites(rows, dropped));
}

/** The statements of writeSalesFacts as a batch's writes (readmodels/batch-writes.ts): a delete and an upsert. */
export function salesFactsWrites<F>(rows: readonly SalesFactsRow<F>[], dropped: readonly string[] = []): BatchWrite[] {
  const writes: BatchWrite[] = [];
  if (dropped.length > 0) {
    writes.push({
      rows: JSON.stringify(dropped),
      rowsType: 'json',
      sql: (batch) => `delete from ${SALES_FACTS_TABLE} where document_id in (select json_array_elements_text(${batch}))`,
      bindings: [],
    });
  }
  if (rows.length > 0) {
    writes.push({
      rows: JSON.stringify(rows.map((r) => ({ d: r.documentId, w: r.workspaceId, e: r.environment, r: r.revision.toString(), f: r.facts }))),
      rowsType: 'json',
      sql: (batch) => `insert into ${SALES_FACTS_TABLE} (document_id, workspace_id, environment, revision, facts)
     select r.d, r.w, r.e, r.r, r.f from json_to_recordset(${batch}) as r(d text, w text, e text, r bigint, f json)
     on conflict (document_id) do update
       set workspace_id = excluded.workspace_id, environment = excluded.environment, revision = excluded.revision, facts = excluded.facts`,
      bindings: [],
    });
  }
  return writes;
}

/**
 * The condition (BatchWrite.requires) that the facts of these documents are stored at these
 * revisions, null meaning no row: one statement's check of what a batch computed from facts it
 * remembered instead of reading them.
 */
export function salesFactsStoredAs(expected: readonly { documentId: string; revision: bigint | null }[]): NonNullable<BatchWrite['requires']> {
  return {
    sql: `not exists (select from json_to_recordset(?::json) as c(d text, r bigint)
                        left join ${SALES_FACTS_TABLE} f on f.document_id = c.d
                       where f.revision is distinct from c.r)`,
    bindings: [JSON.stringify(expected.map((e) => ({ d: e.documentId, r: e.revision === null ? null : e.revision.toString() })))],
  };
}
