/**
 * Errors at the HTTP edge. Handlers and middleware throw one error type, HttpProblem; the
 * error middleware renders it in the envelope of the request's API family (docs/api/http.md).
 * No handler builds an error body by hand.
 */
import type { Context } from 'koa';
import { ConcurrencyConflictError } from '../commands/execute.js';
import { DomainError, type DomainErrorKind } from '../domain/errors.js';

export type Family = 'connect' | 'unify' | 'unify_legacy' | 'documents' | 'invoice_query' | 'system';

export type ErrorPath = readonly (string | number)[];

export interface ProblemDetail {
  code?: string;
  message: string;
  path?: ErrorPath;
}

export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  constructor(
    readonly status: number,
    message: string,
    readonly options: {
      /** The family's default code for `status` when omitted. */
      code?: string;
      /** A code per family, for problems raised below the families (used when `code` is omitted). */
      codeByFamily?: Partial<Record<Family, string>>;
      path?: ErrorPath;
      retryable?: boolean;
      /** Several problems at once (rendered where the family has a list). */
      details?: readonly ProblemDetail[];
      headers?: Record<string, string>;
      /** Extra top-level fields for families whose bodies carry them. */
      extra?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
  }
}

/** A response whose exact body the spec fixes (authentication failures): sent as is. */
export class FixedResponse extends Error {
  override readonly name = 'FixedResponse';
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly contentType: 'json' | 'text',
    readonly headers: Record<string, string> = {},
  ) {
    super(`fixed ${status} response`);
  }
}

const STATUS_BY_KIND: Record<DomainErrorKind, number> = {
  validation: 400,
  not_found: 404,
  conflict: 409,
  precondition: 412,
  forbidden: 403,
};

export function problemFromDomain(err: DomainError, status = STATUS_BY_KIND[err.kind]): HttpProblem {
  return new HttpProblem(status, err.message, { code: err.code, path: err.path });
}

/** The problem an error stands for, or null for an unexpected error (a 500). */
export function toProblem(err: unknown): HttpProblem | null {
  if (err instanceof HttpProblem) return err;
  if (err instanceof DomainError) return problemFromDomain(err);
  if (err instanceof ConcurrencyConflictError) {
    return new HttpProblem(409, err.message, { codeByFamily: CONCURRENCY_CODES, retryable: true, headers: { 'Retry-After': '1' } });
  }
  const e = err as { status?: number; expose?: boolean; message?: string; headers?: Record<string, string> };
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
    return new HttpProblem(e.status, e.message ?? 'bad request', { headers: e.headers ?? {} });
  }
  return null;
}

/** The 409 of a command that lost the race for its aggregate too many times (retry later). */
const CONCURRENCY_CODES: Record<Family, string> = {
  connect: 'CONNECT_CONCURRENT_MODIFICATION',
  unify: 'aborted',
  unify_legacy: 'CONCURRENT_MODIFICATION',
  documents: 'CONCURRENT_MODIFICATION',
  invoice_query: 'CONCURRENT_MODIFICATION',
  system: 'concurrent_modification',
};

const DEFAULT_CODES: Record<Exclude<Family, 'unify_legacy'>, Record<number, string>> = {
  connect: {
    400: 'CONNECT_VALIDATION_ERROR',
    401: 'CONNECT_AUTH_CONTEXT_MISSING',
    403: 'CONNECT_INSUFFICIENT_PERMISSION',
    404: 'CONNECT_NOT_FOUND',
    405: 'CONNECT_METHOD_NOT_ALLOWED',
    409: 'CONNECT_IDEMPOTENCY_CONFLICT',
    412: 'CONNECT_PRECONDITION_FAILED',
    413: 'CONNECT_PAYLOAD_TOO_LARGE',
    415: 'CONNECT_UNSUPPORTED_MEDIA_TYPE',
    429: 'CONNECT_RATE_LIMITED',
    500: 'CONNECT_INTERNAL_ERROR',
    503: 'CONNECT_SERVICE_UNAVAILABLE',
  },
  unify: {
    400: 'invalid_argument',
    403: 'permission_denied',
    404: 'not_found',
    405: 'method_not_allowed',
    409: 'idempotency_conflict',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    422: 'validation_failed',
    429: 'resource_exhausted',
    500: 'internal',
    503: 'unavailable',
  },
  documents: {
    400: 'VALIDATION_ERROR',
    404: 'NOT_FOUND',
    405: 'METHOD_NOT_ALLOWED',
    422: 'VALIDATION_ERROR',
    500: 'INTERNAL_ERROR',
    503: 'SERVICE_UNAVAILABLE',
  },
  invoice_query: {
    400: 'VALIDATION_ERROR',
    403: 'permission_denied',
    404: 'NOT_FOUND',
    405: 'METHOD_NOT_ALLOWED',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
    500: 'INTERNAL_ERROR',
    503: 'SERVICE_UNAVAILABLE',
  },
  system: { 404: 'not_found', 405: 'method_not_allowed', 500: 'internal', 503: 'unavailable' },
};

