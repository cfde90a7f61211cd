/**
 * The credits aggregate of a workspace (stream `credits-<workspaceId>`): the pool (credit lots),
 * every company's current and scheduled allowance (SPEC.md 3.2), the open reservations of
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
 * The allowance state machine is exactly SPEC.md 3.2; every other transition is refused.
 * Versions: the current slot and the scheduled slot of a company each count up and never
 * repeat (a new period continues the count), so an old ETag never matches a newer allowance.
 * System transitions (expiry, supersession) do not change a version.
 */
import { registerDecider } from '../aggregates.js';
import type { Decider } from '../decider.js';
import { DomainError } from '../errors.js';
import {
  creditEventDefinitions,
  type Allowance,
  type AllowanceChangeData,
  type Balance,
  type CreditEvent,
  type CreditEventOf,
  type LotShare,
} from './events.js';
import { emptyPMap, pdelete, pget, phas, pset, pvalues, type PMap } from './pmap.js';
import {
  CREDIT_LIMITS,
  CreditErrorCodes,
  allowancePeriodIdFor,
  type AllowanceAction,
  type AllowanceTarget,
  type BlockReason,
  type CreditEnvironment,
  type CreditWarning,
  type PeriodType,
} from './values.js';

export interface Lot {
  lotId: string;
  amount: number;
  environment: CreditEnvironment;
  issuedAt: string;
  expiresAt: string | null;
  reserved: number;
  consumed: number;
  expired: number;
  status: 'active' | 'expired';
}

/** A period that is no longer current but still holds reservations. */
export interface ClosedPeriod {
  allowancePeriodId: string;
  limit: number;
  finalizedUsage: number;
  reserved: number;
}

export interface CompanyCredits {
  companyId: string;
  current: Allowance | null;
  scheduled: Allowance | null;
  /** The highest version the current slot has had. */
  currentVersion: number;
  /** The highest version the scheduled slot has had. */
  scheduledVersion: number;
  closedPeriods: Record<string, ClosedPeriod>;
  lastChangedAt: string | null;
}

export interface Reservation {
  reservationId: string;
  companyId: string;
  documentId: string | null;
  allowancePeriodId: string;
  version: number;
  amount: number;
  lots: LotShare[];
  status: 'reserved' | 'needs_reconciliation';
  createdAt: string;
}

export interface CreditsState {
  enforcement: boolean;
  lots: Record<string, Lot>;
  companies: PMap<CompanyCredits>;
  /** Open reservations only: a finalized or released one leaves the state. */
  reservations: PMap<Reservation>;
}

export const initialCreditsState: CreditsState = {
  enforcement: false,
  lots: {},
  companies: emptyPMap(),
  reservations: emptyPMap(),
};

// ---------------------------------------------------------------------------------------------
// Commands

export interface AllowanceInput {
  limit: number;
  periodType: PeriodType;
  startAt: string;
  endAt: string;
  reason: string;
  planReference: string | null;
  metadata: Record<string, unknown>;
}

/** If-None-Match: * (create) or If-Match: "<version>" (replace); bulk: expectedVersion 0 or the latest. */
export type Precondition = { kind: 'none' } | { kind: 'version'; version: number };

export type CreditsCommand =
  | { type: 'IssueCredits'; lotId: string; amount: number; expiresAt: string | null; environment: CreditEnvironment; reason: string | null; now: string }
  | { type: 'SetEnforcement'; enabled: boolean }
  | {
      type: 'PutAllowance';
      companyId: string;
      target: AllowanceTarget;
      precondition: Precondition;
      input: AllowanceInput;
      now: string;
      bulkJobId: string | null;
      environment: CreditEnvironment | null;
    }
  | {
      type: 'CancelScheduled';
      companyId: string;
      /** Null: a system cancellation (a source was archived) that needs no version and is a no-op without a scheduled allowance. */
      expectedVersion: number | null;
      reason: string | null;
      now: string;
      bulkJobId: string | null;
    }
  | { type: 'PauseAllowance' | 'ResumeAllowance'; companyId: string; expectedVersion: number; reason: string | null; now: string; bulkJobId: string | null }
  | { type: 'RunLifecycle'; now: string }
  | { type: 'Reserve'; reservationId: string; companyId: string; documentId: string | null; amount: number; now: string }
  | { type: 'Finalize'; reservationId: string; reason: string | null; now: string }
  | { type: 'Release'; reservationId: string; reason: string | null; now: string }
  | { type: 'MarkNeedsReconciliation'; reservationId: string; reason: string | null; now: string }
  | { type: 'Reconcile'; reservationId: string; outcome: 'consumed' | 'released'; reason: string; now: string }
  | {
      type: 'ReverseConsumption';
      /** The consumption.finalized transaction being reversed, as the ledger recorded it. */
      original: ReversibleConsumption;
      restorePool: boolean;
      reason: string;
      countryCode: string | null;
      documentType: string | null;
      now: string;
    };

