/**
 * JSON answers with long base64 members. `JSON.stringify` scans every character of a string for
 * what needs escaping; on this service's Node the scan of a submission answer's `Base64XML` (about
 * 35 KB for a 20-line invoice) cost more than all the rest of the answer. A base64 text never needs
 * escaping, so an answer's member made with `base64Json` is spliced into the serialised answer as
 * it is. Anywhere else (an idempotency record, a log) it serialises as the plain string.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

/** Set while `stringifyAnswer` runs (JSON.stringify is synchronous): where the texts go. */
let spliced: string[] | null = null;
/** Stands for a spliced text in the serialised answer: a NUL (always escaped by JSON) and a process-unique tag. */
const MARK = `\u0000base64-${randomUUID()}`;
const MARK_JSON = JSON.stringify(MARK);

/**
 * A text of the base64 alphabet (as `Buffer#toString('base64')` makes it): JSON carries it without
 * escapes. Made from bytes, it is encoded only when the answer is serialised: the base64 text
 * (some 35 KB for a submission's XML) is then a short-lived string, not one the scavenger copies
 * and promotes while the request waits for its append.
 */
export class Base64Json {
  constructor(private readonly content: string | Buffer | null) {}
  get text(): string {
    const c = this.content;
    return c === null ? '' : typeof c === 'string' ? c : c.toString('base64');
  }
  toJSON(): string {
    if (spliced === null) return this.text;
    spliced.push(this.text);
    return MARK;
  }
}

/** A base64 member: its text, or the bytes to encode (null: the empty text). */
export const base64Json = (content: string | Buffer | null): Base64Json => new Base64Json(content);

/** `JSON.stringify(body)`, with each `Base64Json` member's text spliced in unscanned. */
export function stringifyAnswer(body: unknown): string {
  const texts: string[] = [];
  spliced = texts;
  let json: string;
  try {
    json = JSON.stringify(body);
  } finally {
    spliced = null;
  }
  if (texts.length === 0) return json;
  const parts = json.split(MARK_JSON);
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i++) out += `"${texts[i - 1]}"${parts[i]}`;
  return out;
}

/**
 * Koa middleware: serialises a plain object or array body itself (as Koa would, but with
 * `stringifyAnswer`), keeping the JSON content type Koa set for it.
 */
export async function jsonAnswers(ctx: Context, next: Next): Promise<void> {
  await next();
  const body: unknown = ctx.body;
  if (body === null || typeof body !== 'object') return;
  if (!Array.isArray(body) && Object.getPrototypeOf(body) !== Object.prototype) return;
  if (ctx.response.type !== 'application/json') return;
  ctx.body = stringifyAnswer(body);
}
