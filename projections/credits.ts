/**
 * The credits projection (one projection, so the credit events are read from the log once, not
 * once per table; the reservations are the most frequent events of the service):
 *
 * - the ledger (credit_transactions): one row per ledger event (docs/api/credits.md's 17 event types),
 *   keyed by the event's global log position, so the ledger's order is the log's and a rebuild
 *   gives the same keys (cursors survive rebuilds). Balances before/after come from the event;
 * - balances: the pool (credit_pools, credit_lots) and every company's current and scheduled
 *   allowance with its usage (credit_companies), from the balances and allowance snapshots the
 *   events carry;
 * - jobs: bulk allowance jobs with their rows, and ledger exports.
 *
 * A batch of any size is one read and one write per table (see readmodels/batch-rows.ts).
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { creditEventDefinitions, ledgerEventTypeOf, type Allowance, type CreditEvent } from '../domain/credits/events.js';
import {
  CreditBulkJobCompleted,
  CreditBulkJobRowsProcessed,
  CreditBulkJobSubmitted,
  CreditExportCompleted,
  CreditExportFailed,
  CreditExportRequested,
} from '../domain/credits/jobs.js';
import { transactionIdFor } from '../domain/credits/values.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { BatchRows, insertRows, type Row } from '../readmodels/batch-rows.js';
import {
  CREDIT_BULK_JOB_ROWS_SHAPE,
  CREDIT_BULK_JOBS_SHAPE,
  CREDIT_COMPANIES_SHAPE,
  CREDIT_EXPORTS_SHAPE,
  CREDIT_LOTS_SHAPE,
  CREDIT_POOLS_SHAPE,
} from '../readmodels/credits.js';
import { defineProjection } from './projection.js';

const CREDIT_EVENT_TYPES = new Set(Object.keys(creditEventDefinitions));

function decodeCredit(event: RecordedEvent): CreditEvent {
  const definition = (creditEventDefinitions as Record<string, Parameters<typeof decodeEventData>[0]>)[event.type]!;
  return { type: event.type, data: decodeEventData(definition, event.schemaVersion, event.data) } as CreditEvent;
}

const workspaceOf = (event: RecordedEvent) => event.metadata.workspaceId ?? event.streamId.slice('credits-'.length);

/** The ledger columns an event fills besides the common ones. */
function ledgerFields(e: CreditEvent): Record<string, unknown> {
  switch (e.type) {
    case 'CreditIssued':
      return { amount: e.data.amount, lot_id: e.data.lotId, reason: e.data.reason, details: { expiresAt: e.data.expiresAt, environment: e.data.environment } };
    case 'CreditExpired':
      return { amount: e.data.amount, lot_id: e.data.lotId, details: { expiresAt: e.data.expiresAt } };
    case 'AllowanceCreated':
    case 'AllowanceScheduled':
    case 'AllowanceReplaced':
    case 'AllowanceCancelled':
    case 'AllowanceActivated':
    case 'AllowanceSuperseded':
    case 'AllowanceExpired':
    case 'AllowancePaused':
    case 'AllowanceResumed': {
      const d = e.data;
      return {
        company_id: d.companyId,
        amount: d.allowance.limit,
        allowance_period_id: d.allowance.allowancePeriodId,
        allowance_version: d.allowance.version,
        target: d.target,
        reason: d.reason,
        bulk_job_id: d.bulkJobId,
        details: { action: d.action, allowance: d.allowance },
      };
    }
    case 'ReservationCreated':
    case 'ReservationReleased':
    case 'ReservationNeedsReconciliation':
    case 'ConsumptionFinalized':
    case 'ConsumptionReversed': {
      const d = e.data;
      const extra: Record<string, unknown> = { lots: d.lots };
      if (e.type === 'ReservationReleased') extra.expiredAmount = e.data.expiredAmount;
      if (e.type === 'ConsumptionReversed') Object.assign(extra, { originalTransactionId: e.data.originalTransactionId, restorePool: e.data.restorePool });
      return {
        company_id: d.companyId,
        amount: d.amount,
        allowance_period_id: d.allowancePeriodId,
        allowance_version: d.version,
        reservation_id: d.reservationId,
        document_id: d.documentId,
        reason: 'reason' in d ? d.reason : null,
        details: extra,
      };
    }
    case 'CorrectionCreated':
      return {
        company_id: e.data.companyId,
        amount: e.data.amount,
        allowance_period_id: e.data.allowancePeriodId,
        allowance_version: e.data.version,
        reason: e.data.reason,
      };
    default:
      return {};
  }
}

