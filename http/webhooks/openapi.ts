/** Credit webhook subscriptions and their delivery log (/v3/connect/webhooks*) in the OpenAPI document. */
import { jsonSchemaOf } from '../../domain/schema/json-schema.js';
import { SubscriptionCreateCodec, SubscriptionPatchCodec } from '../../domain/webhooks/input.js';
import { RedeliveryRequestCodec } from '../../domain/webhooks/redelivery.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/values.js';
import { connectSecurity } from '../connect/openapi.js';
import { errorResponses } from '../openapi/errors.js';
import { arr, bool, constant, dateTime, enumOf, headers, int, nullable, num, obj, openObject, ref, response, str, type FamilyDocument, type OperationObject, type ParameterObject, type Schema } from '../openapi/schema.js';

const EVENTS = WEBHOOK_EVENT_TYPES;
const id: ParameterObject = { name: 'id', in: 'path', required: true, schema: str };
const envelope = (data: Schema) => obj({ success: constant(true), data, meta: obj({ requestId: str, timestamp: dateTime, workspaceId: str }) });
const op = (o: Omit<OperationObject, 'tags' | 'security'>): OperationObject => ({ ...o, tags: ['Webhooks'], security: connectSecurity });
const writeParams = [
  headers.environment('Data environment of a new subscription, as for credit writes', ['sandbox', 'test', 'development', 'production', 'prod']),
  headers.idempotencyKey(),
  headers.correlationId,
];
const page = (item: Schema) => envelope(obj({ items: arr(item), nextCursor: nullable(str) }));
const limit: ParameterObject = { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } };
const cursor: ParameterObject = { name: 'cursor', in: 'query', schema: str };
const writeErrors = errorResponses.connect([400, 403, 404, 409, 413, 415, 500, 503]);