/** What a reversal needs of the finalized consumption it reverses. */
export interface ReversibleConsumption {
  transactionId: string;
  eventType: string;
  reservationId: string;
  companyId: string;
  documentId: string | null;
  allowancePeriodId: string;
  version: number;
  amount: number;
  lots: LotShare[];
}

// ---------------------------------------------------------------------------------------------
// Derived numbers

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

/** The company credit state of SPEC.md 2.10 (without asOf), from facts both the aggregate and the read model have. */
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

// ---------------------------------------------------------------------------------------------
// Evolve

function putCompany(state: CreditsState, company: CompanyCredits): CreditsState {
  return { ...state, companies: pset(state.companies, company.companyId, company) };
}

/** Replaces the current allowance; a different period that still holds reservations is kept aside. */
function withCurrent(c: CompanyCredits, next: Allowance | null): CompanyCredits {
  const prev = c.current;
  let closedPeriods = c.closedPeriods;
  if (prev?.allowancePeriodId && prev.allowancePeriodId !== next?.allowancePeriodId && prev.reserved > 0) {
    closedPeriods = {
      ...closedPeriods,
      [prev.allowancePeriodId]: { allowancePeriodId: prev.allowancePeriodId, limit: prev.limit, finalizedUsage: prev.finalizedUsage, reserved: prev.reserved },
    };
  }
  return { ...c, current: next, closedPeriods, currentVersion: Math.max(c.currentVersion, next?.version ?? 0) };
}

/** Applies usage deltas to the period of a reservation (the current allowance or a closed period). */
function touchPeriod(c: CompanyCredits, periodId: string, deltaReserved: number, deltaFinalized: number, at: string): CompanyCredits {
  if (c.current?.allowancePeriodId === periodId) {
    const current = { ...c.current, reserved: c.current.reserved + deltaReserved, finalizedUsage: c.current.finalizedUsage + deltaFinalized, updatedAt: at };
    return { ...c, current, lastChangedAt: at };
  }
  const closed = c.closedPeriods[periodId];
  if (!closed) return { ...c, lastChangedAt: at };
  const next = { ...closed, reserved: closed.reserved + deltaReserved, finalizedUsage: closed.finalizedUsage + deltaFinalized };
  const { [periodId]: _old, ...rest } = c.closedPeriods;
  return { ...c, closedPeriods: next.reserved > 0 ? { ...rest, [periodId]: next } : rest, lastChangedAt: at };
}

function touchLots(state: CreditsState, shares: readonly LotShare[], f: (lot: Lot, amount: number) => Lot): Record<string, Lot> {
  const lots = { ...state.lots };
  for (const share of shares) {
    const lot = lots[share.lotId];
    if (lot) lots[share.lotId] = f(lot, share.amount);
  }
  return lots;
}

function evolveAllowance(state: CreditsState, type: CreditEvent['type'], d: AllowanceChangeData): CreditsState {
  const c = companyOf(state, d.companyId);
  const at = d.at;
  let next: CompanyCredits;
  if (d.target === 'current') {
    next = withCurrent(c, d.allowance);
  } else if (type === 'AllowanceCancelled' || type === 'AllowanceExpired') {
    next = { ...c, scheduled: null, scheduledVersion: Math.max(c.scheduledVersion, d.allowance.version) };
  } else {
    next = { ...c, scheduled: d.allowance, scheduledVersion: Math.max(c.scheduledVersion, d.allowance.version) };
  }
  if (type === 'AllowanceActivated') next = { ...next, scheduled: null };
  return putCompany(state, { ...next, lastChangedAt: at });
}

