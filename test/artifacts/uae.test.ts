import { expect } from 'chai';
import {
  complianceIdentifiers,
  generateInvoiceXml,
  PINT_AE_CUSTOMIZATION_ID,
  PINT_AE_PROFILE_ID,
  uaeTransactionTypeFlags,
} from '../../domain/artifacts/index.js';
import { acceptedUaeModifierSets, uaeDocument, type UaeBase } from './fixtures.js';
import { at, attrs, has, inner, parseXml, text, texts } from './xml-query.js';
import { mainSchema, validateAgainst } from './xsd.js';

const UUID = '5f0c7d2e-8a1b-4c3d-9e8f-0a1b2c3d4e5f';
const BASES: UaeBase[] = ['tax_invoice', 'credit_note', 'debit_note'];
const CURRENCIES = ['AED', 'USD'];
const EMIRATES = ['AUH', 'DXB', 'SHJ', 'UAQ', 'FUJ', 'AJM', 'RAK'];
/** PINT AE transaction-type positions, written out independently of the implementation. */
const POSITIONS = ['free_trade_zone', 'deemed_supply', 'margin_scheme', 'summary', 'continuous_supply', 'disclosed_agent', 'e_commerce', 'export'];

interface Case {
  name: string;
  base: UaeBase;
  modifiers: string[];
  currency: string;
  xml: string;
}

function generate(base: UaeBase, modifiers: string[], currency: string, lines = 2): Case {
  const document = uaeDocument({ base, modifiers, currency, lines });
  const { xml } = generateInvoiceXml({ country: 'AE', documentType: { base, modifiers }, document, uuid: UUID });
  return { name: `${base}__${modifiers.join('+') || 'none'}__${currency}`, base, modifiers, currency, xml };
}

