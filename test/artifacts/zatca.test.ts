import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { decodeZatcaQr, generateInvoiceXml, ZATCA_INITIAL_PREVIOUS_INVOICE_HASH, zatcaQrPayload } from '../../domain/artifacts/index.js';
import { saudiDocument } from './fixtures.js';
import { at, attrs, has, inner, parseXml, text } from './xml-query.js';
import { canonicalize, mainSchema, validateAgainst } from './xsd.js';

const QR_REFERENCE = /<cac:AdditionalDocumentReference><cbc:ID>QR<\/cbc:ID>.*?<\/cac:AdditionalDocumentReference>/;

function standard(number = 'SA-0001', previousInvoiceHash?: string, invoiceCounter?: number) {
  return generateInvoiceXml({
    country: 'SA',
    documentType: { base: 'tax_invoice', modifiers: [] },
    document: saudiDocument({ number }),
    uuid: `uuid-${number}`,
    previousInvoiceHash,
    invoiceCounter,
  });
}

function simplified() {
  return generateInvoiceXml({
    country: 'SA',
    documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' },
    document: saudiDocument({ simplified: true, number: 'SA-S-0001' }),
    uuid: 'uuid-simplified',
    issueTimestamp: '2025-07-01T09:00:00Z',
  });
}

describe('artifacts: Saudi Arabia ZATCA UBL 2.1', function () {
  this.timeout(120_000); // xmllint-wasm compiles the UBL schemas on every run
  it('standard, simplified, credit and debit notes are valid against the UBL 2.1 Invoice schema', async function () {
    const docs = [
      { name: 'standard', xml: standard().xml },
      { name: 'simplified', xml: simplified().xml },
      ...(['credit_note', 'debit_note'] as const).map((base) => ({
        name: base,
        xml: generateInvoiceXml({ country: 'SA', documentType: { base, modifiers: [] }, document: saudiDocument({ base }), uuid: 'u' }).xml,
      })),
    ];
    for (const [name, r] of await validateAgainst(mainSchema('Invoice'), docs)) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);
  });

  it('flags third-party (disclosed_agent) and nominal (deemed_supply) supplies, and writes the summary supply end date', function () {
    const flags = (modifiers: string[], variant?: string) =>
      attrs(
        generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers, ...(variant ? { variant } : {}) }, document: saudiDocument({}), uuid: 'u' }).xml,
        'cbc:InvoiceTypeCode',
        'name',
      )[0];
    expect(flags(['disclosed_agent'])).to.equal('0110000');
    expect(flags(['deemed_supply'])).to.equal('0101000');
    expect(flags(['export'])).to.equal('0100100');
    expect(flags(['summary'], 'simplified')).to.equal('0200010');
    expect(flags(['self_billed'])).to.equal('0100001');
    const doc = { ...saudiDocument({}), header: { ...saudiDocument({}).header, invoicePeriod: { startDate: '2025-06-01', endDate: '2025-06-30' } } };
    const summary = generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: ['summary'] }, document: doc, uuid: 'u' }).xml;
    expect(inner(summary, 'cac:Delivery')).to.equal('<cbc:ActualDeliveryDate>2025-06-01</cbc:ActualDeliveryDate><cbc:LatestDeliveryDate>2025-06-30</cbc:LatestDeliveryDate>');
  });

  it('writes the profile, type code with the transaction code name, ICV and the initial PIH', function () {
    const { xml } = standard('SA-0001', undefined, 7);
    expect(text(xml, 'cbc:ProfileID')).to.equal('reporting:1.0');
    expect(text(xml, 'cbc:InvoiceTypeCode')).to.equal('388');
    expect(attrs(xml, 'cbc:InvoiceTypeCode', 'name')).to.deep.equal(['0100000']);
    expect(attrs(simplified().xml, 'cbc:InvoiceTypeCode', 'name')).to.deep.equal(['0200000']);
    expect(text(xml, 'cbc:IssueTime')).to.equal('10:15:30');
    expect(text(simplified().xml, 'cbc:IssueTime')).to.equal('10:15:30');
    const refs = [...xml.matchAll(/<cac:AdditionalDocumentReference>(.*?)<\/cac:AdditionalDocumentReference>/g)].map((m) => m[1]!);
    expect(refs.map((r) => text(r, 'cbc:ID'))).to.deep.equal(['ICV', 'PIH', 'QR']);
    expect(text(refs[0]!, 'cbc:UUID')).to.equal('7');
    expect(text(refs[1]!, 'cbc:EmbeddedDocumentBinaryObject')).to.equal(ZATCA_INITIAL_PREVIOUS_INVOICE_HASH);
    expect(ZATCA_INITIAL_PREVIOUS_INVOICE_HASH).to.equal(
      Buffer.from(createHash('sha256').update('0').digest('hex')).toString('base64'),
    );
    expect(ZATCA_INITIAL_PREVIOUS_INVOICE_HASH).to.equal('NWZlY2ViNjZmZmM4NmYzOGQ5NTI3ODZjNmQ2OTZjNzljMmRiYzIzOWRkNGU5MWI0NjcyOWQ3M2EyN2ZiNTdlOQ==');
    // Two tax totals: the SAR total alone, then the one with the breakdown.
    expect([...xml.matchAll(/<cac:TaxTotal><cbc:TaxAmount currencyID="SAR">15.00<\/cbc:TaxAmount>(<\/cac:TaxTotal>|<cac:TaxSubtotal>)/g)].map((m) => m[1])).to.deep.equal([
      '</cac:TaxTotal>',
      '<cac:TaxSubtotal>',
    ]);
    const o = parseXml(xml);
    expect(at(o, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyIdentification', 'cbc:ID', '@schemeID')).to.equal('CRN');
    expect(at(o, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PostalAddress', 'cbc:BuildingNumber')).to.equal('1234');
    expect(at(o, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).to.equal('300000000000003');
    expect(at(o, 'Invoice', 'cac:Delivery', 'cbc:ActualDeliveryDate')).to.equal('2025-07-01');
    expect(has(simplified().xml, 'cac:AccountingCustomerParty')).to.equal(true);
    expect(inner(simplified().xml, 'cac:AccountingCustomerParty')).to.equal('');
  });

  it('hashes the canonical XML without the QR reference (checked against libxml2 C14N)', async function () {
    const tricky = saudiDocument({ number: 'SA-"&<>\'-1' });
    tricky.parties!.seller!.name = `Riyadh "Roasters" & <Co>'s – مؤسسة`;
    tricky.lineItems![0]!.name = 'Beans > 1kg & "extra"\ttab\r\nsecond line\rthird';
    tricky.lineItems![0]!.unitCode = 'K&G>\n\t';
    tricky.lineItems![1]!.name = 'it\'s';
    const special = generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [] }, document: tricky, uuid: 'u"&<' });
    for (const out of [standard(), simplified(), special]) {
      const withoutQr = out.xml.replace(QR_REFERENCE, '');
      expect(withoutQr).to.not.equal(out.xml);
      const canonical = (await canonicalize(withoutQr)).replace(/\n$/, '');
      expect(out.hash).to.equal(createHash('sha256').update(canonical, 'utf8').digest('base64'));
      expect(Buffer.from(out.hash!, 'base64')).to.have.length(32);
    }
  });

  it('hashes the canonical XML with apostrophes and quotes in attribute values and entity-like payload text', async function () {
    const doc = saudiDocument({ number: 'SA-&amp;-&#38;-&apos;' });
    doc.parties!.seller!.name = 'AT&amp;T &QUOT;Saudi&QUOT; &lt;Co&gt; O\'Brien "x"';
    doc.parties!.seller!.registrationNumbers = [{ type: "C'R\"N&amp;", value: '1010010000' }];
    doc.lineItems![0]!.unitCode = `O'K"&apos;<`;
    doc.lineItems![1]!.name = "&#x26; it's ]]> done";
    const out = generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [] }, document: doc, uuid: "u'&quot;" });
    const withoutQr = out.xml.replace(QR_REFERENCE, '');
    expect(withoutQr).to.not.equal(out.xml);
    const canonical = (await canonicalize(withoutQr)).replace(/\n$/, '');
    expect(canonical).to.equal(withoutQr.replace(/^<\?xml[^>]*\?>/, ''));
    expect(out.hash).to.equal(createHash('sha256').update(canonical, 'utf8').digest('base64'));
    // The values are read back exactly as sent (attribute whitespace normalized, '>' dropped).
    const o = parseXml(out.xml);
    expect(at(o, 'Invoice', 'cbc:ID')).to.equal('SA-&amp;-&#38;-&apos;');
    expect(at(o, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyLegalEntity', 'cbc:RegistrationName')).to.equal(
      'AT&amp;T &QUOT;Saudi&QUOT; &lt;Co&gt; O\'Brien "x"',
    );
    expect(at(o, 'Invoice', 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyIdentification', 'cbc:ID', '@schemeID')).to.equal("C'R\"N&AMP;");
    expect(attrs(out.xml, 'cbc:InvoicedQuantity', 'unitCode')).to.deep.equal([`O'K"&apos;<`, 'PCE']);
    expect(at(o, 'Invoice', 'cbc:UUID')).to.equal("u'&quot;");
  });

  it('chains two invoices: the second PIH is the first hash', function () {
    const first = standard('SA-0001', undefined, 1);
    const second = standard('SA-0002', first.hash, 2);
    const pih = (xml: string) =>
      text(/<cac:AdditionalDocumentReference><cbc:ID>PIH<\/cbc:ID>(.*?)<\/cac:AdditionalDocumentReference>/.exec(xml)![1]!, 'cbc:EmbeddedDocumentBinaryObject');
    expect(pih(first.xml)).to.equal(ZATCA_INITIAL_PREVIOUS_INVOICE_HASH);
    expect(pih(second.xml)).to.equal(first.hash);
    expect(second.hash).to.not.equal(first.hash);
    // The hash depends on the chain: the same invoice with another PIH hashes differently.
    expect(standard('SA-0002', ZATCA_INITIAL_PREVIOUS_INVOICE_HASH, 2).hash).to.not.equal(second.hash);
  });

  it('carries the TLV QR payload (tags 1-6) in the QR reference and returns it', function () {
    const out = standard();
    const inXml = text(/<cbc:ID>QR<\/cbc:ID>(.*?)<\/cac:AdditionalDocumentReference>/.exec(out.xml)![1]!, 'cbc:EmbeddedDocumentBinaryObject');
    expect(inXml).to.equal(out.qr);
    const tlv = decodeZatcaQr(out.qr!);
    expect([...tlv.keys()]).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect(tlv.get(1)).to.equal('Riyadh Roasters Co');
    expect(tlv.get(2)).to.equal('300000000000003');
    expect(tlv.get(3)).to.equal('2025-07-01T10:15:30');
    expect(tlv.get(4)).to.equal('155.00');
    expect(tlv.get(5)).to.equal('15.00');
    expect(tlv.get(6)).to.equal(out.hash);
    // TLV layout: tag byte, length byte, UTF-8 value.
    const raw = Buffer.from(zatcaQrPayload({ sellerName: 'مؤسسة', vatNumber: '3', timestamp: 't', totalWithVat: '1', vatTotal: '0', invoiceHash: 'h' }), 'base64');
    expect(raw[0]).to.equal(1);
    expect(raw[1]).to.equal(Buffer.byteLength('مؤسسة'));
    expect(decodeZatcaQr(raw.toString('base64')).get(1)).to.equal('مؤسسة');
  });

  it('writes credit and debit notes with the billing reference and the reason', function () {
    for (const [base, code] of [
      ['credit_note', '381'],
      ['debit_note', '383'],
    ] as const) {
      const { xml } = generateInvoiceXml({ country: 'SA', documentType: { base, modifiers: [] }, document: saudiDocument({ base }), uuid: 'u' });
      expect(text(xml, 'cbc:InvoiceTypeCode')).to.equal(code);
      expect(inner(xml, 'cac:BillingReference')).to.equal('<cac:InvoiceDocumentReference><cbc:ID>SA-0000</cbc:ID></cac:InvoiceDocumentReference>');
      expect(text(xml, 'cbc:InstructionNote')).to.equal('Returned goods');
    }
    expect(has(standard().xml, 'cac:BillingReference')).to.equal(false);
  });
});
