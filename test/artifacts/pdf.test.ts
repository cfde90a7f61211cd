import { expect } from 'chai';
import { generateInvoiceXml, renderInvoicePdf, type RenderInvoicePdfInput } from '../../domain/artifacts/index.js';
import { europeanDocument, malaysianDocument, saudiDocument, uaeDocument } from './fixtures.js';

/**
 * The text of an uncompressed pdfkit PDF: pdfkit writes each text run as a TJ array of hex strings
 * (WinAnsi codes) split at kerning adjustments; joining the strings of one array gives the run.
 */
function pdfText(pdf: Buffer): string[] {
  const source = pdf.toString('latin1');
  return [...source.matchAll(/\[([^\]]*)\] TJ/g)].map((m) =>
    [...m[1]!.matchAll(/<([0-9a-fA-F]*)>/g)].map((h) => Buffer.from(h[1]!, 'hex').toString('latin1')).join(''),
  );
}

function render(input: Partial<RenderInvoicePdfInput> & Pick<RenderInvoicePdfInput, 'country' | 'document'>): Promise<Buffer> {
  return renderInvoicePdf({ documentType: { base: 'tax_invoice', modifiers: [] }, uuid: 'pdf-uuid-0001', state: 'final_valid', compress: false, ...input });
}

describe('artifacts: invoice PDF', function () {
  it('renders a UAE invoice: number, dates, parties, lines, tax breakdown, totals, UUID and state', async function () {
    const document = uaeDocument({ lines: 5 });
    const pdf = await render({ country: 'AE', document });
    expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
    expect(pdf.length).to.be.within(5_000, 500_000);
    const text = pdfText(pdf);
    for (const expected of [
      'TAX INVOICE',
      'AE-tax_invoice-plain-AED',
      '2025-07-01',
      '2025-07-31',
      'Emirates Trading LLC',
      'Abu Dhabi Buyer LLC',
      'TRN: 100000000000003',
      'Sheikh Zayed Road 1',
      'DXB, AE',
      'Item 1 & co <special>',
      'S 5.00%',
      'E 0.00%',
      '1462.50 AED',
      '62.50 AED',
      'pdf-uuid-0001',
      'final_valid',
    ]) {
      expect(text.some((t) => t.includes(expected)), `missing "${expected}" in ${JSON.stringify(text.slice(0, 60))}`).to.equal(true);
    }
  });

  it('shows the tax and total in AED on a UAE invoice in another currency', async function () {
    const text = pdfText(await render({ country: 'AE', document: uaeDocument({ currency: 'USD' }) }));
    expect(text).to.include('Total tax in AED');
    expect(text).to.include('128.54 AED');
    expect(text).to.include('2699.29 AED');
  });

  it('draws a QR code for Saudi Arabia (the ZATCA payload) and the UAE (the UUID), none for Germany', async function () {
    const sa = generateInvoiceXml({ country: 'SA', documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' }, document: saudiDocument({ simplified: true }), uuid: 'u' });
    const rects = (pdf: Buffer) => (pdf.toString('latin1').match(/ re\n/g) ?? []).length;
    const saPdf = await render({ country: 'SA', document: saudiDocument({ simplified: true }), documentType: { base: 'tax_invoice', modifiers: [], variant: 'simplified' }, qr: sa.qr });
    const aePdf = await render({ country: 'AE', document: uaeDocument() });
    const dePdf = await render({ country: 'DE', document: europeanDocument('DE') });
    expect(pdfText(saPdf).some((t) => t.includes('SIMPLIFIED TAX INVOICE'))).to.equal(true);
    // A QR code is a few hundred module runs; the table background is one rectangle per header.
    expect(rects(saPdf)).to.be.greaterThan(200);
    expect(rects(aePdf)).to.be.greaterThan(100);
    expect(rects(dePdf)).to.be.lessThan(5);
    expect(pdfText(dePdf).some((t) => t.includes('Berlin Maschinenbau GmbH'))).to.equal(true);
    expect(pdfText(dePdf).some((t) => t.includes('1728.00 EUR'))).to.equal(true);
  });

  it('renders credit notes, Malaysian documents and long documents over several pages', async function () {
    const credit = await render({ country: 'AE', document: uaeDocument({ base: 'credit_note' }), documentType: { base: 'credit_note', modifiers: [] } });
    const creditText = pdfText(credit);
    expect(creditText).to.include('CREDIT NOTE');
    expect(creditText.some((t) => t.includes('AE-INV-0001'))).to.equal(true);
    const myPdf = await render({ country: 'MY', document: malaysianDocument() });
    expect(pdfText(myPdf).some((t) => t.includes('6680.00 MYR'))).to.equal(true);
    const long = await render({ country: 'AE', document: uaeDocument({ lines: 120 }) });
    expect((long.toString('latin1').match(/\/Type \/Page\b/g) ?? []).length).to.be.greaterThan(2);
    expect(pdfText(long).some((t) => t.startsWith('120'))).to.equal(true);
  });

  it('is deterministic and survives text outside the built-in font', async function () {
    const document = uaeDocument();
    const a = await render({ country: 'AE', document, compress: true });
    const b = await render({ country: 'AE', document, compress: true });
    expect(a.equals(b)).to.equal(true);
    const arabic = uaeDocument();
    arabic.parties!.seller!.name = 'شركة الإمارات للتجارة';
    const pdf = await render({ country: 'AE', document: arabic });
    expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
    expect(pdfText(pdf).some((t) => t.includes('?????'))).to.equal(true);
  });

  it('renders an almost empty document without failing', async function () {
    const pdf = await render({ country: 'SA', document: {} });
    expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
  });
});
