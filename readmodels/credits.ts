/**
 * Queries of the credits read models (written by projections/credits.ts). Every query is scoped
 * by workspace in SQL. Company credit states are listed for the workspace's active companies
 * (connect_companies with an active source), joined with their credit rows; the block reason is
 * computed in SQL with the same rules as the domain (blockReasonOf) so it can be filtered on.
 */
import type { Knex } from 'knex';
import type { TableShape } from './batch-rows.js';
import type { PoolTotals } from '../domain/credits/derived.js';
import type { Allowance } from '../domain/credits/events.js';
import type { AllowanceListQuery } from '../domain/credits/input.js';
import type { LedgerFilters } from '../domain/credits/jobs.js';
import { CREDIT_LIMITS } from '../domain/credits/values.js';

const iso = (d: Date | string | null | undefined): string | null => (d === null || d === undefined ? null : new Date(d).toISOString());
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

// ---------------------------------------------------------------------------------------------
// Pool

/** The pool totals (as the aggregate derives them), with the workspace's enforcement setting. */
export interface PoolRow extends PoolTotals {
  enforcement: boolean;
  updatedAt: string | null;
}

export interface LotRow {
  lotId: string;
  environment: string;
  amount: number;
  reserved: number;
  consumed: number;
  expired: number;
  available: number;
  status: string;
  reason: string | null;
  issuedAt: string;
  expiresAt: string | null;
}

export async function readPool(knex: Knex, workspaceId: string): Promise<PoolRow> {
  const row = await knex('credit_pools').where({ workspace_id: workspaceId }).first();
  if (!row) return { issued: 0, active: 0, reserved: 0, consumed: 0, expired: 0, available: 0, total: 0, enforcement: false, updatedAt: null };
  return {
    issued: num(row.issued),
    active: num(row.active),
    reserved: num(row.reserved),
    consumed: num(row.consumed),
    expired: num(row.expired),
    available: num(row.available),
    total: num(row.issued) - num(row.expired),
    enforcement: row.enforcement,
    updatedAt: iso(row.updated_at),
  };
}

export async function listLots(knex: Knex, workspaceId: string): Promise<LotRow[]> {
  const rows = await knex('credit_lots').where({ workspace_id: workspaceId }).orderBy([{ column: 'issued_at' }, { column: 'lot_id' }]);
  return rows.map((r: any) => ({
    lotId: r.lot_id,
    environment: r.environment,
    amount: num(r.amount),
    reserved: num(r.reserved),
    consumed: num(r.consumed),
    expired: num(r.expired),
    available: r.status === 'active' ? num(r.amount) - num(r.reserved) - num(r.consumed) - num(r.expired) : 0,
    status: r.status,
    reason: r.reason,
    issuedAt: iso(r.issued_at)!,
    expiresAt: iso(r.expires_at),
  }));
}

/** Live current allowances could still consume more than the pool has available. */
export async function isOverAllocated(knex: Knex, workspaceId: string, poolAvailable: number): Promise<boolean> {
  const row = await knex('credit_companies')
    .where({ workspace_id: workspaceId })
    .whereIn('current_status', ['active', 'paused'])
    .first(knex.raw('coalesce(sum(greatest(0, current_limit - current_usage - current_reserved)), 0) as headroom'));
  return num(row?.headroom) > poolAvailable;
}

// ---------------------------------------------------------------------------------------------
// Company credit states

export interface CompanyCreditFacts {
  companyId: string;
  countryCode: string;
  active: boolean;
  current: Allowance | null;
  scheduled: Allowance | null;
  lastChangedAt: string | null;
}

function factsOf(r: any): CompanyCreditFacts {
  const current: Allowance | null = r.current
    ? { ...r.current, finalizedUsage: num(r.current_usage), reserved: num(r.current_reserved), updatedAt: iso(r.current_updated_at) ?? r.current.updatedAt }
    : null;
  return {
    companyId: r.company_id,
    countryCode: r.country_code,
    active: !!r.company_active,
    current,
    scheduled: r.scheduled ?? null,
    lastChangedAt: iso(r.last_changed_at),
  };
}

