/** Credit webhook subscriptions and their delivery log (/v3/connect/webhooks*) in the OpenAPI document. */
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
    WebhookSubscriptionInput: obj(
      { webhookUrl: { type: 'string', format: 'uri', maxLength: 2048 }, events: arr(enumOf(EVENTS), { minItems: 1 }) },
      { secretKey: { type: 'string', maxLength: 256 }, signatureAlgorithm: enumOf(['sha256', 'sha512']), description: { type: 'string', maxLength: 500 } },
    ),
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
      attemptLog: arr(openObject),
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
        requestBody: { required: true, content: { 'application/json': { schema: { ...ref('WebhookSubscriptionInput'), description: 'Any of the creation fields, and `active`' } } } },
        responses: { 200: response('Updated', envelope(ref('WebhookSubscription'))), ...writeErrors },
      }),
      delete: op({ operationId: 'webhooksDelete', summary: 'Delete a subscription', parameters: [id, ...writeParams], responses: { 200: response('Deleted', envelope(obj({ id: str, deleted: constant(true) }))), ...writeErrors } }),
    },
    '/v3/connect/webhooks/{id}/deliveries': {
      get: op({
        operationId: 'webhooksDeliveries',
        summary: 'The delivery log of a subscription',
        parameters: [id, cursor, limit, { name: 'eventType', in: 'query', schema: str }, { name: 'outcome', in: 'query', schema: enumOf(['pending', 'delivered', 'failed']) }, { name: 'eventId', in: 'query', schema: str }],
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
  },
};
