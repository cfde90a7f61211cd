/**
 * The error envelopes of docs/api/http.md, one schema per API family, exactly as
 * http/errors.ts renders them, and the authentication failures of section 5.6.
 */
import { arr, bool, constant, dateTime, json, nullable, obj, ref, str, type ResponseObject, type Schema } from './schema.js';

const errorPath = arr({ type: ['string', 'integer'] });
const detail = obj({ message: str }, { code: str, path: errorPath });

export const errorSchemas: Record<string, Schema> = {
  ErrorPath: errorPath,
  ProblemDetail: detail,
  ConnectError: obj(
    {
      success: constant(false),
      error: obj({ code: str, message: str }, { retryable: bool, path: ref('ErrorPath'), details: arr(ref('ProblemDetail')) }),
      meta: obj({ requestId: str, timestamp: dateTime, workspaceId: nullable(str) }),
    },
    {},
    { description: 'Connect and credits error envelope (after authentication).' },
  ),
  UnifyError: obj(
    { code: str, message: str, requestId: str },
    { path: ref('ErrorPath'), errors: arr(ref('ProblemDetail')), blockReason: nullable(str) },
    { description: 'Unify new-format error: `code` + `message` (`invalid_argument`, `permission_denied`, `insufficient_permission`, `not_found`, `credits_blocked`, …).' },
  ),
  UnifyUnauthorized: obj({ error: constant('Unauthorized') }, {}, { description: 'Every Unify authentication failure.' }),
  EarlierError: obj(
    {
      status: constant('error'),
      code: str,
      message: str,
      requestId: str,
      timestamp: dateTime,
      data: { type: 'null' },
      errors: arr(obj({ code: str, message: str, path: ref('ErrorPath') })),
    },
    {},
    { description: 'Earlier Unify format error envelope (`VALIDATION_ERROR`, `AUTH_INVALID_API_KEY`, …).' },
  ),
  DocumentsError: obj(
    { success: constant(false), code: str, message: str, requestId: str },
    { path: ref('ErrorPath'), errors: arr(ref('ProblemDetail')) },
    { description: 'Documents family error (`NOT_FOUND`, `VALIDATION_ERROR`, `INTERNAL_ERROR`, …).' },
  ),
  SystemError: obj(
    { code: str, message: str },
    { path: ref('ErrorPath'), errors: arr(ref('ProblemDetail')), requestId: str },
    { description: 'Errors outside the API families (`bad_request`, `request_timeout`, `request_header_fields_too_large`, `payload_too_large`, …). `requestId` is present when the request could not be read as HTTP at all; it repeats the `X-Request-Id` header.' },
  ),
  AuthFailure: obj(
    { code: str, message: str },
    {},
    { description: '401 of a wrong key (`invalid_api_key`, `key_revoked`, `key_expired`, `AUTHORIZATION_ERROR`) or of a missing key (`authentication_required`): `code` and `message` only.' },
  ),
};

/** Real responses (recorded from the running service). */
const CONNECT_EXAMPLES: Record<number, unknown> = {
  400: {
    success: false,
    error: { code: 'CONNECT_INVALID_ENVIRONMENT', message: 'X-Environment must be sandbox or production', retryable: false, path: ['headers', 'X-Environment'] },
    meta: { requestId: 'req_83b4079d-24e3-4153-ab30-ec1e22cecd9a', timestamp: '2026-11-23T21:59:25.729Z', workspaceId: 'ws_0c67949d4eec06246dfa' },
  },
};
const UNIFY_EXAMPLES: Record<number, unknown> = {
  500: { code: 'internal', message: 'An internal error occurred; retry later or quote the request id.', requestId: 'req_8b59814e-4c9e-4dbb-af2f-d5902a8618ff' },
};

const plainAuthRequired = { 'text/plain': { schema: constant('Authentication required') } };

const withDescription = (description: string, content: ResponseObject['content'], headers?: ResponseObject['headers']): ResponseObject => ({
  description,
  content,
  ...(headers ? { headers } : {}),
});

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' }, required: true } };
/** A 409 of a concurrent modification carries Retry-After; other 409s do not. */
const conflictRetryAfter = { 'Retry-After': { description: 'Present on a concurrent-modification 409: seconds to wait before retrying.', schema: { type: 'string' } } };

/** A 503 of the write limit (http/write-limit.ts) carries Retry-After. */
const overloadRetryAfter = {
  'Retry-After': { description: 'Present when the service refused a write at its limit of concurrent write requests: seconds to wait before retrying.', schema: { type: 'string' } },
};
const OVERLOAD = 'the service is at its limit of concurrent write requests and its wait queue is full, or the request waited too long for a slot (WRITE_CONCURRENCY, WRITE_QUEUE_LENGTH, WRITE_QUEUE_TIMEOUT_MS): nothing was written, retry after Retry-After';
const extraHeaders = (s: number) => (s === 409 ? conflictRetryAfter : s === 503 ? overloadRetryAfter : s === 429 ? retryAfter : undefined);

