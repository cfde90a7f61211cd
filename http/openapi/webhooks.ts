/**
 * The webhook events under the document's `webhooks`: the credit events of docs/api/webhooks.md, the
 * purchase-stored event and the sales-document status event (their payloads are this service's
 * choice): headers and payloads.
 */
import { ALLOWANCE_STATUSES, PERIOD_TYPES } from '../../domain/credits/values.js';
import { DOCUMENT_STATES } from '../../domain/document/document.js';
import { arr, bool, constant, dateTime, enumOf, int, nullable, num, obj, openObject, ref, str, type OperationObject, type PathItem, type Schema } from './schema.js';

const common = { schemaVersion: constant('1.0') };
const allowanceWithTarget = obj(
  {
    allowancePeriodId: { ...nullable(str), description: 'null for a scheduled allowance until it activates' },
    limit: num,
    periodType: enumOf(PERIOD_TYPES),
    startAt: dateTime,
    endAt: dateTime,
    status: enumOf(ALLOWANCE_STATUSES),
    version: int,
    finalizedUsage: num,
    reserved: num,
    updatedAt: dateTime,
    target: enumOf(['current', 'scheduled']),
  },
  { planReference: nullable(str), metadata: nullable(openObject) },
);
const companyUsage = {
  companyId: str,
  allowancePeriodId: str,
  reservationId: str,
  limit: num,
  finalizedUsage: num,
  reserved: num,
  committedUsage: num,
  available: num,
  percentageUsed: num,
  amount: num,
};
const poolUsage = { triggeringCompanyId: str, reservationId: str, totalCredits: num, availableCredits: num, percentageAvailable: num, amount: num };
const balance = obj({ companyAvailable: num, poolAvailable: num });

export const webhookSchemas: Record<string, Schema> = {
  AllowanceLifecyclePayload: obj(
    {
      ...common,
      companyId: str,
      action: enumOf(['current.created', 'current.replaced', 'current.paused', 'current.resumed', 'current.expired', 'scheduled.created', 'scheduled.replaced', 'scheduled.cancelled', 'scheduled.activated', 'scheduled.expired']),
      allowance: allowanceWithTarget,
      reason: nullable(str),
    },
    { bulkJobId: str },
  ),
  CompanyThresholdPayload: obj({ ...common, ...companyUsage, thresholdPercent: constant(80) }),
  CompanyExhaustedPayload: obj({ ...common, ...companyUsage }),
  PoolLowPayload: obj({ ...common, ...poolUsage, thresholdPercent: { enum: [20, 10] } }),
  PoolExhaustedPayload: obj({ ...common, ...poolUsage }),
  ConsumptionReversedPayload: obj({
    ...common,
    companyId: str,
    reservationId: str,
    transactionId: str,
    originalTransactionId: str,
    allowancePeriodId: str,
    amount: num,
    reason: nullable(str),
    restorePool: bool,
    countryCode: { ...nullable(str), description: 'null when the consumption names no document' },
    documentType: { ...nullable(str), description: 'null when the consumption names no document' },
    balanceBefore: balance,
    balanceAfter: balance,
  }),
  BulkCompletedPayload: obj({
    ...common,
    jobId: str,
    status: enumOf(['completed', 'completed_with_errors', 'failed']),
    totals: obj({ total: int, processed: int, succeeded: int, failed: int }),
    completedAt: dateTime,
  }),
  PurchaseInvoiceStoredPayload: obj({
    ...common,
    documentId: str,
    receivedAt: dateTime,
    storedAt: dateTime,
    invoiceNumber: nullable(str),
    supplierName: nullable(str),
    companyId: str,
    probableResendOf: { ...arr(str), description: 'Purchases stored earlier with the same supplier, document type and number: this one is probably a re-send of them (a different document, stored all the same)' },
  }),
  DocumentStatusChangedPayload: obj({
    ...common,
    documentId: str,
    state: enumOf(DOCUMENT_STATES),
    isTerminal: bool,
    errors: {
      ...arr(obj({ code: str, message: str, path: arr({ oneOf: [str, int] }), source: enumOf(['validation', 'delivery', 'government']) })),
      description: 'The errors this change recorded (a rejection, a failed delivery, an invalid final result); empty otherwise',
    },
    step: {
      ...obj({ name: str, status: nullable(enumOf(['Valid', 'Invalid', 'Pending'])), error: nullable(obj({ code: str, message: str })) }),
      description: 'The validation step the change reached, as in the status object (validationResults.validationSteps)',
    },
    environment: enumOf(['sandbox', 'production']),
    occurredAt: dateTime,
  }),
};

