/**
 * The EN 16931 calculation rules hold exactly, in decimal arithmetic, on the XML the service
 * writes from lines alone (it computes line nets, the tax breakdown and the totals itself):
 * line net = quantity × price (rounded to 2 decimals), BR-CO-10 (Σ line nets), BR-CO-13
 * (tax exclusive = Σ line nets, no document allowances), BR-CO-14 (tax = Σ category tax),
 * BR-CO-15 (inclusive = exclusive + tax), BR-CO-16 (payable = inclusive − prepaid + rounding),
 * BR-CO-17 (category tax = taxable × rate, rounded to 2 decimals) and Σ category taxable = Σ of
 * the category's lines. Many lines, three-decimal quantities, large and tiny prices, every
 * currency the Peppol, ZATCA and PINT AE generators are given.
 */
import { expect } from 'chai';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { generateInvoiceXml } from '../../domain/artifacts/index.js';

const D = (s: string) => new Decimal(s);
const r2 = (d: Decimal) => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF', 'AED', 'SAR', 'MYR', 'JPY', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK'];

interface GenLine {
  quantity: number;
  price: number;
  rate: number;
}

const line = fc.record({
  // Three-decimal quantities from 0.001 to 100000.
  quantity: fc.integer({ min: 1, max: 100_000_000 }).map((n) => n / 1000),
  // Prices from 0.0001 to 10 000 000 with up to 4 decimals.
  price: fc.oneof(fc.integer({ min: 1, max: 10_000 }).map((n) => n / 10_000), fc.integer({ min: 1, max: 100_000_000_000 }).map((n) => n / 10_000)),
  rate: fc.constantFrom(0, 5, 6, 7, 12, 15, 19, 21),
});

function document(lines: readonly GenLine[], currency: string) {
  return {
    header: { documentNumber: 'P-1', issueDate: '2026-01-15', dueDate: '2026-02-14', currency },
    parties: {
      seller: { name: 'S', address: { country: 'BE', city: 'Brussels', addressLine1: 'x' }, taxIds: [{ type: 'VAT', value: 'BE0123456749' }], peppolId: '0123456749' },
      buyer: { name: 'B', address: { country: 'BE', city: 'Antwerp', addressLine1: 'y' }, peppolId: '0987654394' },
    },
    lineItems: lines.map((l, i) => ({ id: String(i + 1), name: `item ${i}`, quantity: l.quantity, price: { amount: l.price }, taxRate: l.rate, taxCategory: l.rate > 0 ? 'S' : 'Z' })),
    extensions: { peppol_seller_peppolIdScheme: '0208', peppol_buyer_peppolIdScheme: '0208' },
  };
}

const all = (xml: string, re: RegExp) => [...xml.matchAll(re)].map((m) => m.slice(1));
const one = (xml: string, re: RegExp) => D(re.exec(xml)![1]!);

