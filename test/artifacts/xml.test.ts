import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { generateInvoiceXml, generateTaxDataDocument, type CoreDocument } from '../../domain/artifacts/index.js';
import { europeanDocument, malaysianDocument, uaeDocument } from './fixtures.js';
import { amount, branch, branchAfter, leaf, newXmlDocument, serialize, serializeHeadless } from '../../domain/artifacts/xml.js';
import { at, parseXml } from './xml-query.js';
import { mainSchema, validateAgainst } from './xsd.js';

/** Payload text that looks like markup, entity or character references, CDATA ends and quotes. */
const TRICKY = `AT&amp;T &QUOT;x&QUOT; &#38; &#x26; &apos; &lt;b&gt; <i>O'Brien</i> "q" ]]> & done`;
const envelopeSchema = { fileName: 'tdd-envelope.xsd', contents: readFileSync(new URL('./tdd-envelope.xsd', import.meta.url), 'utf8') };

function withTrickyBuyer(doc: CoreDocument): CoreDocument {
  doc.parties!.buyer!.name = TRICKY;
  return doc;
}

describe('artifacts: XML serialization', function () {
  this.timeout(120_000); // xmllint-wasm compiles the UBL schemas on every run
  const invoiceType = { base: 'tax_invoice', modifiers: [] };
  const ae = generateInvoiceXml({ country: 'AE', documentType: invoiceType, document: withTrickyBuyer(uaeDocument()), uuid: 'u' }).xml;
  const my = generateInvoiceXml({ country: 'MY', documentType: invoiceType, document: withTrickyBuyer(malaysianDocument()), uuid: 'u' }).xml;
  const be = generateInvoiceXml({ country: 'BE', documentType: invoiceType, document: withTrickyBuyer(europeanDocument('BE')), uuid: 'u' }).xml;
  const tdd = generateTaxDataDocument({ documentType: invoiceType, document: withTrickyBuyer(uaeDocument()), uuid: 'u', reportedAt: '2025-07-01T08:30:00Z' }).xml;

  it('escapes every & < > of payload text, so text that looks like a reference is read back verbatim', function () {
    for (const xml of [ae, my, be]) {
      expect(at(parseXml(xml), 'Invoice', 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PartyLegalEntity', 'cbc:RegistrationName')).to.equal(TRICKY);
    }
    expect(ae).to.include(
      '<cbc:RegistrationName>AT&amp;amp;T &amp;QUOT;x&amp;QUOT; &amp;#38; &amp;#x26; &amp;apos; &amp;lt;b&amp;gt; &lt;i&gt;O\'Brien&lt;/i&gt; "q" ]]&gt; &amp; done</cbc:RegistrationName>',
    );
    const embedded = at(parseXml(tdd), 'pxs:TaxData', 'pxs:ReportedTransaction', 'pxs:SourceDocument', 'cec:ExtensionContent', 'Invoice');
    expect(at(embedded, 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PartyLegalEntity', 'cbc:RegistrationName')).to.equal(TRICKY);
  });

  it('the documents with such text stay well-formed and schema-valid', async function () {
    const results = await validateAgainst(mainSchema('Invoice'), [
      { name: 'ae', xml: ae },
      { name: 'my', xml: my },
      { name: 'be', xml: be },
    ]);
    for (const [name, r] of results) expect(r.valid, `${name}: ${r.errors.join(' | ')}`).to.equal(true);
    const envelope = await validateAgainst(envelopeSchema, [{ name: 'tdd', xml: tdd }], [mainSchema('Invoice'), mainSchema('CreditNote')]);
    expect(envelope.get('tdd')!.valid, envelope.get('tdd')!.errors.join(' | ')).to.equal(true);
  });

  it('writes compact XML with the declaration and start-end tag pairs for empty elements', function () {
    for (const xml of [ae, my, be, tdd]) {
      expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?><')).to.equal(true);
      expect(xml).to.not.match(/>\s+</);
      expect(xml).to.not.include('/>');
    }
  });
});

describe('artifacts: the XML writer', function () {
  it('cleans and escapes attribute values: & < " escaped, apostrophes literal, whitespace to spaces, > and controls dropped', function () {
    const doc = newXmlDocument();
    const root = branch(doc, 'r', { a: `O'Brien & "Co" <x>`, b: 'tab\there\r\nnext\u0001', c: '', d: undefined, e: '>' });
    leaf(root, 'v', 'x', { schemeID: "it's" });
    expect(serializeHeadless(doc)).to.equal(`<r a="O'Brien &amp; &quot;Co&quot; &lt;x" b="tab here  next" e=""><v schemeID="it's">x</v></r>`);
  });

  it('cleans and escapes text: & < > escaped, quotes literal, CR and CRLF to LF, invalid characters dropped; empty values write nothing', function () {
    const doc = newXmlDocument();
    const root = branch(doc, 'r');
    leaf(root, 't', `  a & b < c > d "q" 'a'\r\ne\rf\u0000\uFFFE  `);
    leaf(root, 'n', 12.5);
    leaf(root, 'blank', '   ');
    leaf(root, 'gone', '\u0001');
    leaf(root, 'none', undefined);
    leaf(root, 'nil', null);
    amount(root, 'm', 1234.5, 'AED');
    amount(root, 'nocurrency', 3, '');
    amount(root, 'nan', Number.NaN, 'AED');
    expect(serialize(doc)).to.equal(
      `<?xml version="1.0" encoding="UTF-8"?><r><t>a &amp; b &lt; c &gt; d "q" 'a'\ne\nf</t><n>12.5</n><m currencyID="AED">1234.50</m><nocurrency currencyID="">3.00</nocurrency></r>`,
    );
  });

  it('writes empty aggregates as start-end pairs, and keeps aggregates open for later children and inserted siblings', function () {
    const doc = newXmlDocument();
    const root = branch(doc, 'r');
    const first = branch(root, 'first');
    branch(root, 'last');
    expect(serializeHeadless(doc)).to.equal('<r><first></first><last></last></r>');
    leaf(first, 'x', '1');
    branchAfter(root, first, 'middle', { id: 'm' });
    expect(serializeHeadless(doc)).to.equal('<r><first><x>1</x></first><middle id="m"></middle><last></last></r>');
    expect(() => branchAfter(root, branch(doc, 'other'), 'y')).to.throw(/not a child/);
  });
});
