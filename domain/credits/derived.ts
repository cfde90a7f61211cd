/** Numbers derived from the credits state: pool totals, balances, block reasons, warnings, the company view. Pure. */
import type { Allowance, Balance } from './events.js';
import { pget, pvalues } from './pmap.js';
import type { CompanyCredits, CreditsState } from './state.js';
import { type BlockReason, CREDIT_LIMITS, type CreditWarning } from './values.js';

export interface PoolTotals {
  issued: number;
  active: number;
  reserved: number;
  consumed: number;
  expired: number;
  available: number;
  /** Credits that were ever usable and did not expire (issued − expired): the base of the pool percentages. */
  total: number;
}

export function poolTotals(state: CreditsState): PoolTotals {
  let issued = 0;
  let reserved = 0;
  let consumed = 0;
  let expired = 0;
  for (const lot of Object.values(state.lots)) {
    issued += lot.amount;
    reserved += lot.reserved;
    consumed += lot.consumed;
    expired += lot.expired;
  }
  const active = issued - consumed - expired;
  return { issued, active, reserved, consumed, expired, available: active - reserved, total: issued - expired };
}

export const allowanceAvailable = (a: Allowance): number => Math.max(0, a.limit - a.finalizedUsage - a.reserved);

/** Active or paused: a current allowance whose period has not been ended by the lifecycle. */
export const isLive = (a: Allowance | null): a is Allowance => !!a && (a.status === 'active' || a.status === 'paused');

export function emptyCompany(companyId: string): CompanyCredits {
  return { companyId, current: null, scheduled: null, currentVersion: 0, scheduledVersion: 0, closedPeriods: {}, lastChangedAt: null };
}

export function companyOf(state: CreditsState, companyId: string): CompanyCredits {
  return pget(state.companies, companyId) ?? emptyCompany(companyId);
}

export function balanceOf(state: CreditsState, companyId: string | null): Balance {
  const pool = poolTotals(state);
  const current = companyId ? companyOf(state, companyId).current : null;
  return {
    companyLimit: current ? current.limit : null,
    companyFinalizedUsage: current ? current.finalizedUsage : null,
    companyReserved: current ? current.reserved : null,
    companyAvailable: current ? (isLive(current) ? allowanceAvailable(current) : 0) : null,
    poolActive: pool.active,
    poolReserved: pool.reserved,
    poolConsumed: pool.consumed,
    poolExpired: pool.expired,
    poolAvailable: pool.available,
  };
}

/**
 * Why a company cannot consume `amount` credits now, or null. The order is the order a caller
 * fixes things in: no allowance, an allowance outside its period, paused, used up, then the pool.
 */
export function blockReasonOf(current: Allowance | null, poolAvailable: number, now: string, amount: number = CREDIT_LIMITS.creditsPerDocument): BlockReason | null {
  if (!current) return 'NO_ACTIVE_ALLOWANCE';
  const t = Date.parse(now);
  if (!isLive(current) || t < Date.parse(current.startAt) || t >= Date.parse(current.endAt)) return 'ALLOWANCE_INACTIVE';
  if (current.status === 'paused') return 'ALLOWANCE_PAUSED';
  if (allowanceAvailable(current) < amount) return 'ALLOWANCE_EXHAUSTED';
  if (poolAvailable < amount) return 'POOL_EXHAUSTED';
  return null;
}

export function poolWarnings(pool: { available: number; total: number }): CreditWarning[] {
  if (pool.available <= 0) return ['POOL_EXHAUSTED'];
  if (pool.available * 100 < CREDIT_LIMITS.poolCriticalPercent * pool.total) return ['POOL_CRITICAL'];
  if (pool.available * 100 < CREDIT_LIMITS.poolLowPercent * pool.total) return ['POOL_LOW'];
  return [];
}

export function thresholdReached(a: Allowance): boolean {
  return (a.finalizedUsage + a.reserved) * 100 >= CREDIT_LIMITS.companyThresholdPercent * a.limit;
}

/** The sum of what live current allowances could still consume: above the pool's available credits it is over-allocation. */
export function allocatedHeadroom(state: CreditsState): number {
  let sum = 0;
  for (const c of pvalues(state.companies)) if (isLive(c.current)) sum += allowanceAvailable(c.current);
  return sum;
}

export interface CompanyCreditView {
  companyId: string;
  current: Allowance | null;
  scheduled: Allowance | null;
  usage: number;
  reserved: number;
  available: number;
  effectiveAvailability: number;
  blockReason: BlockReason | null;
  warnings: CreditWarning[];
  lastChangedAt: string | null;
}

/** The company credit state of docs/api/credits.md (without asOf), from facts both the aggregate and the read model have. */
export function describeCompanyCredits(
  facts: { companyId: string; current: Allowance | null; scheduled: Allowance | null; lastChangedAt: string | null },
  pool: { available: number; total: number },
  overAllocated: boolean,
  now: string,
): CompanyCreditView {
  const current = facts.current;
  // An expired or superseded current allowance has nothing left to give.
  const available = isLive(current) ? allowanceAvailable(current) : 0;
  const blockReason = blockReasonOf(current, pool.available, now);
  const warnings: CreditWarning[] = [];
  const live = isLive(current);
  if (live && thresholdReached(current)) warnings.push('COMPANY_THRESHOLD_REACHED');
  if (live && overAllocated) warnings.push('OVER_ALLOCATION');
  if (live && available > Math.max(0, pool.available)) warnings.push('EFFECTIVE_AVAILABILITY_LIMITED_BY_POOL');
  warnings.push(...poolWarnings(pool));
  return {
    companyId: facts.companyId,
    current,
    scheduled: facts.scheduled,
    usage: current ? current.finalizedUsage : 0,
    reserved: current ? current.reserved : 0,
    available,
    effectiveAvailability: blockReason ? 0 : Math.min(available, Math.max(0, pool.available)),
    blockReason,
    warnings,
    lastChangedAt: facts.lastChangedAt,
  };
}

export function companyCreditView(state: CreditsState, companyId: string, now: string): CompanyCreditView {
  const c = companyOf(state, companyId);
  const pool = poolTotals(state);
  return describeCompanyCredits(c, pool, allocatedHeadroom(state) > pool.available, now);
}
