/**
 * Decodes request input with io-ts and turns failures into problems that name the exact path
 * of each offending field (array indices included), for the family envelopes.
 */
import * as t from 'io-ts';
import { isRight } from 'fp-ts/lib/Either.js';
import { describeCodec, unknownMembers } from '../domain/schema/json-schema.js';
import type { ProblemDetail } from './errors.js';

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value).slice(0, 40)}`;
}

export function errorPath(error: t.ValidationError): (string | number)[] {
  const path: (string | number)[] = [];
  const ctx = error.context;
  for (let i = 1; i < ctx.length; i++) {
    // A closed object (t.exact) validates through its inner type without a context entry of its own.
    let parent = ctx[i - 1]!.type as t.Any & { _tag?: string; type?: t.Any };
    while (parent._tag === 'ExactType' && parent.type) parent = parent.type as typeof parent;
    if (parent._tag === 'IntersectionType' || parent._tag === 'UnionType' || parent._tag === 'RefinementType' || parent._tag === 'ExactType') continue;
    const key = ctx[i]!.key;
    path.push(parent._tag === 'ArrayType' && /^\d+$/.test(key) ? Number(key) : key);
  }
  return path;
}

export type Decoded<A> = { ok: true; value: A } | { ok: false; problems: ProblemDetail[] };

export function decode<A>(codec: t.Decoder<unknown, A>, value: unknown): Decoded<A> {
  const result = codec.decode(value);
  if (isRight(result)) {
    // A closed object (t.exact / t.strict) refuses the members it does not name.
    const unknown = unknownMembers(codec as unknown as t.Mixed, value);
    if (unknown.length === 0) return { ok: true, value: result.right };
    return { ok: false, problems: unknown.map((path) => ({ message: `${path.join('.')}: unknown field "${String(path[path.length - 1]).slice(0, 40)}"`, path })) };
  }
  const seen = new Set<string>();
  const problems: ProblemDetail[] = [];
  for (const error of result.left) {
    const path = errorPath(error);
    const key = path.join('\u0000');
    if (seen.has(key)) continue; // a union reports each member's failure at the same path
    seen.add(key);
    const expected = error.message ?? `expected ${error.context[error.context.length - 1]?.type.name ?? 'a valid value'}`;
    problems.push({ message: `${path.join('.') || 'body'}: ${expected}, got ${describe(error.value)}`, path });
  }
  return { ok: false, problems };
}

/** A string from a fixed list, with a message that lists the accepted values. */
export function oneOf<V extends string>(values: readonly V[], name: string): t.Type<V, V, unknown> {
  return describeCodec(new t.Type<V, V, unknown>(
    name,
    (u): u is V => typeof u === 'string' && (values as readonly string[]).includes(u),
    (u, c) =>
      typeof u === 'string' && (values as readonly string[]).includes(u)
        ? t.success(u as V)
        : t.failure(u, c, `expected one of ${values.join(', ')}`),
    t.identity,
  ), { type: 'string', enum: [...values] });
}

export const NonEmptyString = new t.Type<string, string, unknown>(
  'NonEmptyString',
  (u): u is string => typeof u === 'string' && u.trim() !== '',
  (u, c) => (typeof u === 'string' && u.trim() !== '' ? t.success(u) : t.failure(u, c, 'expected a non-empty string')),
  t.identity,
);
describeCodec(NonEmptyString, { type: 'string', minLength: 1 });

/** A plain JSON object (not an array, not null). */
export const JsonObject = new t.Type<Record<string, unknown>, Record<string, unknown>, unknown>(
  'object',
  (u): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u),
  (u, c) => (typeof u === 'object' && u !== null && !Array.isArray(u) ? t.success(u as Record<string, unknown>) : t.failure(u, c, 'expected an object')),
  t.identity,
);
describeCodec(JsonObject, { type: 'object' });

/** A JSON object with at least one field. */
export const NonEmptyObject = new t.Type<Record<string, unknown>, Record<string, unknown>, unknown>(
  'non-empty object',
  (u): u is Record<string, unknown> => JsonObject.is(u) && Object.keys(u).length > 0,
  (u, c) => (JsonObject.is(u) && Object.keys(u).length > 0 ? t.success(u) : t.failure(u, c, 'expected a non-empty object')),
  t.identity,
);
describeCodec(NonEmptyObject, { type: 'object', minProperties: 1 });