export function evolveCredits(state: CreditsState, event: CreditEvent): CreditsState {
  switch (event.type) {
    case 'CreditIssued': {
      const d = event.data;
      const lot: Lot = {
        lotId: d.lotId,
        amount: d.amount,
        environment: d.environment,
        issuedAt: d.issuedAt,
        expiresAt: d.expiresAt,
        reserved: 0,
        consumed: 0,
        expired: 0,
        status: 'active',
      };
      return { ...state, lots: { ...state.lots, [d.lotId]: lot } };
    }
    case 'CreditExpired': {
      const lot = state.lots[event.data.lotId];
      if (!lot) return state;
      return { ...state, lots: { ...state.lots, [lot.lotId]: { ...lot, expired: lot.expired + event.data.amount, status: 'expired' } } };
    }
    case 'AllowanceCreated':
    case 'AllowanceScheduled':
    case 'AllowanceReplaced':
    case 'AllowanceCancelled':
    case 'AllowanceActivated':
    case 'AllowanceSuperseded':
    case 'AllowanceExpired':
    case 'AllowancePaused':
    case 'AllowanceResumed':
      return evolveAllowance(state, event.type, event.data);
    case 'ReservationCreated': {
      const d = event.data;
      const reservation: Reservation = {
        reservationId: d.reservationId,
        companyId: d.companyId,
        documentId: d.documentId,
        allowancePeriodId: d.allowancePeriodId,
        version: d.version,
        amount: d.amount,
        lots: d.lots,
        status: 'reserved',
        createdAt: d.at,
      };
      const company = touchPeriod(companyOf(state, d.companyId), d.allowancePeriodId, d.amount, 0, d.at);
      return {
        ...putCompany(state, company),
        reservations: pset(state.reservations, d.reservationId, reservation),
        lots: touchLots(state, d.lots, (lot, n) => ({ ...lot, reserved: lot.reserved + n })),
      };
    }
    case 'ReservationNeedsReconciliation': {
      const r = pget(state.reservations, event.data.reservationId);
      if (!r) return state;
      const company = { ...companyOf(state, r.companyId), lastChangedAt: event.data.at };
      return { ...putCompany(state, company), reservations: pset(state.reservations, r.reservationId, { ...r, status: 'needs_reconciliation' }) };
    }
    case 'ReservationReleased':
    case 'ConsumptionFinalized': {
      const d = event.data;
      const finalized = event.type === 'ConsumptionFinalized';
      const company = touchPeriod(companyOf(state, d.companyId), d.allowancePeriodId, -d.amount, finalized ? d.amount : 0, d.at);
      const lots = touchLots(state, d.lots, (lot, n) => ({
        ...lot,
        reserved: lot.reserved - n,
        consumed: finalized ? lot.consumed + n : lot.consumed,
        // Released credits of a lot that expired meanwhile expire now.
        expired: !finalized && lot.status === 'expired' ? lot.expired + n : lot.expired,
      }));
      return { ...putCompany(state, company), lots, reservations: pdelete(state.reservations, d.reservationId) };
    }
    case 'ConsumptionReversed': {
      const d = event.data;
      const company = touchPeriod(companyOf(state, d.companyId), d.allowancePeriodId, 0, -d.amount, d.at);
      const lots = d.restorePool ? touchLots(state, d.lots, (lot, n) => ({ ...lot, consumed: lot.consumed - n })) : state.lots;
      return { ...putCompany(state, company), lots };
    }
    case 'CorrectionCreated': {
      const d = event.data;
      return putCompany(state, touchPeriod(companyOf(state, d.companyId), d.allowancePeriodId, 0, d.amount, d.at));
    }
    case 'CreditEnforcementChanged':
      return { ...state, enforcement: event.data.enabled };
    case 'ReservationRefused':
    case 'CompanyCreditThresholdReached':
    case 'CompanyCreditsExhausted':
    case 'PoolCreditsLow':
    case 'PoolCreditsExhausted':
      return state;
  }
}

// ---------------------------------------------------------------------------------------------
// Decide