/** Error responses per family, keyed by status, with the reason the family gives that status. */
export const errorResponses = {
  connect(statuses: number[]): Record<string, ResponseObject> {
    const reasons: Record<number, string> = {
      400: 'CONNECT_VALIDATION_ERROR: malformed id, query or body, unknown field, array outside limits, JSON nested deeper than 64 levels, text with a NUL or an unpaired surrogate, a credit write or export request without Idempotency-Key (path `["headers","Idempotency-Key"]`) (also CONNECT_UNSUPPORTED_COUNTRY, CONNECT_INVALID_ENVIRONMENT)',
      403: 'CONNECT_INSUFFICIENT_PERMISSION: read-only key, or a role that may not write; CONNECT_ENVIRONMENT_MISMATCH (onboarding): `platformEnvironment` is not the key\'s environment',
      404: 'No such resource in the workspace (CONNECT_COMPANY_NOT_FOUND, …)',
      409: 'Conflict: idempotency key reused with another payload, company or source exists, invalid transition; CONNECT_CONCURRENT_MODIFICATION (`retryable: true`, `Retry-After`): a concurrent write touched the same record, retry',
      410: 'The export has expired',
      412: 'CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED: the version precondition fails',
      413: 'Body too large',
      415: 'Body is not JSON',
      428: 'CONNECT_ALLOWANCE_PRECONDITION_REQUIRED: neither If-Match nor If-None-Match',
      500: 'Service failure; use error.retryable',
      503: `CONNECT_SERVICE_UNAVAILABLE: a dependency is unavailable, or ${OVERLOAD}; use error.retryable`,
      504: 'ONBOARDING_TIMEOUT: creation may still have completed',
    };
    const out: Record<string, ResponseObject> = {
      401: withDescription('Missing key (plain text), wrong key or more than one credential (`code` + `message`), or CONNECT_AUTH_CONTEXT_MISSING (Connect envelope)', {
        'application/json': { schema: { oneOf: [ref('AuthFailure'), ref('ConnectError')] } },
        ...plainAuthRequired,
      }),
      429: withDescription('The workspace exceeded its request limit; honor Retry-After', json(ref('ConnectError')), retryAfter),
    };
    for (const s of statuses) out[s] = withDescription(reasons[s] ?? 'Error', json(ref('ConnectError'), CONNECT_EXAMPLES[s]), extraHeaders(s));
    return out;
  },
  unify(statuses: number[]): Record<string, ResponseObject> {
    const reasons: Record<number, string> = {
      400: 'Malformed request, unsupported country, unknown or unusable source (new format: UnifyError; earlier format: EarlierError)',
      403: '`permission_denied` (key environment differs), `insufficient_permission` (read-only key), `credits_blocked`; earlier format `AUTH_INVALID_API_KEY` / `INSUFFICIENT_PERMISSIONS`',
      404: 'Source not found in the workspace',
      409: 'Idempotency key reused with another payload; `aborted` (earlier format `CONCURRENT_MODIFICATION`; with `Retry-After`): a concurrent write touched the same record, retry',
      413: 'Body too large',
      415: 'Body is not JSON',
      429: '`resource_exhausted`: the workspace exceeded the rate of the operation (dry runs); honor Retry-After',
      500: 'Service failure',
      503: `\`unavailable\` (earlier format \`SERVICE_UNAVAILABLE\`): ${OVERLOAD}`,
    };
    const out: Record<string, ResponseObject> = {
      401: withDescription('Key missing, invalid, revoked or expired, or sent more than once', json(ref('UnifyUnauthorized'))),
    };
    for (const s of statuses) out[s] = withDescription(reasons[s] ?? 'Error', json({ oneOf: [ref('UnifyError'), ref('EarlierError')] }, UNIFY_EXAMPLES[s]), extraHeaders(s));
    return out;
  },
  unifyNewOnly(statuses: number[]): Record<string, ResponseObject> {
    const out: Record<string, ResponseObject> = {
      401: withDescription('Key missing, invalid, revoked or expired', json(ref('UnifyUnauthorized'))),
    };
    for (const s of statuses) out[s] = withDescription(s === 400 ? 'Missing or invalid query parameter' : 'Error', json(ref('UnifyError')));
    return out;
  },
  documents(statuses: number[], options: { plainMissingKey?: boolean } = {}): Record<string, ResponseObject> {
    const reasons: Record<number, string> = {
      400: 'VALIDATION_ERROR',
      404: 'NOT_FOUND: no such document in the workspace',
      409: 'CONCURRENT_MODIFICATION (with `Retry-After`): a concurrent write touched the same record, retry',
      422: 'VALIDATION_ERROR: `type` missing or not `sales`/`purchases`',
      500: 'INTERNAL_ERROR: the document could not be read',
      503: 'SERVICE_UNAVAILABLE',
    };
    const out: Record<string, ResponseObject> = {
      401: withDescription(
        options.plainMissingKey ? 'Missing key (plain text), wrong key or more than one credential (`code` + `message`)' : 'Missing or wrong key, or more than one credential (`code` + `message`)',
        { 'application/json': { schema: ref('AuthFailure') }, ...(options.plainMissingKey ? plainAuthRequired : {}) },
      ),
    };
    for (const s of statuses) out[s] = withDescription(reasons[s] ?? 'Error', json(ref('DocumentsError')), s === 409 ? conflictRetryAfter : undefined);
    return out;
  },
  system(statuses: number[]): Record<string, ResponseObject> {
    const out: Record<string, ResponseObject> = {};
    for (const s of statuses) {
      out[s] =
        s === 401
          ? withDescription('A key was sent and is not valid', json(ref('AuthFailure')))
          : withDescription(s === 400 ? 'A header naming a workspace or client' : 'Error', json(ref('SystemError')));
    }
    return out;
  },
};
