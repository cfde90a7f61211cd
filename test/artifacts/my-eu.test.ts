import { expect } from 'chai';
import {
  generateInvoiceXml,
  PEPPOL_BIS_CUSTOMIZATION_ID,
  PEPPOL_BIS_PROFILE_ID,
  PEPPOL_SELF_BILLING_CUSTOMIZATION_ID,
  PEPPOL_SELF_BILLING_PROFILE_ID,
  XRECHNUNG_CUSTOMIZATION_ID,
} from '../../domain/artifacts/index.js';
import { europeanDocument, malaysianDocument, type UaeBase } from './fixtures.js';
import { at, attrs, has, inner, parseXml, text, texts } from './xml-query.js';
import { mainSchema, validateAgainst } from './xsd.js';

const BASES: UaeBase[] = ['tax_invoice', 'credit_note', 'debit_note'];

function my(base: UaeBase, currency = 'MYR', modifiers: string[] = []) {
  return generateInvoiceXml({
    country: 'MY',
    documentType: { base, modifiers },
    document: malaysianDocument({ base, currency }),
    uuid: 'my-uuid',
    issueTimestamp: '2025-07-01T03:04:05Z',
  }).xml;
}

function eu(country: 'BE' | 'DE', base: UaeBase, taxCurrency?: string) {
  return generateInvoiceXml({
    country,
    documentType: { base, modifiers: [] },
    document: europeanDocument(country, { base, ...(taxCurrency ? { taxCurrency } : {}) }),
    uuid: 'eu-uuid',
  }).xml;
}

