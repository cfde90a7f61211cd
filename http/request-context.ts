/**
 * Per-request context: request id (X-Request-Id, echoed or generated), API family, timing,
 * and one structured log line per request.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { CommandContext } from '../commands/execute.js';
import type { Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import type { Family } from './errors.js';

export function familyOf(ctx: Context): Family {
  const path = ctx.path;
  if (path === '/v3/connect' || path.startsWith('/v3/connect/')) return 'connect';
  if (path === '/api/v3/unify' || path.startsWith('/api/v3/unify/')) {
    return ctx.get('new-api').toLowerCase() === 'true' || path.startsWith('/api/v3/unify/') ? 'unify' : 'unify_legacy';
  }
  if (path === '/api/v3/documents' || path.startsWith('/api/v3/documents/')) return 'documents';
  if (path === '/invoices/query' || path.startsWith('/invoices/query/')) return 'invoice_query';
  return 'system';
}

export function requestContext(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = /^[\w.:-]{1,128}$/.test(incoming) ? incoming : `req_${randomUUID()}`;
    ctx.state.family = familyOf(ctx);
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      logger.info({
        requestId: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        workspaceId: ctx.state.auth?.workspaceId ?? null,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      });
    }
  };
}

/** The metadata a command records for this request. */
export function commandContext(ctx: Context, clock: Clock): CommandContext {
  const correlation = ctx.get('x-correlation-id');
  return {
    now: clock.now(),
    workspaceId: ctx.state.auth?.workspaceId ?? null,
    environment: ctx.state.environment ?? ctx.state.auth?.environment ?? null,
    requestId: ctx.state.requestId,
    correlationId: correlation && correlation.length <= 200 ? correlation : ctx.state.requestId,
    keyId: ctx.state.auth?.keyId ?? null,
    idempotencyKey: ctx.get('idempotency-key') || null,
  };
}