function ledgerRow(event: RecordedEvent, e: CreditEvent): Record<string, unknown> {
  const data = e.data as { at: string; balanceBefore: unknown; balanceAfter: unknown };
  const m = event.metadata;
  return {
    workspace_id: workspaceOf(event),
    log_commit: event.position.commit.toString(),
    log_prepare: event.position.prepare.toString(),
    transaction_id: transactionIdFor(event.id),
    event_type: ledgerEventTypeOf(event.type),
    occurred_at: data.at,
    environment: m.environment ?? null,
    company_id: null,
    amount: null,
    allowance_period_id: null,
    allowance_version: null,
    target: null,
    reservation_id: null,
    document_id: null,
    lot_id: null,
    reason: null,
    bulk_job_id: null,
    balance_before: JSON.stringify(data.balanceBefore),
    balance_after: JSON.stringify(data.balanceAfter),
    correlation_id: m.correlationId ?? null,
    idempotency_key: m.idempotencyKey ?? null,
    request_id: m.requestId ?? null,
    key_id: m.keyId ?? null,
    actor: m.actor ?? null,
    details: '{}',
    ...Object.fromEntries(Object.entries(ledgerFields(e)).map(([k, v]) => [k, k === 'details' ? JSON.stringify(v) : v])),
  };
}

async function insertLedgerRows(trx: Knex.Transaction, rows: readonly Record<string, unknown>[]): Promise<void> {
  await insertRows(trx, 'credit_transactions', rows, { key: ['workspace_id', 'log_commit', 'log_prepare'], merge: false });
}

type BalanceAfter = { companyFinalizedUsage: number | null; companyReserved: number | null; poolActive: number; poolReserved: number; poolConsumed: number; poolExpired: number; poolAvailable: number };

/** The credits read models a batch writes: its rows read at once, changed in log order, written back once. */
interface CreditTables {
  pools: BatchRows;
  lots: BatchRows;
  companies: BatchRows;
  jobs: BatchRows;
  jobRows: BatchRows;
  exports: BatchRows;
}

const num = (v: unknown) => Number(v ?? 0);

function poolFrom(t: CreditTables, workspaceId: string, balance: BalanceAfter, at: string): void {
  const columns = {
    issued: balance.poolActive + balance.poolConsumed + balance.poolExpired,
    active: balance.poolActive,
    reserved: balance.poolReserved,
    consumed: balance.poolConsumed,
    expired: balance.poolExpired,
    available: balance.poolAvailable,
    updated_at: at,
  };
  const row = t.pools.get([workspaceId]);
  t.pools.put(row ? { ...row, ...columns } : { workspace_id: workspaceId, enforcement: false, ...columns });
}

function upsertCompany(t: CreditTables, workspaceId: string, companyId: string, columns: Record<string, unknown>): void {
  const row = t.companies.get([workspaceId, companyId]);
  t.companies.put(row ? { ...row, ...columns } : { workspace_id: workspaceId, company_id: companyId, current_usage: 0, current_reserved: 0, ...columns });
}

function touchLots(t: CreditTables, lots: readonly { lotId: string; amount: number }[], change: (row: Row, n: number) => Row): void {
  for (const share of lots) t.lots.update([share.lotId], (row) => change(row, share.amount));
}

function currentColumns(a: Allowance | null) {
  return {
    current: a ? JSON.stringify(a) : null,
    current_status: a?.status ?? null,
    current_period_id: a?.allowancePeriodId ?? null,
    current_start_at: a?.startAt ?? null,
    current_end_at: a?.endAt ?? null,
    current_limit: a?.limit ?? null,
    current_usage: a?.finalizedUsage ?? 0,
    current_reserved: a?.reserved ?? 0,
    current_updated_at: a?.updatedAt ?? null,
  };
}

function scheduledColumns(a: Allowance | null) {
  return { scheduled: a ? JSON.stringify(a) : null, scheduled_start_at: a?.startAt ?? null, scheduled_end_at: a?.endAt ?? null };
}

