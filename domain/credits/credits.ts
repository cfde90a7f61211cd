/**
 * The credits aggregate of a workspace (stream `credits-<workspaceId>`): the pool (credit lots),
 * every company's current and scheduled allowance (docs/api/credits.md), the open reservations of
 * metered documents, and the enforcement setting. One stream per workspace makes a reservation
 * one atomic append against both the company's allowance and the pool, and gives the ledger of
 * a workspace one total order: every balance before/after recorded in an event follows from
 * the events before it.
 *
 * Pool arithmetic (all whole credits):
 *   issued    = Σ lot amounts
 *   consumed  = Σ finalized consumption;  expired = Σ credits that expired unused
 *   active    = issued − consumed − expired   (credits still held by the pool, reserved ones included)
 *   reserved  = Σ open reservations;         available = active − reserved
 * A reservation takes its credits from the lots that expire first. A lot that expires gives up
 * what is neither consumed nor reserved; credits it still has reserved are consumed normally,
 * or expire when released.
 *
 * The allowance state machine is exactly docs/api/credits.md; every other transition is refused.
 * Versions: the current slot and the scheduled slot of a company each count up and never
 * repeat (a new period continues the count), so an old ETag never matches a newer allowance.
 * System transitions (expiry, supersession) do not change a version.
 */
import { registerDecider } from '../aggregates.js';
import type { Decider } from '../decider.js';
import { creditEventDefinitions, type CreditEvent } from './events.js';
import { pvalues } from './pmap.js';
import { decideCredits } from './decide.js';
import { isLive } from './derived.js';
import { evolveCredits } from './evolve.js';
import { initialCreditsState, type CreditsCommand, type CreditsState } from './state.js';

export * from './state.js';
export * from './derived.js';
export * from './evolve.js';
export * from './decide.js';

export const creditsDecider: Decider<CreditsCommand, CreditsState, CreditEvent> = {
  category: 'credits',
  initialState: initialCreditsState,
  events: creditEventDefinitions,
  decide: decideCredits,
  evolve: evolveCredits,
};

registerDecider(creditsDecider);

/** Due lifecycle work at `now`: an allowance to activate or expire, or a lot to expire. */
export function hasDueLifecycle(state: CreditsState, now: string): boolean {
  const t = Date.parse(now);
  for (const c of pvalues(state.companies)) {
    if (isLive(c.current) && Date.parse(c.current.endAt) <= t) return true;
    if (c.scheduled && Date.parse(c.scheduled.startAt) <= t) return true;
  }
  return Object.values(state.lots).some((l) => l.status === 'active' && l.expiresAt !== null && Date.parse(l.expiresAt) <= t);
}