const COMPANY_COLUMNS = `c.company_id, c.country_code,
  exists (select 1 from connect_sources src where src.company_id = c.company_id and src.workspace_id = c.workspace_id and src.status = 'active') as company_active,
  s.current, s.current_usage, s.current_reserved, s.current_updated_at, s.scheduled, s.last_changed_at`;

/** One company of the workspace (active or not) with its credit facts, or null when the workspace has no such company. */
export async function readCompanyCredits(knex: Knex, workspaceId: string, companyId: string): Promise<CompanyCreditFacts | null> {
  const { rows } = await knex.raw(
    `select ${COMPANY_COLUMNS}
       from connect_companies c
       left join credit_companies s on s.workspace_id = c.workspace_id and s.company_id = c.company_id
      where c.workspace_id = ? and c.company_id = ?`,
    [workspaceId, companyId],
  );
  return rows[0] ? factsOf(rows[0]) : null;
}

/** The block reason in SQL: the same order and rules as blockReasonOf in domain/credits/credits.ts. */
const BLOCK_REASON_SQL = `case
    when s.current is null then 'NO_ACTIVE_ALLOWANCE'
    when s.current_status not in ('active', 'paused') or :now::timestamptz < s.current_start_at or :now::timestamptz >= s.current_end_at then 'ALLOWANCE_INACTIVE'
    when s.current_status = 'paused' then 'ALLOWANCE_PAUSED'
    when greatest(0, s.current_limit - s.current_usage - s.current_reserved) < :amount then 'ALLOWANCE_EXHAUSTED'
    when :poolAvailable::bigint < :amount then 'POOL_EXHAUSTED'
    else null end`;

/** GET /allowances: the workspace's active companies by company id, one page after `after`. */
export async function listCompanyCredits(
  knex: Knex,
  workspaceId: string,
  query: AllowanceListQuery,
  context: { now: Date; poolAvailable: number },
): Promise<{ items: CompanyCreditFacts[]; hasMore: boolean }> {
  const f = query.filters;
  const conditions: string[] = [
    'c.workspace_id = :workspaceId',
    `exists (select 1 from connect_sources src where src.company_id = c.company_id and src.workspace_id = c.workspace_id and src.status = 'active')`,
  ];
  const params: Record<string, unknown> = {
    workspaceId,
    now: context.now.toISOString(),
    poolAvailable: context.poolAvailable,
    amount: CREDIT_LIMITS.creditsPerDocument,
    limit: query.limit + 1,
  };
  if (query.after !== null) {
    conditions.push('c.company_id > :after');
    params.after = query.after;
  }
  if (f.companyId !== null) {
    conditions.push('c.company_id = :companyId');
    params.companyId = f.companyId;
  }
  if (f.countryCode !== null) {
    conditions.push('c.country_code = :countryCode');
    params.countryCode = f.countryCode;
  }
  if (f.status !== null) {
    conditions.push(f.status === 'scheduled' ? 's.scheduled is not null' : 's.current_status = :status');
    params.status = f.status;
  }
  if (f.blockReason !== null) {
    conditions.push(`(${BLOCK_REASON_SQL}) = :blockReason`);
    params.blockReason = f.blockReason;
  }
  if (f.effectiveFrom !== null || f.effectiveTo !== null) {
    // The current or the scheduled period overlaps [effectiveFrom, effectiveTo).
    const overlap = (start: string, end: string) =>
      [f.effectiveTo !== null ? `${start} < :effectiveTo::timestamptz` : null, f.effectiveFrom !== null ? `${end} > :effectiveFrom::timestamptz` : null]
        .filter(Boolean)
        .join(' and ');
    conditions.push(
      `((s.current is not null and ${overlap('s.current_start_at', 's.current_end_at')}) or (s.scheduled is not null and ${overlap('s.scheduled_start_at', 's.scheduled_end_at')}))`,
    );
    params.effectiveFrom = f.effectiveFrom;
    params.effectiveTo = f.effectiveTo;
  }
  const { rows } = await knex.raw(
    `select ${COMPANY_COLUMNS}
       from connect_companies c
       left join credit_companies s on s.workspace_id = c.workspace_id and s.company_id = c.company_id
      where ${conditions.join(' and ')}
      order by c.company_id
      limit :limit`,
    params,
  );
  const hasMore = rows.length > query.limit;
  return { items: rows.slice(0, query.limit).map(factsOf), hasMore };
}

