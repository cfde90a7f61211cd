/**
 * Onboarding jobs: 1 to 500 rows onboarded synchronously, each on its own (a failed row never
 * undoes another), then the job recorded with every row's outcome.
 *
 * Rows run concurrently, yet the outcome is the one of processing them in request order: rows
 * that share a TIN or a source name/version are chained and run one after the other in order,
 * and rows of different chains cannot affect each other.
 */
import { randomBytes } from 'node:crypto';
import { parseJobRow, echoText, type CompanyCreationInput, type OnboardingJobInput } from '../../domain/connect/input.js';
import {
  nextActionFor,
  onboardingJobDecider,
  onboardingJobStream,
  type OnboardingJobRecord,
  type OnboardingJobRow,
} from '../../domain/connect/onboarding-job.js';
import { DomainError } from '../../domain/errors.js';
import { comparePositions, type Position } from '../../platform/eventstore/port.js';
import { execute, type CommandContext } from '../execute.js';
import { ConnectDependencyError, onboardCompany, type CompanySourceResult, type ConnectCommandDeps } from './companies.js';
import { loadConnectSettings } from './settings.js';

export interface RowFailure {
  code: string;
  message: string;
  retryable: boolean;
}

export type RowOutcome = { ok: true; input: CompanyCreationInput; result: CompanySourceResult } | { ok: false; error: RowFailure };

export const INTERNAL_ERROR = 'CONNECT_INTERNAL_ERROR';

/** The row error of any failure: domain and dependency errors keep their code; anything else is an internal error. */
export function rowFailure(err: unknown): RowFailure {
  if (err instanceof DomainError) return { code: err.code, message: err.message, retryable: false };
  if (err instanceof ConnectDependencyError) return { code: err.code, message: err.message, retryable: true };
  return { code: INTERNAL_ERROR, message: 'An internal error occurred while processing this item; retry later.', retryable: true };
}

/** Runs `tasks` with at most `limit` in flight. */
async function pool(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
}

/** Groups row indexes into chains: rows sharing a TIN or a source name/version land in the same chain, in order. */
function chains(inputs: readonly (CompanyCreationInput | null)[]): number[][] {
  const parent = inputs.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const owner = new Map<string, number>();
  inputs.forEach((input, i) => {
    if (!input) return;
    for (const key of [`tin\n${input.tin}`, `src\n${input.sourceName}\n${input.sourceVersion}`]) {
      const j = owner.get(key);
      if (j === undefined) owner.set(key, i);
      else parent[find(i)] = find(j);
    }
  });
  const groups = new Map<number, number[]>();
  inputs.forEach((input, i) => {
    if (!input) return;
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), i]);
  });
  return [...groups.values()];
}

export interface OnboardingJobResult {
  job: OnboardingJobRecord;
  outcomes: RowOutcome[];
  /** Position of the last event written (rows and job), for read-your-writes. */
  position: Position | null;
}

export async function runOnboardingJob(
  deps: ConnectCommandDeps,
  workspaceId: string,
  job: OnboardingJobInput,
  ctx: CommandContext,
  options: {
    concurrency?: number;
    /** Told of a row that failed for an unexpected reason (reported to the caller as CONNECT_INTERNAL_ERROR). */
    onUnexpectedError?: (rowIndex: number, err: unknown) => void;
    /** Rows refused before anything else (e.g. an environment the key does not serve), by index. */
    refusedRows?: ReadonlyMap<number, RowFailure>;
  } = {},
): Promise<OnboardingJobResult> {
  const jobId = `job_${randomBytes(12).toString('hex')}`;
  const createdAt = ctx.now.toISOString();
  const settings = await loadConnectSettings(deps.store, workspaceId);
  const outcomes: RowOutcome[] = new Array(job.rows.length);
  const inputs = job.rows.map((row, i) => {
    const refused = options.refusedRows?.get(i);
    if (refused) {
      outcomes[i] = { ok: false, error: refused };
      return null;
    }
    try {
      return parseJobRow(row, job);
    } catch (err) {
      outcomes[i] = { ok: false, error: rowFailure(err) };
      return null;
    }
  });
  let position: Position | null = null;
  const tasks = chains(inputs).map((indexes) => async () => {
    for (const i of indexes) {
      const input = inputs[i]!;
      try {
        const result = await onboardCompany(deps, workspaceId, input, { ...ctx, now: deps.clock.now() }, { settings });
        outcomes[i] = { ok: true, input, result };
        if (result.position && (!position || comparePositions(result.position, position) > 0)) position = result.position;
      } catch (err) {
        outcomes[i] = { ok: false, error: rowFailure(err) };
        if (outcomes[i].error.code === INTERNAL_ERROR) options.onUnexpectedError?.(i, err);
      }
    }
  });
  await pool(tasks, options.concurrency ?? 8);

  const rows: OnboardingJobRow[] = outcomes.map((outcome, rowIndex) => {
    const row = job.rows[rowIndex] as Record<string, unknown> | null;
    const common = { rowId: `row_${randomBytes(10).toString('hex')}`, rowIndex };
    if (outcome.ok) {
      return {
        ...common,
        status: 'onboarded',
        sourceName: outcome.input.sourceName,
        sourceVersion: outcome.input.sourceVersion,
        companyId: outcome.result.company.companyId,
        sourceId: outcome.result.source.sourceId,
        nextAction: nextActionFor({ mappingReadiness: outcome.result.source.mappingReadiness }),
        errorCode: null,
        errorMessage: null,
      };
    }
    const echo = (field: string) => (row && typeof row === 'object' && !Array.isArray(row) ? echoText(row[field]) : null);
    return {
      ...common,
      status: 'failed',
      sourceName: echo('sourceName'),
      sourceVersion: echo('sourceVersion'),
      companyId: null,
      sourceId: null,
      nextAction: nextActionFor({ errorCode: outcome.error.code }),
      errorCode: outcome.error.code,
      errorMessage: outcome.error.message,
    };
  });
  const succeededRows = rows.filter((r) => r.status === 'onboarded').length;
  const record: OnboardingJobRecord = {
    jobId,
    workspaceId,
    countryCode: job.countryCode,
    platformEnvironment: job.platformEnvironment,
    filename: job.filename,
    status: 'completed',
    totalRows: rows.length,
    succeededRows,
    failedRows: rows.length - succeededRows,
    createdAt,
    completedAt: deps.clock.now().toISOString(),
    rows,
  };
  const recorded = await execute(deps.store, onboardingJobDecider, onboardingJobStream(jobId), { type: 'RecordOnboardingJob', job: record }, {
    ...ctx,
    workspaceId,
    environment: job.platformEnvironment,
    now: deps.clock.now(),
  });
  return { job: record, outcomes, position: recorded.appended?.position ?? position };
}

