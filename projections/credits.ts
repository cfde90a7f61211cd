/**
 * The credits projection (one projection, so the credit events are read from the log once, not
 * once per table; the reservations are the most frequent events of the service):
 *
 * - the ledger (credit_transactions): one row per ledger event (SPEC.md 4.5's 17 event types),
 *   keyed by the event's global log position, so the ledger's order is the log's and a rebuild
 *   gives the same keys (cursors survive rebuilds). Balances before/after come from the event;
 * - balances: the pool (credit_pools, credit_lots) and every company's current and scheduled
 *   allowance with its usage (credit_companies), from the balances and allowance snapshots the
 *   events carry; a batch of reservations is coalesced into a few statements;
 * - jobs: bulk allowance jobs with their rows, and ledger exports.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../commands/eventstore/port.js';
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
  for (let i = 0; i < rows.length; i += 500) {
    await trx('credit_transactions').insert(rows.slice(i, i + 500)).onConflict(['workspace_id', 'log_commit', 'log_prepare']).ignore();
  }
}

async function poolFrom(trx: Knex.Transaction, workspaceId: string, balance: { poolActive: number; poolReserved: number; poolConsumed: number; poolExpired: number; poolAvailable: number }, at: string, extra: Record<string, unknown> = {}) {
  const row = {
    workspace_id: workspaceId,
    issued: balance.poolActive + balance.poolConsumed + balance.poolExpired,
    active: balance.poolActive,
    reserved: balance.poolReserved,
    consumed: balance.poolConsumed,
    expired: balance.poolExpired,
    available: balance.poolAvailable,
    updated_at: at,
    ...extra,
  };
  await trx('credit_pools').insert(row).onConflict('workspace_id').merge();
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

async function upsertCompany(trx: Knex.Transaction, workspaceId: string, companyId: string, columns: Record<string, unknown>) {
  await trx('credit_companies')
    .insert({ workspace_id: workspaceId, company_id: companyId, ...columns })
    .onConflict(['workspace_id', 'company_id'])
    .merge(Object.keys(columns));
}

async function touchLots(trx: Knex.Transaction, lots: readonly { lotId: string; amount: number }[], set: (n: number) => Record<string, unknown>) {
  for (const share of lots) await trx('credit_lots').where({ lot_id: share.lotId }).update(set(share.amount));
}

type BalanceAfter = { companyFinalizedUsage: number | null; companyReserved: number | null; poolActive: number; poolReserved: number; poolConsumed: number; poolExpired: number; poolAvailable: number };
const RESERVATION_EVENTS: ReadonlySet<string> = new Set(['ReservationCreated', 'ReservationReleased', 'ReservationNeedsReconciliation', 'ConsumptionFinalized']);

/**
 * The effects of a run of reservation events, coalesced: the pool row and each company row only
 * need the balances after the last event, and each lot the sum of its deltas. A batch of
 * thousands of reservations then costs a few statements instead of three per event.
 */
class PendingBalances {
  private pools = new Map<string, { balance: BalanceAfter; at: string }>();
  private companies = new Map<string, { workspaceId: string; companyId: string; usage: number; reserved: number; at: string; touchedPeriods: Map<string, string> }>();
  private lots = new Map<string, { reserved: number; consumed: number; released: number }>();

  add(workspaceId: string, e: CreditEvent): void {
    const d = e.data as { at: string; companyId: string; allowancePeriodId: string; lots: { lotId: string; amount: number }[]; balanceAfter: BalanceAfter };
    this.pools.set(workspaceId, { balance: d.balanceAfter, at: d.at });
    const key = `${workspaceId}/${d.companyId}`;
    const company = this.companies.get(key) ?? { workspaceId, companyId: d.companyId, usage: 0, reserved: 0, at: d.at, touchedPeriods: new Map<string, string>() };
    company.usage = d.balanceAfter.companyFinalizedUsage ?? 0;
    company.reserved = d.balanceAfter.companyReserved ?? 0;
    company.at = d.at;
    company.touchedPeriods.set(d.allowancePeriodId, d.at);
    this.companies.set(key, company);
    for (const share of d.lots) {
      const lot = this.lots.get(share.lotId) ?? { reserved: 0, consumed: 0, released: 0 };
      if (e.type === 'ReservationCreated') lot.reserved += share.amount;
      if (e.type === 'ConsumptionFinalized') {
        lot.reserved -= share.amount;
        lot.consumed += share.amount;
      }
      if (e.type === 'ReservationReleased') {
        lot.reserved -= share.amount;
        lot.released += share.amount;
      }
      this.lots.set(share.lotId, lot);
    }
  }

