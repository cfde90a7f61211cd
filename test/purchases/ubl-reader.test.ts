import { expect } from 'chai';
import fc from 'fast-check';
import { generateInvoiceXml, type CoreDocument } from '../../domain/artifacts/index.js';
import { readUbl, readUblHeader, screenXml, UblRefusal } from '../../domain/purchases/ubl-reader.js';
import { peppolIdentifiersOf } from '../../domain/peppol/identifiers.js';
import { sampleDocument } from '../../domain/validation/index.js';

const n = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : Number(v));

/** The core fields a receiver must get back exactly: numbers, dates, parties, lines, totals, tax totals. */
function coreFields(doc: CoreDocument, options: { lineTax: boolean }) {
  const party = (p: any) => ({
    name: p?.name,
    peppolId: p?.peppolId,
    taxIds: (p?.taxIds ?? []).map((t: any) => t.value),
    address: { line1: p?.address?.addressLine1, city: p?.address?.city, country: p?.address?.country, postalCode: p?.address?.postalCode },
  });
  const subtotals = Array.isArray(doc.taxTotals) ? doc.taxTotals : [];
  return {
    documentNumber: doc.header?.documentNumber,
    issueDate: doc.header?.issueDate,
    dueDate: doc.header?.dueDate,
    currency: doc.header?.currency,
    seller: party(doc.parties?.seller),
    buyer: party(doc.parties?.buyer),
    lines: (doc.lineItems ?? []).map((l) => ({
      id: String(l.id),
      name: l.name,
      quantity: n(l.quantity),
      unitCode: l.unitCode,
      net: n(l.lineTaxableValue),
      category: l.taxCategory,
      rate: n(l.taxRate),
      price: n(l.price?.amount),
      ...(options.lineTax ? { tax: n(l.taxAmount) } : {}),
    })),
    totals: {
      lines: n(doc.totals?.totalLineTaxableAmount),
      excl: n(doc.totals?.totalAmountExcludingTax),
      tax: n(doc.totals?.totalTaxAmount),
      incl: n(doc.totals?.totalAmountIncludingTax),
      due: n(doc.totals?.amountDue),
    },
    taxTotals: subtotals.map((s) => ({ category: s.taxCategory, rate: n(s.taxRate), taxable: n(s.taxableAmount), tax: n(s.taxAmount) })),
  };
}

function roundTripXml(country: 'AE' | 'BE' | 'DE', lines: number, documentNumber: string) {
  const sent = sampleDocument(country, { lines, documentNumber }) as CoreDocument;
  const xml = screenXml(Buffer.from(generateInvoiceXml({ country, documentType: { base: 'tax_invoice', modifiers: [] }, document: sent, uuid: `uuid-${documentNumber}` }).xml), 10_000_000);
  return { sent, xml, read: readUbl(xml) };
}

function roundTrip(country: 'AE' | 'BE' | 'DE', lines: number, documentNumber: string) {
  const { sent, read } = roundTripXml(country, lines, documentNumber);
  return { sent, read };
}