function checkRules(xml: string): void {
  const lineBlocks = all(xml, /<cac:InvoiceLine>([\s\S]*?)<\/cac:InvoiceLine>/g).map(([b]) => b!);
  let sumNets = D('0');
  const byCategory = new Map<string, Decimal>();
  for (const b of lineBlocks) {
    const quantity = one(b, /<cbc:InvoicedQuantity[^>]*>([^<]+)</);
    const net = one(b, /<cbc:LineExtensionAmount[^>]*>([^<]+)</);
    const price = one(b, /<cbc:PriceAmount[^>]*>([^<]+)</);
    expect(net.equals(r2(quantity.times(price))), `line net ${net} = ${quantity} × ${price}`).to.equal(true);
    sumNets = sumNets.plus(net);
    const key = `${/<cac:ClassifiedTaxCategory><cbc:ID>([^<]+)</.exec(b)![1]}|${D(/<cac:ClassifiedTaxCategory>[\s\S]*?<cbc:Percent>([^<]+)</.exec(b)![1]!).toString()}`;
    byCategory.set(key, (byCategory.get(key) ?? D('0')).plus(net));
  }
  const totals = /<cac:LegalMonetaryTotal>([\s\S]*?)<\/cac:LegalMonetaryTotal>/.exec(xml)![1]!;
  const lineExtension = one(totals, /<cbc:LineExtensionAmount[^>]*>([^<]+)</);
  const exclusive = one(totals, /<cbc:TaxExclusiveAmount[^>]*>([^<]+)</);
  const inclusive = one(totals, /<cbc:TaxInclusiveAmount[^>]*>([^<]+)</);
  const payable = one(totals, /<cbc:PayableAmount[^>]*>([^<]+)</);
  const prepaid = /<cbc:PrepaidAmount[^>]*>([^<]+)</.test(totals) ? one(totals, /<cbc:PrepaidAmount[^>]*>([^<]+)</) : D('0');
  const rounding = /<cbc:PayableRoundingAmount[^>]*>([^<]+)</.test(totals) ? one(totals, /<cbc:PayableRoundingAmount[^>]*>([^<]+)</) : D('0');
  const taxTotal = /<cac:TaxTotal>([\s\S]*?)<\/cac:TaxTotal>/.exec(xml)![1]!;
  const tax = one(taxTotal, /^<cbc:TaxAmount[^>]*>([^<]+)</);
  let sumCategoryTax = D('0');
  for (const [sub] of all(taxTotal, /<cac:TaxSubtotal>([\s\S]*?)<\/cac:TaxSubtotal>/g)) {
    const taxable = one(sub!, /<cbc:TaxableAmount[^>]*>([^<]+)</);
    const categoryTax = one(sub!, /<cbc:TaxAmount[^>]*>([^<]+)</);
    const percent = one(sub!, /<cbc:Percent>([^<]+)</);
    const key = `${/<cac:TaxCategory><cbc:ID>([^<]+)</.exec(sub!)![1]}|${percent.toString()}`;
    expect(taxable.equals(byCategory.get(key)!), `category ${key} taxable ${taxable} = Σ lines ${byCategory.get(key)}`).to.equal(true);
    expect(categoryTax.equals(r2(taxable.times(percent).div(100))), `BR-CO-17 ${key}: ${categoryTax} = ${taxable} × ${percent}%`).to.equal(true);
    sumCategoryTax = sumCategoryTax.plus(categoryTax);
  }
  expect(lineExtension.equals(sumNets), `BR-CO-10 ${lineExtension} = Σ ${sumNets}`).to.equal(true);
  expect(exclusive.equals(lineExtension), 'BR-CO-13').to.equal(true);
  expect(tax.equals(sumCategoryTax), `BR-CO-14 ${tax} = Σ ${sumCategoryTax}`).to.equal(true);
  expect(inclusive.equals(exclusive.plus(tax)), 'BR-CO-15').to.equal(true);
  expect(payable.equals(inclusive.minus(prepaid).plus(rounding)), 'BR-CO-16').to.equal(true);
}

describe('calculation rules (BR-CO-10..17) in decimal arithmetic: property', function () {
  this.timeout(120_000);
  it('hold exactly on the generated XML for random lines, quantities, prices, rates and currencies', function () {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 80 }), fc.constantFrom(...CURRENCIES), (lines, currency) => {
        const xml = generateInvoiceXml({ country: 'BE', documentType: { base: 'tax_invoice' }, document: document(lines, currency), uuid: 'u' }).xml;
        checkRules(xml);
      }),
      { numRuns: 300 },
    );
  });

  it('round half away from zero, from the written decimal (1.005 → 1.01, 2.675 → 2.68)', function () {
    const xml = generateInvoiceXml({
      country: 'BE',
      documentType: { base: 'tax_invoice' },
      document: document(
        [
          { quantity: 1, price: 1.005, rate: 0 },
          { quantity: 1, price: 2.675, rate: 0 },
          { quantity: 0.001, price: 0.0001, rate: 21 },
        ],
        'EUR',
      ),
      uuid: 'u',
    }).xml;
    expect(all(xml, /<cac:InvoiceLine>[\s\S]*?<cbc:LineExtensionAmount[^>]*>([^<]+)</g).map(([v]) => v)).to.deep.equal(['1.01', '2.68', '0.00']);
    checkRules(xml);
  });
});