  async flush(trx: Knex.Transaction): Promise<void> {
    for (const [workspaceId, { balance, at }] of this.pools) await poolFrom(trx, workspaceId, balance, at);
    const companies = [...this.companies.values()];
    for (let i = 0; i < companies.length; i += 500) {
      const chunk = companies.slice(i, i + 500);
      // The allowance's updatedAt moves when a reservation of its own period changes it.
      await trx.raw(
        `update credit_companies c
            set current_usage = v.usage, current_reserved = v.reserved,
                current_updated_at = coalesce((v.periods ->> c.current_period_id)::timestamptz, c.current_updated_at),
                last_changed_at = v.at
           from (values ${chunk.map(() => '(?, ?, ?::bigint, ?::bigint, ?::jsonb, ?::timestamptz)').join(', ')}) as v(workspace_id, company_id, usage, reserved, periods, at)
          where c.workspace_id = v.workspace_id and c.company_id = v.company_id`,
        chunk.flatMap((c) => [c.workspaceId, c.companyId, c.usage, c.reserved, JSON.stringify(Object.fromEntries(c.touchedPeriods)), c.at]),
      );
    }
    for (const [lotId, delta] of this.lots) {
      await trx('credit_lots')
        .where({ lot_id: lotId })
        .update({
          reserved: trx.raw('reserved + ?', [delta.reserved]),
          consumed: trx.raw('consumed + ?', [delta.consumed]),
          // Released credits of an expired lot expire.
          expired: trx.raw(`case when status = 'expired' then expired + ? else expired end`, [delta.released]),
        });
    }
    this.pools.clear();
    this.companies.clear();
    this.lots.clear();
  }
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

async function applyCredits(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const ledger: Record<string, unknown>[] = [];
  const pending = new PendingBalances();
  for (const event of events) {
    if (JOB_EVENT_TYPES.has(event.type)) {
      await applyJob(trx, event);
      continue;
    }
    if (!BALANCE_EVENT_TYPES.has(event.type)) continue;
    const e = decodeCredit(event);
    if (ledgerEventTypeOf(event.type)) ledger.push(ledgerRow(event, e));
    if (RESERVATION_EVENTS.has(event.type)) {
      pending.add(workspaceOf(event), e);
      continue;
    }
    await pending.flush(trx);
    await applyBalance(trx, event, e);
  }
  await pending.flush(trx);
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

async function applyBalance(trx: Knex.Transaction, event: RecordedEvent, e: CreditEvent): Promise<void> {
  {
    const workspaceId = workspaceOf(event);
    if (e.type === 'CreditEnforcementChanged') {
      await trx('credit_pools')
        .insert({ workspace_id: workspaceId, enforcement: e.data.enabled, updated_at: event.metadata.occurredAt })
        .onConflict('workspace_id')
        .merge(['enforcement']);
      return;
    }
    const data = e.data as { at: string; balanceAfter: { companyFinalizedUsage: number | null; companyReserved: number | null; poolActive: number; poolReserved: number; poolConsumed: number; poolExpired: number; poolAvailable: number } };
    await poolFrom(trx, workspaceId, data.balanceAfter, data.at);
    switch (e.type) {
      case 'CreditIssued':
        await trx('credit_lots').insert({
          lot_id: e.data.lotId,
          workspace_id: workspaceId,
          environment: e.data.environment,
          amount: e.data.amount,
          status: 'active',
          reason: e.data.reason,
          issued_at: e.data.issuedAt,
          expires_at: e.data.expiresAt,
        }).onConflict('lot_id').ignore();
        return;
      case 'CreditExpired':
        await trx('credit_lots').where({ lot_id: e.data.lotId }).update({ status: 'expired', expired: trx.raw('expired + ?', [e.data.amount]) });
        return;
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
        await upsertCompany(trx, workspaceId, d.companyId, { ...columns, last_changed_at: d.at });
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
        await trx('credit_companies')
          .where({ workspace_id: workspaceId, company_id: d.companyId })
          .update({
            current_usage: b.companyFinalizedUsage ?? 0,
            current_reserved: b.companyReserved ?? 0,
            current_updated_at: trx.raw('case when current_period_id = ? then ?::timestamptz else current_updated_at end', [d.allowancePeriodId, d.at]),
            last_changed_at: d.at,
          });
        if (e.type === 'ReservationCreated') await touchLots(trx, d.lots, (n) => ({ reserved: trx.raw('reserved + ?', [n]) }));
        if (e.type === 'ConsumptionFinalized') {
          await touchLots(trx, d.lots, (n) => ({ reserved: trx.raw('reserved - ?', [n]), consumed: trx.raw('consumed + ?', [n]) }));
        }
        if (e.type === 'ReservationReleased') {
          await touchLots(trx, d.lots, (n) => ({
            reserved: trx.raw('reserved - ?', [n]),
            expired: trx.raw(`case when status = 'expired' then expired + ? else expired end`, [n]),
          }));
        }
        if (e.type === 'ConsumptionReversed' && e.data.restorePool) await touchLots(trx, d.lots, (n) => ({ consumed: trx.raw('consumed - ?', [n]) }));
        return;
      }
      case 'CorrectionCreated':
        await trx('credit_companies')
          .where({ workspace_id: workspaceId, company_id: e.data.companyId })
          .update({ current_usage: data.balanceAfter.companyFinalizedUsage ?? 0, last_changed_at: e.data.at });
        return;
      default:
        return;
    }
  }
}

async function applyJob(trx: Knex.Transaction, event: RecordedEvent): Promise<void> {
  {
    switch (event.type) {
      case CreditBulkJobSubmitted.type: {
        const d = decodeEventData(CreditBulkJobSubmitted, event.schemaVersion, event.data);
        await trx('credit_bulk_jobs')
          .insert({
            job_id: d.jobId,
            workspace_id: d.workspaceId,
            environment: d.environment,
            status: 'accepted',
            total: d.operations.length,
            submitted_at: d.submittedAt,
            updated_at: d.submittedAt,
          })
          .onConflict('job_id')
          .ignore();
        const rows = d.operations.map((op, i) => ({
          job_id: d.jobId,
          row_index: i,
          operation_id: op.operationId,
          company_id: op.companyId,
          operation: op.operation,
          expected_version: op.expectedVersion,
          status: 'pending',
          updated_at: d.submittedAt,
        }));
        for (let i = 0; i < rows.length; i += 200) await trx('credit_bulk_job_rows').insert(rows.slice(i, i + 200)).onConflict(['job_id', 'row_index']).ignore();
        return;
      }
      case CreditBulkJobRowsProcessed.type: {
        const d = decodeEventData(CreditBulkJobRowsProcessed, event.schemaVersion, event.data);
        const jobId = event.streamId.slice('creditbulkjob-'.length);
        for (const r of d.results) {
          await trx('credit_bulk_job_rows')
            .where({ job_id: jobId, row_index: r.rowIndex })
            .update({ status: r.status, version: r.version, error_code: r.error?.code ?? null, error_message: r.error?.message ?? null, updated_at: d.at });
        }
        const succeeded = d.results.filter((r) => r.status === 'succeeded').length;
        await trx('credit_bulk_jobs')
          .where({ job_id: jobId })
          .update({
            status: 'processing',
            processed: trx.raw('processed + ?', [d.results.length]),
            succeeded: trx.raw('succeeded + ?', [succeeded]),
            failed: trx.raw('failed + ?', [d.results.length - succeeded]),
            updated_at: d.at,
          });
        return;
      }
      case CreditBulkJobCompleted.type: {
        const d = decodeEventData(CreditBulkJobCompleted, event.schemaVersion, event.data);
        await trx('credit_bulk_jobs').where({ job_id: d.jobId }).update({ status: d.status, completed_at: d.completedAt, updated_at: d.completedAt });
        return;
      }
      case CreditExportRequested.type: {
        const d = decodeEventData(CreditExportRequested, event.schemaVersion, event.data);
        await trx('credit_exports')
          .insert({
            export_id: d.exportId,
            workspace_id: d.workspaceId,
            status: 'accepted',
            format: d.format,
            filters: JSON.stringify(d.filters),
            request_commit: event.position.commit.toString(),
            request_prepare: event.position.prepare.toString(),
            requested_at: d.requestedAt,
          })
          .onConflict('export_id')
          .ignore();
        return;
      }
      case CreditExportCompleted.type: {
        const d = decodeEventData(CreditExportCompleted, event.schemaVersion, event.data);
        await trx('credit_exports')
          .where({ export_id: event.streamId.slice('creditexport-'.length) })
          .update({ status: 'completed', row_count: d.rowCount, completed_at: d.completedAt, expires_at: d.expiresAt });
        return;
      }
      case CreditExportFailed.type: {
        const d = decodeEventData(CreditExportFailed, event.schemaVersion, event.data);
        await trx('credit_exports')
          .where({ export_id: event.streamId.slice('creditexport-'.length) })
          .update({ status: 'failed', failure_reason: d.reason, completed_at: d.at });
        return;
      }
    }
  }
}

export const creditProjections = [creditsProjection];
