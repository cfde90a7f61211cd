/**
 * The conformance corpus (test/conformance/corpus.ts): the service's verdict on every case, and
 * the XML of every accepted case against the OASIS UBL 2.1 schema. The official Schematron
 * artefacts are not part of the project; test/conformance/check-official.sh runs them.
 */
import { expect } from 'chai';
import { mainSchema, validateAgainst } from '../artifacts/xsd.js';
import { conformanceCorpus, type CorpusCountry } from './corpus.js';
import { corpusVerdict, corpusXml } from './run-case.js';

const corpus = conformanceCorpus();
const COUNTRIES: CorpusCountry[] = ['AE', 'SA', 'MY', 'BE', 'DE'];

describe('conformance corpus: verdicts', function () {
  for (const country of COUNTRIES) {
    describe(country, function () {
      for (const c of corpus.filter((x) => x.country === country)) {
        const want = c.expect.verdict === 'accepted' ? 'accepted' : `refused with ${c.expect.code}${c.expect.official ? ` [${c.expect.official}]` : ''}`;
        it(`${c.name}: ${want}`, function () {
          const v = corpusVerdict(c);
          expect(v.matches, v.summary).to.equal(true);
          if (c.expect.verdict === 'refused' && c.expect.official) {
            const finding = v.report.errors.find((e) => e.code === (c.expect as { code: string }).code)!;
            expect(finding.officialRule).to.equal(c.expect.official);
            expect(finding.message).to.contain(c.expect.official);
          }
        });
      }
    });
  }

  it('covers every document base of every country, and credit notes of each UAE reason kind', function () {
    for (const country of COUNTRIES) {
      const bases = new Set(corpus.filter((c) => c.country === country && c.expect.verdict === 'accepted').map((c) => c.documentType.base));
      expect([...bases].sort(), country).to.deep.equal(['credit_note', 'debit_note', 'tax_invoice']);
    }
  });
});

describe('conformance corpus: XML of accepted cases against UBL 2.1', function () {
  this.timeout(300_000); // xmllint-wasm compiles the UBL schemas on each run
  it('every accepted case writes a schema-valid Invoice or CreditNote', async function () {
    const accepted = corpus.filter((c) => c.expect.verdict === 'accepted');
    const byRoot: Record<'Invoice' | 'CreditNote', Array<{ name: string; xml: string }>> = { Invoice: [], CreditNote: [] };
    for (const c of accepted) {
      const xml = corpusXml(c);
      const root = /<(?:\w+:)?(Invoice|CreditNote)[\s>]/.exec(xml)?.[1] as 'Invoice' | 'CreditNote';
      byRoot[root].push({ name: `${c.country}-${c.name}`, xml });
    }
    for (const root of ['Invoice', 'CreditNote'] as const) {
      for (const [name, r] of await validateAgainst(mainSchema(root), byRoot[root])) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);
    }
    expect(byRoot.Invoice.length + byRoot.CreditNote.length).to.equal(accepted.length);
  });
});
