/**
 * The vocabulary of credits (docs/api/http.md, docs/api/credits.md, docs/api/webhooks.md): allowance statuses and
 * period types, block reasons, warnings, the 17 ledger event types, error codes and limits,
 * environments, and the names of the credit streams. Pure.
 */
import { createHash } from 'node:crypto';

export const ALLOWANCE_STATUSES = ['scheduled', 'active', 'paused', 'expired', 'superseded'] as const;
export type AllowanceStatus = (typeof ALLOWANCE_STATUSES)[number];

export const PERIOD_TYPES = ['monthly', 'annual', 'custom'] as const;
export type PeriodType = (typeof PERIOD_TYPES)[number];

export const ALLOWANCE_TARGETS = ['current', 'scheduled'] as const;
export type AllowanceTarget = (typeof ALLOWANCE_TARGETS)[number];

export const BLOCK_REASONS = ['NO_ACTIVE_ALLOWANCE', 'ALLOWANCE_PAUSED', 'ALLOWANCE_INACTIVE', 'ALLOWANCE_EXHAUSTED', 'POOL_EXHAUSTED'] as const;
export type BlockReason = (typeof BLOCK_REASONS)[number];

export const WARNINGS = [
  'COMPANY_THRESHOLD_REACHED',
  'OVER_ALLOCATION',
  'EFFECTIVE_AVAILABILITY_LIMITED_BY_POOL',
  'POOL_LOW',
  'POOL_CRITICAL',
  'POOL_EXHAUSTED',
] as const;
export type CreditWarning = (typeof WARNINGS)[number];

/** The eventType values of a ledger transaction (docs/api/credits.md), all 17. */
export const LEDGER_EVENT_TYPES = [
  'allowance.created',
  'allowance.replaced',
  'allowance.scheduled',
  'allowance.cancelled',
  'allowance.activated',
  'allowance.expired',
  'allowance.superseded',
  'allowance.paused',
  'allowance.resumed',
  'reservation.created',
  'reservation.released',
  'reservation.needs_reconciliation',
  'consumption.finalized',
  'consumption.reversed',
  'correction.created',
  'credit.issued',
  'credit.expired',
] as const;
export type LedgerEventType = (typeof LEDGER_EVENT_TYPES)[number];

/** Allowance actions of the isv.credits.allowance.* webhooks (docs/api/webhooks.md). */
export type AllowanceAction =
  | 'current.created'
  | 'current.replaced'
  | 'current.paused'
  | 'current.resumed'
  | 'current.expired'
  | 'current.superseded'
  | 'scheduled.created'
  | 'scheduled.replaced'
  | 'scheduled.cancelled'
  | 'scheduled.activated'
  | 'scheduled.expired';

export const BULK_OPERATIONS = ['replace_current', 'replace_scheduled', 'cancel_scheduled', 'pause', 'resume'] as const;
export type BulkOperation = (typeof BULK_OPERATIONS)[number];

export const BULK_JOB_STATUSES = ['accepted', 'processing', 'completed', 'completed_with_errors', 'failed'] as const;
export type BulkJobStatus = (typeof BULK_JOB_STATUSES)[number];

export const EXPORT_STATUSES = ['accepted', 'processing', 'completed', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const CREDIT_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type CreditEnvironment = (typeof CREDIT_ENVIRONMENTS)[number];

/**
 * X-Environment of credit writes (docs/api/http.md): sandbox, test and development are sandbox data;
 * production and prod are production data; absent is production; anything else is refused.
 */
export function creditEnvironmentOf(header: string | undefined | null): CreditEnvironment | null {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '') return 'production';
  if (value === 'sandbox' || value === 'test' || value === 'development') return 'sandbox';
  if (value === 'production' || value === 'prod') return 'production';
  return null;
}

