import { expect } from 'chai';
import fc from 'fast-check';
import { isRight } from 'fp-ts/lib/Either.js';
import { EventDecodingError, EventMetadataCodec, decodeMetadata, isEventMetadata } from '../../domain/events/envelope.js';

describe('event metadata decoding', () => {
  const keys = ['correlationId', 'causationId', 'occurredAt', 'workspaceId', 'environment', 'requestId', 'keyId', 'idempotencyKey', 'actor', 'other'];
  const value = fc.oneof(fc.string(), fc.constant(null), fc.integer(), fc.boolean(), fc.constant([]), fc.constant({}));
  const metadata = fc.oneof(
    // mostly well-formed, with some fields missing or of another type
    fc.record(Object.fromEntries(keys.map((k) => [k, fc.oneof({ weight: 4, arbitrary: fc.string() }, { weight: 1, arbitrary: value })])), { requiredKeys: [] }),
    fc.record(Object.fromEntries(keys.map((k) => [k, value]))),
    fc.anything(),
  );

  it('the fast check accepts exactly what the io-ts codec accepts', () => {
    fc.assert(
      fc.property(metadata, (raw) => {
        expect(isEventMetadata(raw)).to.equal(isRight(EventMetadataCodec.decode(raw)));
      }),
      { numRuns: 20_000 },
    );
  });

  it('decodes valid metadata as it is and names the problem of invalid metadata', () => {
    const valid = { correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z', workspaceId: 'ws', actor: null };
    expect(decodeMetadata(valid)).to.equal(valid);
    expect(() => decodeMetadata({ ...valid, causationId: undefined })).to.throw(EventDecodingError, /causationId/);
    expect(() => decodeMetadata({ ...valid, keyId: 7 })).to.throw(EventDecodingError, /keyId/);
    expect(() => decodeMetadata([valid])).to.throw(EventDecodingError);
  });
});
