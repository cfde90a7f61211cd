/**
 * The invoice PDF (docs/api/unify.md `pdfBase64`): a readable rendering of the core document with pdfkit —
 * document number and dates, the document UUID and state, seller and buyer (names, addresses, tax
 * and registration ids), the lines table, the tax breakdown per category and rate, the totals, and a
 * QR code where the country uses one (Saudi Arabia: the ZATCA TLV payload; UAE: the document UUID).
 *
 * Pure apart from pdfkit's in-memory stream: no files, no clock (the PDF creation date is the
 * document's issue date, so the same input renders the same bytes). The built-in Helvetica covers
 * WinAnsi (Latin) text only; other characters are shown as "?".
 */
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import type { ArtifactDocumentType, CoreAddress, CoreDocument, CoreParty } from './core-document.js';
import { emirateCode } from './codes.js';
import {
  documentCurrency,
  documentTotals,
  formatAmount,
  formatDecimal,
  formatPercent,
  isoDate,
  normalizeLines,
  resolveDocumentType,
  str,
  taxBreakdown,
  uncl5305Category,
  type ResolvedDocumentType,
} from './normalize.js';
import { myTaxType } from './myinvois.js';
import { pintAeContext } from './pint-ae.js';

export interface RenderInvoicePdfInput {
  country: string;
  documentType: ArtifactDocumentType;
  document: CoreDocument;
  uuid: string;
  /** The document's state (docs/api/unify.md), printed on the PDF. */
  state: string;
  /** QR payload: the ZATCA TLV (Base64) for Saudi Arabia; UAE defaults to the document UUID. */
  qr?: string;
  /** Compress the content streams (default true); tests turn it off to read the text. */
  compress?: boolean;
}

const DEFAULT_CURRENCY: Record<string, string> = { AE: 'AED', SA: 'SAR', MY: 'MYR', BE: 'EUR', DE: 'EUR' };

const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** Text Helvetica can show: Latin-1 and the WinAnsi extras; anything else becomes "?". */
function pdfText(value: string | undefined): string {
  if (!value) return '';
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    out += (code >= 0x20 && code <= 0xff && !(code >= 0x7f && code < 0xa0)) || WIN_ANSI_EXTRA.has(ch) ? ch : code === 0x0a ? ' ' : '?';
  }
  return out;
}

function title(country: string, dt: ResolvedDocumentType): string {
  const kind = dt.kind === 'credit_note' ? 'Credit Note' : dt.kind === 'debit_note' ? 'Debit Note' : country === 'AE' || country === 'SA' ? 'Tax Invoice' : 'Invoice';
  return (dt.simplified ? `Simplified ${kind}` : kind).toUpperCase();
}

function addressLines(address: CoreAddress | undefined, country: string): string[] {
  if (!address) return [];
  const lines = [address.addressLine1, address.addressLine2, address.addressLine3].map(str).filter((l): l is string => !!l);
  if (address.streetName && !lines.includes(address.streetName)) lines.unshift([address.buildingNumber, address.streetName].filter(Boolean).join(' '));
  const subdivision = address.stateOrProvince ?? address.countrySubdivision;
  const region = country === 'AE' && (address.country ?? '').toUpperCase() === 'AE' ? emirateCode(subdivision) : str(subdivision);
  const cityLine = [str(address.postalCode), str(address.city), str(address.district)].filter(Boolean).join(' ');
  if (cityLine) lines.push(cityLine);
  const tail = [region, str(address.country)?.toUpperCase()].filter(Boolean).join(', ');
  if (tail) lines.push(tail);
  return lines;
}

function partyLines(party: CoreParty | undefined, country: string): string[] {
  if (!party) return ['-'];
  const lines = addressLines(party.address, country);
  for (const id of party.taxIds ?? []) if (str(id.value)) lines.push(`${str(id.type) ?? 'Tax ID'}: ${id.value}`);
  for (const id of party.registrationNumbers ?? []) if (str(id.value)) lines.push(`${str(id.type) ?? 'Registration'}: ${id.value}`);
  if (str(party.peppolId)) lines.push(`Peppol ID: ${party.peppolId}`);
  return lines;
}

type Doc = InstanceType<typeof PDFDocument>;

/** Writes `text` on one line inside `width`, cutting it with an ellipsis when it does not fit. */
function cell(pdf: Doc, text: string, x: number, y: number, width: number, align: 'left' | 'right' | 'center' = 'left'): void {
  let t = pdfText(text);
  if (pdf.widthOfString(t) > width) {
    while (t.length > 1 && pdf.widthOfString(`${t}…`) > width) t = t.slice(0, -1);
    t = `${t}…`;
  }
  pdf.text(t, x, y, { width, align, lineBreak: false });
}

