import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { generateInvoiceXml, generateTaxDataDocument, TDD_CUSTOMIZATION_ID, TDD_NAMESPACE, TDD_PROFILE_ID } from '../../domain/artifacts/index.js';
import { uaeDocument, type UaeBase } from './fixtures.js';
import { at, attrs, has, inner, parseXml, text, texts } from './xml-query.js';
import { mainSchema, validateAgainst } from './xsd.js';

const UUID = '0b9e1c52-7d7a-4f5e-b3c1-2f6f3a1d9c88';
const envelopeSchema = { fileName: 'tdd-envelope.xsd', contents: readFileSync(new URL('./tdd-envelope.xsd', import.meta.url), 'utf8') };

function tdd(base: UaeBase, modifiers: string[], currency: string, extra: Record<string, string | Uint8Array> = {}) {
  const document = uaeDocument({ base, modifiers, currency });
  return generateTaxDataDocument({ documentType: { base, modifiers }, document, uuid: UUID, reportedAt: '2025-07-01T08:30:00Z', ...extra });
}

/** The Invoice or CreditNote embedded in pxs:SourceDocument, as a standalone document. */
function embedded(xml: string): string {
  const content = inner(xml, 'cec:ExtensionContent')!;
  return `<?xml version="1.0" encoding="UTF-8"?>${content.replace(
    /^<(Invoice|CreditNote) xmlns="([^"]+)">/,
    '<$1 xmlns="$2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">',
  )}`;
}

