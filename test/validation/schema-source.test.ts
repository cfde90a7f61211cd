/**
 * One description of the core document (domain/validation/schema.ts) behind the preflight, the
 * requirements catalogue, the io-ts codec and the OpenAPI `CoreDocument` schema: they name the
 * same paths, and agree on documents.
 */
import { expect } from 'chai';
import { isRight } from 'fp-ts/lib/Either.js';
import { openApiDocument } from '../../http/openapi/index.js';
import { CoreDocumentCodec, coreDocumentJsonSchema, unknownFields } from '../../domain/validation/codec.js';
import { DOCUMENT_BASES, requirementsCatalogue, sampleDocument, supportedCountries, validateDocument } from '../../domain/validation/index.js';
import { schemaPaths } from '../../domain/validation/schema.js';

type Node = { properties?: Record<string, Node>; items?: Node; anyOf?: Node[] };

/** Every property path of a JSON Schema, `lineItems[].name` form. */
function jsonSchemaPaths(node: Node, prefix = ''): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    out.push(path, ...jsonSchemaPaths(child, path));
    if (child.items) out.push(...jsonSchemaPaths(child.items, `${path}[]`));
  }
  return out;
}

describe('the core document has one schema source', () => {
  const described = schemaPaths().map((p) => p.path);

  it('the JSON Schema (and the OpenAPI CoreDocument) names exactly the paths of the description', () => {
    expect(jsonSchemaPaths(coreDocumentJsonSchema() as Node)).to.have.members(described);
    const doc = openApiDocument() as { components: { schemas: Record<string, Node> } };
    expect(jsonSchemaPaths(doc.components.schemas['CoreDocument']!)).to.have.members(described);
  });

  it('every path of the requirements catalogue is a path of the description', () => {
    for (const country of supportedCountries) {
      for (const base of DOCUMENT_BASES) {
        const catalogue = requirementsCatalogue({ country, base, modifiers: [], variant: null });
        if (!catalogue.ok) continue;
        for (const field of catalogue.value.fields) {
          const shape = field.path.replace(/\[\d*\]/g, '[]');
          expect(described, `${country} ${base} ${field.path}`).to.include(shape);
        }
      }
    }
  });

  it('the codec, the preflight and the unknown-field walk agree on sample documents and on a mistyped one', () => {
    for (const country of supportedCountries) {
      const doc = sampleDocument(country, { lines: 3 });
      expect(isRight(CoreDocumentCodec.decode(doc)), country).to.equal(true);
      expect(unknownFields(doc), country).to.deep.equal([]);
      const report = validateDocument({ country, documentType: { base: 'tax_invoice', modifiers: [], variant: null }, document: doc, now: new Date('2026-02-01T00:00:00Z') });
      expect(report.errors.filter((e) => e.code === 'CORE-PRE-002'), country).to.deep.equal([]);
    }
    const bad = sampleDocument('AE', { lines: 1 }) as { lineItems: Record<string, unknown>[] };
    bad.lineItems[0]!.quantity = 'two';
    expect(isRight(CoreDocumentCodec.decode(bad))).to.equal(false);
    const report = validateDocument({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [], variant: null }, document: bad, now: new Date('2026-02-01T00:00:00Z') });
    expect(report.errors.map((e) => e.corePath)).to.include('lineItems[0].quantity');
  });
});