const LEGACY_CODES: Record<number, [string, string]> = {
  // status: [envelope code, item code]
  400: ['VALIDATION_ERROR', 'REQ_INVALID_INPUT'],
  403: ['AUTH_INVALID_API_KEY', 'AUTH_INVALID_API_KEY'],
  404: ['NOT_FOUND', 'NOT_FOUND'],
  405: ['METHOD_NOT_ALLOWED', 'METHOD_NOT_ALLOWED'],
  409: ['IDEMPOTENCY_CONFLICT', 'IDEMPOTENCY_CONFLICT'],
  413: ['PAYLOAD_TOO_LARGE', 'REQ_PAYLOAD_TOO_LARGE'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'REQ_UNSUPPORTED_MEDIA_TYPE'],
  500: ['INTERNAL_ERROR', 'INTERNAL_ERROR'],
  503: ['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE'],
};

function fallbackCode(status: number): string {
  return status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST';
}

/** The family envelope of a problem: status, JSON body and headers. */
export function renderProblem(family: Family, problem: HttpProblem, ctx: Context): { status: number; body: unknown } {
  const { status } = problem;
  const path = problem.options.path ?? [];
  const requestId: string = ctx.state.requestId;
  const timestamp = new Date().toISOString();
  switch (family) {
    case 'connect': {
      const code = problem.options.code ?? problem.options.codeByFamily?.connect ?? DEFAULT_CODES.connect[status] ?? fallbackCode(status);
      const retryable = problem.options.retryable ?? (status >= 500 || status === 429 ? true : undefined);
      const error: Record<string, unknown> = { code, message: problem.message };
      if (retryable !== undefined) error.retryable = retryable;
      if (problem.options.path) error.path = path;
      if (problem.options.details) error.details = problem.options.details;
      return {
        status,
        body: {
          success: false,
          error,
          meta: { requestId, timestamp, workspaceId: ctx.state.auth?.workspaceId ?? null },
        },
      };
    }
    case 'unify_legacy': {
      const [code, itemCode] = LEGACY_CODES[status] ?? [fallbackCode(status), fallbackCode(status)];
      const items = problem.options.details?.length
        ? problem.options.details.map((d) => ({ code: d.code ?? itemCode, message: d.message, path: d.path ?? [] }))
        : [{ code: problem.options.codeByFamily?.unify_legacy ?? itemCode, message: problem.message, path }];
      return {
        status,
        body: {
          status: 'error',
          code: problem.options.code ?? problem.options.codeByFamily?.unify_legacy ?? code,
          message: problem.message,
          requestId,
          timestamp,
          data: null,
          errors: items,
        },
      };
    }
    case 'unify':
    case 'documents':
    case 'invoice_query':
    case 'system': {
      const code = problem.options.code ?? problem.options.codeByFamily?.[family] ?? DEFAULT_CODES[family][status] ?? fallbackCode(status);
      // The invoice query answers errors in the documents family's shape.
      const body: Record<string, unknown> =
        family === 'documents' || family === 'invoice_query' ? { success: false, code, message: problem.message } : { code, message: problem.message };
      if (problem.options.path) body.path = path;
      if (problem.options.details) body.errors = problem.options.details;
      if (family !== 'system') body.requestId = requestId;
      Object.assign(body, problem.options.extra ?? {});
      return { status, body };
    }
  }
}