/** Workspaces with an allowance to activate or expire, or a lot to expire, at `now` (the lifecycle worker). */
export async function dueLifecycleWorkspaces(knex: Knex, now: Date): Promise<string[]> {
  const at = now.toISOString();
  const { rows } = await knex.raw(
    `select workspace_id from credit_companies where scheduled is not null and scheduled_start_at <= ?
     union
     select workspace_id from credit_companies where current_status in ('active', 'paused') and current_end_at <= ?
     union
     select workspace_id from credit_lots where status = 'active' and expires_at <= ?
     order by workspace_id`,
    [at, at, at],
  );
  return rows.map((r: { workspace_id: string }) => r.workspace_id);
}

// ---------------------------------------------------------------------------------------------
// Ledger

export interface LedgerRow {
  logCommit: string;
  logPrepare: string;
  transactionId: string;
  eventType: string;
  occurredAt: string;
  companyId: string | null;
  environment: string | null;
  amount: number | null;
  allowancePeriodId: string | null;
  version: number | null;
  target: string | null;
  reservationId: string | null;
  documentId: string | null;
  lotId: string | null;
  reason: string | null;
  balanceBefore: Record<string, number | null>;
  balanceAfter: Record<string, number | null>;
  correlationId: string | null;
  idempotencyKey: string | null;
  requestId: string | null;
  bulkJobId: string | null;
  keyId: string | null;
  actor: string | null;
  details: Record<string, unknown>;
}

function ledgerRow(r: any): LedgerRow {
  return {
    logCommit: String(r.log_commit),
    logPrepare: String(r.log_prepare),
    transactionId: r.transaction_id,
    eventType: r.event_type,
    occurredAt: iso(r.occurred_at)!,
    companyId: r.company_id,
    environment: r.environment,
    amount: r.amount === null ? null : Number(r.amount),
    allowancePeriodId: r.allowance_period_id,
    version: r.allowance_version,
    target: r.target,
    reservationId: r.reservation_id,
    documentId: r.document_id,
    lotId: r.lot_id,
    reason: r.reason,
    balanceBefore: r.balance_before,
    balanceAfter: r.balance_after,
    correlationId: r.correlation_id,
    idempotencyKey: r.idempotency_key,
    requestId: r.request_id,
    bulkJobId: r.bulk_job_id,
    keyId: r.key_id,
    actor: r.actor,
    details: r.details ?? {},
  };
}

function ledgerWhere(q: Knex.QueryBuilder, workspaceId: string, f: LedgerFilters): Knex.QueryBuilder {
  q.where('workspace_id', workspaceId);
  if (f.companyId !== null) q.where('company_id', f.companyId);
  if (f.eventType !== null) q.where('event_type', f.eventType);
  if (f.occurredFrom !== null) q.where('occurred_at', '>=', f.occurredFrom);
  if (f.occurredTo !== null) q.where('occurred_at', '<', f.occurredTo);
  if (f.correlationId !== null) q.where('correlation_id', f.correlationId);
  if (f.idempotencyKey !== null) q.where('idempotency_key', f.idempotencyKey);
  if (f.requestId !== null) q.where('request_id', f.requestId);
  if (f.transactionId !== null) q.where('transaction_id', f.transactionId);
  if (f.bulkJobId !== null) q.where('bulk_job_id', f.bulkJobId);
  return q;
}

/**
 * One page of the ledger, newest first, strictly before the key `after` ([commit, prepare] of
 * the log position). The ledger grows only at its newest end (the projection applies the log in
 * order), so a page after a cursor never changes when transactions are written meanwhile.
 */