function refuse(kind: DomainError['kind'], code: string, message: string, path: readonly string[] = []): never {
  throw new DomainError(kind, code, message, path);
}

const preconditionFailed = (message: string): never => refuse('precondition', CreditErrorCodes.preconditionFailed, message);
const invalidTransition = (message: string): never => refuse('conflict', CreditErrorCodes.invalidTransition, message);

/** Builds the events of one decision, stamping each ledger event with the balances around it. */
class Emitter {
  readonly events: CreditEvent[] = [];
  constructor(public state: CreditsState) {}

  ledger<K extends CreditEvent['type']>(type: K, companyId: string | null, data: Omit<CreditEventOf<K>['data'], 'balanceBefore' | 'balanceAfter'>): void {
    const before = balanceOf(this.state, companyId);
    const provisional = { type, data: { ...data, balanceBefore: before, balanceAfter: before } } as unknown as CreditEvent;
    const next = evolveCredits(this.state, provisional);
    const event = { type, data: { ...data, balanceBefore: before, balanceAfter: balanceOf(next, companyId) } } as unknown as CreditEvent;
    this.state = next;
    this.events.push(event);
  }

  notice<K extends CreditEvent['type']>(type: K, data: CreditEventOf<K>['data']): void {
    const event = { type, data } as CreditEvent;
    this.state = evolveCredits(this.state, event);
    this.events.push(event);
  }
}

function allowanceChange(
  e: Emitter,
  type: 'AllowanceCreated' | 'AllowanceScheduled' | 'AllowanceReplaced' | 'AllowanceCancelled' | 'AllowanceActivated' | 'AllowanceSuperseded' | 'AllowanceExpired' | 'AllowancePaused' | 'AllowanceResumed',
  companyId: string,
  target: AllowanceTarget,
  action: AllowanceAction,
  allowance: Allowance,
  reason: string | null,
  bulkJobId: string | null,
  at: string,
): void {
  e.ledger(type, companyId, { at, companyId, target, action, allowance, reason, bulkJobId } as never);
}

function checkPeriod(input: AllowanceInput, target: AllowanceTarget, now: string, keepStartAt: string | null): void {
  const t = Date.parse(now);
  const start = Date.parse(keepStartAt ?? input.startAt);
  const end = Date.parse(input.endAt);
  if (end <= start) refuse('validation', CreditErrorCodes.validation, 'endAt must be later than startAt', ['endAt']);
  if (target === 'current') {
    if (keepStartAt === null && Date.parse(input.startAt) > t) {
      refuse('validation', CreditErrorCodes.validation, 'a current allowance must already have started: startAt must not be in the future (use the scheduled allowance for a future period)', ['startAt']);
    }
    if (end <= t) refuse('validation', CreditErrorCodes.validation, 'a current allowance must end in the future: endAt must be later than now', ['endAt']);
  } else if (Date.parse(input.startAt) <= t) {
    refuse('validation', CreditErrorCodes.validation, 'a scheduled allowance must start in the future: startAt must be later than now', ['startAt']);
  }
}

/** Ends the current period if its endAt has passed but the lifecycle worker has not recorded it yet. */
function catchUpExpiry(e: Emitter, companyId: string, now: string, bulkJobId: string | null): void {
  const c = companyOf(e.state, companyId);
  if (isLive(c.current) && Date.parse(c.current.endAt) <= Date.parse(now)) {
    allowanceChange(e, 'AllowanceExpired', companyId, 'current', 'current.expired', { ...c.current, status: 'expired', updatedAt: now }, 'the allowance period ended', bulkJobId, now);
  }
}

