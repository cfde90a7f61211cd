/**
 * Reconstruction of balances from the events alone (the audit CLI): fold a workspace's credit
 * events that occurred at or before an instant, and describe one company and the pool as they
 * stood then. Every ledger event also records the balances before and after it; the audit
 * checks that each recorded balance equals the fold, so a tampered or mis-computed event shows.
 */
import { decodeEventData } from '../events/envelope.js';
import {
  allocatedHeadroom,
  balanceOf,
  companyOf,
  describeCompanyCredits,
  evolveCredits,
  initialCreditsState,
  poolTotals,
  type CompanyCreditView,
  type CreditsState,
  type PoolTotals,
} from './credits.js';
import { creditEventDefinitions, ledgerEventTypeOf, type CreditEvent } from './events.js';

export interface AuditInput {
  id: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  occurredAt: string;
  revision: bigint;
}

export interface CreditAudit {
  asOf: string | null;
  /** Events folded (up to as-of) and the revision of the last one. */
  events: number;
  revision: string | null;
  /** Ledger transactions of the company up to as-of. */
  companyTransactions: number;
  company: CompanyCreditView;
  pool: PoolTotals;
  /** Ledger events whose recorded balanceAfter differs from the fold (empty when the ledger is consistent). */
  inconsistencies: { revision: string; type: string; recorded: unknown; folded: unknown }[];
}

function sameBalance(folded: Record<string, unknown>, recorded: unknown): boolean {
  if (!recorded || typeof recorded !== 'object') return false;
  const r = recorded as Record<string, unknown>;
  return Object.keys(folded).every((k) => folded[k] === r[k]);
}

/** Folds the log up to `asOf` (all of it when null); the company's period state is judged at `asOf`, else at `now` (the caller's clock). */
export function auditCompanyCredits(events: readonly AuditInput[], companyId: string, asOf: Date | null, now: Date): CreditAudit {
  const cutOff = asOf?.getTime() ?? null;
  let state: CreditsState = initialCreditsState;
  let count = 0;
  let revision: bigint | null = null;
  let companyTransactions = 0;
  const inconsistencies: CreditAudit['inconsistencies'] = [];
  for (const e of events) {
    if (cutOff !== null && Date.parse(e.occurredAt) > cutOff) continue;
    const definition = (creditEventDefinitions as Record<string, Parameters<typeof decodeEventData>[0]>)[e.type];
    if (!definition) continue;
    const event = { type: e.type, data: decodeEventData(definition, e.schemaVersion, e.data) } as CreditEvent;
    const data = event.data as { companyId?: unknown; balanceAfter?: unknown };
    state = evolveCredits(state, event);
    count++;
    revision = e.revision;
    if (ledgerEventTypeOf(e.type)) {
      const subject = typeof data.companyId === 'string' ? data.companyId : null;
      if (subject === companyId) companyTransactions++;
      const folded = balanceOf(state, subject) as unknown as Record<string, unknown>;
      if (!sameBalance(folded, data.balanceAfter)) {
        inconsistencies.push({ revision: e.revision.toString(), type: e.type, recorded: data.balanceAfter, folded });
      }
    }
  }
  const at = (asOf ?? now).toISOString();
  const pool = poolTotals(state);
  const company = describeCompanyCredits(companyOf(state, companyId), pool, allocatedHeadroom(state) > pool.available, at);
  return {
    asOf: asOf ? asOf.toISOString() : null,
    events: count,
    revision: revision === null ? null : revision.toString(),
    companyTransactions,
    company,
    pool,
    inconsistencies,
  };
}
