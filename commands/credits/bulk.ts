/**
 * Bulk allowance jobs (docs/api/credits.md): the request is checked as a whole (1 to 500 well-formed
 * operations, unique operationIds, one operation per company per target) and recorded as a job;
 * the job then runs in the background (projections/reactors/credits-processes.ts), one row after the
 * other in request order, each row an allowance command of its own carrying the job's id. A
 * failed row never undoes another. Re-run after a crash, a row's command is recognised by its
 * event ids (derived from the job and the row) and not applied twice.
 */
import { randomBytes } from 'node:crypto';
import { bulkJobDecider, type BulkRow, type BulkRowResult } from '../../domain/credits/jobs.js';
import { bulkJobStream, type CreditEnvironment } from '../../domain/credits/values.js';
import { DomainError } from '../../domain/errors.js';
import type { Clock } from '../../platform/clock.js';
import type { EventStore, Position, RecordedEvent } from '../../platform/eventstore/port.js';
import { execute, loadAggregate, type CommandContext } from '../execute.js';
import { cancelScheduled, pauseOrResume, putAllowance, requireActiveCompany, type AllowanceWriteResult } from './allowances.js';
import type { CreditsEngine } from './engine.js';
import { storeRecordingEffect, takeSlot } from '../idempotent-unit.js';

export const newBulkJobId = () => `cbj_${randomBytes(12).toString('hex')}`;

export async function submitBulkJob(
  store: EventStore,
  input: { workspaceId: string; environment: CreditEnvironment; operations: BulkRow[] },
  ctx: CommandContext,
): Promise<{ jobId: string; position: Position | null }> {
  // Under an Idempotency-Key the job is recorded with the key, in the same append (a retry after
  // a crash answers with the same job instead of starting a second one).
  const slot = takeSlot<{ jobId: string }>();
  if (slot?.recorded) return { jobId: slot.recorded.jobId, position: null };
  const jobId = slot ? `cbj_${slot.id('bulk-job').replace(/-/g, '').slice(0, 24)}` : newBulkJobId();
  const result = await execute(
    slot ? storeRecordingEffect(store, slot, { jobId }, ctx) : store,
    bulkJobDecider,
    bulkJobStream(jobId),
    { type: 'SubmitBulkJob', jobId, workspaceId: input.workspaceId, environment: input.environment, operations: input.operations, now: ctx.now.toISOString() },
    { ...ctx, workspaceId: input.workspaceId, environment: input.environment },
  );
  return { jobId, position: result.appended!.position };
}

export interface BulkDeps {
  store: EventStore;
  engine: CreditsEngine;
  clock: Clock;
  onUnexpectedError?: (err: unknown, row: BulkRow) => void;
}

async function runRow(deps: BulkDeps, jobId: string, workspaceId: string, row: BulkRow, ctx: CommandContext, idSeed: string): Promise<AllowanceWriteResult> {
  await requireActiveCompany(deps.store, workspaceId, row.companyId);
  const options = { idSeed, bulkJobId: jobId, skipCompanyCheck: true };
  const credits = { store: deps.store, engine: deps.engine };
  switch (row.operation) {
    case 'replace_current':
    case 'replace_scheduled': {
      const a = row.allowance!;
      return putAllowance(
        credits,
        workspaceId,
        row.companyId,
        row.operation === 'replace_current' ? 'current' : 'scheduled',
        row.expectedVersion === 0 ? { kind: 'none' } : { kind: 'version', version: row.expectedVersion },
        { limit: a.limit, periodType: a.periodType, startAt: a.startAt, endAt: a.endAt, planReference: a.planReference, metadata: a.metadata, reason: row.reason ?? '' },
        ctx,
        options,
      );
    }
    case 'cancel_scheduled':
      return cancelScheduled(credits, workspaceId, row.companyId, row.expectedVersion, row.reason, ctx, options);
    case 'pause':
    case 'resume':
      return pauseOrResume(credits, workspaceId, row.companyId, row.operation, row.expectedVersion, row.reason, ctx, options);
  }
}

/** Runs the rows of a job that have no result yet, records their results, then completes the job. */
export async function processBulkJob(deps: BulkDeps, jobId: string, trigger: RecordedEvent): Promise<void> {
  const stream = bulkJobStream(jobId);
  const { state } = await loadAggregate(deps.store, bulkJobDecider, stream);
  const job = state.job;
  if (!job || job.completedAt) return;
  const m = trigger.metadata;
  const base: CommandContext = {
    now: deps.clock.now(),
    workspaceId: job.workspaceId,
    environment: job.environment,
    correlationId: m.correlationId,
    causationId: trigger.id,
    requestId: m.requestId ?? null,
    keyId: m.keyId ?? null,
    idempotencyKey: m.idempotencyKey ?? null,
    actor: 'bulk-job',
  };
  const record = async (results: BulkRowResult[]) => {
    if (results.length === 0) return;
    await execute(deps.store, bulkJobDecider, stream, { type: 'RecordBulkRows', results, now: deps.clock.now().toISOString() }, { ...base, now: deps.clock.now() });
  };
  let pending: BulkRowResult[] = [];
  for (const [rowIndex, row] of job.operations.entries()) {
    if (job.results[rowIndex]) continue;
    const head = { rowIndex, operationId: row.operationId, companyId: row.companyId, operation: row.operation };
    try {
      const result = await runRow(deps, jobId, job.workspaceId, row, { ...base, now: deps.clock.now() }, `${trigger.id}/row/${rowIndex}`);
      pending.push({ ...head, status: 'succeeded', version: result.version, error: null });
    } catch (err) {
      if (err instanceof DomainError) {
        pending.push({ ...head, status: 'failed', version: null, error: { code: err.code, message: err.message } });
      } else {
        deps.onUnexpectedError?.(err, row);
        pending.push({ ...head, status: 'failed', version: null, error: { code: 'CONNECT_INTERNAL_ERROR', message: 'the operation failed unexpectedly; retry it' } });
      }
    }
    if (pending.length >= 50) {
      await record(pending);
      pending = [];
    }
  }
  await record(pending);
  await execute(deps.store, bulkJobDecider, stream, { type: 'CompleteBulkJob', now: deps.clock.now().toISOString() }, { ...base, now: deps.clock.now() });
}
