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
      const nul = pathOfNul(ctx.request.body, []);
      if (nul) throw new HttpProblem(400, 'text in the request body must not contain the NUL character (U+0000)', { path: nul, retryable: false });
    }
    await next();
  };
}

/**
 * Where a NUL character (U+0000) sits in a parsed body, or null. PostgreSQL cannot store it as
 * text, so such a body is refused at the boundary rather than failing when recorded.
 */
function pathOfNul(value: unknown, at: (string | number)[]): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? at : null;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = pathOfNul(v, [...at, i]);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return [...at, k.replace(/\u0000/g, '')];
      const found = pathOfNul(v, [...at, k]);
      if (found) return found;
    }
  }
  return null;
}

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