const BALANCE_EVENT_TYPES: ReadonlySet<string> = new Set([...CREDIT_EVENT_TYPES].filter((t) => ledgerEventTypeOf(t) !== null || t === 'CreditEnforcementChanged'));
const JOB_EVENT_TYPES: ReadonlySet<string> = new Set([
  CreditBulkJobSubmitted.type,
  CreditBulkJobRowsProcessed.type,
  CreditBulkJobCompleted.type,
  CreditExportRequested.type,
  CreditExportCompleted.type,
  CreditExportFailed.type,
]);

type KeyLists = { pools: string[][]; lots: string[][]; companies: string[][]; jobs: string[][]; jobRows: unknown[][]; exports: string[][] };

/** The keys of the rows an event may change (read from the decoded event), so that a batch reads them all at once. */
function collectKeys(event: RecordedEvent, credit: CreditEvent | null, keys: KeyLists): void {
  if (credit) {
    const d = credit.data as unknown as Record<string, unknown>;
    const workspaceId = workspaceOf(event);
    keys.pools.push([workspaceId]);
    if (typeof d.lotId === 'string') keys.lots.push([d.lotId]);
    if (Array.isArray(d.lots)) for (const share of d.lots as { lotId: string }[]) keys.lots.push([share.lotId]);
    if (typeof d.companyId === 'string') keys.companies.push([workspaceId, d.companyId]);
    return;
  }
  switch (event.type) {
    case CreditBulkJobSubmitted.type: {
      const d = decodeEventData(CreditBulkJobSubmitted, event.schemaVersion, event.data);
      keys.jobs.push([d.jobId]);
      d.operations.forEach((_, i) => keys.jobRows.push([d.jobId, i]));
      return;
    }
    case CreditBulkJobRowsProcessed.type: {
      const d = decodeEventData(CreditBulkJobRowsProcessed, event.schemaVersion, event.data);
      const jobId = event.streamId.slice('creditbulkjob-'.length);
      keys.jobs.push([jobId]);
      for (const r of d.results) keys.jobRows.push([jobId, r.rowIndex]);
      return;
    }
    case CreditBulkJobCompleted.type:
      keys.jobs.push([decodeEventData(CreditBulkJobCompleted, event.schemaVersion, event.data).jobId]);
      return;
    case CreditExportRequested.type:
      keys.exports.push([decodeEventData(CreditExportRequested, event.schemaVersion, event.data).exportId]);
      return;
    case CreditExportCompleted.type:
    case CreditExportFailed.type:
      keys.exports.push([event.streamId.slice('creditexport-'.length)]);
      return;
  }
}

/**
 * A batch of credit events: the pools, lots, companies, jobs and exports it names are read with
 * one statement per table, every event changes them in memory in log order (as its statements
 * would have, one event after another), and each table is written back with one upsert; the
 * ledger rows go in with one insert.
 */
async function applyCredits(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const t: CreditTables = {
    pools: new BatchRows(CREDIT_POOLS_SHAPE),
    lots: new BatchRows(CREDIT_LOTS_SHAPE),
    companies: new BatchRows(CREDIT_COMPANIES_SHAPE),
    jobs: new BatchRows(CREDIT_BULK_JOBS_SHAPE),
    jobRows: new BatchRows(CREDIT_BULK_JOB_ROWS_SHAPE),
    exports: new BatchRows(CREDIT_EXPORTS_SHAPE),
  };
  const keys: KeyLists = { pools: [], lots: [], companies: [], jobs: [], jobRows: [], exports: [] };
  const credits = events.map((event) => (BALANCE_EVENT_TYPES.has(event.type) ? decodeCredit(event) : null));
  events.forEach((event, i) => collectKeys(event, credits[i]!, keys));
  await t.pools.load(trx, keys.pools);
  await t.lots.load(trx, keys.lots);
  await t.companies.load(trx, keys.companies);
  await t.jobs.load(trx, keys.jobs);
  await t.jobRows.load(trx, keys.jobRows);
  await t.exports.load(trx, keys.exports);

  const ledger: Record<string, unknown>[] = [];
  events.forEach((event, i) => {
    if (JOB_EVENT_TYPES.has(event.type)) return applyJob(t, event);
    const e = credits[i];
    if (!e) return;
    if (ledgerEventTypeOf(event.type)) ledger.push(ledgerRow(event, e));
    applyBalance(t, event, e);
  });
  await t.pools.flush(trx);
  await t.lots.flush(trx);
  await t.companies.flush(trx);
  await t.jobs.flush(trx);
  await t.jobRows.flush(trx);
  await t.exports.flush(trx);
  await insertLedgerRows(trx, ledger);
}

