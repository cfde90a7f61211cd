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


/**
 * Text PostgreSQL can store (text and json): no NUL character and no lone UTF-16 surrogate (the
 * rule of domain/connect/values.ts `isStorableText`, here with the engine's native checks, as it
 * runs over every string of every body).
 */
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
  // Each entry knows its parent, so a path is built only for the fault (no array per value).
  type Entry = { value: unknown; key: string | number | null; parent: Entry | null; depth: number };
  const pathOf = (e: Entry | null, last?: string): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let at = e; at && at.key !== null; at = at.parent) path.push(at.key);
    return path.reverse();
  };
  const stack: Entry[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const v = entry.value;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return { kind: 'text', path: pathOf(entry) };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (entry.depth >= maxDepth) return { kind: 'depth', path: pathOf(entry) };
    const depth = entry.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: entry, depth });
    } else {
      const keys = Object.keys(v as Record<string, unknown>);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        if (!isStorableText(key)) return { kind: 'text', path: pathOf(entry, key) };
        stack.push({ value: (v as Record<string, unknown>)[key], key, parent: entry, depth });
      }
    }
  }
  return null;
}

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`: one pass over the characters
 * (strings skipped), no allocation — cheaper than walking the parsed value.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 || c === 123) {
      if (++depth > maxDepth) return true;
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return false;
}

/**
 * JSON text can only decode to a NUL or a lone surrogate through an escape (raw control
 * characters are invalid JSON, and invalid UTF-8 decodes to U+FFFD): without `\u0000` or a
 * `\uD800`–`\uDFFF` escape, no string of the body needs checking.
 */
const SUSPICIOUS_ESCAPE = /\\u(0000|[dD][89a-fA-F])/;

const TEXT_MESSAGE = 'contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored';

function printable(path: ErrorPath): string {
  // `filters[0].value[0]`: array indexes in brackets, as the families' own messages name entries.
  if (path.length === 0) return 'the body';
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${String(p).slice(0, 60)}` : String(p).slice(0, 60)), '');
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

/**
 * The request's JSON body, parsed and checked. A function of its own, so the raw text (a
 * submission's 7-8 KB) is not a local of the middleware that awaits the rest of the request:
 * the suspended middleware would hold it until the answer, long enough for the scavenger to
 * copy it twice and promote it to the old generation.
 */
async function parsedJsonBody(ctx: Context, limitBytes: number, maxDepth: number): Promise<unknown> {
  let body: unknown;
  let raw: string;
  try {
    // A `__proto__` member is valid JSON: it is dropped at parse (never set on the object's prototype), not refused as invalid.
    ({ parsed: body, raw } = (await coBody.json(ctx, { limit: limitBytes, strict: true, returnRawBody: true, onProtoPoisoning: 'remove' } as coBody.Options)) as { parsed: unknown; raw: string });
  } catch (err) {
    const e = err as { status?: number; type?: string; message?: string };
    if (e.status === 413 || e.type === 'entity.too.large') {
      throw new HttpProblem(413, `the request body is larger than ${limitBytes} bytes`, { path: [] });
    }
    throw new HttpProblem(400, 'the request body is not valid JSON', { path: [] });
  }
  // The walk that finds the path runs only when the text shows a possible fault.
  const fault = nestsDeeperThan(raw, maxDepth) || SUSPICIOUS_ESCAPE.test(raw) ? findInputFault(body, maxDepth) : null;
  if (fault?.kind === 'depth') {
    throw new HttpProblem(400, `the request body is nested deeper than ${maxDepth} levels (at ${printable(fault.path.slice(0, 8))}…)`, {
      path: fault.path,
      retryable: false,
    });
  }
  if (fault) throw new HttpProblem(400, `${printable(fault.path)} ${TEXT_MESSAGE}`, { path: fault.path, retryable: false });
  return body;
}

export function jsonBody(limitBytes: number, maxDepth = MAX_JSON_DEPTH) {
  return async (ctx: Context, next: Next) => {
    checkQueryAndPath(ctx);
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && hasBody(ctx)) {
      if (!ctx.is('application/json', '+json')) {
        throw new HttpProblem(415, 'the request body must be JSON (Content-Type: application/json)', { path: ['headers', 'content-type'] });
      }
      ctx.request.body = await parsedJsonBody(ctx, limitBytes, maxDepth);
    }
    await next();
  };
}

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
