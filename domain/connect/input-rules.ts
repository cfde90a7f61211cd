/**
 * Input checks shared by the Connect family's bodies and query strings (companies and
 * credits): every refusal is a CONNECT_VALIDATION_ERROR naming the path of the field.
 */
import { DomainError } from '../errors.js';
import { ConnectErrorCodes, isStorableText } from './values.js';

export type InputPath = readonly (string | number)[];

export function invalid(path: InputPath, message: string): never {
  throw new DomainError('validation', ConnectErrorCodes.validation, message, path.map(String));
}

/** A value shown back in a message: short, and without characters a log would mangle. */
export function printable(value: string): string {
  const clean = value.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireObject(value: unknown, path: InputPath, what: string): Record<string, unknown> {
  if (!isPlainObject(value)) invalid(path, `${what} must be a JSON object`);
  return value;
}

/** Refuses fields not in `allowed`; `systemManaged` ones get a message saying so. */
export function refuseUnknownFields(body: Record<string, unknown>, allowed: readonly string[], path: InputPath, systemManaged: readonly string[] = []): void {
  for (const key of Object.keys(body)) {
    if (allowed.includes(key)) continue;
    if (systemManaged.includes(key)) invalid([...path, key], `${key} is system-managed and must not be sent`);
    invalid([...path, key], `unknown field "${printable(key)}"`);
  }
}

/** Metadata: nested at most `maxDepth` levels, every key and string storable. */
export function checkMetadata(value: unknown, path: InputPath, maxDepth: number, depth = 1): void {
  if (depth > maxDepth) invalid(path, `metadata may nest at most ${maxDepth} levels`);
  if (typeof value === 'string') {
    if (!isStorableText(value)) invalid(path, 'metadata holds characters that are not allowed');
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkMetadata(v, [...path, i], maxDepth, depth + 1));
  } else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (!isStorableText(k)) invalid(path, 'metadata holds a key with characters that are not allowed');
      checkMetadata(v, [...path, k], maxDepth, depth + 1);
    }
  }
}

export type QueryValues = Record<string, string | string[] | undefined>;

/** A query parameter given at most once, in storable characters. */
export function single(query: QueryValues, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) invalid(['query', name], `${name} may be given once`);
  if (v !== undefined && !isStorableText(v)) invalid(['query', name], `${name} contains characters that are not allowed`);
  return v;
}

export function refuseUnknownParams(query: QueryValues, allowed: readonly string[]): void {
  for (const key of Object.keys(query)) {
    if (!allowed.includes(key)) invalid(['query', key], `unknown query parameter "${printable(key)}"`);
  }
}
