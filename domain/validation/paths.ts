/**
 * Core paths. A path is written `parties.seller.taxIds[0].type` or, for every element of an
 * array, `lineItems[].taxAmount`; parsed it is a list of segments (names and indices), the
 * form validation findings carry (`['lineItems', 3, 'taxAmount']`).
 */

export type PathSegment = string | number;

/** The segment that stands for "every element" (`[]`) in a parsed path. */
export const EACH = -1;

/** What a lookup returns when a container on the way has the wrong type (preflight reports it). */
export const BROKEN: unique symbol = Symbol('broken');
export type Broken = typeof BROKEN;

const SEGMENT = /^[A-Za-z_$][\w$-]*$/;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Parses a written path; throws on a malformed one (paths are written by developers or templates). */
export function parsePath(path: string): PathSegment[] {
  if (path === '') return [];
  const out: PathSegment[] = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]+)((?:\[\d*\])*)$/.exec(part);
    if (!m || !SEGMENT.test(m[1]!) || FORBIDDEN.has(m[1]!)) throw new Error(`malformed path ${JSON.stringify(path)}`);
    out.push(m[1]!);
    const brackets = m[2]!;
    if (brackets) {
      for (const b of brackets.slice(1, -1).split('][')) out.push(b === '' ? EACH : Number(b));
    }
  }
  return out;
}

/** Writes segments as a path: `['lineItems', 3, 'taxAmount']` -> `lineItems[3].taxAmount`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let s = '';
  for (const seg of segments) {
    if (typeof seg === 'number') s += seg === EACH ? '[]' : `[${seg}]`;
    else s += s === '' ? seg : `.${seg}`;
  }
  return s;
}

/** The path with concrete indices replaced by `[]`: the shape path of the core schema. */
export function shapeOf(segments: readonly PathSegment[]): string {
  return formatPath(segments.map((s) => (typeof s === 'number' ? EACH : s)));
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The value at `segments[from..to)` under `root`. `undefined` when something on the way is
 * absent (undefined or null); `BROKEN` when a container on the way has the wrong type. An
 * `EACH` segment must not occur in the range (engines iterate arrays themselves).
 */
export function valueAt(root: unknown, segments: readonly PathSegment[], from = 0, to = segments.length): unknown {
  let cur = root;
  for (let i = from; i < to; i++) {
    if (cur === undefined || cur === null) return undefined;
    const seg = segments[i]!;
    if (typeof seg === 'string') {
      if (typeof cur !== 'object' || Array.isArray(cur)) return BROKEN;
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      if (!Array.isArray(cur)) return BROKEN;
      cur = cur[seg];
    }
  }
  return cur;
}

/** A present value: not undefined, not null, not a blank string, not an empty array. */
export function isPresent(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') return v.trim().length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

export function recordAt(obj: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
  if (obj === undefined) return undefined;
  const v = obj[key];
  return isRecord(v) ? v : undefined;
}