function decidePut(e: Emitter, cmd: Extract<CreditsCommand, { type: 'PutAllowance' }>): void {
  const { companyId, input, now, precondition, bulkJobId } = cmd;
  if (cmd.target === 'current') {
    catchUpExpiry(e, companyId, now, bulkJobId);
    const c = companyOf(e.state, companyId);
    const cur = c.current;
    let replace = false;
    if (precondition.kind === 'none') {
      if (isLive(cur)) preconditionFailed(`the company has a current allowance (version ${cur.version}): replace it with If-Match: "${cur.version}"`);
    } else {
      if (!cur) preconditionFailed('the company has no current allowance: create one with If-None-Match: *');
      if (cur!.version !== precondition.version) preconditionFailed(`the current allowance is at version ${cur!.version}, not ${precondition.version}: read the latest version`);
      replace = isLive(cur);
    }
    if (replace) {
      const live = cur!;
      if (live.status === 'paused') invalidTransition('the current allowance is paused: resume it before replacing it');
      checkPeriod(input, 'current', now, live.startAt);
      const committed = live.finalizedUsage + live.reserved;
      if (input.limit < committed) {
        refuse(
          'conflict',
          CreditErrorCodes.limitBelowUsage,
          `limit ${input.limit} is below the finalized usage plus reservations of the current period (${committed})`,
          ['limit'],
        );
      }
      const allowance: Allowance = {
        ...live,
        limit: input.limit,
        periodType: input.periodType,
        planReference: input.planReference,
        metadata: input.metadata,
        endAt: input.endAt,
        version: live.version + 1,
        updatedAt: now,
        environment: cmd.environment,
      };
      allowanceChange(e, 'AllowanceReplaced', companyId, 'current', 'current.replaced', allowance, input.reason, bulkJobId, now);
      return;
    }
    checkPeriod(input, 'current', now, null);
    const version = c.currentVersion + 1;
    const allowance: Allowance = {
      allowancePeriodId: allowancePeriodIdFor(companyId, version),
      limit: input.limit,
      periodType: input.periodType,
      planReference: input.planReference,
      metadata: input.metadata,
      startAt: input.startAt,
      endAt: input.endAt,
      status: 'active',
      version,
      finalizedUsage: 0,
      reserved: 0,
      createdAt: now,
      updatedAt: now,
      environment: cmd.environment,
    };
    allowanceChange(e, 'AllowanceCreated', companyId, 'current', 'current.created', allowance, input.reason, bulkJobId, now);
    return;
  }

  const c = companyOf(e.state, companyId);
  const s = c.scheduled;
  if (precondition.kind === 'none') {
    if (s) preconditionFailed(`the company has a scheduled allowance (version ${s.version}): replace it with If-Match: "${s.version}"`);
  } else {
    if (!s) preconditionFailed('the company has no scheduled allowance: create one with If-None-Match: *');
    if (s!.version !== precondition.version) preconditionFailed(`the scheduled allowance is at version ${s!.version}, not ${precondition.version}: read the latest version`);
    if (Date.parse(s!.startAt) <= Date.parse(now)) invalidTransition('the scheduled allowance has reached its startAt and is being activated');
  }
  checkPeriod(input, 'scheduled', now, null);
  if (s) {
    const allowance: Allowance = {
      ...s,
      limit: input.limit,
      periodType: input.periodType,
      planReference: input.planReference,
      metadata: input.metadata,
      startAt: input.startAt,
      endAt: input.endAt,
      version: s.version + 1,
      updatedAt: now,
      environment: cmd.environment,
    };
    allowanceChange(e, 'AllowanceReplaced', companyId, 'scheduled', 'scheduled.replaced', allowance, input.reason, bulkJobId, now);
    return;
  }
  const allowance: Allowance = {
    allowancePeriodId: null,
    limit: input.limit,
    periodType: input.periodType,
    planReference: input.planReference,
    metadata: input.metadata,
    startAt: input.startAt,
    endAt: input.endAt,
    status: 'scheduled',
    version: c.scheduledVersion + 1,
    finalizedUsage: 0,
    reserved: 0,
    createdAt: now,
    updatedAt: now,
    environment: cmd.environment,
  };
  allowanceChange(e, 'AllowanceScheduled', companyId, 'scheduled', 'scheduled.created', allowance, input.reason, bulkJobId, now);
}