/** Draws a QR code as vector modules (runs of dark modules merged per row). */
function drawQr(pdf: Doc, payload: string, x: number, y: number, size: number): void {
  const qr = QRCode.create(payload, { errorCorrectionLevel: 'M' });
  const n = qr.modules.size;
  const quiet = 2;
  const unit = size / (n + quiet * 2);
  pdf.save();
  for (let row = 0; row < n; row++) {
    let col = 0;
    while (col < n) {
      if (!qr.modules.get(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < n && qr.modules.get(row, col)) col++;
      pdf.rect(x + (start + quiet) * unit, y + (row + quiet) * unit, (col - start) * unit, unit);
    }
  }
  pdf.fill('#000000');
  pdf.restore();
}

export async function renderInvoicePdf(input: RenderInvoicePdfInput): Promise<Buffer> {
  const country = input.country.trim().toUpperCase();
  const dt = resolveDocumentType(input.documentType);
  const doc = input.document;
  const header = doc.header ?? {};
  const cur = documentCurrency(doc, DEFAULT_CURRENCY[country] ?? 'USD');
  const lines = normalizeLines(doc);
  const categoryOf =
    country === 'MY' ? myTaxType : (raw: string | undefined, rate: number) => uncl5305Category(raw, rate, dt.modifiers);
  const breakdown = taxBreakdown(doc, lines, categoryOf);
  const totals = documentTotals(doc, lines, breakdown);
  const issueDate = isoDate(header.issueDate);
  const qrPayload = str(input.qr) ?? (country === 'AE' ? input.uuid : undefined);

  const pdf = new PDFDocument({
    size: 'A4',
    margin: 40,
    compress: input.compress ?? true,
    info: {
      Title: pdfText(`${title(country, dt)} ${header.documentNumber ?? ''}`.trim()),
      Author: pdfText(doc.parties?.seller?.name),
      CreationDate: issueDate ? new Date(`${issueDate}T00:00:00Z`) : new Date(0),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });

  const left = 40;
  const right = pdf.page.width - 40;
  const width = right - left;
  const bottom = pdf.page.height - 50;

  // Heading and document facts.
  pdf.font('Helvetica-Bold').fontSize(18).text(title(country, dt), left, 40, { width: width - 120 });
  pdf.font('Helvetica').fontSize(9);
  const facts: Array<[string, string | undefined]> = [
    ['Document number', header.documentNumber],
    ['Issue date', issueDate],
    ['Due date', isoDate(header.dueDate)],
    ['Currency', cur],
    ['Preceding invoice', header.precedingInvoiceReference?.id],
    ['Invoice period', header.invoicePeriod?.startDate ? `${header.invoicePeriod.startDate} - ${header.invoicePeriod.endDate ?? ''} ${header.invoicePeriod.frequency ?? ''}`.trim() : undefined],
    ['Document UUID', input.uuid],
    ['State', input.state],
  ];
  let y = 68;
  for (const [label, value] of facts) {
    if (!str(value)) continue;
    pdf.font('Helvetica-Bold').text(`${label}:`, left, y, { width: 100, lineBreak: false });
    pdf.font('Helvetica');
    cell(pdf, value!, left + 100, y, width - 220);
    y += 12;
  }
  const qrSize = 100;
  if (qrPayload) drawQr(pdf, qrPayload, right - qrSize, 36, qrSize);
  y = Math.max(y, 36 + (qrPayload ? qrSize : 0)) + 12;

  // Parties.
  const colWidth = (width - 20) / 2;
  const partyTop = y;
  let partyBottom = y;
  ([['Seller', doc.parties?.seller, left], ['Buyer', doc.parties?.buyer, left + colWidth + 20]] as const).forEach(([label, party, x]) => {
    let py = partyTop;
    pdf.font('Helvetica-Bold').fontSize(8).fillColor('#555555').text(label.toUpperCase(), x, py, { width: colWidth });
    py += 11;
    pdf.fillColor('#000000').fontSize(10);
    cell(pdf, party?.name ?? '-', x, py, colWidth);
    py += 13;
    pdf.font('Helvetica').fontSize(8.5);
    for (const line of partyLines(party, country)) {
      cell(pdf, line, x, py, colWidth);
      py += 11;
    }
    partyBottom = Math.max(partyBottom, py);
  });
  y = partyBottom + 14;

  // Lines table.
  const columns = [
    { label: '#', w: 22, align: 'left' as const },
    { label: 'Item', w: 150, align: 'left' as const },
    { label: 'Qty', w: 45, align: 'right' as const },
    { label: 'Unit', w: 38, align: 'center' as const },
    { label: 'Unit price', w: 65, align: 'right' as const },
    { label: 'Taxable', w: 72, align: 'right' as const },
    { label: 'Rate', w: 52, align: 'right' as const },
    { label: 'Tax', w: width - 444, align: 'right' as const },
  ];
  const drawHeaderRow = () => {
    pdf.rect(left, y - 3, width, 15).fill('#eeeeee');
    pdf.fillColor('#000000').font('Helvetica-Bold').fontSize(8);
    let x = left;
    for (const c of columns) {
      cell(pdf, c.label, x + 2, y, c.w - 4, c.align);
      x += c.w;
    }
    y += 16;
    pdf.font('Helvetica').fontSize(8);
  };
  drawHeaderRow();
  for (const line of lines) {
    if (y > bottom - 14) {
      pdf.addPage();
      y = 40;
      drawHeaderRow();
    }
    const category = categoryOf(line.rawCategory, line.rate);
    const values = [
      line.id,
      line.name ?? line.description ?? '',
      formatDecimal(line.quantity),
      line.unitCode,
      formatAmount(line.price),
      formatAmount(line.net),
      `${category} ${formatPercent(line.rate)}%`,
      formatAmount(line.tax),
    ];
    let x = left;
    columns.forEach((c, i) => {
      cell(pdf, values[i] ?? '', x + 2, y, c.w - 4, c.align);
      x += c.w;
    });
    y += 13;
  }
  pdf.moveTo(left, y).lineTo(right, y).lineWidth(0.5).stroke('#999999');
  y += 12;

  // Tax breakdown and totals side by side.
  if (y > bottom - 110) {
    pdf.addPage();
    y = 40;
  }
  const blockTop = y;
  pdf.fillColor('#000000').font('Helvetica-Bold').fontSize(9).text('Tax breakdown', left, y);
  y += 14;
  pdf.fontSize(8);
  const bx = [left, left + 60, left + 120, left + 200];
  ['Category', 'Rate', 'Taxable', 'Tax'].forEach((h, i) => cell(pdf, h, bx[i]!, y, 70, i < 2 ? 'left' : 'right'));
  y += 12;
  pdf.font('Helvetica');
  for (const b of breakdown) {
    cell(pdf, b.category, bx[0]!, y, 55);
    cell(pdf, `${formatPercent(b.rate)}%`, bx[1]!, y, 55);
    cell(pdf, formatAmount(b.taxable), bx[2]!, y, 70, 'right');
    cell(pdf, formatAmount(b.tax), bx[3]!, y, 70, 'right');
    y += 12;
  }

  const tx = left + width - 220;
  let ty = blockTop;
  const totalRows: Array<[string, number | undefined, boolean]> = [
    ['Total excluding tax', totals.taxExclusive, false],
    ['Total tax', totals.tax, false],
    ['Total including tax', totals.taxInclusive, true],
    ['Prepaid', totals.prepaid, false],
    ['Rounding', totals.rounding, false],
    ['Amount due', totals.payable, true],
  ];
  for (const [label, value, bold] of totalRows) {
    if (value === undefined) continue;
    pdf.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(bold ? 10 : 9);
    cell(pdf, label, tx, ty, 120);
    cell(pdf, `${formatAmount(value)} ${cur}`, tx + 120, ty, 100, 'right');
    ty += bold ? 15 : 13;
  }
  if (country === 'AE' && cur !== 'AED') {
    // UAE tax invoices in another currency show the tax (and total) in AED as well.
    const ae = pintAeContext(doc, dt, input.uuid);
    for (const [label, value] of [
      ['Total tax in AED', ae.taxInAed],
      ['Total including tax in AED', ae.totalInAed],
    ] as const) {
      if (value === undefined) continue;
      pdf.font('Helvetica').fontSize(9);
      cell(pdf, label, tx, ty, 120);
      cell(pdf, `${formatAmount(value)} AED`, tx + 120, ty, 100, 'right');
      ty += 13;
    }
  }
  y = Math.max(y, ty) + 16;

  pdf.font('Helvetica').fontSize(7).fillColor('#555555');
  cell(pdf, `Document UUID ${input.uuid} - ${country} e-invoice, state ${input.state}`, left, Math.min(y, bottom), width);
  pdf.end();
  return done;
}
