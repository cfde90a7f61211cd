/** The credits aggregate's decide: the events of one command, each ledger event stamped with the balances around it. Pure. */
import { DomainError } from '../errors.js';
import { allowanceAvailable, balanceOf, blockReasonOf, companyOf, isLive, poolTotals, thresholdReached } from './derived.js';
import type { Allowance, CreditEvent, CreditEventOf, LotShare } from './events.js';
import { evolveCredits } from './evolve.js';
import { pget, phas, pvalues } from './pmap.js';
import type { AllowanceInput, CreditsCommand, CreditsState, Precondition } from './state.js';
import { type AllowanceAction, type AllowanceTarget, CREDIT_LIMITS, CreditErrorCodes, allowancePeriodIdFor } from './values.js';

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

type PutAllowance = Extract<CreditsCommand, { type: 'PutAllowance' }>;

/**
 * Checks a PUT's If-Match / If-None-Match against the slot's allowance (`occupied`: it holds
 * one that If-None-Match refuses). The allowance the PUT replaces, or null when it creates one.
 */
function checkPrecondition(target: AllowanceTarget, existing: Allowance | null, occupied: boolean, precondition: Precondition): Allowance | null {
  if (precondition.kind === 'none') {
    if (occupied) preconditionFailed(`the company has a ${target} allowance (version ${existing!.version}): replace it with If-Match: "${existing!.version}"`);
    return null;
  }
  if (!existing) return preconditionFailed(`the company has no ${target} allowance: create one with If-None-Match: *`);
  if (existing.version !== precondition.version) preconditionFailed(`the ${target} allowance is at version ${existing.version}, not ${precondition.version}: read the latest version`);
  return existing;
}

/** A new allowance from a PUT's input. */
function createdAllowance(cmd: PutAllowance, allowancePeriodId: string | null, status: Allowance['status'], version: number): Allowance {
  const { input, now } = cmd;
  return {
    allowancePeriodId,
    limit: input.limit,
    periodType: input.periodType,
    planReference: input.planReference,
    metadata: input.metadata,
    startAt: input.startAt,
    endAt: input.endAt,
    status,
    version,
    finalizedUsage: 0,
    reserved: 0,
    createdAt: now,
    updatedAt: now,
    environment: cmd.environment,
  };
}

/** `base` replaced by a PUT's input, one version up (a current period keeps its startAt). */
function replacedAllowance(cmd: PutAllowance, base: Allowance, keepStartAt: boolean): Allowance {
  const { input, now } = cmd;
  return {
    ...base,
    limit: input.limit,
    periodType: input.periodType,
    planReference: input.planReference,
    metadata: input.metadata,
    ...(keepStartAt ? {} : { startAt: input.startAt }),
    endAt: input.endAt,
    version: base.version + 1,
    updatedAt: now,
    environment: cmd.environment,
  };
}

function decidePut(e: Emitter, cmd: PutAllowance): void {
  if (cmd.target === 'current') decidePutCurrent(e, cmd);
  else decidePutScheduled(e, cmd);
}

function decidePutCurrent(e: Emitter, cmd: PutAllowance): void {
  const { companyId, input, now, bulkJobId } = cmd;
  catchUpExpiry(e, companyId, now, bulkJobId);
  const c = companyOf(e.state, companyId);
  const matched = checkPrecondition('current', c.current, isLive(c.current), cmd.precondition);
  // An If-Match on an ended period creates the next one.
  if (matched && isLive(matched)) {
    if (matched.status === 'paused') invalidTransition('the current allowance is paused: resume it before replacing it');
    checkPeriod(input, 'current', now, matched.startAt);
    const committed = matched.finalizedUsage + matched.reserved;
    if (input.limit < committed) {
      refuse('conflict', CreditErrorCodes.limitBelowUsage, `limit ${input.limit} is below the finalized usage plus reservations of the current period (${committed})`, ['limit']);
    }
    allowanceChange(e, 'AllowanceReplaced', companyId, 'current', 'current.replaced', replacedAllowance(cmd, matched, true), input.reason, bulkJobId, now);
    return;
  }
  checkPeriod(input, 'current', now, null);
  const version = c.currentVersion + 1;
  allowanceChange(e, 'AllowanceCreated', companyId, 'current', 'current.created', createdAllowance(cmd, allowancePeriodIdFor(companyId, version), 'active', version), input.reason, bulkJobId, now);
}

function decidePutScheduled(e: Emitter, cmd: PutAllowance): void {
  const { companyId, input, now, bulkJobId } = cmd;
  const c = companyOf(e.state, companyId);
  const matched = checkPrecondition('scheduled', c.scheduled, !!c.scheduled, cmd.precondition);
  if (matched && Date.parse(matched.startAt) <= Date.parse(now)) invalidTransition('the scheduled allowance has reached its startAt and is being activated');
  checkPeriod(input, 'scheduled', now, null);
  if (matched) {
    allowanceChange(e, 'AllowanceReplaced', companyId, 'scheduled', 'scheduled.replaced', replacedAllowance(cmd, matched, false), input.reason, bulkJobId, now);
    return;
  }
  allowanceChange(e, 'AllowanceScheduled', companyId, 'scheduled', 'scheduled.created', createdAllowance(cmd, null, 'scheduled', c.scheduledVersion + 1), input.reason, bulkJobId, now);
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

  // Notifications for the credit webhooks (docs/api/webhooks.md).
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