describe('artifacts: UAE PINT AE billing XML', function () {
  this.timeout(120_000); // xmllint-wasm compiles the UBL schemas on every run
  const modifierSets = acceptedUaeModifierSets();
  let cases: Case[] = [];

  before(function () {
    cases = [];
    for (const base of BASES) for (const modifiers of modifierSets) for (const currency of CURRENCIES) cases.push(generate(base, modifiers, currency));
  });

  it('covers every modifier combination the UAE rules accept, for each base and currency', function () {
    expect(modifierSets).to.have.length(576);
    expect(cases).to.have.length(576 * 3 * 2);
  });

  it('every generated variant is valid against the OASIS UBL 2.1 Invoice / CreditNote schemas', async function () {
    const invoices = cases.filter((c) => c.base !== 'credit_note');
    const credits = cases.filter((c) => c.base === 'credit_note');
    const failures: string[] = [];
    for (const [schema, docs] of [
      [mainSchema('Invoice'), invoices],
      [mainSchema('CreditNote'), credits],
    ] as const) {
      const results = await validateAgainst(schema, docs);
      for (const [name, r] of results) if (!r.valid) failures.push(`${name}: ${r.errors.slice(0, 3).join(' | ')}`);
      expect(results.size).to.equal(docs.length);
    }
    expect(failures, failures.slice(0, 5).join('\n')).to.deep.equal([]);
  });

  it('the XSD check rejects a document whose elements are out of sequence (the harness really validates)', async function () {
    const good = generate('tax_invoice', [], 'AED').xml;
    const swapped = good.replace(
      /(<cbc:IssueDate>[^<]*<\/cbc:IssueDate>)(<cbc:DueDate>[^<]*<\/cbc:DueDate>)/,
      '$2$1',
    );
    expect(swapped).to.not.equal(good);
    const results = await validateAgainst(mainSchema('Invoice'), [
      { name: 'good', xml: good },
      { name: 'swapped', xml: swapped },
    ]);
    expect(results.get('good')!.valid).to.equal(true);
    expect(results.get('swapped')!.valid).to.equal(false);
  });

  it('writes the PINT AE identifiers, UUID and the transaction-type flags per modifier set', function () {
    for (const c of cases) {
      expect(text(c.xml, 'cbc:CustomizationID'), c.name).to.equal('urn:peppol:pint:billing-1@ae-1');
      expect(text(c.xml, 'cbc:ProfileID'), c.name).to.equal('urn:peppol:bis:billing');
      const expected = POSITIONS.map((p) => (c.modifiers.includes(p) ? '1' : '0')).join('');
      expect(text(c.xml, 'cbc:ProfileExecutionID'), c.name).to.equal(expected);
      expect(text(c.xml, 'cbc:UUID'), c.name).to.equal(UUID);
    }
    expect(uaeTransactionTypeFlags([])).to.equal('00000000');
    expect(uaeTransactionTypeFlags(['summary'])).to.equal('00010000');
    expect(uaeTransactionTypeFlags(['summary', 'continuous_supply'])).to.equal('00011000');
    expect(uaeTransactionTypeFlags(['export', 'e_commerce'])).to.equal('00000011');
    expect(uaeTransactionTypeFlags(['free_trade_zone', 'reverse_charge', 'out_of_scope'])).to.equal('10000000');
  });

  it('uses type codes 380 / 381 (CreditNote), 380 with a BillingReference for debit notes, and 480 / 81 for out-of-scope documents', function () {
    for (const c of cases) {
      const outOfScope = c.modifiers.includes('out_of_scope');
      if (c.base === 'credit_note') {
        expect(c.xml, c.name).to.match(/^<\?xml[^>]*\?><CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/);
        expect(text(c.xml, 'cbc:CreditNoteTypeCode'), c.name).to.equal(outOfScope ? '81' : '381');
        expect(has(c.xml, 'cbc:InvoiceTypeCode')).to.equal(false);
        expect(has(c.xml, 'cac:CreditNoteLine')).to.equal(true);
      } else {
        expect(c.xml, c.name).to.match(/^<\?xml[^>]*\?><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/);
        // PINT AE has no debit note code (ibr-cl-01 allows 380/480): a debit note is a 380 referencing the invoice it adjusts.
        const code = outOfScope ? '480' : '380';
        expect(text(c.xml, 'cbc:InvoiceTypeCode'), c.name).to.equal(code);
      }
    }
  });

  it('references the preceding invoice (id and issue date) on credit and debit notes', function () {
    for (const c of cases) {
      const ref = inner(c.xml, 'cac:BillingReference');
      if (c.base === 'tax_invoice') {
        expect(ref, c.name).to.equal(undefined);
        continue;
      }
      expect(ref, c.name).to.equal(
        '<cac:InvoiceDocumentReference><cbc:ID>AE-INV-0001</cbc:ID><cbc:IssueDate>2025-06-15</cbc:IssueDate></cac:InvoiceDocumentReference>',
      );
    }
    const credit = cases.find((c) => c.base === 'credit_note' && c.modifiers.length === 0)!;
    expect(inner(credit.xml, 'cac:DiscrepancyResponse')).to.equal('<cbc:ResponseCode>DL8.61.1.B</cbc:ResponseCode><cbc:Description>Price change</cbc:Description>');
  });

  it('writes TaxCurrencyCode, the AED tax total, the exchange rate and the AED total only when the currency is not AED', function () {
    for (const c of cases) {
      const foreign = c.currency !== 'AED';
      expect(has(c.xml, 'cbc:TaxCurrencyCode'), c.name).to.equal(foreign);
      expect(has(c.xml, 'cac:TaxExchangeRate'), c.name).to.equal(foreign);
      const documentLevel = c.xml.slice(0, c.xml.search(/<cac:(Invoice|CreditNote)Line>/));
      const taxTotalCurrencies = [...documentLevel.matchAll(/<cac:TaxTotal><cbc:TaxAmount currencyID="([A-Z]{3})"/g)].map((m) => m[1]);
      expect(taxTotalCurrencies, c.name).to.deep.equal(foreign ? ['USD', 'AED'] : ['AED']);
      expect(c.xml.includes('<cbc:ID>aedtotal-incl-vat</cbc:ID>'), c.name).to.equal(foreign);
      if (foreign) {
        expect(text(c.xml, 'cbc:TaxCurrencyCode')).to.equal('AED');
        expect(text(c.xml, 'cbc:DocumentCurrencyCode')).to.equal('USD');
        expect(text(c.xml, 'cbc:CalculationRate')).to.equal('3.6725');
      }
    }
  });

  it('writes emirate codes in CountrySubentity and scheme 0235 on every endpoint', function () {
    for (const c of cases) {
      const subentities = texts(c.xml, 'cbc:CountrySubentity');
      const aeAddresses = [...c.xml.matchAll(/<cbc:CountrySubentity>([^<]*)<\/cbc:CountrySubentity><cac:Country><cbc:IdentificationCode>AE</g)].map((m) => m[1]);
      expect(aeAddresses.length, c.name).to.be.greaterThan(0);
      for (const code of aeAddresses) expect(EMIRATES, c.name).to.include(code);
      expect(subentities[0], c.name).to.equal('DXB');
      const schemes = attrs(c.xml, 'cbc:EndpointID', 'schemeID');
      expect(schemes, c.name).to.deep.equal(['0235', '0235']);
    }
    const domestic = parseXml(generate('tax_invoice', [], 'AED').xml);
    expect(at(domestic, 'Invoice', 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PostalAddress', 'cbc:CountrySubentity')).to.equal('AUH');
    expect(at(domestic, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cbc:EndpointID')).to.equal('1000000000');
    expect(at(domestic, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cbc:EndpointID', '@schemeID')).to.equal('0235');
    expect(at(domestic, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).to.equal('100000000000003');
    expect(at(domestic, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyTaxScheme', 'cac:TaxScheme', 'cbc:ID')).to.equal('VAT');
    expect(at(domestic, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyLegalEntity', 'cbc:CompanyID', '@schemeAgencyID')).to.equal('TL');
  });

  it('uses the predefined buyer endpoints for deemed supplies, exports without a Peppol id and buyers off Peppol', function () {
    const buyerEndpoint = (xml: string) => at(parseXml(xml), 'Invoice', 'cac:AccountingCustomerParty', 'cac:Party', 'cbc:EndpointID');
    expect(buyerEndpoint(generate('tax_invoice', ['deemed_supply'], 'AED').xml)).to.equal('9900000097');
    expect(buyerEndpoint(generate('tax_invoice', ['export'], 'AED').xml)).to.equal('9900000099');
    const offPeppol = uaeDocument();
    delete offPeppol.parties!.buyer!.peppolId;
    const xml = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document: offPeppol, uuid: UUID }).xml;
    expect(buyerEndpoint(xml)).to.equal('9900000098');
    expect(buyerEndpoint(generate('tax_invoice', ['e_commerce'], 'AED').xml)).to.equal('1000000001');
  });

  it('writes the summary period with its frequency, the delivery address for e-commerce and exports, beneficiary and principal', function () {
    for (const c of cases) {
      const m = new Set(c.modifiers);
      if (m.has('summary')) {
        expect(inner(c.xml, 'cac:InvoicePeriod'), c.name).to.equal(
          '<cbc:StartDate>2025-06-01</cbc:StartDate><cbc:EndDate>2025-06-30</cbc:EndDate><cbc:DescriptionCode>MTH</cbc:DescriptionCode>',
        );
      }
      const delivery = m.has('e_commerce') || m.has('export');
      expect(/<cac:Delivery><cac:DeliveryLocation><cac:Address><cbc:StreetName>/.test(c.xml), c.name).to.equal(delivery);
      expect(has(c.xml, 'cac:BuyerCustomerParty'), c.name).to.equal(m.has('free_trade_zone'));
      expect(has(c.xml, 'cac:SellerSupplierParty'), c.name).to.equal(m.has('disclosed_agent'));
      // ibr-191-ae: no payment means on credit notes and deemed supplies.
      expect(has(c.xml, 'cac:PaymentMeans'), c.name).to.equal(c.base !== 'credit_note' && !m.has('deemed_supply'));
    }
    const exportXml = generate('tax_invoice', ['export', 'e_commerce'], 'USD').xml;
    const delivery = at(parseXml(exportXml), 'Invoice', 'cac:Delivery', 'cac:DeliveryLocation', 'cac:Address') as Record<string, unknown>;
    expect(at(delivery, 'cbc:CityName')).to.equal('New York');
    expect(at(delivery, 'cbc:CountrySubentity')).to.equal('NY');
    expect(at(delivery, 'cac:Country', 'cbc:IdentificationCode')).to.equal('US');
    const ecommerce = parseXml(generate('tax_invoice', ['e_commerce'], 'AED').xml);
    expect(at(ecommerce, 'Invoice', 'cac:Delivery', 'cac:DeliveryLocation', 'cac:Address', 'cbc:CountrySubentity')).to.equal('DXB');
  });

  it('writes tax subtotals per category and rate, line tax categories and ItemPriceExtension', function () {
    const xml = generate('tax_invoice', [], 'AED', 5).xml;
    // Lines 1-4 standard rated, line 5 exempt (see fixtures).
    expect(texts(xml, 'cbc:ID').filter((id) => ['S', 'E'].includes(id))).to.deep.equal(['S', 'E', 'S', 'S', 'S', 'S', 'E']);
    const subtotals = [...xml.matchAll(/<cac:TaxSubtotal>(.*?)<\/cac:TaxSubtotal>/g)].map((m) => m[1]!);
    expect(subtotals).to.have.length(2);
    expect(subtotals[0]).to.include('<cbc:ID>S</cbc:ID><cbc:Percent>5.00</cbc:Percent>');
    expect(subtotals[1]).to.include('<cbc:ID>E</cbc:ID><cbc:TaxExemptionReasonCode>VATEX-AE-ED</cbc:TaxExemptionReasonCode>');
    expect(subtotals[1]).to.not.include('Percent');
    const extensions = [...xml.matchAll(/<cac:ItemPriceExtension>(.*?)<\/cac:ItemPriceExtension>/g)].map((m) => m[1]!);
    expect(extensions).to.have.length(5);
    expect(extensions[4]).to.not.include('TaxTotal');
    expect(extensions[0]).to.equal('<cbc:Amount currencyID="AED">105.00</cbc:Amount><cac:TaxTotal><cbc:TaxAmount currencyID="AED">5.00</cbc:TaxAmount></cac:TaxTotal>');
    expect(texts(xml, 'cbc:PayableAmount')).to.deep.equal(['1462.50']);
    expect(attrs(xml, 'cbc:ItemClassificationCode', 'listID')).to.deep.equal(['HS', 'HS', 'HS', 'HS', 'HS']);
    expect(texts(xml, 'cbc:CommodityCode')).to.deep.equal(['G', 'S', 'G', 'S', 'G']);
  });

  it('escapes markup characters in payload text', function () {
    const xml = generate('tax_invoice', [], 'AED').xml;
    expect(xml).to.include('<cbc:Name>Item 1 &amp; co &lt;special&gt;</cbc:Name>');
    expect(text(xml, 'cbc:Name')).to.equal('Item 1 & co <special>');
  });

  it('returns the XML and its Base64', function () {
    const document = uaeDocument();
    const out = generateInvoiceXml({ country: 'ae', documentType: { base: 'tax_invoice', modifiers: [] }, document, uuid: UUID });
    expect(Buffer.from(out.base64, 'base64').toString('utf8')).to.equal(out.xml);
    expect(out.hash).to.equal(undefined);
    expect(out.qr).to.equal(undefined);
  });

  it('names the compliance identifiers of the XML for AE, BE and DE, and null elsewhere', function () {
    const ids = complianceIdentifiers('AE', { base: 'tax_invoice', modifiers: ['summary'] });
    expect(ids).to.deep.equal({ businessProcessIdentifier: PINT_AE_PROFILE_ID, specificationIdentifier: PINT_AE_CUSTOMIZATION_ID });
    expect(complianceIdentifiers('AE', { base: 'credit_note', modifiers: ['self_billed'] })).to.deep.equal({
      businessProcessIdentifier: 'urn:peppol:bis:selfbilling',
      specificationIdentifier: 'urn:peppol:pint:selfbilling-1@ae-1',
    });
    expect(complianceIdentifiers('BE', { base: 'tax_invoice', modifiers: [] })).to.deep.equal({
      businessProcessIdentifier: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
      specificationIdentifier: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
    });
    // Germany: XRechnung 3.0 under the Peppol billing process (the XML's own identifiers).
    expect(complianceIdentifiers('DE', { base: 'credit_note', modifiers: [] })).to.deep.equal({
      businessProcessIdentifier: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
      specificationIdentifier: 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0',
    });
    for (const country of ['BE', 'DE']) {
      expect(complianceIdentifiers(country, { base: 'tax_invoice', modifiers: ['self_billed'] })).to.deep.equal({
        businessProcessIdentifier: 'urn:fdc:peppol.eu:2017:poacc:selfbilling:01:1.0',
        specificationIdentifier: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0',
      });
    }
    for (const country of ['SA', 'MY', 'SG']) {
      expect(complianceIdentifiers(country, { base: 'tax_invoice', modifiers: [] })).to.deep.equal({
        businessProcessIdentifier: null,
        specificationIdentifier: null,
      });
    }
  });

  it('refuses a country without a generator', function () {
    expect(() => generateInvoiceXml({ country: 'SG', documentType: { base: 'tax_invoice', modifiers: [] }, document: {}, uuid: UUID })).to.throw(
      /no e-invoice XML generator for country SG/,
    );
  });
});
