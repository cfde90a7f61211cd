/**
 * The purchase list's query (docs/api/unify.md, docs/api/http.md): decoding `type`, `from`, `to`, `limit` and
 * `cursor` into a query or the precise problem, and the opaque cursor itself. Pure (the cursor's
 * HMAC key is passed in).
 *
 * Status per problem (section 7 lists some cases under both 400 and 422; these are the choices,
 * also listed in docs/api/purchases.md):
 * - `type` missing or not `sales`/`purchases` → 422 (as the document read answers);
 *   `type=sales` → 400 NOT_SUPPORTED; `type` given more than once → 400 VALIDATION_ERROR;
 * - `from` missing → 400 VALIDATION_ERROR (the purchase list's own row names it first);
 * - a date that is not a real `YYYY-MM-DD` day, `from` after `to` → 400 VALIDATION_ERROR;
 * - `limit` above 100 → 422; `limit` 0, negative, fractional or not a number → 400 VALIDATION_ERROR;
 * - a cursor that is malformed, edited, or issued for another range, limit, workspace or
 *   environment → 400 VALIDATION_ERROR;
 * - an unknown query parameter → 400 VALIDATION_ERROR.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const PURCHASE_LIST_MAX_LIMIT = 100;
export const PURCHASE_LIST_DEFAULT_LIMIT = 100;
const KNOWN_PARAMS = new Set(['type', 'from', 'to', 'limit', 'cursor']);

export interface PurchaseListProblem {
  status: 400 | 422;
  code: 'VALIDATION_ERROR' | 'NOT_SUPPORTED';
  message: string;
  path: string[];
}

/** A position in the list: the last item of the previous page. */
export interface PurchaseListPosition {
  /** storedAt in microseconds since the epoch (the read model keeps microseconds). */
  storedAtMicros: bigint;
  documentId: string;
}

export interface PurchaseListQuery {
  from: string;
  to: string;
  limit: number;
  after: PurchaseListPosition | null;
  /** Inclusive start and exclusive end of the range, ISO timestamps (UTC day boundaries). */
  startsAt: string;
  endsBefore: string;
}

export interface CursorBinding {
  workspaceId: string;
  environment: string;
  key: string;
}

const DAY_MS = 86_400_000;

/** A real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const b64url = (s: Buffer | string) => Buffer.from(s).toString('base64url');

function mac(binding: CursorBinding, payload: string): Buffer {
  return createHmac('sha256', binding.key).update(`purchases-cursor\n${binding.workspaceId}\n${binding.environment}\n${payload}`).digest();
}

/** The opaque cursor of the page after `position`, bound to the range, limit, workspace and environment. */
export function encodePurchaseCursor(binding: CursorBinding, query: { from: string; to: string; limit: number }, position: PurchaseListPosition): string {
  const payload = b64url(JSON.stringify({ v: 1, f: query.from, t: query.to, l: query.limit, s: position.storedAtMicros.toString(), d: position.documentId }));
  return `${payload}.${b64url(mac(binding, payload))}`;
}

type Decoded<T> = { ok: true; value: T } | { ok: false; message: string };

export function decodePurchaseCursor(binding: CursorBinding, cursor: string, query: { from: string; to: string; limit: number }): Decoded<PurchaseListPosition> {
  const bad = (message: string): Decoded<PurchaseListPosition> => ({ ok: false, message });
  const m = /^([A-Za-z0-9_-]{1,1024})\.([A-Za-z0-9_-]{43})$/.exec(cursor);
  if (!m) return bad('cursor is not a cursor this list issued');
  const [, payload, signature] = m as unknown as [string, string, string];
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(binding, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected) || b64url(given) !== signature) {
    return bad('cursor is not valid for this workspace and environment (altered, or issued elsewhere)');
  }
  let p: { v?: unknown; f?: unknown; t?: unknown; l?: unknown; s?: unknown; d?: unknown };
  try {
    p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return bad('cursor is not a cursor this list issued');
  }
  if (p.v !== 1 || typeof p.s !== 'string' || !/^\d{1,20}$/.test(p.s) || typeof p.d !== 'string') return bad('cursor is not a cursor this list issued');
  if (p.f !== query.from || p.t !== query.to) return bad(`cursor was issued for the range ${String(p.f)}..${String(p.t)}; keep the range of the first request`);
  if (p.l !== query.limit) return bad(`cursor was issued for limit ${String(p.l)}; keep the limit of the first request`);
  return { ok: true, value: { storedAtMicros: BigInt(p.s), documentId: p.d } };
}

