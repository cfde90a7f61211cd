import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { base64Json, stringifyAnswer } from '../../http/json-answer.js';

describe('JSON answers with base64 members spliced in unscanned (http/json-answer.ts)', () => {
  const xml = randomBytes(30_000).toString('base64');
  const other = randomBytes(10).toString('base64');

  it('serialises exactly as JSON.stringify of the plain strings', () => {
    const tricky = 'quote " backslash \\ nul \u0000 line\nbreak, and "\\u0000" written out, é and 😀';
    const answer = { a: tricky, Base64XML: base64Json(xml), list: [base64Json(other), { x: base64Json(''), y: null, n: 1.5, u: undefined }], b: [tricky] };
    const plain = { a: tricky, Base64XML: xml, list: [other, { x: '', y: null, n: 1.5, u: undefined }], b: [tricky] };
    const json = stringifyAnswer(answer);
    expect(json).to.equal(JSON.stringify(plain));
    expect(JSON.parse(json)).to.deep.equal(JSON.parse(JSON.stringify(plain)));
  });

  it('leaves a member serialised elsewhere (an idempotency record, a log) the plain string', () => {
    expect(JSON.stringify({ Base64XML: base64Json(other) })).to.equal(JSON.stringify({ Base64XML: other }));
    stringifyAnswer({ Base64XML: base64Json(other) });
    expect(JSON.stringify([base64Json(other)])).to.equal(JSON.stringify([other]));
  });

  it('encodes a member made from bytes when the answer is serialised, and null as the empty text', () => {
    const bytes = randomBytes(30_000);
    const answer = { Base64XML: base64Json(bytes), none: base64Json(null), n: 1 };
    const plain = { Base64XML: bytes.toString('base64'), none: '', n: 1 };
    expect(stringifyAnswer(answer)).to.equal(JSON.stringify(plain));
    expect(JSON.stringify(answer)).to.equal(JSON.stringify(plain));
    expect(Buffer.from(JSON.parse(stringifyAnswer(answer)).Base64XML, 'base64').equals(bytes)).to.equal(true);
  });

  it('answers an answer without base64 members as JSON.stringify does, and still after a failed one', () => {
    const cyclic: Record<string, unknown> = { Base64XML: base64Json(other) };
    cyclic.self = cyclic;
    expect(() => stringifyAnswer(cyclic)).to.throw(TypeError);
    expect(JSON.stringify({ x: base64Json(other) })).to.equal(`{"x":"${other}"}`);
    expect(stringifyAnswer({ a: [1, 'two', { three: true }] })).to.equal('{"a":[1,"two",{"three":true}]}');
  });
});