export const webhooksDocument: FamilyDocument = {
  tag: { name: 'Webhooks', description: 'Webhook subscriptions (credit, purchase and sales-document status events) and their delivery log. Connect authentication.' },
  schemas: {
    WebhookSubscriptionInput: jsonSchemaOf(SubscriptionCreateCodec),
    WebhookSubscriptionPatch: { ...jsonSchemaOf(SubscriptionPatchCodec), description: 'Any of the creation fields, and `active`; at least one' },
    WebhookSubscription: obj({
      id: str,
      webhookUrl: str,
      events: arr(enumOf(EVENTS)),
      environment: enumOf(['sandbox', 'production']),
      signatureAlgorithm: enumOf(['sha256', 'sha512']),
      hasSecret: bool,
      description: nullable(str),
      active: bool,
      createdAt: dateTime,
      updatedAt: dateTime,
    }),
    WebhookDelivery: obj({
      deliveryId: str,
      eventId: str,
      eventType: str,
      occurredAt: dateTime,
      outcome: enumOf(['pending', 'delivered', 'failed']),
      attempts: int,
      nextAttemptAt: nullable(dateTime),
      lastAttemptAt: nullable(dateTime),
      lastStatusCode: nullable(int),
      lastError: nullable(str),
      redeliveryOf: { ...nullable(str), description: 'The delivery this one delivers again (same eventId), null for an original delivery' },
      redeliveryId: { ...nullable(str), description: 'The redelivery that created this delivery, null for an original delivery' },
      attemptLog: arr(openObject),
    }),
    WebhookRedeliveryInput: jsonSchemaOf(RedeliveryRequestCodec),
    WebhookRedelivery: obj({
      redeliveryId: { ...nullable(str), description: 'null when nothing was redelivered (200)' },
      subscriptionId: str,
      requestedAt: dateTime,
      deliveries: { ...arr(obj({ deliveryId: str, redeliveryOf: str, eventId: str, eventType: str })), description: 'The new deliveries, due at once, each of an original delivery' },
      skipped: { ...arr(obj({ deliveryId: str, eventId: str, reason: constant('pending') })), description: 'Events still being delivered, left out' },
    }),
  },
  paths: {
    '/v3/connect/webhooks': {
      post: op({
        operationId: 'webhooksCreate',
        summary: 'Create a subscription (the secret is write-only)',
        parameters: writeParams,
        requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookSubscriptionInput') } } },
        responses: { 201: response('Created', envelope(ref('WebhookSubscription'))), ...writeErrors },
      }),
      get: op({ operationId: 'webhooksList', summary: 'List subscriptions', parameters: [cursor, limit], responses: { 200: response('A page', page(ref('WebhookSubscription'))), ...errorResponses.connect([400, 500, 503]) } }),
    },
    '/v3/connect/webhooks/{id}': {
      get: op({ operationId: 'webhooksRead', summary: 'Read a subscription', parameters: [id], responses: { 200: response('The subscription', envelope(ref('WebhookSubscription'))), ...errorResponses.connect([400, 404, 500, 503]) } }),
      patch: op({
        operationId: 'webhooksUpdate',
        summary: 'Update a subscription',
        parameters: [id, ...writeParams],
        requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookSubscriptionPatch') } } },
        responses: { 200: response('Updated', envelope(ref('WebhookSubscription'))), ...writeErrors },
      }),
      delete: op({ operationId: 'webhooksDelete', summary: 'Delete a subscription', parameters: [id, ...writeParams], responses: { 200: response('Deleted', envelope(obj({ id: str, deleted: constant(true) }))), ...writeErrors } }),
    },
    '/v3/connect/webhooks/{id}/deliveries': {
      get: op({
        operationId: 'webhooksDeliveries',
        summary: 'The delivery log of a subscription',
        parameters: [
          id,
          cursor,
          limit,
          { name: 'eventType', in: 'query', schema: str },
          { name: 'outcome', in: 'query', schema: enumOf(['pending', 'delivered', 'failed']) },
          { name: 'eventId', in: 'query', schema: str },
          { name: 'redeliveryId', in: 'query', description: 'Only the deliveries of this redelivery', schema: str },
        ],
        responses: { 200: response('A page', page(ref('WebhookDelivery'))), ...errorResponses.connect([400, 404, 500, 503]) },
      }),
    },
    '/v3/connect/webhooks/{id}/test': {
      post: op({
        operationId: 'webhooksTest',
        summary: 'Send a signed webhook.test ping now',
        parameters: [id],
        responses: {
          200: response(
            'The attempt',
            envelope(obj({ eventId: str, deliveryId: str, eventType: constant('webhook.test'), outcome: str, statusCode: nullable(int), durationMs: { ...nullable(num), description: 'Milliseconds, fractional' }, error: nullable(str), attemptedAt: dateTime })),
          ),
          ...errorResponses.connect([400, 403, 404, 409, 413, 415, 500, 503]),
        },
      }),
    },
    '/v3/connect/webhooks/{id}/redeliveries': {
      post: op({
        operationId: 'webhooksRedeliver',
        summary: 'Deliver one delivery, or every event since an instant (at most 7 days back), again',
        description:
          'Each redelivered event becomes a new delivery with the original eventId, type, timestamp and payload (receivers de-duplicate on the event id), its own attempts and its own entry in the delivery log (`redeliveryOf`, `redeliveryId`). 404 CONNECT_WEBHOOK_DELIVERY_NOT_FOUND for an unknown delivery; 409 CONNECT_WEBHOOK_PAUSED for a paused subscription, CONNECT_WEBHOOK_DELIVERY_PENDING while the event is still being delivered, CONNECT_WEBHOOK_REDELIVERY_WINDOW for an event older than 7 days, CONNECT_WEBHOOK_NOT_REDELIVERABLE for a test ping; 400 for `since` out of bounds or more than 1000 events; 429 beyond 10 requests per workspace and minute.',
        parameters: [id, headers.idempotencyKey(), headers.correlationId],
        requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookRedeliveryInput') } } },
        responses: {
          202: response('Redelivery queued', envelope(ref('WebhookRedelivery'))),
          200: response('Nothing to redeliver (no event in range, or every one still being delivered)', envelope(ref('WebhookRedelivery'))),
          ...errorResponses.connect([400, 403, 404, 409, 413, 415, 429, 500, 503]),
        },
      }),
    },
  },
};