export const creditsProjection = defineProjection({
  name: 'credits',
  version: 1,
  tables: ['credit_transactions', 'credit_pools', 'credit_lots', 'credit_companies', 'credit_bulk_jobs', 'credit_bulk_job_rows', 'credit_exports'],
  eventTypes: new Set([...BALANCE_EVENT_TYPES, ...JOB_EVENT_TYPES]),
  apply: (trx, event) => applyCredits(trx, [event]),
  applyMany: applyCredits,
});

function applyBalance(t: CreditTables, event: RecordedEvent, e: CreditEvent): void {
  const workspaceId = workspaceOf(event);
  if (e.type === 'CreditEnforcementChanged') {
    const row = t.pools.get([workspaceId]);
    t.pools.put(
      row
        ? { ...row, enforcement: e.data.enabled }
        : { workspace_id: workspaceId, issued: 0, active: 0, reserved: 0, consumed: 0, expired: 0, available: 0, enforcement: e.data.enabled, updated_at: event.metadata.occurredAt },
    );
    return;
  }
  const data = e.data as { at: string; balanceAfter: BalanceAfter };
  poolFrom(t, workspaceId, data.balanceAfter, data.at);
  switch (e.type) {
    case 'CreditIssued':
      if (!t.lots.get([e.data.lotId])) {
        t.lots.put({
          lot_id: e.data.lotId,
          workspace_id: workspaceId,
          environment: e.data.environment,
          amount: e.data.amount,
          reserved: 0,
          consumed: 0,
          expired: 0,
          status: 'active',
          reason: e.data.reason,
          issued_at: e.data.issuedAt,
          expires_at: e.data.expiresAt,
        });
      }
      return;
    case 'CreditExpired': {
      const amount = e.data.amount;
      t.lots.update([e.data.lotId], (row) => ({ status: 'expired', expired: num(row.expired) + amount }));
      return;
    }
    case 'AllowanceCreated':
    case 'AllowanceReplaced':
    case 'AllowanceScheduled':
    case 'AllowanceCancelled':
    case 'AllowanceActivated':
    case 'AllowanceSuperseded':
    case 'AllowanceExpired':
    case 'AllowancePaused':
    case 'AllowanceResumed': {
      const d = e.data;
      let columns: Record<string, unknown>;
      if (d.target === 'current') {
        columns = currentColumns(d.allowance);
        if (e.type === 'AllowanceActivated') Object.assign(columns, scheduledColumns(null));
      } else if (e.type === 'AllowanceCancelled' || e.type === 'AllowanceExpired') {
        columns = scheduledColumns(null);
      } else {
        columns = scheduledColumns(d.allowance);
      }
      upsertCompany(t, workspaceId, d.companyId, { ...columns, last_changed_at: d.at });
      return;
    }
    case 'ReservationCreated':
    case 'ReservationReleased':
    case 'ReservationNeedsReconciliation':
    case 'ConsumptionFinalized':
    case 'ConsumptionReversed': {
      const d = e.data;
      const b = data.balanceAfter;
      // The balances after the event describe the company's current allowance, whatever period the reservation is on.
      t.companies.update([workspaceId, d.companyId], (row) => ({
        current_usage: b.companyFinalizedUsage ?? 0,
        current_reserved: b.companyReserved ?? 0,
        current_updated_at: row.current_period_id === d.allowancePeriodId ? d.at : row.current_updated_at,
        last_changed_at: d.at,
      }));
      if (e.type === 'ReservationCreated') touchLots(t, d.lots, (row, n) => ({ reserved: num(row.reserved) + n }));
      if (e.type === 'ConsumptionFinalized') touchLots(t, d.lots, (row, n) => ({ reserved: num(row.reserved) - n, consumed: num(row.consumed) + n }));
      if (e.type === 'ReservationReleased') {
        // Released credits of an expired lot expire.
        touchLots(t, d.lots, (row, n) => ({ reserved: num(row.reserved) - n, expired: row.status === 'expired' ? num(row.expired) + n : row.expired }));
      }
      if (e.type === 'ConsumptionReversed' && e.data.restorePool) touchLots(t, d.lots, (row, n) => ({ consumed: num(row.consumed) - n }));
      return;
    }
    case 'CorrectionCreated': {
      const usage = data.balanceAfter.companyFinalizedUsage ?? 0;
      const at = e.data.at;
      t.companies.update([workspaceId, e.data.companyId], () => ({ current_usage: usage, last_changed_at: at }));
      return;
    }
    default:
      return;
  }
}