export async function listLedger(
  knex: Knex,
  workspaceId: string,
  query: { limit: number; after: [string, string] | null; filters: LedgerFilters },
): Promise<{ items: LedgerRow[]; hasMore: boolean }> {
  const q = ledgerWhere(knex('credit_transactions'), workspaceId, query.filters);
  if (query.after) q.whereRaw('(log_commit, log_prepare) < (?::bigint, ?::bigint)', query.after);
  const rows = await q
    .select('*')
    .orderBy([
      { column: 'log_commit', order: 'desc' },
      { column: 'log_prepare', order: 'desc' },
    ])
    .limit(query.limit + 1);
  return { items: rows.slice(0, query.limit).map(ledgerRow), hasMore: rows.length > query.limit };
}

export async function recentActivity(knex: Knex, workspaceId: string, companyId: string): Promise<LedgerRow[]> {
  const rows = await knex('credit_transactions')
    .where({ workspace_id: workspaceId, company_id: companyId })
    .orderBy([
      { column: 'log_commit', order: 'desc' },
      { column: 'log_prepare', order: 'desc' },
    ])
    .limit(CREDIT_LIMITS.recentActivityMax);
  return rows.map(ledgerRow);
}

/** Ledger transactions matching the filters written before a log position (an export's scope). */
export async function countLedgerBefore(knex: Knex, workspaceId: string, filters: LedgerFilters, before: [string, string]): Promise<number> {
  const row = await ledgerWhere(knex('credit_transactions'), workspaceId, filters)
    .whereRaw('(log_commit, log_prepare) < (?::bigint, ?::bigint)', before)
    .count<{ n: string }[]>({ n: '*' });
  return Number(row[0]!.n);
}

/** The same transactions, oldest first, page by page (the CSV download). */
export async function* ledgerBefore(knex: Knex, workspaceId: string, filters: LedgerFilters, before: [string, string], pageSize = 1000): AsyncGenerator<LedgerRow> {
  let after: [string, string] | null = null;
  for (;;) {
    const q = ledgerWhere(knex('credit_transactions'), workspaceId, filters).whereRaw('(log_commit, log_prepare) < (?::bigint, ?::bigint)', before);
    if (after) q.whereRaw('(log_commit, log_prepare) > (?::bigint, ?::bigint)', after);
    const rows = await q
      .select('*')
      .orderBy([
        { column: 'log_commit', order: 'asc' },
        { column: 'log_prepare', order: 'asc' },
      ])
      .limit(pageSize);
    for (const r of rows) yield ledgerRow(r);
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1];
    after = [String(last.log_commit), String(last.log_prepare)];
  }
}

// ---------------------------------------------------------------------------------------------
// Bulk jobs and exports

export interface BulkJobRow {
  jobId: string;
  environment: string;
  status: string;
  totals: { total: number; processed: number; succeeded: number; failed: number };
  submittedAt: string;
  updatedAt: string;
  completedAt: string | null;
  rows: {
    rowIndex: number;
    operationId: string;
    companyId: string;
    operation: string;
    expectedVersion: number;
    status: string;
    version: number | null;
    error: { code: string; message: string } | null;
  }[];
}

export async function readBulkJob(knex: Knex, workspaceId: string, jobId: string): Promise<BulkJobRow | null> {
  const job = await knex('credit_bulk_jobs').where({ workspace_id: workspaceId, job_id: jobId }).first();
  if (!job) return null;
  const rows = await knex('credit_bulk_job_rows').where({ job_id: jobId }).orderBy('row_index');
  return {
    jobId: job.job_id,
    environment: job.environment,
    status: job.status,
    totals: { total: job.total, processed: job.processed, succeeded: job.succeeded, failed: job.failed },
    submittedAt: iso(job.submitted_at)!,
    updatedAt: iso(job.updated_at)!,
    completedAt: iso(job.completed_at),
    rows: rows.map((r: any) => ({
      rowIndex: r.row_index,
      operationId: r.operation_id,
      companyId: r.company_id,
      operation: r.operation,
      expectedVersion: r.expected_version,
      status: r.status,
      version: r.version,
      error: r.error_code ? { code: r.error_code, message: r.error_message } : null,
    })),
  };
}