/** Decodes the list's query string; `query` as Koa gives it (repeated parameters are arrays). */
export function decodePurchaseListQuery(
  query: Record<string, string | string[] | undefined>,
  binding: CursorBinding,
): { ok: true; value: PurchaseListQuery } | { ok: false; problem: PurchaseListProblem } {
  const fail = (status: 400 | 422, message: string, path: string[], code: PurchaseListProblem['code'] = 'VALIDATION_ERROR') =>
    ({ ok: false as const, problem: { status, code, message, path } });
  const single = (name: string): string | undefined | null => {
    const v = query[name];
    return Array.isArray(v) ? null : v;
  };

  const type = single('type');
  if (type === null) return fail(400, 'query parameter type must be given once', ['query', 'type']);
  if (type === undefined || type === '') return fail(422, 'query parameter type is required and must be "purchases"', ['query', 'type']);
  if (type === 'sales') return fail(400, 'listing sales documents is not supported; read one with GET /api/v3/documents/{documentId}?type=sales', ['query', 'type'], 'NOT_SUPPORTED');
  if (type !== 'purchases') return fail(422, `query parameter type must be "purchases", got ${JSON.stringify(type).slice(0, 60)}`, ['query', 'type']);

  for (const name of Object.keys(query)) {
    if (!KNOWN_PARAMS.has(name)) return fail(400, `unknown query parameter ${JSON.stringify(name).slice(0, 60)}; accepted: type, from, to, limit, cursor`, ['query', name]);
    if (Array.isArray(query[name])) return fail(400, `query parameter ${name} must be given once`, ['query', name]);
  }

  const from = single('from');
  if (from === undefined || from === null || from === '') return fail(400, 'query parameter from is required (YYYY-MM-DD)', ['query', 'from']);
  if (!isCalendarDate(from)) return fail(400, `from must be a date YYYY-MM-DD, got ${JSON.stringify(from).slice(0, 40)}`, ['query', 'from']);
  const toRaw = single('to');
  const to = toRaw === undefined || toRaw === '' ? from : toRaw!;
  if (!isCalendarDate(to)) return fail(400, `to must be a date YYYY-MM-DD, got ${JSON.stringify(to).slice(0, 40)}`, ['query', 'to']);
  if (from > to) return fail(400, `from (${from}) is after to (${to})`, ['query', 'from']);

  let limit = PURCHASE_LIST_DEFAULT_LIMIT;
  const limitRaw = single('limit');
  if (limitRaw !== undefined) {
    if (!/^[0-9]{1,9}$/.test(limitRaw ?? '')) return fail(400, `limit must be a whole number from 1 to ${PURCHASE_LIST_MAX_LIMIT}, got ${JSON.stringify(limitRaw).slice(0, 40)}`, ['query', 'limit']);
    limit = Number(limitRaw);
    if (limit > PURCHASE_LIST_MAX_LIMIT) return fail(422, `limit must be at most ${PURCHASE_LIST_MAX_LIMIT}, got ${limit}`, ['query', 'limit']);
    if (limit < 1) return fail(400, `limit must be at least 1, got ${limit}`, ['query', 'limit']);
  }

  let after: PurchaseListPosition | null = null;
  const cursor = single('cursor');
  if (cursor !== undefined) {
    const decoded = decodePurchaseCursor(binding, cursor ?? '', { from, to, limit });
    if (!decoded.ok) return fail(400, decoded.message, ['query', 'cursor']);
    after = decoded.value;
  }
  const startsAt = `${from}T00:00:00.000Z`;
  const endsBefore = new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS).toISOString();
  return { ok: true, value: { from, to, limit, after, startsAt, endsBefore } };
}

/** Microseconds since the epoch as an ISO timestamp with 6 decimals (PostgreSQL keeps microseconds). */
export function microsToIso(micros: bigint): string {
  const ms = micros / 1000n;
  const rest = Number(micros - ms * 1000n);
  const iso = new Date(Number(ms)).toISOString(); // ...SS.mmmZ
  return `${iso.slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
}

/** The storedAt shown to clients: millisecond precision, as every other timestamp of the API. */
export function microsToDisplay(micros: bigint): string {
  return new Date(Number(micros / 1000n)).toISOString();
}
