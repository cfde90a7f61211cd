/**
 * Idempotency fingerprints hash the canonical JSON of the request. The RFC 8785 library gives the
 * same text as the hand-written canonical form stored fingerprints were made with, for every
 * value a JSON body or a query string can hold: a retry across the upgrade still matches its record.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson } from '../../domain/canonical-json.js';

/** The canonical form before RFC 8785 (object keys sorted, JSON.stringify for the rest). */
function legacyCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(legacyCanonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${legacyCanonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('canonical JSON of idempotency fingerprints (RFC 8785)', () => {
  it('equals the earlier canonical form for any JSON value (stored fingerprints still match)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4, stringUnit: 'grapheme' }), (value) => {
        // What a parsed body holds: the value after a JSON round trip (no -0, no undefined).
        const parsed = JSON.parse(JSON.stringify(value)) as unknown;
        expect(canonicalJson(parsed)).to.equal(legacyCanonical(parsed));
      }),
      { numRuns: 2000 },
    );
  });

  it('equals it for a request like the idempotency middleware hashes', () => {
    const request = {
      method: 'POST',
      path: '/v3/connect/companies',
      query: Object.assign(Object.create(null), { b: ['2', '1'], a: 'x' }),
      body: { zeta: 1.5e-7, alpha: [true, null, { 'é': 'ü', '\u0000': 'ctl', '😀': 10 ** 21 }], n: -0.1 },
      environment: '',
    };
    expect(canonicalJson(request)).to.equal(legacyCanonical(request));
    expect(canonicalJson(request)).to.equal(
      '{"body":{"alpha":[true,null,{"\\u0000":"ctl","é":"ü","😀":1e+21}],"n":-0.1,"zeta":1.5e-7},"environment":"","method":"POST","path":"/v3/connect/companies","query":{"a":"x","b":["2","1"]}}',
    );
  });

  it('fingerprints a string with a lone surrogate instead of failing', () => {
    expect(canonicalJson({ a: 'x\ud800y' })).to.equal('{"a":"x\ufffdy"}');
  });
});
