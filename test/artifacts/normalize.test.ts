import { expect } from 'chai';
import fc from 'fast-check';
import { countryAlpha3, emirateCode, malaysianStateCode } from '../../domain/artifacts/codes.js';
import { myTaxType } from '../../domain/artifacts/myinvois.js';
import {
  documentTotals,
  formatAmount,
  formatDecimal,
  normalizeLines,
  resolveDocumentType,
  round2,
  splitParticipantId,
  taxBreakdown,
  uncl5305Category,
} from '../../domain/artifacts/normalize.js';
import { vatWithPrefix } from '../../domain/artifacts/peppol-bis.js';
import { formatPrice } from '../../domain/artifacts/ubl-parts.js';
import { zatcaTransactionCode } from '../../domain/artifacts/zatca.js';

describe('artifacts: reading the core document', function () {
  it('formats amounts with 2 decimals, rounding half away from zero', function () {
    expect(formatAmount(1.005)).to.equal('1.01');
    expect(formatAmount(2.675)).to.equal('2.68');
    expect(formatAmount(-0.001)).to.equal('0.00');
    expect(formatAmount(-1.005)).to.equal('-1.01');
    expect(formatAmount(10)).to.equal('10.00');
    expect(round2(0.1 + 0.2)).to.equal(0.3);
    expect(formatDecimal(3.6725)).to.equal('3.6725');
    expect(formatDecimal(2)).to.equal('2');
    expect(formatPrice(12.5)).to.equal('12.50');
    expect(formatPrice(0.125)).to.equal('0.125');
  });

  it('writes the figures toFixed gives, through the integer fast paths too', function () {
    // The definitions the fast paths of formatAmount, formatDecimal and formatPrice must match.
    const amountByToFixed = (n: number) => round2(n).toFixed(2);
    const decimalByToFixed = (n: number, max = 6) => {
      const trimmed = n.toFixed(max).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
      return trimmed === '-0' ? '0' : trimmed;
    };
    const priceByToFixed = (n: number) => {
      const r = Number(n.toFixed(6));
      const two = round2(r).toFixed(2);
      return Number(two) === r ? two : decimalByToFixed(r);
    };
    const cents = fc.integer({ min: -1e14, max: 1e14 }).map((c) => c / 100);
    const decimals = fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 8 })).map(([m, d]) => m / 10 ** d);
    const neighbours = fc.tuple(cents, fc.integer({ min: -3, max: 3 })).map(([c, k]) => {
      const b = new Float64Array([c]);
      new BigInt64Array(b.buffer)[0]! += BigInt(k);
      return b[0]!;
    });
    // From 1e21 on toFixed writes exponential notation, which formatDecimal does not trim (nor expect).
    const values = fc
      .oneof(cents, decimals, neighbours, fc.double(), fc.maxSafeInteger(), fc.constantFrom(1e12, -1e12, 1e9, -1e9, 2 ** 53, 1e20, -0, 0.005, 1.005, 2.675))
      .filter((n) => !(Math.abs(n) >= 1e21));
    fc.assert(
      fc.property(values, (n) => {
        expect(formatAmount(n), `formatAmount(${n})`).to.equal(amountByToFixed(n));
        expect(formatDecimal(n), `formatDecimal(${n})`).to.equal(decimalByToFixed(n));
        expect(formatPrice(n), `formatPrice(${n})`).to.equal(priceByToFixed(n));
      }),
      { numRuns: 20_000 },
    );
  });

  it('writes huge figures in full, never in exponent notation (which is no xs:decimal)', function () {
    expect(formatAmount(1e21)).to.equal('1000000000000000000000.00');
    expect(formatAmount(-2.5e22)).to.equal('-25000000000000000000000.00');
    expect(formatDecimal(1.5e190)).to.equal(`15${'0'.repeat(189)}`);
    expect(formatDecimal(-1e21)).to.equal('-1000000000000000000000');
    expect(formatPrice(3e25)).to.equal('30000000000000000000000000.00');
    for (const f of [formatAmount(1e300), formatDecimal(1e300), formatPrice(1e300)]) expect(f).to.match(/^-?\d+(\.\d+)?$/);
  });

  it('resolves the document type and normalizes modifier spellings', function () {
    const dt = resolveDocumentType({ base: 'credit_note', modifiers: ['E-Commerce', 'exports', 'self-billed'] });
    expect(dt.kind).to.equal('credit_note');
    expect([...dt.modifiers]).to.deep.equal(['e_commerce', 'export', 'self_billed']);
    expect(dt.selfBilled).to.equal(true);
    expect(resolveDocumentType({ base: 'TAX_INVOICE_DEBIT_NOTE' }).kind).to.equal('debit_note');
    expect(resolveDocumentType({ base: 'SIMPLIFIED_TAX_INVOICE' }).simplified).to.equal(true);
    expect(resolveDocumentType({ base: 'tax_invoice', variant: 'simplified' }).simplified).to.equal(true);
    expect(zatcaTransactionCode(resolveDocumentType({ base: 'tax_invoice', modifiers: ['export', 'summary'] }))).to.equal('0100110');
  });

  it('maps tax categories to UNCL 5305 and MyInvois tax types', function () {
    const none = new Set<string>();
    expect(uncl5305Category('standard_rated', 5, none)).to.equal('S');
    expect(uncl5305Category('ZERO RATED', 0, none)).to.equal('Z');
    expect(uncl5305Category('AE', 5, none)).to.equal('AE');
    expect(uncl5305Category(undefined, 5, none)).to.equal('S');
    expect(uncl5305Category(undefined, 0, none)).to.equal('Z');
    expect(uncl5305Category(undefined, 0, new Set(['out_of_scope']))).to.equal('O');
    expect(uncl5305Category(undefined, 5, new Set(['reverse_charge']))).to.equal('AE');
    expect(myTaxType('02', 8)).to.equal('02');
    expect(myTaxType('2', 8)).to.equal('02');
    expect(myTaxType('SERVICE_TAX', 8)).to.equal('02');
    expect(myTaxType(undefined, 0)).to.equal('06');
    expect(myTaxType('E', 0)).to.equal('E');
  });

  it('computes lines, breakdown and totals when the payload leaves them out', function () {
    const doc = {
      lineItems: [
        { quantity: '3', price: { amount: '10.10' }, taxRate: 5 },
        { quantity: 1, price: { amount: 20 }, taxRate: 5 },
        { quantity: 2, price: { amount: 7 }, taxRate: 0, taxCategory: 'exempt' },
      ],
      totals: { amountDue: 50 },
    };
    const lines = normalizeLines(doc);
    expect(lines.map((l) => [l.id, l.net, l.tax, l.unitCode])).to.deep.equal([
      ['1', 30.3, 1.52, 'C62'],
      ['2', 20, 1, 'C62'],
      ['3', 14, 0, 'C62'],
    ]);
    const breakdown = taxBreakdown(doc, lines, (raw, rate) => uncl5305Category(raw, rate, new Set()));
    expect(breakdown.map((b) => [b.category, b.rate, b.taxable, b.tax])).to.deep.equal([
      ['S', 5, 50.3, 2.52],
      ['E', 0, 14, 0],
    ]);
    const totals = documentTotals(doc, lines, breakdown);
    expect(totals).to.deep.include({ lineExtension: 64.3, taxExclusive: 64.3, tax: 2.52, taxInclusive: 66.82, payable: 50, prepaid: 16.82 });
  });

  it('prefers the payload breakdown when it carries one', function () {
    const doc = {
      lineItems: [{ quantity: 1, price: { amount: 100 }, taxRate: 5, taxCategory: 'S', taxAmount: 5 }],
      taxTotals: { taxSubtotals: [{ taxCategory: 'S', taxRate: 5, taxableAmount: 100, taxAmount: 4.99 }] },
    };
    const lines = normalizeLines(doc);
    const breakdown = taxBreakdown(doc, lines, (raw, rate) => uncl5305Category(raw, rate, new Set()));
    expect(breakdown).to.deep.equal([{ category: 'S', rate: 5, taxable: 100, tax: 4.99, exemptionReason: undefined, exemptionReasonCode: undefined }]);
  });

  it('reads codes: emirates, Malaysian states, alpha-3 countries, participant ids, VAT prefixes', function () {
    expect(emirateCode('Dubai')).to.equal('DXB');
    expect(emirateCode('ras al khaimah')).to.equal('RAK');
    expect(emirateCode('shj')).to.equal('SHJ');
    expect(malaysianStateCode('Selangor')).to.equal('10');
    expect(malaysianStateCode('7')).to.equal('07');
    expect(malaysianStateCode(undefined)).to.equal('17');
    expect(countryAlpha3('MY')).to.equal('MYS');
    expect(countryAlpha3('ae')).to.equal('ARE');
    expect(countryAlpha3('DE')).to.equal('DEU');
    expect(splitParticipantId('0235:1234567890', undefined)).to.deep.equal({ scheme: '0235', value: '1234567890' });
    expect(splitParticipantId('1234567890', '0235')).to.deep.equal({ scheme: '0235', value: '1234567890' });
    expect(vatWithPrefix('0123456749', 'BE')).to.equal('BE0123456749');
    expect(vatWithPrefix('DE123456789', 'DE')).to.equal('DE123456789');
    expect(vatWithPrefix('123456789', 'GR')).to.equal('EL123456789');
  });
});