/** Every lifecycle transition due at `now`, for one company, in the order of their effective times. */
function lifecycleOfCompany(e: Emitter, companyId: string, now: string): void {
  const t = Date.parse(now);
  for (let guard = 0; guard < 4; guard++) {
    const c = companyOf(e.state, companyId);
    const cur = c.current;
    const s = c.scheduled;
    const expiryAt = isLive(cur) && Date.parse(cur.endAt) <= t ? Date.parse(cur.endAt) : null;
    const activationAt = s && Date.parse(s.startAt) <= t ? Date.parse(s.startAt) : null;
    if (expiryAt === null && activationAt === null) return;
    if (expiryAt !== null && (activationAt === null || expiryAt <= activationAt)) {
      allowanceChange(e, 'AllowanceExpired', companyId, 'current', 'current.expired', { ...cur!, status: 'expired', updatedAt: now }, 'the allowance period ended', null, now);
      continue;
    }
    const sched = s!;
    if (Date.parse(sched.endAt) <= t) {
      // Its whole period passed before it could be activated.
      allowanceChange(e, 'AllowanceExpired', companyId, 'scheduled', 'scheduled.expired', { ...sched, status: 'expired', updatedAt: now }, 'the scheduled period ended before activation', null, now);
      continue;
    }
    if (isLive(cur)) {
      allowanceChange(e, 'AllowanceSuperseded', companyId, 'current', 'current.superseded', { ...cur, status: 'superseded', updatedAt: now }, 'superseded by the scheduled allowance', null, now);
    }
    const version = companyOf(e.state, companyId).currentVersion + 1;
    const activated: Allowance = {
      ...sched,
      allowancePeriodId: allowancePeriodIdFor(companyId, version),
      status: 'active',
      version,
      finalizedUsage: 0,
      reserved: 0,
      updatedAt: now,
    };
    allowanceChange(e, 'AllowanceActivated', companyId, 'current', 'scheduled.activated', activated, 'the scheduled allowance reached its startAt', null, now);
  }
}