export const CreditErrorCodes = {
  validation: 'CONNECT_VALIDATION_ERROR',
  companyNotFound: 'CONNECT_COMPANY_NOT_FOUND',
  invalidEnvironment: 'CONNECT_INVALID_ENVIRONMENT',
  preconditionFailed: 'CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED',
  /** Beyond the spec: a write of an allowance that needs If-Match or If-None-Match and has neither (428). */
  preconditionRequired: 'CONNECT_ALLOWANCE_PRECONDITION_REQUIRED',
  /** Beyond the spec: the transition is not in the state machine of docs/api/credits.md (409). */
  invalidTransition: 'CONNECT_ALLOWANCE_INVALID_TRANSITION',
  /** Beyond the spec: a replacement limit below finalized usage + reservations (409). */
  limitBelowUsage: 'CONNECT_ALLOWANCE_LIMIT_BELOW_USAGE',
  bulkJobNotFound: 'CONNECT_CREDIT_BULK_JOB_NOT_FOUND',
  /** Beyond the spec: an export id unknown in the workspace (404). */
  exportNotFound: 'CONNECT_CREDIT_EXPORT_NOT_FOUND',
  /** Beyond the spec: a download asked of an export that is not completed (409) or no longer available (410). */
  exportNotReady: 'CONNECT_CREDIT_EXPORT_NOT_READY',
  exportExpired: 'CONNECT_CREDIT_EXPORT_EXPIRED',
  /** Beyond the spec: admin operations on reservations (reconciliation). */
  reservationNotFound: 'CREDIT_RESERVATION_NOT_FOUND',
  invalidAmount: 'CREDIT_INVALID_AMOUNT',
  /** Beyond the spec: admin reversal of a ledger transaction that is not a finalized consumption, or unknown. */
  notReversible: 'CREDIT_TRANSACTION_NOT_REVERSIBLE',
  transactionNotFound: 'CREDIT_TRANSACTION_NOT_FOUND',
} as const;

export const CREDIT_LIMITS = {
  textMax: 500,
  operationIdMax: 200,
  bulkOperationsMax: 500,
  listLimitDefault: 25,
  listLimitMax: 100,
  ledgerLimitDefault: 25,
  ledgerLimitMax: 100,
  recentActivityMax: 10,
  /** Largest limit or lot amount: far above any real allowance, still exact in a double. */
  amountMax: 1_000_000_000_000,
  metadataBytesMax: 16 * 1024,
  metadataDepthMax: 8,
  companyThresholdPercent: 80,
  poolLowPercent: 20,
  poolCriticalPercent: 10,
  /** Credits one metered sales document reserves and consumes. */
  creditsPerDocument: 1,
  /** Default interval of the allowance lifecycle worker (docs/api/http.md). */
  lifecycleIntervalMs: 60_000,
  /** How long a completed export can be downloaded. */
  exportAvailableMs: 24 * 60 * 60 * 1000,
} as const;

/** Every credit event of a workspace (pool, allowances, reservations, settings) is in this one stream. */
export const creditsStream = (workspaceId: string) => `credits-${workspaceId}`;
export const bulkJobStream = (jobId: string) => `creditbulkjob-${jobId}`;
export const creditExportStream = (exportId: string) => `creditexport-${exportId}`;

/** The reservation of a sales document: one per document. */
export const reservationIdFor = (documentId: string) => `res_${documentId}`;

/**
 * The id of an allowance period: derived from the company and the version its current slot
 * takes when the period starts, so it is unique per company and the same on every replay.
 */
export function allowancePeriodIdFor(companyId: string, currentVersion: number): string {
  return `ap_${createHash('sha256').update(`${companyId}\n${currentVersion}`).digest('hex').slice(0, 24)}`;
}

/** The ledger transaction id of an event: derived from its event id, so an auditor can go from one to the other. */
export const transactionIdFor = (eventId: string) => `txn_${eventId.replace(/-/g, '')}`;
export const eventIdOfTransaction = (transactionId: string): string | null => {
  const m = /^txn_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/.exec(transactionId);
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}` : null;
};

/** ISO 8601 UTC with a trailing Z (docs/api/credits.md: timestamps end in Z). */
export const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?Z$/;

export function parseUtcTimestamp(value: string): string | null {
  if (!UTC_TIMESTAMP.test(value)) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  const iso = new Date(ms).toISOString();
  // Refuse dates JavaScript rolls over (2026-02-30 → March).
  if (iso.slice(0, 10) !== value.slice(0, 10)) return null;
  return iso;
}
