/**
 * The credit webhooks of docs/api/webhooks.md, from the events of the credits streams: allowance
 * lifecycle events, the notices the credits decider writes with a reservation (company
 * threshold and exhaustion, pool low and exhaustion, precedence already applied there),
 * consumption reversals, and bulk job completion. Pure.
 */
import { decodeEventData } from '../../events/envelope.js';
import { creditEventDefinitions, publicAllowance, type Allowance, type Balance } from '../../credits/events.js';
import { CreditBulkJobCompleted } from '../../credits/jobs.js';
import { transactionIdFor } from '../../credits/values.js';
import type { Occurrence } from '../delivery.js';
import { PAYLOAD_SCHEMA_VERSION, occurrenceEventId, type WebhookEventType } from '../values.js';
import { dataEnvironment, type OccurrenceSource, type SourceEvent } from './source.js';

const ALLOWANCE_TYPES: Record<string, WebhookEventType> = {
  AllowanceCreated: 'isv.credits.allowance.changed',
  AllowanceScheduled: 'isv.credits.allowance.changed',
  AllowanceReplaced: 'isv.credits.allowance.changed',
  AllowanceCancelled: 'isv.credits.allowance.changed',
  AllowanceActivated: 'isv.credits.allowance.changed',
  AllowanceSuperseded: 'isv.credits.allowance.changed',
  AllowancePaused: 'isv.credits.allowance.paused',
  AllowanceResumed: 'isv.credits.allowance.resumed',
  AllowanceExpired: 'isv.credits.allowance.expired',
};

const NOTICE_TYPES: Record<string, WebhookEventType> = {
  CompanyCreditThresholdReached: 'isv.credits.company.threshold',
  CompanyCreditsExhausted: 'isv.credits.company.exhausted',
  PoolCreditsLow: 'isv.credits.pool.low',
  PoolCreditsExhausted: 'isv.credits.pool.exhausted',
};


const balanceOf = (b: Balance) => ({ companyAvailable: b.companyAvailable, poolAvailable: b.poolAvailable });

function decode(event: SourceEvent) {
  const def = (creditEventDefinitions as Record<string, Parameters<typeof decodeEventData>[0]>)[event.type]!;
  return decodeEventData(def, event.schemaVersion, event.data) as any;
}

function occurrence(event: SourceEvent, workspaceId: string, environment: 'sandbox' | 'production', type: WebhookEventType, timestamp: string, payload: Record<string, unknown>, discriminator: string | number | null = null): Occurrence {
  return {
    eventId: occurrenceEventId(event.id, type, discriminator),
    type,
    workspaceId,
    environment,
    timestamp,
    payload: { schemaVersion: PAYLOAD_SCHEMA_VERSION, ...payload },
  };
}

export const creditOccurrences: OccurrenceSource = {
  name: 'credits',
  eventTypes: new Set([...Object.keys(ALLOWANCE_TYPES), ...Object.keys(NOTICE_TYPES), 'ConsumptionReversed', CreditBulkJobCompleted.type]),
  occurrencesOf(event) {
    if (event.type === CreditBulkJobCompleted.type) {
      const d = decodeEventData(CreditBulkJobCompleted, event.schemaVersion, event.data);
      const environment = dataEnvironment(event.metadata.environment) ?? 'production';
      return [
        occurrence(event, d.workspaceId, environment, 'isv.credits.bulk.completed', d.completedAt, {
          jobId: d.jobId,
          status: d.status,
          totals: d.totals,
          completedAt: d.completedAt,
        }),
      ];
    }
    if (!event.streamId.startsWith('credits-')) return [];
    const workspaceId = event.streamId.slice('credits-'.length);
    const d = decode(event);
    const at: string = d.at ?? event.metadata.occurredAt;
    const allowanceType = ALLOWANCE_TYPES[event.type];
    if (allowanceType) {
      const a = d.allowance as Allowance;
      const environment = dataEnvironment(event.metadata.environment) ?? a.environment ?? 'production';
      return [
        occurrence(event, workspaceId, environment, allowanceType, at, {
          companyId: d.companyId,
          action: d.action,
          allowance: { ...publicAllowance(a), target: d.target },
          reason: d.reason,
          ...(d.bulkJobId !== null ? { bulkJobId: d.bulkJobId } : {}),
        }),
      ];
    }
    const environment = dataEnvironment(event.metadata.environment) ?? 'production';
    const noticeType = NOTICE_TYPES[event.type];
    if (noticeType) {
      // The notice's fields are the payload of docs/api/webhooks.md (thresholdPercent on threshold and low only).
      return [occurrence(event, workspaceId, environment, noticeType, at, { ...d }, noticeType === 'isv.credits.pool.low' ? d.thresholdPercent : null)];
    }
    if (event.type === 'ConsumptionReversed') {
      return [
        occurrence(event, workspaceId, environment, 'isv.credits.consumption.reversed', at, {
          companyId: d.companyId,
          reservationId: d.reservationId,
          transactionId: transactionIdFor(event.id),
          originalTransactionId: d.originalTransactionId,
          allowancePeriodId: d.allowancePeriodId,
          amount: d.amount,
          reason: d.reason,
          restorePool: d.restorePool,
          countryCode: d.countryCode ?? null,
          documentType: d.documentType ?? null,
          balanceBefore: balanceOf(d.balanceBefore),
          balanceAfter: balanceOf(d.balanceAfter),
        }),
      ];
    }
    return [];
  },
};
