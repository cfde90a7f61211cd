/**
 * The allowance lifecycle (docs/api/credits.md, docs/api/http.md): a scheduled allowance becomes current at its
 * startAt (a new allowancePeriodId; the prior current is superseded), a current one expires at
 * its endAt, a credit lot expires at its expiresAt. The worker finds the workspaces with due
 * work in the read model and runs one RunLifecycle command on each workspace's credits stream:
 * the decision is taken on the aggregate, and the append's expected revision makes each
 * transition happen exactly once even when several service instances tick at the same time.
 */
import type { Knex } from 'knex';
import type { CommandContext } from '../execute.js';
import type { CreditsEngine } from './engine.js';
import { dueLifecycleWorkspaces } from '../../readmodels/credits.js';

export async function runCreditLifecycle(engine: CreditsEngine, knex: Knex, now: Date, ctx: Partial<CommandContext> = {}): Promise<number> {
  const workspaces = await dueLifecycleWorkspaces(knex, now);
  let transitions = 0;
  for (const workspaceId of workspaces) {
    const outcome = await engine.execute(
      workspaceId,
      { type: 'RunLifecycle', now: now.toISOString() },
      { actor: 'lifecycle-worker', correlationId: `lifecycle:${workspaceId}:${now.toISOString()}`, ...ctx, now },
    );
    transitions += outcome.events.length;
  }
  return transitions;
}