function applyJob(t: CreditTables, event: RecordedEvent): void {
  switch (event.type) {
    case CreditBulkJobSubmitted.type: {
      const d = decodeEventData(CreditBulkJobSubmitted, event.schemaVersion, event.data);
      if (!t.jobs.get([d.jobId])) {
        t.jobs.put({
          job_id: d.jobId,
          workspace_id: d.workspaceId,
          environment: d.environment,
          status: 'accepted',
          total: d.operations.length,
          processed: 0,
          succeeded: 0,
          failed: 0,
          submitted_at: d.submittedAt,
          updated_at: d.submittedAt,
        });
      }
      d.operations.forEach((op, i) => {
        if (t.jobRows.get([d.jobId, i])) return;
        t.jobRows.put({
          job_id: d.jobId,
          row_index: i,
          operation_id: op.operationId,
          company_id: op.companyId,
          operation: op.operation,
          expected_version: op.expectedVersion,
          status: 'pending',
          updated_at: d.submittedAt,
        });
      });
      return;
    }
    case CreditBulkJobRowsProcessed.type: {
      const d = decodeEventData(CreditBulkJobRowsProcessed, event.schemaVersion, event.data);
      const jobId = event.streamId.slice('creditbulkjob-'.length);
      for (const r of d.results) {
        t.jobRows.update([jobId, r.rowIndex], () => ({ status: r.status, version: r.version, error_code: r.error?.code ?? null, error_message: r.error?.message ?? null, updated_at: d.at }));
      }
      const succeeded = d.results.filter((r) => r.status === 'succeeded').length;
      t.jobs.update([jobId], (row) => ({
        status: 'processing',
        processed: num(row.processed) + d.results.length,
        succeeded: num(row.succeeded) + succeeded,
        failed: num(row.failed) + d.results.length - succeeded,
        updated_at: d.at,
      }));
      return;
    }
    case CreditBulkJobCompleted.type: {
      const d = decodeEventData(CreditBulkJobCompleted, event.schemaVersion, event.data);
      t.jobs.update([d.jobId], () => ({ status: d.status, completed_at: d.completedAt, updated_at: d.completedAt }));
      return;
    }
    case CreditExportRequested.type: {
      const d = decodeEventData(CreditExportRequested, event.schemaVersion, event.data);
      if (t.exports.get([d.exportId])) return;
      t.exports.put({
        export_id: d.exportId,
        workspace_id: d.workspaceId,
        status: 'accepted',
        format: d.format,
        filters: JSON.stringify(d.filters),
        request_commit: event.position.commit.toString(),
        request_prepare: event.position.prepare.toString(),
        requested_at: d.requestedAt,
      });
      return;
    }
    case CreditExportCompleted.type: {
      const d = decodeEventData(CreditExportCompleted, event.schemaVersion, event.data);
      t.exports.update([event.streamId.slice('creditexport-'.length)], () => ({ status: 'completed', row_count: d.rowCount, completed_at: d.completedAt, expires_at: d.expiresAt }));
      return;
    }
    case CreditExportFailed.type: {
      const d = decodeEventData(CreditExportFailed, event.schemaVersion, event.data);
      t.exports.update([event.streamId.slice('creditexport-'.length)], () => ({ status: 'failed', failure_reason: d.reason, completed_at: d.at }));
      return;
    }
  }
}

export const creditProjections = [creditsProjection];