describe('artifacts: UAE Tax Data Document', function () {
  this.timeout(120_000); // xmllint-wasm compiles the UBL schemas on every run
  const variants: Array<[UaeBase, string[], string]> = [
    ['tax_invoice', [], 'AED'],
    ['tax_invoice', [], 'USD'],
    ['tax_invoice', ['summary', 'continuous_supply'], 'AED'],
    ['tax_invoice', ['export', 'e_commerce'], 'USD'],
    ['tax_invoice', ['out_of_scope'], 'AED'],
    ['tax_invoice', ['deemed_supply'], 'AED'],
    ['credit_note', [], 'AED'],
    ['credit_note', ['reverse_charge'], 'EUR'],
    ['debit_note', ['free_trade_zone', 'disclosed_agent'], 'AED'],
  ];

  it('is valid: the envelope against the UBL 2.1 common schemas, the embedded document against UBL Invoice / CreditNote', async function () {
    const docs = variants.map(([base, modifiers, currency]) => ({ name: `${base}-${modifiers.join('+') || 'none'}-${currency}`, xml: tdd(base, modifiers, currency).xml }));
    const preload = [mainSchema('Invoice'), mainSchema('CreditNote')];
    const results = await validateAgainst(envelopeSchema, docs, preload);
    for (const [name, r] of results) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);

    const invoices = docs.filter((d) => !d.name.startsWith('credit')).map((d) => ({ name: d.name, xml: embedded(d.xml) }));
    const credits = docs.filter((d) => d.name.startsWith('credit')).map((d) => ({ name: d.name, xml: embedded(d.xml) }));
    for (const [schema, set] of [
      [mainSchema('Invoice'), invoices],
      [mainSchema('CreditNote'), credits],
    ] as const) {
      for (const [name, r] of await validateAgainst(schema, set)) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);
    }
  });

  it('the envelope schema rejects a misplaced element (the check is real)', async function () {
    const good = tdd('tax_invoice', [], 'AED').xml;
    const bad = good.replace(/(<pxs:DocumentScope>[^<]*<\/pxs:DocumentScope>)(<pxs:ReporterRole>[^<]*<\/pxs:ReporterRole>)/, '$2$1');
    const badEmbedded = good.replace('<cbc:ProfileExecutionID>00000000</cbc:ProfileExecutionID>', '');
    expect(bad).to.not.equal(good);
    const results = await validateAgainst(
      envelopeSchema,
      [
        { name: 'good', xml: good },
        { name: 'bad', xml: bad },
        { name: 'embedded', xml: badEmbedded.replace('<cbc:UUID>', '<cbc:Foo>x</cbc:Foo><cbc:UUID>') },
      ],
      [mainSchema('Invoice'), mainSchema('CreditNote')],
    );
    expect(results.get('good')!.valid).to.equal(true);
    expect(results.get('bad')!.valid).to.equal(false);
    expect(results.get('embedded')!.valid).to.equal(false);
  });

  it('carries the AE TDD identifiers, time stamps, codes and parties', function () {
    const { xml, base64 } = tdd('tax_invoice', [], 'USD');
    expect(Buffer.from(base64, 'base64').toString('utf8')).to.equal(xml);
    const o = parseXml(xml);
    expect(Object.keys(o)).to.deep.equal(['pxs:TaxData']);
    expect(at(o, 'pxs:TaxData', '@xmlns:pxs')).to.equal(TDD_NAMESPACE);
    expect(at(o, 'pxs:TaxData', 'cbc:CustomizationID')).to.equal(TDD_CUSTOMIZATION_ID);
    expect(TDD_CUSTOMIZATION_ID).to.equal('urn:peppol:taxdata:ae-1');
    expect(at(o, 'pxs:TaxData', 'cbc:ProfileID')).to.equal(TDD_PROFILE_ID);
    expect(at(o, 'pxs:TaxData', 'cbc:ID')).to.equal(undefined);
    expect(at(o, 'pxs:TaxData', 'cbc:IssueDate')).to.equal('2025-07-01');
    expect(at(o, 'pxs:TaxData', 'cbc:IssueTime')).to.equal('08:30:00Z');
    expect(at(o, 'pxs:TaxData', 'pxs:DocumentTypeCode')).to.equal('S');
    expect(at(o, 'pxs:TaxData', 'pxs:DocumentScope')).to.equal('D');
    expect(at(o, 'pxs:TaxData', 'pxs:ReporterRole')).to.equal('01');
    expect(at(o, 'pxs:TaxData', 'pxs:ReportingParty', 'cbc:EndpointID')).to.equal('1000000000');
    expect(at(o, 'pxs:TaxData', 'pxs:ReportingParty', 'cbc:EndpointID', '@schemeID')).to.equal('0235');
    expect(at(o, 'pxs:TaxData', 'pxs:ReceivingParty', 'cbc:EndpointID', '@schemeID')).to.equal('0242');
    expect(at(o, 'pxs:TaxData', 'pxs:ReportersRepresentative', 'cac:PartyIdentification', 'cbc:ID', '@schemeID')).to.equal('0242');
    // Bare SPIS values under schemeID 0242, as in the official examples (not "0242:000773").
    expect(at(o, 'pxs:TaxData', 'pxs:ReceivingParty', 'cbc:EndpointID')).to.equal('000773');
    expect(at(o, 'pxs:TaxData', 'pxs:ReportersRepresentative', 'cac:PartyIdentification', 'cbc:ID')).to.equal('ASP-0001');

    const rd = at(o, 'pxs:TaxData', 'pxs:ReportedTransaction', 'pxs:ReportedDocument');
    expect(at(rd, 'cbc:CustomizationID')).to.equal('urn:peppol:pint:billing-1@ae-1');
    expect(at(rd, 'cbc:UUID')).to.equal(UUID);
    expect(at(rd, 'pxs:DocumentTypeCode')).to.equal('380');
    expect(at(rd, 'cbc:DocumentCurrencyCode')).to.equal('USD');
    expect(at(rd, 'cbc:TaxCurrencyCode')).to.equal('AED');
    expect(at(rd, 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).to.equal('100000000000003');
    expect(at(rd, 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).to.equal('100000000100003');
    const reported = inner(xml, 'pxs:ReportedDocument')!;
    expect(attrs(reported, 'cbc:TaxAmount', 'currencyID')).to.deep.equal(['USD', 'AED']);
    expect(has(reported, 'cac:TaxSubtotal')).to.equal(false);
    expect(inner(reported, 'pxs:MonetaryTotal')).to.equal('<cbc:TaxExclusiveAmount currencyID="USD">700.00</cbc:TaxExclusiveAmount>');

    // The source document is the PINT AE invoice generateInvoiceXml produces for the same input.
    const document = uaeDocument({ currency: 'USD' });
    const invoice = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document, uuid: UUID }).xml;
    expect(text(embedded(xml), 'cbc:ProfileExecutionID')).to.equal('00000000');
    expect(texts(embedded(xml), 'cbc:PayableAmount')).to.deep.equal(texts(invoice, 'cbc:PayableAmount'));
    expect(inner(xml, 'cec:ExtensionContent')).to.equal(inner(invoice.replace(/^<\?xml[^>]*\?>/, '<X>') + '</X>', 'X')!.replace(/ xmlns:cac="[^"]+" xmlns:cbc="[^"]+"/, ''));
  });

  it('embeds the document as transmitted when given: byte for byte what it would write, for every variant', function () {
    for (const [base, modifiers, currency] of variants) {
      const document = uaeDocument({ base, modifiers, currency });
      const invoice = generateInvoiceXml({ country: 'AE', documentType: { base, modifiers }, document, uuid: UUID }).xml;
      const written = tdd(base, modifiers, currency).xml;
      expect(tdd(base, modifiers, currency, { sourceXml: invoice }).xml, `${base} ${modifiers.join('+')} ${currency}`).to.equal(written);
    }
    // It is the transmitted text that is embedded, not a document written again.
    const document = uaeDocument({ base: 'tax_invoice', modifiers: [], currency: 'AED' });
    const invoice = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document, uuid: UUID }).xml;
    const sent = invoice.replace('<cbc:ProfileExecutionID>', '<cbc:Note>as sent</cbc:Note><cbc:ProfileExecutionID>');
    expect(sent).to.not.equal(invoice);
    expect(inner(tdd('tax_invoice', [], 'AED', { sourceXml: sent }).xml, 'cec:ExtensionContent')).to.contain('<cbc:Note>as sent</cbc:Note>');
    // A text that does not start as a generated document of this root is not embedded: the document is written.
    const credit = generateInvoiceXml({ country: 'AE', documentType: { base: 'credit_note', modifiers: [] }, document: uaeDocument({ base: 'credit_note', modifiers: [], currency: 'AED' }), uuid: UUID }).xml;
    const written = tdd('tax_invoice', [], 'AED').xml;
    for (const other of [credit, invoice.replace('<?xml version="1.0" encoding="UTF-8"?>', ''), '<Invoice/>']) {
      expect(tdd('tax_invoice', [], 'AED', { sourceXml: other }).xml).to.equal(written);
    }
  });

  it('embeds the transmitted bytes as its text would be: the same TDD bytes, and the same fallbacks', function () {
    for (const [base, modifiers, currency] of variants) {
      const document = uaeDocument({ base, modifiers, currency });
      // Text outside ASCII, escaped text and a trailing line break travel as bytes unchanged.
      document.parties!.seller!.name = 'شركة الإمارات & <Söhne>';
      const invoice = generateInvoiceXml({ country: 'AE', documentType: { base, modifiers }, document, uuid: UUID });
      const generate = (sourceXml: string | Uint8Array) => generateTaxDataDocument({ documentType: { base, modifiers }, document, uuid: UUID, reportedAt: '2025-07-01T08:30:00Z', sourceXml });
      const fromText = generate(invoice.xml);
      const fromBytes = generate(invoice.bytes);
      expect(fromBytes.bytes.equals(fromText.bytes), `${base} ${modifiers.join('+')} ${currency}`).to.equal(true);
      expect(fromBytes.xml).to.equal(fromText.xml);
      expect(fromBytes.base64).to.equal(fromText.base64);
      const sent = Buffer.from(`${invoice.xml}\n`, 'utf8');
      expect(generate(sent).bytes.equals(generate(sent.toString('utf8')).bytes)).to.equal(true);
    }
    // Bytes that do not start as a generated document, or are not UTF-8, are not embedded as they are.
    const invoice = generateInvoiceXml({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: [] }, document: uaeDocument({ base: 'tax_invoice', modifiers: [], currency: 'AED' }), uuid: UUID }).bytes;
    const written = tdd('tax_invoice', [], 'AED').xml;
    expect(tdd('tax_invoice', [], 'AED', { sourceXml: invoice.subarray(38) }).xml).to.equal(written);
    expect(tdd('tax_invoice', [], 'AED', { sourceXml: Buffer.concat([invoice, Buffer.from([0xff])]) }).xml).to.equal(written);
  });

  it('names the scope, the credit note type and the reporter role', function () {
    expect(text(tdd('tax_invoice', ['export'], 'USD').xml, 'pxs:DocumentScope')).to.equal('INP');
    const credit = tdd('credit_note', [], 'AED', { reporterRole: '02', typeCode: 'R', transportHeaderId: 'sbdh-1' });
    expect(texts(credit.xml, 'pxs:DocumentTypeCode')).to.deep.equal(['R', '381']);
    expect(text(credit.xml, 'pxs:ReporterRole')).to.equal('02');
    expect(text(credit.xml, 'pxs:TransportHeaderID')).to.equal('sbdh-1');
    expect(text(credit.xml, 'cbc:EndpointID')).to.equal('1000000001');
    expect(credit.xml).to.include('<cec:ExtensionContent><CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2">');
    // An out-of-scope seller has no TRN: its TIN is reported under a non-VAT scheme.
    const oos = tdd('tax_invoice', ['out_of_scope'], 'AED').xml;
    expect(inner(inner(oos, 'pxs:ReportedDocument')!, 'cac:AccountingSupplierParty')).to.equal(
      '<cac:Party><cac:PartyTaxScheme><cbc:CompanyID>1000000000</cbc:CompanyID><cac:TaxScheme><cbc:ID>TIN</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme></cac:Party>',
    );
    expect(texts(oos, 'pxs:DocumentTypeCode')).to.deep.equal(['S', '480']);
  });
});
