/** The response shapes of credits (docs/api/credits.md): allowances, company credit states, the pool, ledger transactions, bulk jobs, exports. */
import { describeCompanyCredits, type CompanyCreditView } from '../../domain/credits/credits.js';
import { publicAllowance, type Allowance } from '../../domain/credits/events.js';
import type { BulkJobRow, CompanyCreditFacts, ExportRow, LedgerRow, LotRow, PoolRow } from '../../readmodels/credits.js';
import { poolWarnings } from '../../domain/credits/credits.js';

/** The allowance fields of docs/api/credits.md, or null. */
export function allowanceJson(a: Allowance | null) {
  return a ? publicAllowance(a) : null;
}

export function companyStateJson(view: CompanyCreditView, asOf: string) {
  return {
    companyId: view.companyId,
    current: allowanceJson(view.current),
    scheduled: allowanceJson(view.scheduled),
    usage: view.usage,
    reserved: view.reserved,
    available: view.available,
    effectiveAvailability: view.effectiveAvailability,
    blockReason: view.blockReason,
    warnings: view.warnings,
    asOf,
    lastChangedAt: view.lastChangedAt,
  };
}

export function companyStateFromFacts(facts: CompanyCreditFacts, pool: PoolRow, overAllocated: boolean, asOf: string) {
  return companyStateJson(describeCompanyCredits(facts, pool, overAllocated, asOf), asOf);
}

export const quoted = (version: number) => `"${version}"`;

/** The fields of a ledger balance, in the order the API and the CSV export write them. */
export const BALANCE_KEYS = [
  'companyLimit',
  'companyFinalizedUsage',
  'companyReserved',
  'companyAvailable',
  'poolActive',
  'poolReserved',
  'poolConsumed',
  'poolExpired',
  'poolAvailable',
] as const;

/** A balance in a fixed key order (jsonb keeps its own). */
const balanceJson = (b: Record<string, number | null>) => Object.fromEntries(BALANCE_KEYS.map((k) => [k, b?.[k] ?? null]));

export function transactionJson(row: LedgerRow) {
  const details = { ...row.details };
  if (details.allowance) details.allowance = allowanceJson(details.allowance as Allowance);
  return {
    transactionId: row.transactionId,
    eventType: row.eventType,
    occurredAt: row.occurredAt,
    companyId: row.companyId,
    environment: row.environment,
    amount: row.amount,
    allowancePeriodId: row.allowancePeriodId,
    version: row.version,
    target: row.target,
    reservationId: row.reservationId,
    documentId: row.documentId,
    lotId: row.lotId,
    reason: row.reason,
    balanceBefore: balanceJson(row.balanceBefore),
    balanceAfter: balanceJson(row.balanceAfter),
    correlationId: row.correlationId,
    idempotencyKey: row.idempotencyKey,
    requestId: row.requestId,
    bulkJobId: row.bulkJobId,
    details,
  };
}

export function poolJson(pool: PoolRow, lots: LotRow[], asOf: string) {
  return {
    active: pool.active,
    reserved: pool.reserved,
    consumed: pool.consumed,
    expired: pool.expired,
    available: pool.available,
    issued: pool.issued,
    lots: lots.map((l) => ({
      lotId: l.lotId,
      amount: l.amount,
      available: l.available,
      reserved: l.reserved,
      consumed: l.consumed,
      expired: l.expired,
      status: l.status,
      environment: l.environment,
      issuedAt: l.issuedAt,
      expiresAt: l.expiresAt,
    })),
    asOf,
    warnings: poolWarnings(pool),
  };
}

export function bulkJobJson(job: BulkJobRow) {
  return {
    jobId: job.jobId,
    status: job.status,
    environment: job.environment,
    totals: job.totals,
    createdAt: job.submittedAt,
    updatedAt: job.updatedAt,
    completedAt: job.completedAt,
    results: job.rows.map((r) => ({
      operationId: r.operationId,
      companyId: r.companyId,
      operation: r.operation,
      expectedVersion: r.expectedVersion,
      status: r.status,
      version: r.version,
      error: r.error,
    })),
  };
}

export function exportJson(row: ExportRow, now: Date, downloadUrl: string) {
  const expired = row.status === 'completed' && row.expiresAt !== null && Date.parse(row.expiresAt) <= now.getTime();
  const status = expired ? 'expired' : row.status;
  return {
    exportId: row.exportId,
    status,
    format: row.format,
    filters: row.filters,
    rowCount: row.rowCount,
    requestedAt: row.requestedAt,
    completedAt: row.completedAt,
    expiresAt: row.expiresAt,
    downloadUrl: status === 'completed' ? downloadUrl : null,
    failureReason: row.failureReason,
  };
}
