/**
 * The events of a workspace's credits (stream `credits-<workspaceId>`), with their io-ts codecs.
 *
 * Ledger events (one ledger transaction each; `ledgerEventTypeOf` gives its docs/api/credits.md
 * eventType) carry everything an auditor needs without any other source: the amounts, the
 * allowance as it is after the change, and the company's and the pool's balances before and
 * after. The transaction id is derived from the event id (values.ts `transactionIdFor`);
 * correlation id, request id, key id, idempotency key and environment are in the metadata.
 *
 * Notification events (threshold crossings, exhaustion, pool low/exhausted, bulk completion)
 * are not ledger transactions: they are written in the same append as the change that caused
 * them, for the credit-webhook capability (docs/api/webhooks.md) to deliver.
 */
import * as t from 'io-ts';
import { defineEvent } from '../events/envelope.js';
import { oneOf } from '../connect/values.js';
import { ALLOWANCE_STATUSES, BLOCK_REASONS, CREDIT_ENVIRONMENTS, PERIOD_TYPES, type LedgerEventType } from './values.js';

const nullableString = t.union([t.string, t.null]);
const nullableNumber = t.union([t.number, t.null]);

export const AllowanceCodec = t.type({
  /** Null while scheduled: a period id is given when the allowance becomes current. */
  allowancePeriodId: nullableString,
  limit: t.number,
  periodType: oneOf(PERIOD_TYPES, 'PeriodType'),
  planReference: nullableString,
  metadata: t.record(t.string, t.unknown),
  startAt: t.string,
  endAt: t.string,
  status: oneOf(ALLOWANCE_STATUSES, 'AllowanceStatus'),
  version: t.number,
  finalizedUsage: t.number,
  reserved: t.number,
  createdAt: t.string,
  updatedAt: t.string,
  /** The data environment of the write that created or last replaced it; lifecycle events of the allowance carry it. */
  environment: t.union([oneOf(CREDIT_ENVIRONMENTS, 'CreditEnvironment'), t.null]),
});
export type Allowance = t.TypeOf<typeof AllowanceCodec>;

/** A company's and the pool's balances at one instant (company fields null when the event concerns no company). */
export const BalanceCodec = t.type({
  companyLimit: nullableNumber,
  companyFinalizedUsage: nullableNumber,
  companyReserved: nullableNumber,
  companyAvailable: nullableNumber,
  poolActive: t.number,
  poolReserved: t.number,
  poolConsumed: t.number,
  poolExpired: t.number,
  poolAvailable: t.number,
});
export type Balance = t.TypeOf<typeof BalanceCodec>;

const LotShare = t.type({ lotId: t.string, amount: t.number });
export type LotShare = t.TypeOf<typeof LotShare>;

/** Every ledger event: when it took effect (domain time) and the balances around it. */
const Balances = t.type({ at: t.string, balanceBefore: BalanceCodec, balanceAfter: BalanceCodec });
const Target = oneOf(['current', 'scheduled'] as const, 'AllowanceTarget');
const Environment = oneOf(CREDIT_ENVIRONMENTS, 'CreditEnvironment');

/** Fields of every allowance lifecycle event (webhook payload: companyId, action, allowance, reason, bulkJobId). */
const AllowanceChange = t.intersection([
  Balances,
  t.type({
    companyId: t.string,
    target: Target,
    action: t.string,
    allowance: AllowanceCodec,
    reason: nullableString,
    bulkJobId: nullableString,
  }),
]);

const allowanceEvent = (type: string) => defineEvent({ type, version: 1, codec: AllowanceChange });

export const CreditIssued = defineEvent({
  type: 'CreditIssued',
  version: 1,
  codec: t.intersection([
    Balances,
    t.type({
      lotId: t.string,
      amount: t.number,
      environment: Environment,
      issuedAt: t.string,
      expiresAt: nullableString,
      reason: nullableString,
    }),
  ]),
});

export const CreditExpired = defineEvent({
  type: 'CreditExpired',
  version: 1,
  codec: t.intersection([Balances, t.type({ lotId: t.string, amount: t.number, expiresAt: t.string, environment: Environment })]),
});

