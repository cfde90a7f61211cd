/** The credits aggregate (see credits.ts for the model): its state (pool lots, companies, reservations) and its commands. */
import type { Allowance, LotShare } from './events.js';
import { type PMap, emptyPMap } from './pmap.js';
import type { AllowanceTarget, CreditEnvironment, PeriodType } from './values.js';

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

/** What a reversal needs of the finalized consumption it reverses: the reservation's figures, and which ledger entry. */
export interface ReversibleConsumption extends Pick<Reservation, 'reservationId' | 'companyId' | 'documentId' | 'allowancePeriodId' | 'version' | 'amount' | 'lots'> {
  transactionId: string;
  eventType: string;
}
