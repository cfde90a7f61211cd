/** Credits in the OpenAPI document (docs/api/credits.md); value lists come from the domain's own constants. */
import { ALLOWANCE_STATUSES, BLOCK_REASONS, BULK_OPERATIONS, LEDGER_EVENT_TYPES, PERIOD_TYPES, WARNINGS } from '../../domain/credits/values.js';
import { connectSecurity } from '../connect/openapi.js';
import { AllowanceBody, BulkBody, ReasonOptionalBody, ReasonRequiredBody } from '../../domain/credits/codecs.js';
import { jsonSchemaOf } from '../../domain/schema/json-schema.js';
import { errorResponses } from '../openapi/errors.js';
import {
  arr,
  bool,
  constant,
  dateTime,
  enumOf,
  headers,
  int,
  nullable,
  num,
  obj,
  openObject,
  ref,
  response,
  str,
  type FamilyDocument,
  type OperationObject,
  type ParameterObject,
  type ResponseObject,
  type Schema,
} from '../openapi/schema.js';

const companyId: ParameterObject = { name: 'companyId', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{24}$' } };
const envelope = (data: Schema) => obj({ success: constant(true), data, meta: obj({ requestId: str, timestamp: dateTime, workspaceId: str }) });
const etag = { ETag: { description: 'The quoted version', schema: str, required: true } };
const writeHeaders = (precondition: boolean): ParameterObject[] => [
  headers.environment('Data environment of the write: sandbox|test|development (sandbox data), production|prod (production data); default production; other values 400 CONNECT_INVALID_ENVIRONMENT', [
    'sandbox',
    'test',
    'development',
    'production',
    'prod',
  ]),
  headers.idempotencyKey(true),
  headers.correlationId,
  ...(precondition
    ? [
        { name: 'If-Match', in: 'header' as const, description: '`"<version>"`: replace, pause, resume, cancel. Never with If-None-Match.', schema: { type: 'string', pattern: '^"[0-9]+"$' } },
        { name: 'If-None-Match', in: 'header' as const, description: '`*`: first creation. Never with If-Match.', schema: constant('*') },
      ]
    : []),
];
const balance = obj(Object.fromEntries(['companyLimit', 'companyFinalizedUsage', 'companyReserved', 'companyAvailable', 'poolActive', 'poolReserved', 'poolConsumed', 'poolExpired', 'poolAvailable'].map((k) => [k, nullable(num)])));
const ledgerFilterNames = ['companyId', 'eventType', 'occurredFrom', 'occurredTo', 'correlationId', 'idempotencyKey', 'requestId', 'transactionId', 'bulkJobId'];

const schemas: Record<string, Schema> = {
  Allowance: obj({
    allowancePeriodId: { ...nullable(str), description: 'null for a scheduled allowance until it activates' },
    limit: num,
    periodType: enumOf(PERIOD_TYPES),
    planReference: nullable(str),
    metadata: nullable(openObject),
    startAt: dateTime,
    endAt: dateTime,
    status: enumOf(ALLOWANCE_STATUSES),
    version: int,
    finalizedUsage: num,
    reserved: num,
    updatedAt: dateTime,
  }),
  // Request bodies: the JSON Schema of the codecs the request rules take their members from.
  AllowanceInput: { ...jsonSchemaOf(AllowanceBody), description: 'endAt must be later than startAt.' },
  CompanyCredits: obj({
    companyId: str,
    current: nullable(ref('Allowance')),
    scheduled: nullable(ref('Allowance')),
    usage: num,
    reserved: num,
    available: num,
    effectiveAvailability: num,
    blockReason: nullable(enumOf(BLOCK_REASONS)),
    warnings: arr(enumOf(WARNINGS)),
    asOf: dateTime,
    lastChangedAt: nullable(dateTime),
  }),
  CreditTransaction: obj({
    transactionId: str,
    eventType: enumOf(LEDGER_EVENT_TYPES),
    occurredAt: dateTime,
    companyId: nullable(str),
    environment: nullable(str),
    amount: nullable(num),
    allowancePeriodId: nullable(str),
    version: nullable(int),
    target: nullable(str),
    reservationId: nullable(str),
    documentId: nullable(str),
    lotId: nullable(str),
    reason: nullable(str),
    balanceBefore: balance,
    balanceAfter: balance,
    correlationId: nullable(str),
    idempotencyKey: nullable(str),
    requestId: nullable(str),
    bulkJobId: nullable(str),
    details: openObject,
  }),
  CreditPool: obj({
    active: num,
    reserved: num,
    consumed: num,
    expired: num,
    available: num,
    issued: num,
    lots: arr(
      obj({
        lotId: str,
        amount: num,
        available: num,
        reserved: num,
        consumed: num,
        expired: num,
        status: str,
        environment: str,
        issuedAt: dateTime,
        expiresAt: nullable(dateTime),
      }),
    ),
    asOf: dateTime,
    warnings: arr(enumOf(WARNINGS)),
  }),
  BulkJob: obj({
    jobId: str,
    status: enumOf(['accepted', 'processing', 'completed', 'completed_with_errors', 'failed']),
    environment: str,
    totals: obj({ total: int, processed: int, succeeded: int, failed: int }),
    createdAt: dateTime,
    updatedAt: dateTime,
    completedAt: nullable(dateTime),
    results: arr(
      obj({
        operationId: str,
        companyId: str,
        operation: enumOf(BULK_OPERATIONS),
        expectedVersion: int,
        status: str,
        version: nullable(int),
        error: nullable(obj({ code: str, message: str })),
      }),
    ),
  }),
  LedgerFilters: obj({}, Object.fromEntries(ledgerFilterNames.map((k) => [k, nullable(str)]))),
  CreditExport: obj({
    exportId: str,
    status: str,
    format: constant('csv'),
    filters: ref('LedgerFilters'),
    rowCount: nullable(int),
    requestedAt: dateTime,
    completedAt: nullable(dateTime),
    expiresAt: nullable(dateTime),
    downloadUrl: nullable(str),
    failureReason: nullable(str),
  }),
};

const op = (o: Omit<OperationObject, 'tags' | 'security'>): OperationObject => ({ ...o, tags: ['Credits'], security: connectSecurity });
const readErrors = errorResponses.connect([400, 404, 500, 503]);
const writeErrors = errorResponses.connect([400, 403, 404, 409, 412, 413, 415, 428, 500, 503]);
const writeResult = (member: Record<string, Schema>) =>
  envelope(obj({ companyId: str, ...member, warnings: arr(enumOf(WARNINGS)), replayed: bool }));

/** A real response (PUT …/scheduled, first creation). */
const SCHEDULED_CREATED_EXAMPLE = {
  success: true,
  data: {
    companyId: 'fc2f07886d46d53c6a503082',
    scheduled: {
      allowancePeriodId: null,
      limit: 100,
      periodType: 'monthly',
      planReference: null,
      metadata: {},
      startAt: '2026-03-02T10:00:00.000Z',
      endAt: '2026-03-03T10:00:00.000Z',
      status: 'scheduled',
      version: 1,
      finalizedUsage: 0,
      reserved: 0,
      updatedAt: '2026-03-01T10:00:00.000Z',
    },
    warnings: [],
    replayed: false,
  },
  meta: { requestId: 'req_2b821c66-8566-4be3-9192-b7256a682922', timestamp: '2026-11-23T21:58:51.006Z', workspaceId: 'ws_f0c50daad71b79b460f2' },
};

const allowanceWrite = (target: 'current' | 'scheduled'): OperationObject =>
  op({
    operationId: target === 'current' ? 'creditsPutCurrent' : 'creditsPutScheduled',
    summary: `Create (If-None-Match: *) or replace (If-Match) the ${target} allowance`,
    parameters: [companyId, ...writeHeaders(true)],
    requestBody: { required: true, content: { 'application/json': { schema: ref('AllowanceInput') } } },
    responses: {
      200: response('Replaced', writeResult({ [target]: ref('Allowance') }), undefined, etag),
      201: response('Created', writeResult({ [target]: ref('Allowance') }), target === 'scheduled' ? SCHEDULED_CREATED_EXAMPLE : undefined, etag),
      ...writeErrors,
    },
  });

const actionBody = (required: boolean) => ({
  required,
  content: { 'application/json': { schema: jsonSchemaOf(required ? ReasonRequiredBody : ReasonOptionalBody) } },
});

const accepted = (fields: Record<string, Schema>): ResponseObject => response('Accepted', envelope(obj({ ...fields, replayed: bool })));

export const creditsDocument: FamilyDocument = {
  tag: { name: 'Credits', description: 'Credit pool, per-company allowances, bulk jobs, the ledger and its CSV export (internal sandbox preview). Connect authentication.' },
  schemas,
  paths: {
    '/v3/connect/credits/pool': {
      get: op({ operationId: 'creditsPool', summary: 'Read the pool', responses: { 200: response('The pool', envelope(ref('CreditPool'))), ...readErrors } }),
    },
    '/v3/connect/credits/allowances': {
      get: op({
        operationId: 'creditsListAllowances',
        summary: 'List company credit states (active managed companies)',
        parameters: [
          { name: 'cursor', in: 'query', schema: str },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'companyId', in: 'query', schema: { type: 'string', pattern: '^[0-9a-f]{24}$' } },
          { name: 'status', in: 'query', schema: enumOf(ALLOWANCE_STATUSES) },
          { name: 'countryCode', in: 'query', schema: { type: 'string', pattern: '^[A-Za-z]{2}$' } },
          { name: 'blockReason', in: 'query', schema: enumOf(BLOCK_REASONS) },
          { name: 'effectiveFrom', in: 'query', schema: dateTime },
          { name: 'effectiveTo', in: 'query', schema: dateTime },
        ],
        responses: {
          200: response('A page', envelope(obj({ items: arr(ref('CompanyCredits')), nextCursor: nullable(str), asOf: dateTime }))),
          ...readErrors,
        },
      }),
    },
    '/v3/connect/credits/allowances/{companyId}': {
      get: op({
        operationId: 'creditsReadCompany',
        summary: 'Read one company\'s credit state',
        parameters: [companyId],
        responses: {
          200: response(
            'The state; ETag = quoted current version ("0" when none)',
            envelope({
              ...obj({ ...(schemas.CompanyCredits!.properties as Record<string, Schema>), recentActivity: arr(ref('CreditTransaction'), { maxItems: 10 }), scheduledEtag: nullable(str) }),
            }),
            undefined,
            etag,
          ),
          ...readErrors,
        },
      }),
    },
    '/v3/connect/credits/allowances/{companyId}/current': { put: allowanceWrite('current') },
    '/v3/connect/credits/allowances/{companyId}/scheduled': {
      put: allowanceWrite('scheduled'),
      delete: op({
        operationId: 'creditsCancelScheduled',
        summary: 'Cancel the scheduled allowance (If-Match)',
        parameters: [companyId, ...writeHeaders(true)],
        requestBody: actionBody(false),
        responses: {
          200: response('Cancelled', writeResult({ scheduled: { type: 'null' }, cancelled: nullable(ref('Allowance')) }), undefined, etag),
          ...writeErrors,
        },
      }),
    },
    '/v3/connect/credits/allowances/{companyId}/pause': {
      post: op({
        operationId: 'creditsPause',
        summary: 'Pause the current allowance (If-Match)',
        parameters: [companyId, ...writeHeaders(true)],
        requestBody: actionBody(true),
        responses: { 200: response('Paused', writeResult({ current: ref('Allowance') }), undefined, etag), ...writeErrors },
      }),
    },
    '/v3/connect/credits/allowances/{companyId}/resume': {
      post: op({
        operationId: 'creditsResume',
        summary: 'Resume the current allowance (If-Match)',
        parameters: [companyId, ...writeHeaders(true)],
        requestBody: actionBody(false),
        responses: { 200: response('Resumed', writeResult({ current: ref('Allowance') }), undefined, etag), ...writeErrors },
      }),
    },
    '/v3/connect/credits/allowances/bulk': {
      post: op({
        operationId: 'creditsBulk',
        summary: 'Submit a bulk allowance job (1 to 500 operations)',
        parameters: writeHeaders(false),
        requestBody: { required: true, content: { 'application/json': { schema: jsonSchemaOf(BulkBody) } } },
        responses: {
          202: accepted({ jobId: str, status: constant('accepted'), environment: str, totals: obj({ total: int, processed: int, succeeded: int, failed: int }), statusUrl: str }),
          ...writeErrors,
        },
      }),
    },
    '/v3/connect/credits/allowances/bulk/{jobId}': {
      get: op({
        operationId: 'creditsBulkJob',
        summary: 'Read a bulk job and its row results',
        parameters: [{ name: 'jobId', in: 'path', required: true, schema: str }],
        responses: { 200: response('The job', envelope(ref('BulkJob'))), ...readErrors },
      }),
    },
    '/v3/connect/credits/transactions': {
      get: op({
        operationId: 'creditsLedger',
        summary: 'Read the ledger (newest first, cursor paging; keep filters unchanged while paging)',
        parameters: [
          { name: 'cursor', in: 'query', schema: str },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'companyId', in: 'query', schema: { type: 'string', pattern: '^[0-9a-f]{24}$' } },
          { name: 'eventType', in: 'query', schema: enumOf(LEDGER_EVENT_TYPES) },
          { name: 'occurredFrom', in: 'query', schema: dateTime },
          { name: 'occurredTo', in: 'query', schema: dateTime },
          ...['correlationId', 'idempotencyKey', 'requestId', 'transactionId', 'bulkJobId'].map((name) => ({ name, in: 'query' as const, schema: str })),
        ],
        responses: { 200: response('A page', envelope(obj({ items: arr(ref('CreditTransaction')), nextCursor: nullable(str) }))), ...readErrors },
      }),
    },
    '/v3/connect/credits/exports': {
      post: op({
        operationId: 'creditsRequestExport',
        summary: 'Request a CSV export of the ledger',
        parameters: [headers.idempotencyKey(true)],
        requestBody: { required: true, content: { 'application/json': { schema: obj({ format: constant('csv') }, { filters: ref('LedgerFilters') }) } } },
        responses: {
          202: accepted({ exportId: str, status: constant('accepted'), format: constant('csv'), filters: ref('LedgerFilters'), statusUrl: str }),
          ...errorResponses.connect([400, 409, 413, 415, 500, 503]),
        },
      }),
    },
    '/v3/connect/credits/exports/{exportId}': {
      get: op({
        operationId: 'creditsExportStatus',
        summary: 'Export status and download details',
        parameters: [{ name: 'exportId', in: 'path', required: true, schema: str }],
        responses: { 200: response('The export', envelope(ref('CreditExport'))), ...readErrors },
      }),
    },
    '/v3/connect/credits/exports/{exportId}/download': {
      get: op({
        operationId: 'creditsExportDownload',
        summary: 'Download a completed export (CSV, available 24 hours)',
        parameters: [{ name: 'exportId', in: 'path', required: true, schema: str }],
        responses: {
          200: { description: 'The ledger as CSV', content: { 'text/csv': { schema: str } } },
          ...errorResponses.connect([400, 404, 409, 410, 500, 503]),
        },
      }),
    },
  },
};

