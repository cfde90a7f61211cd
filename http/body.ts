/**
 * Request input at the boundary every family request passes: the JSON body (parsed with
 * co-body under a size limit), the query string and the path. A body that is not JSON, is
 * malformed, too large or nested too deep, and any text PostgreSQL cannot store (a NUL
 * character or a lone UTF-16 surrogate) in the body, the query or the path, becomes a problem
 * rendered in the family's envelope with the offending path — before any handler, hash or
 * validator walks the input.
 */
import coBody from 'co-body';
import type { Context, Next } from 'koa';
import { HttpProblem, type ErrorPath } from './errors.js';

/** Deepest accepted nesting of arrays and objects in a JSON body (the top-level value is depth 1). */
export const MAX_JSON_DEPTH = 64;

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
}

/** Text PostgreSQL can store (text and json): no NUL character and no lone UTF-16 surrogate. */
export function isStorableText(s: string): boolean {
  return !s.includes('\u0000') && (s as string & { isWellFormed(): boolean }).isWellFormed();
}

export type InputFault = { kind: 'depth' | 'text'; path: (string | number)[] };

/**
 * The first fault in a decoded JSON value: nesting deeper than `maxDepth`, or a key or string
 * PostgreSQL cannot store. Walks with an explicit stack (no recursion), so any depth the JSON
 * parser accepted is safe to inspect.
 */
export function findInputFault(value: unknown, maxDepth = MAX_JSON_DEPTH): InputFault | null {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return { kind: 'text', path };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (path.length >= maxDepth) return { kind: 'depth', path };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] });
    } else {
      const entries = Object.entries(v as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        if (!isStorableText(key)) return { kind: 'text', path: [...path, key] };
        stack.push({ value: child, path: [...path, key] });
      }
    }
  }
  return null;
}

const TEXT_MESSAGE = 'contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored';

function printable(path: ErrorPath): string {
  return path.length === 0 ? 'the body' : path.map((p) => String(p).slice(0, 60)).join('.');
}

/** The query string and path segments, decoded, must be storable text. */
function checkQueryAndPath(ctx: Context): void {
  const segments = ctx.path.split('/');
  for (let i = 1; i < segments.length; i++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segments[i]!);
    } catch {
      continue; // not percent-decodable: the router matches it as it is (never a NUL or a surrogate)
    }
    if (!isStorableText(decoded)) throw new HttpProblem(400, `path segment ${i} ${TEXT_MESSAGE}`, { path: ['path', i], retryable: false });
  }
  if (ctx.querystring === '') return;
  for (const [name, value] of Object.entries(ctx.query)) {
    const values = Array.isArray(value) ? value : [value ?? ''];
    if (!isStorableText(name) || values.some((v) => !isStorableText(v))) {
      throw new HttpProblem(400, `query parameter ${JSON.stringify(name.slice(0, 40))} ${TEXT_MESSAGE}`, { path: ['query', name], retryable: false });
    }
  }
}

export function jsonBody(limitBytes: number, maxDepth = MAX_JSON_DEPTH) {
  return async (ctx: Context, next: Next) => {
    checkQueryAndPath(ctx);
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && hasBody(ctx)) {
      if (!ctx.is('application/json', '+json')) {
        throw new HttpProblem(415, 'the request body must be JSON (Content-Type: application/json)', { path: ['headers', 'content-type'] });
      }
      let body: unknown;
      try {
        body = await coBody.json(ctx, { limit: limitBytes, strict: true });
      } catch (err) {
        const e = err as { status?: number; type?: string; message?: string };
        if (e.status === 413 || e.type === 'entity.too.large') {
          throw new HttpProblem(413, `the request body is larger than ${limitBytes} bytes`, { path: [] });
        }
        throw new HttpProblem(400, 'the request body is not valid JSON', { path: [] });
      }
      const fault = findInputFault(body, maxDepth);
      if (fault?.kind === 'depth') {
        throw new HttpProblem(400, `the request body is nested deeper than ${maxDepth} levels (at ${printable(fault.path.slice(0, 8))}…)`, {
          path: fault.path,
          retryable: false,
        });
      }
      if (fault) throw new HttpProblem(400, `${printable(fault.path)} ${TEXT_MESSAGE}`, { path: fault.path, retryable: false });
      ctx.request.body = body;
    }
    await next();
  };
}

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
