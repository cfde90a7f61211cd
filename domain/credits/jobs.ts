/**
 * Two small aggregates around the credits stream:
 *
 * - a bulk allowance job (stream `creditbulkjob-<jobId>`): the submitted operations, each row's
 *   result as it is processed, and the completion (which the bulk.completed webhook announces);
 * - a ledger export (stream `creditexport-<exportId>`): the request with its filters, then its
 *   completion with the log position it covers (the CSV is the ledger up to that position,
 *   so it can be produced again identically), or its failure.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { oneOf } from '../connect/values.js';
import { BULK_OPERATIONS, CREDIT_ENVIRONMENTS, PERIOD_TYPES, type BulkJobStatus } from './values.js';

const nullableString = t.union([t.string, t.null]);
const nullableNumber = t.union([t.number, t.null]);

export const BulkRowCodec = t.type({
  operationId: t.string,
  companyId: t.string,
  operation: oneOf(BULK_OPERATIONS, 'BulkOperation'),
  expectedVersion: t.number,
  reason: nullableString,
  /** Replacement rows only (null on action rows). */
  allowance: t.union([
    t.type({
      limit: t.number,
      periodType: oneOf(PERIOD_TYPES, 'PeriodType'),
      startAt: t.string,
      endAt: t.string,
      planReference: nullableString,
      metadata: t.record(t.string, t.unknown),
    }),
    t.null,
  ]),
});
export type BulkRow = t.TypeOf<typeof BulkRowCodec>;

export const BulkRowResultCodec = t.type({
  rowIndex: t.number,
  operationId: t.string,
  companyId: t.string,
  operation: t.string,
  status: oneOf(['succeeded', 'failed'] as const, 'BulkRowStatus'),
  /** The allowance's version after the operation (succeeded rows). */
  version: nullableNumber,
  error: t.union([t.type({ code: t.string, message: t.string }), t.null]),
});
export type BulkRowResult = t.TypeOf<typeof BulkRowResultCodec>;

const Totals = t.type({ total: t.number, processed: t.number, succeeded: t.number, failed: t.number });

export const CreditBulkJobSubmitted = defineEvent({
  type: 'CreditBulkJobSubmitted',
  version: 1,
  codec: t.type({
    jobId: t.string,
    workspaceId: t.string,
    environment: oneOf(CREDIT_ENVIRONMENTS, 'CreditEnvironment'),
    operations: t.array(BulkRowCodec),
    submittedAt: t.string,
  }),
});
export const CreditBulkJobRowsProcessed = defineEvent({
  type: 'CreditBulkJobRowsProcessed',
  version: 1,
  codec: t.type({ results: t.array(BulkRowResultCodec), at: t.string }),
});
/** isv.credits.bulk.completed: the job finished, with or without row errors. */
export const CreditBulkJobCompleted = defineEvent({
  type: 'CreditBulkJobCompleted',
  version: 1,
  codec: t.type({
    jobId: t.string,
    workspaceId: t.string,
    status: oneOf(['completed', 'completed_with_errors', 'failed'] as const, 'BulkJobFinalStatus'),
    totals: Totals,
    completedAt: t.string,
  }),
});

export type BulkJobEvent =
  | DomainEvent<'CreditBulkJobSubmitted', t.TypeOf<typeof CreditBulkJobSubmitted.codec>>
  | DomainEvent<'CreditBulkJobRowsProcessed', t.TypeOf<typeof CreditBulkJobRowsProcessed.codec>>
  | DomainEvent<'CreditBulkJobCompleted', t.TypeOf<typeof CreditBulkJobCompleted.codec>>;

export type BulkJobCommand =
  | { type: 'SubmitBulkJob'; jobId: string; workspaceId: string; environment: 'sandbox' | 'production'; operations: BulkRow[]; now: string }
  | { type: 'RecordBulkRows'; results: BulkRowResult[]; now: string }
  | { type: 'CompleteBulkJob'; now: string };

export interface BulkJobState {
  job: {
    jobId: string;
    workspaceId: string;
    environment: 'sandbox' | 'production';
    operations: BulkRow[];
    submittedAt: string;
    status: BulkJobStatus;
    results: Record<number, BulkRowResult>;
    completedAt: string | null;
    updatedAt: string;
  } | null;
}

export function bulkTotals(state: BulkJobState) {
  const results = Object.values(state.job?.results ?? {});
  const succeeded = results.filter((r) => r.status === 'succeeded').length;
  return { total: state.job?.operations.length ?? 0, processed: results.length, succeeded, failed: results.length - succeeded };
}

/** completed: every row succeeded; failed: every row failed; completed_with_errors: some of each. */
export function finalBulkStatus(totals: { total: number; succeeded: number; failed: number }): 'completed' | 'completed_with_errors' | 'failed' {
  if (totals.failed === 0) return 'completed';
  return totals.succeeded === 0 ? 'failed' : 'completed_with_errors';
}