/** Lots, latest-expiring last, that can give `amount` credits; null when the pool cannot. */
function allocate(state: CreditsState, amount: number): LotShare[] | null {
  const lots = Object.values(state.lots)
    .filter((l) => l.status === 'active' && l.amount - l.consumed - l.reserved - l.expired > 0)
    .sort((a, b) => {
      const ea = a.expiresAt ?? '9999';
      const eb = b.expiresAt ?? '9999';
      if (ea !== eb) return ea < eb ? -1 : 1;
      if (a.issuedAt !== b.issuedAt) return a.issuedAt < b.issuedAt ? -1 : 1;
      return a.lotId < b.lotId ? -1 : 1;
    });
  const shares: LotShare[] = [];
  let left = amount;
  for (const lot of lots) {
    if (left <= 0) break;
    const take = Math.min(left, lot.amount - lot.consumed - lot.reserved - lot.expired);
    shares.push({ lotId: lot.lotId, amount: take });
    left -= take;
  }
  return left > 0 ? null : shares;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function decideReserve(e: Emitter, cmd: Extract<CreditsCommand, { type: 'Reserve' }>): void {
  if (phas(e.state.reservations, cmd.reservationId)) return; // already reserved
  const c = companyOf(e.state, cmd.companyId);
  const poolBefore = poolTotals(e.state);
  const blockReason = blockReasonOf(c.current, poolBefore.available, cmd.now, cmd.amount);
  const shares = blockReason ? null : allocate(e.state, cmd.amount);
  if (blockReason || !shares) {
    e.notice('ReservationRefused', {
      reservationId: cmd.reservationId,
      companyId: cmd.companyId,
      documentId: cmd.documentId,
      amount: cmd.amount,
      blockReason: blockReason ?? 'POOL_EXHAUSTED',
    });
    return;
  }
  const before = c.current!;
  const periodId = before.allowancePeriodId!;
  e.ledger('ReservationCreated', cmd.companyId, {
    at: cmd.now,
    reservationId: cmd.reservationId,
    companyId: cmd.companyId,
    documentId: cmd.documentId,
    allowancePeriodId: periodId,
    version: before.version,
    amount: cmd.amount,
    lots: shares,
  });

  // Notifications for the credit webhooks (SPEC.md 6.1).
  const after = companyOf(e.state, cmd.companyId).current!;
  const availableBefore = allowanceAvailable(before);
  const availableAfter = allowanceAvailable(after);
  const committed = after.finalizedUsage + after.reserved;
  const notice = {
    companyId: cmd.companyId,
    allowancePeriodId: periodId,
    reservationId: cmd.reservationId,
    limit: after.limit,
    finalizedUsage: after.finalizedUsage,
    reserved: after.reserved,
    committedUsage: committed,
    available: availableAfter,
    percentageUsed: after.limit > 0 ? round2((committed / after.limit) * 100) : 100,
    amount: cmd.amount,
  };
  if (availableBefore > 0 && availableAfter === 0) {
    e.notice('CompanyCreditsExhausted', notice);
  } else if (!thresholdReached(before) && thresholdReached(after)) {
    e.notice('CompanyCreditThresholdReached', { ...notice, thresholdPercent: CREDIT_LIMITS.companyThresholdPercent });
  }
  const poolAfter = poolTotals(e.state);
  const poolNotice = {
    triggeringCompanyId: cmd.companyId,
    reservationId: cmd.reservationId,
    totalCredits: poolAfter.total,
    availableCredits: poolAfter.available,
    percentageAvailable: poolAfter.total > 0 ? round2((poolAfter.available / poolAfter.total) * 100) : 0,
    amount: cmd.amount,
  };
  if (poolBefore.available > 0 && poolAfter.available === 0) {
    e.notice('PoolCreditsExhausted', poolNotice);
  } else {
    for (const threshold of [CREDIT_LIMITS.poolLowPercent, CREDIT_LIMITS.poolCriticalPercent]) {
      if (poolBefore.available * 100 >= threshold * poolBefore.total && poolAfter.available * 100 < threshold * poolAfter.total) {
        e.notice('PoolCreditsLow', { ...poolNotice, thresholdPercent: threshold });
      }
    }
  }
}

function closeReservation(e: Emitter, reservationId: string, how: 'Finalize' | 'Release' | 'MarkNeedsReconciliation', reason: string | null, now: string): boolean {
  const r = pget(e.state.reservations, reservationId);
  if (!r) return false;
  const fields = {
    at: now,
    reservationId: r.reservationId,
    companyId: r.companyId,
    documentId: r.documentId,
    allowancePeriodId: r.allowancePeriodId,
    version: r.version,
    amount: r.amount,
    lots: r.lots,
    reason,
  };
  if (how === 'Finalize') {
    e.ledger('ConsumptionFinalized', r.companyId, fields);
  } else if (how === 'Release') {
    const expiredAmount = r.lots.reduce((sum, share) => sum + (e.state.lots[share.lotId]?.status === 'expired' ? share.amount : 0), 0);
    e.ledger('ReservationReleased', r.companyId, { ...fields, expiredAmount });
  } else {
    if (r.status === 'needs_reconciliation') return true;
    e.ledger('ReservationNeedsReconciliation', r.companyId, fields);
  }
  return true;
}

function requireAmount(amount: number, path: string[]): void {
  if (!Number.isSafeInteger(amount) || amount <= 0 || amount > CREDIT_LIMITS.amountMax) {
    refuse('validation', CreditErrorCodes.invalidAmount, `the amount must be a whole number of credits from 1 to ${CREDIT_LIMITS.amountMax}`, path);
  }
}

export function decideCredits(command: CreditsCommand, state: CreditsState): CreditEvent[] {
  const e = new Emitter(state);
  switch (command.type) {
    case 'IssueCredits': {
      requireAmount(command.amount, ['amount']);
      if (state.lots[command.lotId]) refuse('conflict', 'CREDIT_LOT_EXISTS', `lot ${command.lotId} exists already`);
      if (command.expiresAt !== null && Date.parse(command.expiresAt) <= Date.parse(command.now)) {
        refuse('validation', CreditErrorCodes.validation, 'expiresAt must be in the future', ['expiresAt']);
      }
      e.ledger('CreditIssued', null, {
        at: command.now,
        lotId: command.lotId,
        amount: command.amount,
        environment: command.environment,
        issuedAt: command.now,
        expiresAt: command.expiresAt,
        reason: command.reason,
      });
      break;
    }
    case 'SetEnforcement':
      if (state.enforcement !== command.enabled) e.notice('CreditEnforcementChanged', { enabled: command.enabled });
      break;
    case 'PutAllowance':
      decidePut(e, command);
      break;
    case 'CancelScheduled': {
      const s = companyOf(state, command.companyId).scheduled;
      if (command.expectedVersion === null) {
        if (!s) break;
      } else {
        if (!s) preconditionFailed('the company has no scheduled allowance');
        if (s!.version !== command.expectedVersion) preconditionFailed(`the scheduled allowance is at version ${s!.version}, not ${command.expectedVersion}: read the latest version`);
      }
      allowanceChange(e, 'AllowanceCancelled', command.companyId, 'scheduled', 'scheduled.cancelled', { ...s!, version: s!.version + 1, updatedAt: command.now }, command.reason, command.bulkJobId, command.now);
      break;
    }
    case 'PauseAllowance':
    case 'ResumeAllowance': {
      const pause = command.type === 'PauseAllowance';
      catchUpExpiry(e, command.companyId, command.now, command.bulkJobId);
      const cur = companyOf(e.state, command.companyId).current;
      if (!cur) preconditionFailed('the company has no current allowance');
      if (cur!.version !== command.expectedVersion) preconditionFailed(`the current allowance is at version ${cur!.version}, not ${command.expectedVersion}: read the latest version`);
      const from = pause ? 'active' : 'paused';
      if (cur!.status !== from) {
        invalidTransition(pause ? `a ${cur!.status} allowance cannot be paused; only an active one` : `a ${cur!.status} allowance cannot be resumed; only a paused one`);
      }
      const allowance: Allowance = { ...cur!, status: pause ? 'paused' : 'active', version: cur!.version + 1, updatedAt: command.now };
      allowanceChange(
        e,
        pause ? 'AllowancePaused' : 'AllowanceResumed',
        command.companyId,
        'current',
        pause ? 'current.paused' : 'current.resumed',
        allowance,
        command.reason,
        command.bulkJobId,
        command.now,
      );
      break;
    }
    case 'RunLifecycle': {
      const t = Date.parse(command.now);
      for (const c of pvalues(state.companies)) {
        const due = (isLive(c.current) && Date.parse(c.current.endAt) <= t) || (c.scheduled && Date.parse(c.scheduled.startAt) <= t);
        if (due) lifecycleOfCompany(e, c.companyId, command.now);
      }
      for (const lot of Object.values(state.lots).sort((a, b) => (a.lotId < b.lotId ? -1 : 1))) {
        if (lot.status !== 'active' || lot.expiresAt === null || Date.parse(lot.expiresAt) > t) continue;
        e.ledger('CreditExpired', null, {
          at: command.now,
          lotId: lot.lotId,
          amount: lot.amount - lot.consumed - lot.reserved - lot.expired,
          expiresAt: lot.expiresAt,
          environment: lot.environment,
        });
      }
      break;
    }
    case 'Reserve':
      requireAmount(command.amount, ['amount']);
      decideReserve(e, command);
      break;
    case 'Finalize':
      closeReservation(e, command.reservationId, 'Finalize', command.reason, command.now);
      break;
    case 'Release':
      closeReservation(e, command.reservationId, 'Release', command.reason, command.now);
      break;
    case 'MarkNeedsReconciliation':
      closeReservation(e, command.reservationId, 'MarkNeedsReconciliation', command.reason, command.now);
      break;
    case 'Reconcile':
      if (!closeReservation(e, command.reservationId, command.outcome === 'consumed' ? 'Finalize' : 'Release', command.reason, command.now)) {
        refuse('not_found', CreditErrorCodes.reservationNotFound, `no open reservation ${command.reservationId} in this workspace`, ['reservationId']);
      }
      break;
    case 'ReverseConsumption': {
      const o = command.original;
      if (o.eventType !== 'consumption.finalized') {
        refuse('conflict', CreditErrorCodes.notReversible, `transaction ${o.transactionId} is a ${o.eventType}; only a consumption.finalized transaction can be reversed`, ['transactionId']);
      }
      e.ledger('ConsumptionReversed', o.companyId, {
        at: command.now,
        reservationId: o.reservationId,
        companyId: o.companyId,
        documentId: o.documentId,
        allowancePeriodId: o.allowancePeriodId,
        version: o.version,
        amount: o.amount,
        lots: o.lots,
        originalTransactionId: o.transactionId,
        restorePool: command.restorePool,
        reason: command.reason,
        countryCode: command.countryCode,
        documentType: command.documentType,
      });
      break;
    }
  }
  return e.events;
}

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
