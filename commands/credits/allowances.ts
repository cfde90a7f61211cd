/**
 * Allowance writes (docs/api/credits.md): create or replace the current or the scheduled
 * allowance, cancel the scheduled one, pause and resume the current one. Each is one command on
 * the workspace's credits stream; the company must be an active company of the workspace
 * (checked on its own stream). The answer carries the company's credit state right after the
 * write and the OVER_ALLOCATION warning when the allowances exceed the available pool.
 */
import { companyDecider, companyOfWorkspace, isCompanyActive } from '../../domain/connect/company.js';
import { companyStream } from '../../domain/connect/values.js';
import {
  allocatedHeadroom,
  companyCreditView,
  companyOf,
  poolTotals,
  type AllowanceInput,
  type CompanyCreditView,
  type CreditsCommand,
  type CreditsState,
  type Precondition,
} from '../../domain/credits/credits.js';
import type { Allowance } from '../../domain/credits/events.js';
import { CreditErrorCodes, type AllowanceTarget, type CreditWarning } from '../../domain/credits/values.js';
import { DomainError } from '../../domain/errors.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import { loadAggregate, type CommandContext } from '../execute.js';
import { takeSlot } from '../idempotent-unit.js';
import type { CreditsEngine, CreditsOutcome } from './engine.js';

export interface CreditsDeps {
  store: EventStore;
  engine: CreditsEngine;
}

/** 404 CONNECT_COMPANY_NOT_FOUND unless the company is an active company of the workspace. */
export async function requireActiveCompany(store: EventStore, workspaceId: string, companyId: string): Promise<void> {
  const { state } = await loadAggregate(store, companyDecider, companyStream(companyId));
  try {
    companyOfWorkspace(state, workspaceId);
  } catch {
    throw new DomainError('not_found', CreditErrorCodes.companyNotFound, 'no active company with that id in the workspace', ['path', 'companyId']);
  }
  if (!isCompanyActive(state)) {
    throw new DomainError('not_found', CreditErrorCodes.companyNotFound, 'no active company with that id in the workspace: the company has no active source', ['path', 'companyId']);
  }
}

export interface AllowanceWriteResult {
  /** 201 when an allowance was created, 200 when one was replaced or changed. */
  status: 200 | 201;
  outcome: CreditsOutcome;
  view: CompanyCreditView;
  /** The allowance of the target after the write (null after a cancellation). */
  allowance: Allowance | null;
  /** The version the response's ETag carries. */
  version: number;
  warnings: CreditWarning[];
}

export function overAllocationWarnings(state: CreditsState): CreditWarning[] {
  return allocatedHeadroom(state) > poolTotals(state).available ? ['OVER_ALLOCATION'] : [];
}

async function write(
  deps: CreditsDeps,
  workspaceId: string,
  command: Extract<CreditsCommand, { companyId: string }>,
  target: AllowanceTarget,
  ctx: CommandContext,
  options: { idSeed?: string; skipCompanyCheck?: boolean },
): Promise<AllowanceWriteResult> {
  // A write for an idempotent request (not a bulk job's row, which has its own ids) records its
  // result with the request's key, in the same append; a retry after a crash answers from it.
  const slot = options.idSeed == null ? takeSlot<AllowanceWriteRecord>() : null;
  if (slot?.recorded) {
    const r = slot.recorded;
    return { ...r, outcome: { state: await deps.engine.read(workspaceId), events: r.events, position: null, replayed: true } };
  }
  if (!options.skipCompanyCheck) await requireActiveCompany(deps.store, workspaceId, command.companyId);
  const resultOf = (outcome: Pick<CreditsOutcome, 'state' | 'events'>): AllowanceWriteRecord => {
    const company = companyOf(outcome.state, command.companyId);
    const created = outcome.events.some((e) => e.type === 'AllowanceCreated' || e.type === 'AllowanceScheduled');
    const cancelled = outcome.events.find((e) => e.type === 'AllowanceCancelled');
    const allowance = target === 'current' ? company.current : company.scheduled;
    const version = cancelled && cancelled.type === 'AllowanceCancelled' ? cancelled.data.allowance.version : (allowance?.version ?? 0);
    return {
      status: created ? 201 : 200,
      events: outcome.events,
      view: companyCreditView(outcome.state, command.companyId, ctx.now.toISOString()),
      allowance,
      version,
      warnings: overAllocationWarnings(outcome.state),
    };
  };
  const outcome = await deps.engine.execute(workspaceId, command, ctx, { idSeed: options.idSeed, effect: slot ? { slot, record: resultOf } : undefined });
  return { ...resultOf(outcome), outcome };
}

