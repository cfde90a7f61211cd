/**
 * Metering of submissions (issue 7, docs/api/http.md): a sales document that passed validation
 * reserves credits on its company's current allowance and on the pool; its final result
 * finalizes the consumption (valid), releases the reservation (invalid), or marks it for
 * reconciliation (the delivery outcome could not be determined). One document costs
 * CREDIT_LIMITS.creditsPerDocument credits (1): the spec names no other unit.
 *
 * And the enforcement check the submission path calls before accepting a document: with the
 * workspace's enforcement on, a company that is blocked (no allowance, paused, inactive,
 * exhausted, or an exhausted pool) cannot submit. The check reads the aggregate, not a read
 * model; it does not reserve (the reservation follows the accepted submission), so two
 * submissions racing for the last credit may both pass it: the second is then refused by the
 * reservation itself (ReservationRefused) and never over-consumes.
 */
import type { Knex } from 'knex';
import { blockReasonOf, companyOf, poolTotals } from '../../domain/credits/credits.js';
import { CREDIT_LIMITS, reservationIdFor, type BlockReason } from '../../domain/credits/values.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import type { CommandContext } from '../execute.js';
import type { CreditsEngine, CreditsOutcome } from './engine.js';
import { creditsEngine } from './snapshots.js';

export interface MeteredDocument {
  workspaceId: string;
  companyId: string;
  documentId: string;
}

export type ReservationResult =
  | { outcome: 'reserved'; reservationId: string; replayed: boolean; result: CreditsOutcome }
  | { outcome: 'refused'; reservationId: string; blockReason: BlockReason; result: CreditsOutcome }
  | { outcome: 'already_reserved'; reservationId: string; result: CreditsOutcome };

/** Reserves the credits of one document (idempotent per document). */
export async function reserveForDocument(
  engine: CreditsEngine,
  doc: MeteredDocument,
  ctx: CommandContext,
  options: { idSeed?: string; amount?: number } = {},
): Promise<ReservationResult> {
  const reservationId = reservationIdFor(doc.documentId);
  const result = await engine.execute(
    doc.workspaceId,
    {
      type: 'Reserve',
      reservationId,
      companyId: doc.companyId,
      documentId: doc.documentId,
      amount: options.amount ?? CREDIT_LIMITS.creditsPerDocument,
      now: ctx.now.toISOString(),
    },
    ctx,
    { idSeed: options.idSeed },
  );
  if (result.replayed) return { outcome: 'reserved', reservationId, replayed: true, result };
  const refused = result.events.find((e) => e.type === 'ReservationRefused');
  if (refused && refused.type === 'ReservationRefused') return { outcome: 'refused', reservationId, blockReason: refused.data.blockReason, result };
  if (result.events.some((e) => e.type === 'ReservationCreated')) return { outcome: 'reserved', reservationId, replayed: false, result };
  return { outcome: 'already_reserved', reservationId, result };
}

export type SettleHow = 'finalize' | 'release' | 'needs_reconciliation';

/** Settles the reservation of a document; nothing happens when it holds none (refused, or settled already). */
export function settleDocumentReservation(
  engine: CreditsEngine,
  workspaceId: string,
  documentId: string,
  how: SettleHow,
  reason: string | null,
  ctx: CommandContext,
  options: { idSeed?: string } = {},
): Promise<CreditsOutcome> {
  const reservationId = reservationIdFor(documentId);
  const now = ctx.now.toISOString();
  const command =
    how === 'finalize'
      ? ({ type: 'Finalize', reservationId, reason, now } as const)
      : how === 'release'
        ? ({ type: 'Release', reservationId, reason, now } as const)
        : ({ type: 'MarkNeedsReconciliation', reservationId, reason, now } as const);
  return engine.execute(workspaceId, command, ctx, { idSeed: options.idSeed });
}

export type CreditCheck = { allowed: true } | { allowed: false; blockReason: BlockReason; message: string };

const BLOCK_MESSAGES: Record<BlockReason, string> = {
  NO_ACTIVE_ALLOWANCE: 'the company has no current credit allowance',
  ALLOWANCE_PAUSED: "the company's credit allowance is paused",
  ALLOWANCE_INACTIVE: "the company's credit allowance is not in its period (expired, superseded or not started)",
  ALLOWANCE_EXHAUSTED: "the company's credit allowance is used up",
  POOL_EXHAUSTED: "the workspace's credit pool is exhausted",
};

export function blockMessage(reason: BlockReason): string {
  return `Submission refused by credit enforcement (${reason}): ${BLOCK_MESSAGES[reason]}.`;
}

/**
 * How old the engine's cached credits state of a workspace may be for the submission check to
 * trust its "enforcement off" without reading the stream (no round trip on the submission path).
 * Enforcement switched on through this process applies at once; through another instance, within
 * this time. With enforcement on, the check always reads the stream first.
 */
export const ENFORCEMENT_OFF_CACHE_MS = 1000;

/**
 * The check of the submission path: allowed unless the workspace enforces credits and the
 * company is blocked now. A document of no company (a source outside Connect) is not metered.
 */
export async function checkCreditsForSubmission(
  deps: { store: EventStore; knex?: Knex | null },
  input: { workspaceId: string; companyId: string | null; now: Date },
): Promise<CreditCheck> {
  if (input.companyId === null) return { allowed: true };
  const engine = creditsEngine(deps);
  if (engine.recent(input.workspaceId, ENFORCEMENT_OFF_CACHE_MS)?.enforcement === false) return { allowed: true };
  const state = await engine.read(input.workspaceId);
  if (!state.enforcement) return { allowed: true };
  const blockReason = blockReasonOf(companyOf(state, input.companyId).current, poolTotals(state).available, input.now.toISOString());
  return blockReason ? { allowed: false, blockReason, message: blockMessage(blockReason) } : { allowed: true };
}
