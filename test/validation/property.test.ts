/**
 * Property tests: whatever JSON the generators produce, validation never throws, the report's
 * counters are consistent, and the result is either success or at least one error.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  applyTemplate,
  countryDocumentTypes,
  DOCUMENT_BASES,
  DOCUMENT_MODIFIERS,
  DOCUMENT_VARIANTS,
  identityTemplate,
  requirementsCatalogue,
  resolveLogicalDocumentType,
  sampleDocument,
  supportedCountries,
  validateDocument,
  type ValidationReport,
} from '../../domain/validation/index.js';
import { schemaPaths } from '../../domain/validation/schema.js';
import { assertConsistent, NOW, set, unset } from './helpers.js';

const country = fc.oneof(fc.constantFrom(...supportedCountries), fc.constantFrom('SG', 'FR', '', 'ae'), fc.anything());
const anyDocumentType = fc.oneof(
  fc.record(
    {
      base: fc.oneof(fc.constantFrom(...DOCUMENT_BASES), fc.string()),
      modifiers: fc.oneof(fc.array(fc.constantFrom(...DOCUMENT_MODIFIERS), { maxLength: 4 }), fc.array(fc.jsonValue(), { maxLength: 3 }), fc.jsonValue()),
      variant: fc.option(fc.oneof(fc.constantFrom(...DOCUMENT_VARIANTS), fc.jsonValue())),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);

/** A valid document type of a supported country, and a valid sample for it. */
const validCase = fc.constantFrom(...supportedCountries).chain((c) => {
  const accepted = countryDocumentTypes[c];
  return fc.record({
    country: fc.constant(c),
    base: fc.constantFrom(...accepted.bases),
    // UAE: out_of_scope (480/81) excludes summary, deemed supply and margin scheme (PINT AE ibr-157-ae, AE-HEAD-021).
    modifiers: fc.uniqueArray(fc.constantFrom(...accepted.modifiers), { maxLength: 4 }).filter((m) => c !== 'AE' || !m.includes('out_of_scope') || !m.some((x) => x === 'summary' || x === 'deemed_supply' || x === 'margin_scheme')),
    variant: fc.option(fc.constantFrom(...accepted.variants), { nil: undefined }),
  });
});

const concretePaths = schemaPaths().map(({ path }) => path);
const mutation = fc.record({
  path: fc.constantFrom(...concretePaths),
  index: fc.nat({ max: 3 }),
  value: fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.constantFrom('', ' ', 'AE', 'AED', 'USD', '2026-02-30', 'DXB', 0, -1, 1e308)),
});

function check(report: ValidationReport): void {
  assertConsistent(report);
  expect(report.success || report.errors.length >= 1).to.equal(true);
  expect(report.success).to.equal(report.errors.length === 0);
}

describe('property: any JSON validates without throwing', function () {
  this.timeout(120_000);

  it('arbitrary JSON documents, countries and document types', () => {
    fc.assert(
      fc.property(country, anyDocumentType, fc.jsonValue(), (c, type, document) => {
        check(validateDocument({ country: c as string, documentType: type as never, document, now: NOW }));
      }),
      { numRuns: 2000 },
    );
  });

  it('arbitrary objects shaped like the payload sections', () => {
    const section = fc.oneof(fc.jsonValue(), fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { maxKeys: 6 }));
    const doc = fc.record(
      { header: section, parties: section, lineItems: fc.oneof(fc.array(section, { maxLength: 5 }), section), payment: section, taxTotals: section, totals: section, extensions: section },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(validCase, doc, (v, document) => {
        check(validateDocument({ country: v.country, documentType: v, document, now: NOW }));
      }),
      { numRuns: 1500 },
    );
  });

  it('valid samples with random values written or removed anywhere (through the identity template)', () => {
    fc.assert(
      fc.property(validCase, fc.array(mutation, { minLength: 1, maxLength: 6 }), (v, mutations) => {
        const payload = sampleDocument(v.country, { lines: 3, documentType: v });
        for (const m of mutations) {
          const path = m.path.replace(/\[\]/g, `[${m.index}]`);
          if (m.value === undefined) unset(payload, path);
          else set(payload, path, m.value);
        }
        const before = JSON.stringify(payload);
        const { document, pathMap, problems } = applyTemplate(identityTemplate, payload);
        const report = validateDocument({ country: v.country, documentType: v, document, now: NOW, pathMap, mappingProblems: problems });
        check(report);
        for (const e of report.errors) expect(e.payloadPath).to.equal(e.corePath);
        expect(JSON.stringify(payload), 'the payload is not modified').to.equal(before);
        // Deterministic, apart from the measured duration.
        const again = validateDocument({ country: v.country, documentType: v, document, now: NOW, pathMap, mappingProblems: problems });
        expect({ ...again, metadata: { ...again.metadata, durationMs: 0 } }).to.deep.equal({ ...report, metadata: { ...report.metadata, durationMs: 0 } });
      }),
      { numRuns: 1500 },
    );
  });

  it('the unmutated samples are valid for every generated document type', () => {
    // ZATCA forbids a simplified self-billed document (BR-KSA-31): refused, whatever the payload.
    const forbidden = (v: { country: string; modifiers?: readonly string[]; variant?: string | null }) =>
      v.country === 'SA' && v.variant === 'simplified' && (v.modifiers ?? []).includes('self_billed');
    fc.assert(
      fc.property(validCase, (v) => {
        if (forbidden(v)) {
          const report = validateDocument({ country: v.country, documentType: v, document: sampleDocument(v.country, { lines: 2, documentType: v }), now: NOW });
          expect(report.errors.map((e) => e.code)).to.deep.equal(['SA-HEAD-026']);
          return;
        }
        const report = validateDocument({ country: v.country, documentType: v, document: sampleDocument(v.country, { lines: 2, documentType: v }), now: NOW });
        check(report);
        expect(report.errors).to.deep.equal([]);
      }),
      { numRuns: 300 },
    );
  });

  it('the resolver and the catalogue never throw either', () => {
    fc.assert(
      fc.property(country, fc.oneof(anyDocumentType, fc.string()), (c, type) => {
        const r = resolveLogicalDocumentType(c, type);
        expect(r.ok === true || r.error instanceof Error).to.equal(true);
        const q = (typeof type === 'object' && type !== null ? type : { base: type }) as never;
        const cat = requirementsCatalogue({ ...(q as object), country: c } as never);
        expect(typeof cat.ok).to.equal('boolean');
      }),
      { numRuns: 1000 },
    );
  });
});