describe('purchases: reading received UBL into the core document', () => {
  for (const country of ['AE', 'BE', 'DE'] as const) {
    it(`${country}: a sent invoice's core fields come back equal (numbers, dates, parties, lines, totals, tax totals)`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 25 }), fc.stringMatching(/^[A-Z]{2,4}-[0-9]{1,8}$/), (lines, number) => {
          const { sent, read } = roundTrip(country, lines, number);
          expect(coreFields(read.coreDocument, { lineTax: country === 'AE' })).to.deep.equal(coreFields(sent, { lineTax: country === 'AE' }));
          expect(read.documentNumber).to.equal(number);
          // Peppol BIS writes no cbc:UUID: missing on the receiving side.
          expect(read.uuid).to.equal(country === 'AE' ? `uuid-${number}` : null);
          expect(read.documentType).to.deep.equal({ base: 'tax_invoice', modifiers: [] });
        }),
        { numRuns: 25 },
      );
    });
  }

  it('AE: the buyer endpoint with its scheme is the receiver, the seller endpoint the sender', () => {
    const { sent, read } = roundTrip('AE', 2, 'INV-1');
    expect(read.receiver).to.deep.equal({ scheme: '0235', value: sent.parties!.buyer!.peppolId });
    expect(read.sender).to.deep.equal({ scheme: '0235', value: sent.parties!.seller!.peppolId });
    expect(read.country).to.equal('AE');
    expect(read.supplierName).to.equal(sent.parties!.seller!.name);
  });

  it('a field the generator does not write is visibly missing on the receiving side', () => {
    // Peppol BIS writes no line tax amount: the receiver does not invent one.
    const { sent, read } = roundTrip('BE', 2, 'BE-1');
    expect(sent.lineItems![0]!.taxAmount).to.not.equal(undefined);
    expect(read.coreDocument.lineItems![0]).to.not.have.property('taxAmount');
    // The sender's internal document id is no part of the XML.
    expect(read.coreDocument.header).to.not.have.property('documentId');
  });

  it('a credit note reads as credit_note with its preceding invoice', () => {
    const sent = sampleDocument('AE', { lines: 1, documentNumber: 'CN-1' }) as CoreDocument;
    sent.header!.precedingInvoiceReference = { id: 'INV-9', issueDate: '2026-01-01' };
    const xml = generateInvoiceXml({ country: 'AE', documentType: { base: 'credit_note', modifiers: [] }, document: sent, uuid: 'u' });
    const read = readUbl(screenXml(Buffer.from(xml.xml), 1e7));
    expect(read.root).to.equal('CreditNote');
    expect(read.documentType.base).to.equal('credit_note');
    expect(read.coreDocument.header!.precedingInvoiceReference).to.deep.equal({ id: 'INV-9', issueDate: '2026-01-01' });
  });

  const refused = (xml: string | Buffer, code: string, max = 1e7) => {
    try {
      readUbl(screenXml(typeof xml === 'string' ? Buffer.from(xml) : xml, max));
    } catch (err) {
      expect(err).to.be.instanceOf(UblRefusal);
      expect((err as UblRefusal).code).to.equal(code);
      expect((err as Error).message).to.not.contain('\n');
      return;
    }
    expect.fail(`accepted: ${String(xml).slice(0, 80)}`);
  };

  it('refuses a DOCTYPE and entity declarations where the parser meets the prolog (no expansion, no external fetch)', () => {
    const ok = roundTrip('AE', 1, 'X-1');
    void ok;
    refused(`<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY x "boom">]><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&x;</ID></Invoice>`, 'XML_DOCTYPE_REFUSED');
    refused(`<?xml version="1.0"?><!DOCTYPE Invoice SYSTEM "http://127.0.0.1:9/evil.dtd"><Invoice/>`, 'XML_DOCTYPE_REFUSED');
    refused(`<?xml version="1.0"?><!-- a comment first --><!DOCTYPE Invoice SYSTEM "x.dtd"><Invoice/>`, 'XML_DOCTYPE_REFUSED');
    // Not a declaration to an XML parser (the keyword is upper case): not well-formed, refused all the same.
    refused(`<!doctype x><x/>`, 'XML_NOT_WELL_FORMED');
  });

  it('reads a document whose comments or texts mention <!DOCTYPE or <!ENTITY (no declaration)', () => {
    const ns = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';
    const read = readUbl(screenXml(Buffer.from(`<?xml version="1.0"?><!-- see <!DOCTYPE html> --><Invoice xmlns="${ns}"><!-- <!ENTITY e "x"> --><ID>D-1</ID><Note>&lt;!DOCTYPE in a note</Note></Invoice>`), 1e7));
    expect(read.documentNumber).to.equal('D-1');
    expect(read.coreDocument.header!.notes).to.deep.equal(['<!DOCTYPE in a note']);
  });

  it('keeps every note, the allowance and charge totals, address details and item identifiers', () => {
    const ns = 'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"';
    const xml = `<Invoice ${ns}><cbc:ID>N-1</cbc:ID><cbc:Note>first</cbc:Note><cbc:Note>second</cbc:Note>
      <cac:AccountingSupplierParty><cac:Party><cac:PostalAddress><cbc:StreetName>King Fahd Rd</cbc:StreetName><cbc:BuildingNumber>1234</cbc:BuildingNumber><cbc:PlotIdentification>5678</cbc:PlotIdentification><cbc:CitySubdivisionName>Olaya</cbc:CitySubdivisionName><cbc:CityName>Riyadh</cbc:CityName><cac:Country><cbc:IdentificationCode>SA</cbc:IdentificationCode></cac:Country></cac:PostalAddress></cac:Party></cac:AccountingSupplierParty>
      <cac:LegalMonetaryTotal><cbc:LineExtensionAmount currencyID="SAR">100.00</cbc:LineExtensionAmount><cbc:AllowanceTotalAmount currencyID="SAR">10.00</cbc:AllowanceTotalAmount><cbc:ChargeTotalAmount currencyID="SAR">5.50</cbc:ChargeTotalAmount><cbc:PayableAmount currencyID="SAR">95.50</cbc:PayableAmount></cac:LegalMonetaryTotal>
      <cac:InvoiceLine><cbc:ID>1</cbc:ID><cbc:Note>line note</cbc:Note><cbc:InvoicedQuantity unitCode="EA">1</cbc:InvoicedQuantity><cbc:LineExtensionAmount currencyID="SAR">100.00</cbc:LineExtensionAmount><cac:Item><cbc:Name>Thing</cbc:Name><cac:BuyersItemIdentification><cbc:ID>B-9</cbc:ID></cac:BuyersItemIdentification><cac:StandardItemIdentification><cbc:ID schemeID="0160">09506000134352</cbc:ID></cac:StandardItemIdentification></cac:Item></cac:InvoiceLine></Invoice>`;
    const core = readUbl(screenXml(Buffer.from(xml), 1e7)).coreDocument;
    expect(core.header).to.include({ note: 'first\nsecond' });
    expect(core.header!.notes).to.deep.equal(['first', 'second']);
    expect(core.totals).to.include({ allowanceTotalAmount: 10, chargeTotalAmount: 5.5, amountDue: 95.5 });
    expect(core.parties!.seller!.address).to.include({ addressLine1: 'King Fahd Rd', buildingNumber: '1234', additionalNumber: '5678', district: 'Olaya', city: 'Riyadh', country: 'SA' });
    expect(core.lineItems![0]).to.include({ note: 'line note', buyerItemId: 'B-9' });
    expect(core.lineItems![0]!.standardItemId).to.deep.equal({ id: '09506000134352', scheme: '0160' });
  });

  it('refuses malformed, non-UBL, empty, non-UTF-8 and oversized XML with one line', () => {
    refused('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</Invoice>', 'XML_NOT_WELL_FORMED');
    refused('not xml at all', 'XML_NOT_WELL_FORMED');
    refused('', 'XML_NOT_WELL_FORMED');
    refused('<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"><ID>1</ID></Order>', 'XML_NOT_UBL');
    refused('<Invoice><ID>1</ID></Invoice>', 'XML_NOT_UBL');
    refused('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><IssueDate>2026-01-01</IssueDate></Invoice>', 'XML_INCOMPLETE');
    refused(Buffer.from([0x3c, 0x61, 0xff, 0xfe, 0x3e]), 'XML_NOT_WELL_FORMED');
    refused(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>${'x'.repeat(2000)}</ID></Invoice>`, 'XML_TOO_LARGE', 1024);
  });

  it('reads the parties alone, as a message is routed: the same sender and receiver as the whole read, the lines not looked at', () => {
    for (const country of ['AE', 'BE', 'DE'] as const) {
      const { xml, read } = roundTripXml(country, 20, `${country}-P-1`);
      expect(readUblHeader(xml)).to.deep.include({ root: 'Invoice', sender: read.sender, receiver: read.receiver });
    }
    // Reading stops at the first line: what follows it is not read (the whole read refuses it).
    const { xml } = roundTripXml('AE', 2, 'AE-P-2');
    const cut = xml.slice(0, xml.indexOf('<cac:InvoiceLine>') + '<cac:InvoiceLine>'.length) + '<broken';
    expect(readUblHeader(cut).receiver).to.not.equal(null);
    expect(() => readUbl(cut)).to.throw(UblRefusal);
    // So does it at the first element after both parties (here the payment means, before the totals).
    const afterParties = xml.slice(0, xml.indexOf('<cac:PaymentMeans>') + '<cac:PaymentMeans>'.length) + '<broken';
    expect(readUblHeader(afterParties)).to.deep.equal(readUblHeader(xml));
    expect(() => readUbl(afterParties)).to.throw(UblRefusal);
    // What is read must be well-formed UBL.
    const refusedParties = (text: string, code: string) => {
      expect(() => readUblHeader(text)).to.throw(UblRefusal).with.property('code', code);
    };
    refusedParties('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</ID><cac:AccountingCustomerParty>', 'XML_NOT_WELL_FORMED');
    refusedParties('<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"><ID>1</ID></Order>', 'XML_NOT_UBL');
    // A document without lines is read to its end, and its parties may be missing.
    expect(readUblHeader('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</ID></Invoice>')).to.deep.equal({ root: 'Invoice', sender: null, receiver: null, customizationId: null, profileId: null });
  });

  it('reads the header in the same pass: the CustomizationID and ProfileID the Peppol identifiers name', () => {
    for (const country of ['AE', 'BE', 'DE'] as const) {
      const { xml, read } = roundTripXml(country, 20, `${country}-H-1`);
      const ids = peppolIdentifiersOf(xml);
      expect(readUblHeader(xml)).to.deep.equal({ root: 'Invoice', sender: read.sender, receiver: read.receiver, customizationId: ids.customizationId, profileId: ids.processId });
    }
    // Absent (or empty) elements are null.
    expect(readUblHeader('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:CustomizationID> </cbc:CustomizationID><cbc:ID>1</cbc:ID></Invoice>')).to.deep.equal({
      root: 'Invoice',
      sender: null,
      receiver: null,
      customizationId: null,
      profileId: null,
    });
  });

  it('reads any namespace prefixes', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?><ubl:Invoice xmlns:ubl="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:a="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:b="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><b:ID>P-1</b:ID><b:IssueDate>2026-03-01</b:IssueDate><a:AccountingCustomerParty><a:Party><b:EndpointID schemeID="0235">1234567890</b:EndpointID></a:Party></a:AccountingCustomerParty></ubl:Invoice>`;
    const read = readUbl(screenXml(Buffer.from(xml), 1e7));
    expect(read).to.include({ documentNumber: 'P-1', issueDate: '2026-03-01' });
    expect(read.receiver).to.deep.equal({ scheme: '0235', value: '1234567890' });
  });
});
