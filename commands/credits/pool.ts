/** Pool and workspace settings of credits (admin CLI): credit lots, enforcement, reconciliation of reservations. */
import { randomBytes } from 'node:crypto';
import { poolTotals, type PoolTotals } from '../../domain/credits/credits.js';
import type { CreditEnvironment } from '../../domain/credits/values.js';
import type { CommandContext } from '../execute.js';
import type { CreditsEngine, CreditsOutcome } from './engine.js';

export const newLotId = () => `lot_${randomBytes(10).toString('hex')}`;

/** Issues a lot of credits into the workspace's pool (credit.issued). */
export async function issueCredits(
  engine: CreditsEngine,
  input: { workspaceId: string; environment: CreditEnvironment; amount: number; expiresAt: string | null; reason?: string | null; lotId?: string },
  ctx: CommandContext,
): Promise<{ lotId: string; pool: PoolTotals; outcome: CreditsOutcome }> {
  const lotId = input.lotId ?? newLotId();
  const outcome = await engine.execute(
    input.workspaceId,
    { type: 'IssueCredits', lotId, amount: input.amount, expiresAt: input.expiresAt, environment: input.environment, reason: input.reason ?? null, now: ctx.now.toISOString() },
    { ...ctx, environment: input.environment },
  );
  return { lotId, pool: poolTotals(outcome.state), outcome };
}

/** Turns enforcement of credits on submissions on or off for the workspace. */
export async function setCreditEnforcement(engine: CreditsEngine, workspaceId: string, enabled: boolean, ctx: CommandContext) {
  const outcome = await engine.execute(workspaceId, { type: 'SetEnforcement', enabled }, ctx);
  return { enabled: outcome.state.enforcement, changed: outcome.events.length > 0, outcome };
}

/** Resolves a reservation by hand (one marked for reconciliation): consumed or released. */
export async function reconcileReservation(
  engine: CreditsEngine,
  input: { workspaceId: string; reservationId: string; outcome: 'consumed' | 'released'; reason: string },
  ctx: CommandContext,
): Promise<CreditsOutcome> {
  return engine.execute(
    input.workspaceId,
    { type: 'Reconcile', reservationId: input.reservationId, outcome: input.outcome, reason: input.reason, now: ctx.now.toISOString() },
    ctx,
  );
}