export interface ExportRow {
  exportId: string;
  status: string;
  format: string;
  filters: LedgerFilters;
  requestPosition: [string, string];
  rowCount: number | null;
  failureReason: string | null;
  requestedAt: string;
  completedAt: string | null;
  expiresAt: string | null;
}

export async function readExport(knex: Knex, workspaceId: string, exportId: string): Promise<ExportRow | null> {
  const r = await knex('credit_exports').where({ workspace_id: workspaceId, export_id: exportId }).first();
  if (!r) return null;
  return {
    exportId: r.export_id,
    status: r.status,
    format: r.format,
    filters: r.filters,
    requestPosition: [String(r.request_commit), String(r.request_prepare)],
    rowCount: r.row_count,
    failureReason: r.failure_reason,
    requestedAt: iso(r.requested_at)!,
    completedAt: iso(r.completed_at),
    expiresAt: iso(r.expires_at),
  };
}

/** The columns of the credits read models the credits projection writes a batch at a time. */
export const CREDIT_POOLS_SHAPE: TableShape = {
  table: 'credit_pools',
  key: ['workspace_id'],
  columns: {
    workspace_id: 'text',
    issued: 'bigint',
    active: 'bigint',
    reserved: 'bigint',
    consumed: 'bigint',
    expired: 'bigint',
    available: 'bigint',
    enforcement: 'boolean',
    updated_at: 'timestamptz',
  },
};

export const CREDIT_LOTS_SHAPE: TableShape = {
  table: 'credit_lots',
  key: ['lot_id'],
  columns: {
    lot_id: 'text',
    workspace_id: 'text',
    environment: 'text',
    amount: 'bigint',
    reserved: 'bigint',
    consumed: 'bigint',
    expired: 'bigint',
    status: 'text',
    reason: 'text',
    issued_at: 'timestamptz',
    expires_at: 'timestamptz',
  },
};

export const CREDIT_COMPANIES_SHAPE: TableShape = {
  table: 'credit_companies',
  key: ['workspace_id', 'company_id'],
  columns: {
    workspace_id: 'text',
    company_id: 'text',
    current: 'jsonb',
    current_status: 'text',
    current_period_id: 'text',
    current_start_at: 'timestamptz',
    current_end_at: 'timestamptz',
    current_limit: 'bigint',
    current_usage: 'bigint',
    current_reserved: 'bigint',
    current_updated_at: 'timestamptz',
    scheduled: 'jsonb',
    scheduled_start_at: 'timestamptz',
    scheduled_end_at: 'timestamptz',
    last_changed_at: 'timestamptz',
  },
};

export const CREDIT_BULK_JOBS_SHAPE: TableShape = {
  table: 'credit_bulk_jobs',
  key: ['job_id'],
  columns: {
    job_id: 'text',
    workspace_id: 'text',
    environment: 'text',
    status: 'text',
    total: 'integer',
    processed: 'integer',
    succeeded: 'integer',
    failed: 'integer',
    submitted_at: 'timestamptz',
    updated_at: 'timestamptz',
    completed_at: 'timestamptz',
  },
};

export const CREDIT_BULK_JOB_ROWS_SHAPE: TableShape = {
  table: 'credit_bulk_job_rows',
  key: ['job_id', 'row_index'],
  columns: {
    job_id: 'text',
    row_index: 'integer',
    operation_id: 'text',
    company_id: 'text',
    operation: 'text',
    expected_version: 'integer',
    status: 'text',
    version: 'integer',
    error_code: 'text',
    error_message: 'text',
    updated_at: 'timestamptz',
  },
};

export const CREDIT_EXPORTS_SHAPE: TableShape = {
  table: 'credit_exports',
  key: ['export_id'],
  columns: {
    export_id: 'text',
    workspace_id: 'text',
    status: 'text',
    format: 'text',
    filters: 'jsonb',
    request_commit: 'bigint',
    request_prepare: 'bigint',
    row_count: 'integer',
    failure_reason: 'text',
    requested_at: 'timestamptz',
    completed_at: 'timestamptz',
    expires_at: 'timestamptz',
  },
};