export const AllowanceCreated = allowanceEvent('AllowanceCreated');
export const AllowanceScheduled = allowanceEvent('AllowanceScheduled');
export const AllowanceReplaced = allowanceEvent('AllowanceReplaced');
export const AllowanceCancelled = allowanceEvent('AllowanceCancelled');
export const AllowanceActivated = allowanceEvent('AllowanceActivated');
export const AllowanceSuperseded = allowanceEvent('AllowanceSuperseded');
export const AllowanceExpired = allowanceEvent('AllowanceExpired');
export const AllowancePaused = allowanceEvent('AllowancePaused');
export const AllowanceResumed = allowanceEvent('AllowanceResumed');

const ReservationFields = t.type({
  reservationId: t.string,
  companyId: t.string,
  documentId: nullableString,
  allowancePeriodId: t.string,
  /** The version of the allowance the reservation is held on. */
  version: t.number,
  amount: t.number,
  /** The pool lots the credits are taken from (earliest expiry first). */
  lots: t.array(LotShare),
});

export const ReservationCreated = defineEvent({
  type: 'ReservationCreated',
  version: 1,
  codec: t.intersection([Balances, ReservationFields]),
});

export const ReservationReleased = defineEvent({
  type: 'ReservationReleased',
  version: 1,
  codec: t.intersection([
    Balances,
    ReservationFields,
    t.type({
      reason: nullableString,
      /** Credits of lots that expired while reserved: released, they expire at once. */
      expiredAmount: t.number,
    }),
  ]),
});

export const ReservationNeedsReconciliation = defineEvent({
  type: 'ReservationNeedsReconciliation',
  version: 1,
  codec: t.intersection([Balances, ReservationFields, t.type({ reason: nullableString })]),
});

export const ConsumptionFinalized = defineEvent({
  type: 'ConsumptionFinalized',
  version: 1,
  codec: t.intersection([Balances, ReservationFields, t.type({ reason: nullableString })]),
});

/**
 * A finalized consumption reversed (the interface (docs/) has no public reversal: operators reverse with the
 * admin CLI). countryCode and documentType, of the metered document, were added later: optional.
 */
export const ConsumptionReversed = defineEvent({
  type: 'ConsumptionReversed',
  version: 1,
  codec: t.intersection([
    Balances,
    ReservationFields,
    t.type({ originalTransactionId: t.string, restorePool: t.boolean, reason: nullableString }),
    t.partial({ countryCode: nullableString, documentType: nullableString }),
  ]),
});

/** A manual correction of a company's finalized usage (no operation writes it yet). */
export const CorrectionCreated = defineEvent({
  type: 'CorrectionCreated',
  version: 1,
  codec: t.intersection([
    Balances,
    t.type({ companyId: t.string, allowancePeriodId: t.string, version: t.number, amount: t.number, reason: nullableString }),
  ]),
});

/** Not a ledger transaction: a document that could not be metered, and why. */
export const ReservationRefused = defineEvent({
  type: 'ReservationRefused',
  version: 1,
  codec: t.type({
    reservationId: t.string,
    companyId: t.string,
    documentId: nullableString,
    amount: t.number,
    blockReason: oneOf(BLOCK_REASONS, 'BlockReason'),
  }),
});

export const CreditEnforcementChanged = defineEvent({
  type: 'CreditEnforcementChanged',
  version: 1,
  codec: t.type({ enabled: t.boolean }),
});

const CompanyNotice = t.type({
  companyId: t.string,
  allowancePeriodId: t.string,
  reservationId: t.string,
  limit: t.number,
  finalizedUsage: t.number,
  reserved: t.number,
  committedUsage: t.number,
  available: t.number,
  percentageUsed: t.number,
  amount: t.number,
});

/** isv.credits.company.threshold: committed usage crossed from below 80% to 80% or more. */
export const CompanyCreditThresholdReached = defineEvent({
  type: 'CompanyCreditThresholdReached',
  version: 1,
  codec: t.intersection([CompanyNotice, t.type({ thresholdPercent: t.number })]),
});

/** isv.credits.company.exhausted: available went from above zero to exactly zero (takes precedence over the threshold). */
export const CompanyCreditsExhausted = defineEvent({ type: 'CompanyCreditsExhausted', version: 1, codec: CompanyNotice });

