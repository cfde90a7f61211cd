/**
 * JSON request bodies: parsed with co-body under a size limit. A body that is not JSON, is
 * malformed or too large becomes a problem rendered in the family's envelope.
 */
import coBody from 'co-body';
import type { Context, Next } from 'koa';
import { HttpProblem } from './errors.js';

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
}

export function jsonBody(limitBytes: number) {
  return async (ctx: Context, next: Next) => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && hasBody(ctx)) {
      if (!ctx.is('application/json', '+json')) {
        throw new HttpProblem(415, 'the request body must be JSON (Content-Type: application/json)', { path: ['headers', 'content-type'] });
      }
      try {
        ctx.request.body = await coBody.json(ctx, { limit: limitBytes, strict: true });
      } catch (err) {
        const e = err as { status?: number; type?: string; message?: string };
        if (e.status === 413 || e.type === 'entity.too.large') {
          throw new HttpProblem(413, `the request body is larger than ${limitBytes} bytes`, { path: [] });
        }
        throw new HttpProblem(400, 'the request body is not valid JSON', { path: [] });
      }
    }
    await next();
  };
}

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
