/** The credits aggregate's evolve: the state after one event. Pure. */
import { companyOf } from './derived.js';
import type { Allowance, AllowanceChangeData, CreditEvent, LotShare } from './events.js';
import { pdelete, pget, pset } from './pmap.js';
import type { CompanyCredits, CreditsState, Lot, Reservation } from './state.js';

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
