/** How the PostgreSQL event store keeps an artifact's bytes (platform/eventstore/artifact-encoding.ts). */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { packArtifact, unpackArtifact } from '../../platform/eventstore/artifact-encoding.js';

describe('artifact encoding of the PostgreSQL event store', () => {
  const xml = Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><Invoice>${Array.from({ length: 200 }, (_, i) => `<cac:InvoiceLine><cbc:ID>${i + 1}</cbc:ID><cbc:InvoicedQuantity unitCode="H87">2</cbc:InvoicedQuantity><cbc:Name>Item ✓ ${i}</cbc:Name></cac:InvoiceLine>`).join('')}</Invoice>`,
  );

  it('compresses an XML with Brotli and gives back the same bytes', () => {
    const packed = packArtifact(xml);
    expect(packed.encoding).to.equal('br');
    expect(packed.stored.length).to.be.below(xml.length / 5);
    expect(Buffer.compare(unpackArtifact(packed.stored, packed.encoding), xml)).to.equal(0);
  });

  it('keeps bytes that Brotli does not make smaller as they are', () => {
    const noise = randomBytes(4096);
    const packed = packArtifact(noise);
    expect(packed.encoding).to.equal('identity');
    expect(packed.stored).to.equal(noise);
    expect(unpackArtifact(packed.stored, 'identity')).to.equal(noise);
  });

  it('refuses an unknown encoding and a corrupt stream', () => {
    expect(() => unpackArtifact(xml, 'gzip')).to.throw(RangeError, /unknown artifact encoding: gzip/);
    expect(() => unpackArtifact(Buffer.from('not brotli at all'), 'br')).to.throw(Error);
  });
});
