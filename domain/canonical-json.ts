/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme) over the `canonicalize` library: the
 * same value always gives the same text (object keys sorted by UTF-16 code units, numbers and
 * strings as ECMAScript serializes them), so it can be hashed as a fingerprint.
 *
 * RFC 8785 admits only well-formed Unicode text; a string holding a lone surrogate (which JSON
 * escapes allow) has it replaced by U+FFFD first, so such a value is fingerprinted instead of failing.
 */
import canonicalize from 'canonicalize';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(LONE_SURROGATE, '\ufffd');
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON !== 'function') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[wellFormed(k) as string] = wellFormed(v);
    return out;
  }
  return value;
}

export function canonicalJson(value: unknown): string {
  try {
    return canonicalize(value) ?? 'null';
  } catch (err) {
    if (err instanceof Error && /surrogate/i.test(err.message)) return canonicalize(wellFormed(value)) ?? 'null';
    throw err;
  }
}