const EVENTS: [string, string, string][] = [
  ['isv.credits.allowance.changed', 'AllowanceLifecyclePayload', 'Current or scheduled allowance created, replaced, cancelled, activated or superseded'],
  ['isv.credits.allowance.paused', 'AllowanceLifecyclePayload', 'Current allowance paused'],
  ['isv.credits.allowance.resumed', 'AllowanceLifecyclePayload', 'Paused allowance resumed'],
  ['isv.credits.allowance.expired', 'AllowanceLifecyclePayload', 'Allowance period ended'],
  ['isv.credits.company.threshold', 'CompanyThresholdPayload', 'Committed usage crosses 80% of the current allowance'],
  ['isv.credits.company.exhausted', 'CompanyExhaustedPayload', 'Available allowance goes from above zero to exactly zero'],
  ['isv.credits.pool.low', 'PoolLowPayload', 'Available pool crosses 20% and, separately, 10% remaining'],
  ['isv.credits.pool.exhausted', 'PoolExhaustedPayload', 'Pool reaches exactly zero'],
  ['isv.credits.consumption.reversed', 'ConsumptionReversedPayload', 'A finalized consumption reversed'],
  ['isv.credits.bulk.completed', 'BulkCompletedPayload', 'A bulk allowance job finished'],
  ['purchase.invoice.stored', 'PurchaseInvoiceStoredPayload', 'A received purchase invoice was stored; fetch it with GET /api/v3/documents/{documentId}?type=purchases'],
  [
    'document.status.changed',
    'DocumentStatusChangedPayload',
    'A sales document changed state (submitted, rejected, delivery started, delivered, delivery failed, final valid or invalid), one event per change; only to subscriptions that name this type (without one, sales documents send no webhook)',
  ],
];
const TAGS: Record<string, string> = { isv: 'Credit webhooks', purchase: 'Purchase webhooks', document: 'Sales document webhooks' };

const header = (name: string, description: string, required = true) => ({ name, in: 'header' as const, required, description, schema: str });

export function webhooks(): Record<string, PathItem> {
  const out: Record<string, PathItem> = {};
  for (const [event, payload, when] of EVENTS) {
    const operation: OperationObject = {
      operationId: `webhook_${event.replace(/\./g, '_')}`,
      summary: event,
      description: `${when}. Delivered at least once by HTTP POST to the subscription URL; deduplicate on X-Webhook-ID. A 2xx answer is success; 4xx is permanent; 5xx, time-outs and network failures are retried up to 5 attempts (60 s, 5 min, 15 min).`,
      tags: [TAGS[event.split('.')[0]!]!],
      parameters: [
        header('X-Webhook-ID', 'Unique, deterministic event id'),
        header('X-Webhook-Event', 'The event type'),
        header('X-Webhook-Timestamp', 'Delivery time, ISO 8601'),
        header('X-Webhook-Signature', 'Hex HMAC of the raw body (SHA-256 by default, SHA-512 supported); present when the subscription has a secretKey', false),
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: obj({ eventId: str, data: obj({ id: str, type: constant(event), timestamp: dateTime, data: ref(payload) }) }),
          },
        },
      },
      responses: { '2XX': { description: 'Received' } },
    };
    out[event] = { post: operation };
  }
  return out;
}