const PoolNotice = t.type({
  triggeringCompanyId: t.string,
  reservationId: t.string,
  totalCredits: t.number,
  availableCredits: t.number,
  percentageAvailable: t.number,
  amount: t.number,
});

/** isv.credits.pool.low: one per threshold crossed (20, then 10); the threshold is part of its identity. */
export const PoolCreditsLow = defineEvent({
  type: 'PoolCreditsLow',
  version: 1,
  codec: t.intersection([PoolNotice, t.type({ thresholdPercent: t.number })]),
});

/** isv.credits.pool.exhausted: the pool reached exactly zero (takes precedence over pool.low). */
export const PoolCreditsExhausted = defineEvent({ type: 'PoolCreditsExhausted', version: 1, codec: PoolNotice });

export const creditEventDefinitions = {
  CreditIssued,
  CreditExpired,
  AllowanceCreated,
  AllowanceScheduled,
  AllowanceReplaced,
  AllowanceCancelled,
  AllowanceActivated,
  AllowanceSuperseded,
  AllowanceExpired,
  AllowancePaused,
  AllowanceResumed,
  ReservationCreated,
  ReservationReleased,
  ReservationNeedsReconciliation,
  ConsumptionFinalized,
  ConsumptionReversed,
  CorrectionCreated,
  ReservationRefused,
  CreditEnforcementChanged,
  CompanyCreditThresholdReached,
  CompanyCreditsExhausted,
  PoolCreditsLow,
  PoolCreditsExhausted,
} as const;

type Defs = typeof creditEventDefinitions;
export type CreditEventType = keyof Defs;
export type CreditEvent = {
  [K in CreditEventType]: { type: K; data: t.TypeOf<Defs[K]['codec']> };
}[CreditEventType];
export type CreditEventOf<K extends CreditEventType> = Extract<CreditEvent, { type: K }>;
export type AllowanceChangeData = t.TypeOf<typeof AllowanceChange>;

/** The ledger eventType of an event, or null for events that are not ledger transactions. */
export function ledgerEventTypeOf(type: string): LedgerEventType | null {
  switch (type) {
    case 'CreditIssued':
      return 'credit.issued';
    case 'CreditExpired':
      return 'credit.expired';
    case 'AllowanceCreated':
      return 'allowance.created';
    case 'AllowanceScheduled':
      return 'allowance.scheduled';
    case 'AllowanceReplaced':
      return 'allowance.replaced';
    case 'AllowanceCancelled':
      return 'allowance.cancelled';
    case 'AllowanceActivated':
      return 'allowance.activated';
    case 'AllowanceSuperseded':
      return 'allowance.superseded';
    case 'AllowanceExpired':
      return 'allowance.expired';
    case 'AllowancePaused':
      return 'allowance.paused';
    case 'AllowanceResumed':
      return 'allowance.resumed';
    case 'ReservationCreated':
      return 'reservation.created';
    case 'ReservationReleased':
      return 'reservation.released';
    case 'ReservationNeedsReconciliation':
      return 'reservation.needs_reconciliation';
    case 'ConsumptionFinalized':
      return 'consumption.finalized';
    case 'ConsumptionReversed':
      return 'consumption.reversed';
    case 'CorrectionCreated':
      return 'correction.created';
    default:
      return null;
  }
}

export const LEDGER_DOMAIN_EVENT_TYPES: ReadonlySet<string> = new Set(
  Object.keys(creditEventDefinitions).filter((type) => ledgerEventTypeOf(type) !== null),
);

/** The allowance fields of docs/api/credits.md as callers see them (the internal environment label is not shown). */
export function publicAllowance(a: Allowance) {
  return {
    allowancePeriodId: a.allowancePeriodId,
    limit: a.limit,
    periodType: a.periodType,
    planReference: a.planReference,
    metadata: a.metadata,
    startAt: a.startAt,
    endAt: a.endAt,
    status: a.status,
    version: a.version,
    finalizedUsage: a.finalizedUsage,
    reserved: a.reserved,
    updatedAt: a.updatedAt,
  };
}
