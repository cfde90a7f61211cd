/**
 * The submit use case both request formats call: the credit check (a blocked company is refused
 * before anything is recorded), the submission itself, and the wait until the read models hold
 * the new document (a status read or an invoice query right after the answer finds it).
 */
import type { Knex } from 'knex';
import type { EventStore, Position } from '../platform/eventstore/port.js';
import { produceInvoiceXml } from './artifacts.js';
import { checkCreditsForSubmission } from './credits/metering.js';
import type { CommandContext } from './execute.js';
import { dryRunDocument, submitDocument, type DryRunOutcome, type SubmissionInput, type SubmissionOutcome } from './submissions.js';
import type { BlockReason } from '../domain/credits/values.js';
import { submitSteps, type SubmitStep } from '../platform/trace-channels.js';

export interface SubmitUseCaseDeps {
  store: EventStore;
  knex?: Knex | null;
  /** Resolves once the read models the answer promises (documents, search) have reached `position`. */
  readYourWrites: (position: Position) => Promise<unknown>;
}

export type SubmitResult =
  | { kind: 'credits_blocked'; blockReason: BlockReason; message: string }
  | { kind: 'submitted'; outcome: SubmissionOutcome };

/**
 * The submission, then the wait for the read models. The wait runs in a frame that never held the
 * input: a suspended async function keeps every parameter and local it has, used later or not, so
 * a wait inside the function that took the input would keep the parsed payload (some 16 KB of
 * objects for a 20-line invoice) alive while the answer waits, long enough for the scavenger to
 * copy it and promote it to the old generation.
 */
export function submitInvoice(deps: SubmitUseCaseDeps, input: SubmissionInput, ctx: CommandContext): Promise<SubmitResult> {
  return appendInvoice(deps, input, ctx).then((result) => (result.kind === 'submitted' ? readable(deps, result, ctx) : result));
}

async function appendInvoice(deps: SubmitUseCaseDeps, input: SubmissionInput, ctx: CommandContext): Promise<SubmitResult> {
  const credit = await checkCreditsForSubmission(deps, { workspaceId: input.workspaceId, companyId: input.source.companyId, now: ctx.now });
  if (!credit.allowed) return { kind: 'credits_blocked', blockReason: credit.blockReason, message: credit.message };
  const outcome = await submitDocument(deps.store, input, ctx, produceInvoiceXml);
  if (submitSteps.hasSubscribers) submitSteps.publish({ requestId: ctx.requestId ?? null, step: 'appended', position: outcome.position } satisfies SubmitStep);
  return { kind: 'submitted', outcome };
}

async function readable(deps: SubmitUseCaseDeps, result: SubmitResult & { kind: 'submitted' }, ctx: CommandContext): Promise<SubmitResult> {
  await deps.readYourWrites(result.outcome.position);
  if (submitSteps.hasSubscribers) submitSteps.publish({ requestId: ctx.requestId ?? null, step: 'readable', position: result.outcome.position } satisfies SubmitStep);
  return result;
}

export type DryRunResult = { kind: 'credits_blocked'; blockReason: BlockReason; message: string } | { kind: 'validated'; outcome: DryRunOutcome };

/**
 * The dry run of a submission: the same credit check (it reads, it does not reserve) and the same
 * validation path and number check as submitInvoice, and the XML a valid document would get;
 * nothing is appended, no number claimed, no credit reserved.
 */
export async function dryRunInvoice(deps: Pick<SubmitUseCaseDeps, 'store' | 'knex'>, input: SubmissionInput, ctx: CommandContext): Promise<DryRunResult> {
  const credit = await checkCreditsForSubmission(deps, { workspaceId: input.workspaceId, companyId: input.source.companyId, now: ctx.now });
  if (!credit.allowed) return { kind: 'credits_blocked', blockReason: credit.blockReason, message: credit.message };
  return { kind: 'validated', outcome: await dryRunDocument(deps.store, input, ctx, produceInvoiceXml) };
}