/** The result of an allowance write as recorded for its idempotent request (JSON). */
type AllowanceWriteRecord = Omit<AllowanceWriteResult, 'outcome'> & { events: CreditsOutcome['events'] };

export interface WriteOptions {
  idSeed?: string;
  bulkJobId?: string | null;
  /** The caller has checked the company already (bulk rows check it per row). */
  skipCompanyCheck?: boolean;
}

/** PUT /allowances/{companyId}/current and /scheduled. */
export function putAllowance(
  deps: CreditsDeps,
  workspaceId: string,
  companyId: string,
  target: AllowanceTarget,
  precondition: Precondition,
  input: AllowanceInput,
  ctx: CommandContext,
  options: WriteOptions = {},
): Promise<AllowanceWriteResult> {
  return write(
    deps,
    workspaceId,
    {
      type: 'PutAllowance',
      companyId,
      target,
      precondition,
      input,
      now: ctx.now.toISOString(),
      bulkJobId: options.bulkJobId ?? null,
      environment: ctx.environment === 'sandbox' || ctx.environment === 'production' ? ctx.environment : null,
    },
    target,
    ctx,
    options,
  );
}

/** DELETE /allowances/{companyId}/scheduled. */
export function cancelScheduled(
  deps: CreditsDeps,
  workspaceId: string,
  companyId: string,
  expectedVersion: number,
  reason: string | null,
  ctx: CommandContext,
  options: WriteOptions = {},
): Promise<AllowanceWriteResult> {
  return write(
    deps,
    workspaceId,
    { type: 'CancelScheduled', companyId, expectedVersion, reason, now: ctx.now.toISOString(), bulkJobId: options.bulkJobId ?? null },
    'scheduled',
    ctx,
    options,
  );
}

/** POST /allowances/{companyId}/pause and /resume. */
export function pauseOrResume(
  deps: CreditsDeps,
  workspaceId: string,
  companyId: string,
  action: 'pause' | 'resume',
  expectedVersion: number,
  reason: string | null,
  ctx: CommandContext,
  options: WriteOptions = {},
): Promise<AllowanceWriteResult> {
  return write(
    deps,
    workspaceId,
    {
      type: action === 'pause' ? 'PauseAllowance' : 'ResumeAllowance',
      companyId,
      expectedVersion,
      reason,
      now: ctx.now.toISOString(),
      bulkJobId: options.bulkJobId ?? null,
    },
    'current',
    ctx,
    options,
  );
}

/**
 * A source of the company was archived (CompanySourceArchived with cancelScheduledAllowance):
 * its scheduled allowance, if any, is cancelled. No version is needed; nothing happens without one.
 */
export function cancelScheduledForArchivedSource(
  engine: CreditsEngine,
  workspaceId: string,
  companyId: string,
  ctx: CommandContext,
  idSeed: string,
): Promise<CreditsOutcome> {
  return engine.execute(
    workspaceId,
    { type: 'CancelScheduled', companyId, expectedVersion: null, reason: 'a source of the company was archived', now: ctx.now.toISOString(), bulkJobId: null },
    { ...ctx, actor: ctx.actor ?? 'connect' },
    { idSeed },
  );
}