describe('artifacts: Malaysia MyInvois UBL 2.1', function () {
  this.timeout(120_000); // xmllint-wasm compiles the UBL schemas on every run
  it('invoices, credit notes and debit notes (MYR and foreign currency) are valid against UBL 2.1 Invoice', async function () {
    const docs = BASES.flatMap((base) => ['MYR', 'USD'].map((currency) => ({ name: `${base}-${currency}`, xml: my(base, currency) })));
    docs.push({ name: 'self-billed', xml: my('tax_invoice', 'MYR', ['self_billed']) });
    for (const [name, r] of await validateAgainst(mainSchema('Invoice'), docs)) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);
  });

  it('writes the MyInvois type codes with listVersionID 1.0 and references the original on notes', function () {
    expect(BASES.map((b) => text(my(b), 'cbc:InvoiceTypeCode'))).to.deep.equal(['01', '02', '03']);
    expect(text(my('tax_invoice', 'MYR', ['self_billed']), 'cbc:InvoiceTypeCode')).to.equal('11');
    expect(attrs(my('credit_note'), 'cbc:InvoiceTypeCode', 'listVersionID')).to.deep.equal(['1.0']);
    expect(inner(my('credit_note'), 'cac:BillingReference')).to.equal(
      '<cac:InvoiceDocumentReference><cbc:ID>MY-0000</cbc:ID><cbc:UUID>F9D425P6DS7D8IU</cbc:UUID></cac:InvoiceDocumentReference>',
    );
    expect(has(my('tax_invoice'), 'cac:BillingReference')).to.equal(false);
    expect(text(my('tax_invoice'), 'cbc:IssueTime')).to.equal('03:04:05Z');
    expect(has(my('tax_invoice'), 'cbc:UUID')).to.equal(false);
  });

  it('identifies the parties by TIN and BRN (and SST), with state codes and alpha-3 countries', function () {
    const xml = my('tax_invoice');
    const o = parseXml(xml);
    const supplier = at(o, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party') as Record<string, unknown>;
    const ids = (supplier['cac:PartyIdentification'] as Array<Record<string, { '@schemeID': string; '#': string }>>).map((p) => [
      p['cbc:ID']!['@schemeID'],
      p['cbc:ID']!['#'],
    ]);
    expect(ids).to.deep.equal([
      ['TIN', 'C2584563200'],
      ['BRN', '201901234567'],
      ['SST', 'W10-1808-32000001'],
    ]);
    expect(at(supplier, 'cbc:IndustryClassificationCode')).to.equal('46510');
    expect(at(supplier, 'cac:PostalAddress', 'cbc:CountrySubentityCode')).to.equal('14');
    expect(at(supplier, 'cac:PostalAddress', 'cac:Country', 'cbc:IdentificationCode')).to.equal('MYS');
    expect(at(supplier, 'cac:PostalAddress', 'cac:Country', 'cbc:IdentificationCode', '@listID')).to.equal('ISO3166-1');
    expect(at(o, 'Invoice', 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PostalAddress', 'cbc:CountrySubentityCode')).to.equal('07');
    expect(at(supplier, 'cac:Contact', 'cbc:Telephone')).to.equal('+60123456789');
  });

  it('writes MyInvois tax types, line tax totals, classification and the MYR conversion', function () {
    const xml = my('tax_invoice', 'USD');
    const categories = [...xml.matchAll(/<cac:TaxCategory><cbc:ID>([^<]+)<\/cbc:ID>/g)].map((m) => m[1]);
    expect(categories).to.deep.equal(['02', 'E', '02', 'E']);
    expect(texts(xml, 'cbc:TaxExemptionReason')).to.deep.equal(['Exempt under Service Tax Act', 'Exempt under Service Tax Act']);
    expect(attrs(xml, 'cbc:ID', 'schemeID').filter((s) => s === 'UN/ECE 5153')).to.have.length(4);
    expect(attrs(xml, 'cbc:ItemClassificationCode', 'listID')).to.deep.equal(['CLASS', 'CLASS']);
    expect(text(xml, 'cbc:TargetCurrencyCode')).to.equal('MYR');
    expect([...xml.matchAll(/<cac:TaxTotal><cbc:TaxAmount currencyID="MYR">([^<]+)</g)].map((m) => m[1])).to.deep.equal(['2256.00']);
    expect(texts(xml, 'cbc:PaymentMeansCode')).to.deep.equal(['03']);
  });
});

describe('artifacts: Belgium / Germany Peppol BIS Billing 3.0', function () {
  this.timeout(120_000); // xmllint-wasm compiles the UBL schemas on every run
  it('invoices, debit notes and credit notes are valid against UBL 2.1 Invoice / CreditNote', async function () {
    const invoices: Array<{ name: string; xml: string }> = [];
    const credits: Array<{ name: string; xml: string }> = [];
    for (const country of ['BE', 'DE'] as const) {
      for (const base of BASES) {
        const entry = { name: `${country}-${base}`, xml: eu(country, base) };
        (base === 'credit_note' ? credits : invoices).push(entry);
      }
      invoices.push({ name: `${country}-tax-currency`, xml: eu(country, 'tax_invoice', 'GBP') });
    }
    for (const [schema, docs] of [
      [mainSchema('Invoice'), invoices],
      [mainSchema('CreditNote'), credits],
    ] as const) {
      for (const [name, r] of await validateAgainst(schema, docs)) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);
    }
  });

  it('writes the BIS 3.0 identifiers, type codes and the billing reference', function () {
    for (const country of ['BE', 'DE'] as const) {
      const invoice = eu(country, 'tax_invoice');
      // Germany writes the XRechnung 3.0 CIUS identifier (BR-DE-21) under the same Peppol profile.
      expect(text(invoice, 'cbc:CustomizationID')).to.equal(country === 'DE' ? XRECHNUNG_CUSTOMIZATION_ID : PEPPOL_BIS_CUSTOMIZATION_ID);
      expect(XRECHNUNG_CUSTOMIZATION_ID).to.equal('urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0');
      expect(PEPPOL_BIS_CUSTOMIZATION_ID).to.equal('urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0');
      expect(text(invoice, 'cbc:ProfileID')).to.equal(PEPPOL_BIS_PROFILE_ID);
      expect(PEPPOL_BIS_PROFILE_ID).to.equal('urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
      expect(text(invoice, 'cbc:InvoiceTypeCode')).to.equal('380');
      expect(text(eu(country, 'debit_note'), 'cbc:InvoiceTypeCode')).to.equal('383');
      const credit = eu(country, 'credit_note');
      expect(credit).to.match(/<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/);
      expect(text(credit, 'cbc:CreditNoteTypeCode')).to.equal('381');
      expect(inner(credit, 'cac:BillingReference')).to.equal(
        `<cac:InvoiceDocumentReference><cbc:ID>${country}-2025-0000</cbc:ID><cbc:IssueDate>2025-06-01</cbc:IssueDate></cac:InvoiceDocumentReference>`,
      );
      expect(texts(credit, 'cbc:CreditedQuantity')).to.deep.equal(['10', '1']);
      expect(text(credit, 'cbc:PaymentDueDate')).to.equal('2025-07-31');
    }
  });

  it('writes self-billed documents with the Peppol self-billing specification and codes 389 / 261 / 527', function () {
    for (const country of ['BE', 'DE'] as const) {
      const sb = (base: UaeBase) =>
        generateInvoiceXml({ country, documentType: { base, modifiers: ['self_billed'] }, document: europeanDocument(country, { base }), uuid: 'eu-uuid' }).xml;
      expect(text(sb('tax_invoice'), 'cbc:CustomizationID')).to.equal(PEPPOL_SELF_BILLING_CUSTOMIZATION_ID);
      expect(text(sb('tax_invoice'), 'cbc:ProfileID')).to.equal(PEPPOL_SELF_BILLING_PROFILE_ID);
      expect(text(sb('tax_invoice'), 'cbc:InvoiceTypeCode')).to.equal('389');
      expect(text(sb('debit_note'), 'cbc:InvoiceTypeCode')).to.equal('527');
      expect(text(sb('credit_note'), 'cbc:CreditNoteTypeCode')).to.equal('261');
    }
  });

  it('writes endpoint schemes, VAT ids with the country prefix and VAT categories', function () {
    const be = parseXml(eu('BE', 'tax_invoice'));
    expect(at(be, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cbc:EndpointID', '@schemeID')).to.equal('0208');
    expect(at(be, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).to.equal('BE0123456749');
    expect(at(be, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyLegalEntity', 'cbc:CompanyID', '@schemeID')).to.equal('0208');
    expect(at(be, 'Invoice', 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).to.equal('BE0987654321');
    expect(at(be, 'Invoice', 'cbc:BuyerReference')).to.equal('REF-42');
    const deXml = eu('DE', 'tax_invoice');
    expect(attrs(deXml, 'cbc:EndpointID', 'schemeID')).to.deep.equal(['9930', '9930']);
    // A German document always has a buyer reference (BR-DE-15): without one, the order reference.
    expect(text(deXml, 'cbc:BuyerReference')).to.equal('PO-2025-17');
    expect(inner(deXml, 'cac:OrderReference')).to.equal('<cbc:ID>PO-2025-17</cbc:ID>');
    const subtotals = [...deXml.matchAll(/<cac:TaxCategory>(.*?)<\/cac:TaxCategory>/g)].map((m) => m[1]);
    expect(subtotals).to.deep.equal([
      '<cbc:ID>S</cbc:ID><cbc:Percent>19.00</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme>',
      '<cbc:ID>E</cbc:ID><cbc:Percent>0.00</cbc:Percent><cbc:TaxExemptionReason>Exempt education service</cbc:TaxExemptionReason><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme>',
    ]);
    expect(inner(deXml, 'cac:Price')).to.equal('<cbc:PriceAmount currencyID="EUR">120.00</cbc:PriceAmount>');
    expect(texts(deXml, 'cbc:BaseAmount')).to.deep.equal(['350.00']);
  });

  it('adds the tax total in the tax currency only when it differs from the document currency', function () {
    const plain = eu('DE', 'tax_invoice');
    expect(has(plain, 'cbc:TaxCurrencyCode')).to.equal(false);
    const gbp = eu('DE', 'tax_invoice', 'GBP');
    expect(text(gbp, 'cbc:TaxCurrencyCode')).to.equal('GBP');
    const head = gbp.slice(0, gbp.indexOf('<cac:InvoiceLine>'));
    expect([...head.matchAll(/<cac:TaxTotal><cbc:TaxAmount currencyID="([A-Z]+)">([^<]+)</g)].map((m) => `${m[1]} ${m[2]}`)).to.deep.equal([
      'EUR 228.00',
      'GBP 193.80',
    ]);
  });
});