export const bulkJobDecider: Decider<BulkJobCommand, BulkJobState, BulkJobEvent> = {
  category: 'creditbulkjob',
  initialState: { job: null },
  events: { CreditBulkJobSubmitted, CreditBulkJobRowsProcessed, CreditBulkJobCompleted },
  decide(command, state) {
    switch (command.type) {
      case 'SubmitBulkJob':
        if (state.job) throw new DomainError('conflict', 'CREDIT_BULK_JOB_EXISTS', 'the bulk job exists already');
        return [
          {
            type: 'CreditBulkJobSubmitted',
            data: { jobId: command.jobId, workspaceId: command.workspaceId, environment: command.environment, operations: command.operations, submittedAt: command.now },
          },
        ];
      case 'RecordBulkRows': {
        if (!state.job || state.job.completedAt) return [];
        const fresh = command.results.filter((r) => !state.job!.results[r.rowIndex]);
        return fresh.length === 0 ? [] : [{ type: 'CreditBulkJobRowsProcessed', data: { results: fresh, at: command.now } }];
      }
      case 'CompleteBulkJob': {
        if (!state.job || state.job.completedAt) return [];
        const totals = bulkTotals(state);
        if (totals.processed < totals.total) throw new DomainError('conflict', 'CREDIT_BULK_JOB_INCOMPLETE', 'rows of the job are not processed yet');
        return [
          {
            type: 'CreditBulkJobCompleted',
            data: { jobId: state.job.jobId, workspaceId: state.job.workspaceId, status: finalBulkStatus(totals), totals, completedAt: command.now },
          },
        ];
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'CreditBulkJobSubmitted': {
        const d = event.data;
        return {
          job: {
            jobId: d.jobId,
            workspaceId: d.workspaceId,
            environment: d.environment,
            operations: d.operations,
            submittedAt: d.submittedAt,
            status: 'accepted',
            results: {},
            completedAt: null,
            updatedAt: d.submittedAt,
          },
        };
      }
      case 'CreditBulkJobRowsProcessed': {
        if (!state.job) return state;
        const results = { ...state.job.results };
        for (const r of event.data.results) results[r.rowIndex] = r;
        return { job: { ...state.job, results, status: 'processing', updatedAt: event.data.at } };
      }
      case 'CreditBulkJobCompleted':
        if (!state.job) return state;
        return { job: { ...state.job, status: event.data.status, completedAt: event.data.completedAt, updatedAt: event.data.completedAt } };
    }
  },
};

registerDecider(bulkJobDecider);

// ---------------------------------------------------------------------------------------------
// Ledger exports

export const LedgerFiltersCodec = t.type({
  companyId: nullableString,
  eventType: nullableString,
  occurredFrom: nullableString,
  occurredTo: nullableString,
  correlationId: nullableString,
  idempotencyKey: nullableString,
  requestId: nullableString,
  transactionId: nullableString,
  bulkJobId: nullableString,
});
export type LedgerFilters = t.TypeOf<typeof LedgerFiltersCodec>;

export const CreditExportRequested = defineEvent({
  type: 'CreditExportRequested',
  version: 1,
  codec: t.type({ exportId: t.string, workspaceId: t.string, format: t.literal('csv'), filters: LedgerFiltersCodec, requestedAt: t.string }),
});
export const CreditExportCompleted = defineEvent({
  type: 'CreditExportCompleted',
  version: 1,
  codec: t.type({
    rowCount: t.number,
    /** The export holds the ledger transactions written before this global log position ("commit/prepare"). */
    throughPosition: t.string,
    completedAt: t.string,
    expiresAt: t.string,
  }),
});
export const CreditExportFailed = defineEvent({
  type: 'CreditExportFailed',
  version: 1,
  codec: t.type({ reason: t.string, at: t.string }),
});

export type CreditExportEvent =
  | DomainEvent<'CreditExportRequested', t.TypeOf<typeof CreditExportRequested.codec>>
  | DomainEvent<'CreditExportCompleted', t.TypeOf<typeof CreditExportCompleted.codec>>
  | DomainEvent<'CreditExportFailed', t.TypeOf<typeof CreditExportFailed.codec>>;

export type CreditExportCommand =
  | { type: 'RequestExport'; exportId: string; workspaceId: string; filters: LedgerFilters; now: string }
  | { type: 'CompleteExport'; rowCount: number; throughPosition: string; now: string; availableMs: number }
  | { type: 'FailExport'; reason: string; now: string };

export interface CreditExportState {
  export: { exportId: string; workspaceId: string; filters: LedgerFilters; requestedAt: string; status: 'accepted' | 'completed' | 'failed' } | null;
}

export const creditExportDecider: Decider<CreditExportCommand, CreditExportState, CreditExportEvent> = {
  category: 'creditexport',
  initialState: { export: null },
  events: { CreditExportRequested, CreditExportCompleted, CreditExportFailed },
  decide(command, state) {
    switch (command.type) {
      case 'RequestExport':
        if (state.export) throw new DomainError('conflict', 'CREDIT_EXPORT_EXISTS', 'the export exists already');
        return [
          {
            type: 'CreditExportRequested',
            data: { exportId: command.exportId, workspaceId: command.workspaceId, format: 'csv', filters: command.filters, requestedAt: command.now },
          },
        ];
      case 'CompleteExport':
        if (state.export?.status !== 'accepted') return [];
        return [
          {
            type: 'CreditExportCompleted',
            data: {
              rowCount: command.rowCount,
              throughPosition: command.throughPosition,
              completedAt: command.now,
              expiresAt: new Date(Date.parse(command.now) + command.availableMs).toISOString(),
            },
          },
        ];
      case 'FailExport':
        if (state.export?.status !== 'accepted') return [];
        return [{ type: 'CreditExportFailed', data: { reason: command.reason, at: command.now } }];
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'CreditExportRequested': {
        const d = event.data;
        return { export: { exportId: d.exportId, workspaceId: d.workspaceId, filters: d.filters, requestedAt: d.requestedAt, status: 'accepted' } };
      }
      case 'CreditExportCompleted':
        return state.export ? { export: { ...state.export, status: 'completed' } } : state;
      case 'CreditExportFailed':
        return state.export ? { export: { ...state.export, status: 'failed' } } : state;
    }
  },
};

registerDecider(creditExportDecider);
