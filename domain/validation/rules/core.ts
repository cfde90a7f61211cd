/**
 * Rule sets every supported country runs: value formats of the header, consistency with the
 * request's document type, country codes, and the arithmetic of lines and totals (warnings).
 */
import { dec } from '../../artifacts/normalize.js';
import { supportedCountries } from '../document-types.js';
import { countryFormat, currencyFormat, dateFormat, isCalendarDate, positiveNumber } from '../formats.js';
import { isRecord, recordAt } from '../paths.js';
import { check, format, ruleSet, type CheckFn, type RuleSet } from './define.js';

const ALL = supportedCountries;

/** Absolute tolerance of a rounded amount (one cent / fils / halala). */
export const AMOUNT_TOLERANCE = 0.01;

/** |actual − expected| ≤ tolerance, in decimal arithmetic on the numbers as written. */
function near(actual: number, expected: number | ReturnType<typeof dec>, tolerance: number): boolean {
  return dec(actual).minus(typeof expected === 'number' ? dec(expected) : expected).abs().lte(dec(tolerance));
}
/** The value when it is a finite number. */
const num = (v: unknown): number | undefined => (typeof v === 'number' && v - v === 0 ? v : undefined);
const rec = (v: unknown): Record<string, unknown> | undefined => (isRecord(v) ? v : undefined);
const show = (n: number) => String(Math.round(n * 1e6) / 1e6);

// Header ------------------------------------------------------------------------------------------

const baseMatchesRequest: CheckFn = (doc, ctx) => {
  const base = recordAt(recordAt(doc, 'header'), 'documentType')?.['base'];
  if (typeof base !== 'string' || base === '') return false;
  if (base !== ctx.documentType.base) {
    ctx.report(['header', 'documentType', 'base'], `header.documentType.base ${JSON.stringify(base.slice(0, 40))} differs from the request's documentType.base ${ctx.documentType.base}`);
  }
  return true;
};

const periodInOrder: CheckFn = (doc, ctx) => {
  const period = recordAt(recordAt(doc, 'header'), 'invoicePeriod');
  const start = period?.['startDate'];
  const end = period?.['endDate'];
  if (typeof start !== 'string' || typeof end !== 'string' || !isCalendarDate(start) || !isCalendarDate(end)) return false;
  if (end < start) ctx.report(['header', 'invoicePeriod', 'endDate']);
  return true;
};

export const coreHeader = ruleSet('core.header', 'Formats of header values and consistency with the request', ALL, [
  format(
    'CORE-HEAD-001',
    [
      'header.issueDate',
      'header.dueDate',
      'header.invoicePeriod.startDate',
      'header.invoicePeriod.endDate',
      'header.precedingInvoiceReference.issueDate',
      'extensions.peppol_precedingInvoiceIssueDate',
    ],
    dateFormat,
    'Dates must be real calendar dates written YYYY-MM-DD',
  ),
  format('CORE-HEAD-002', ['header.currency', 'header.taxCurrency'], currencyFormat, 'Currency codes must be ISO 4217 codes (three capital letters)'),
  format('CORE-HEAD-003', 'header.exchangeRate.rate', positiveNumber, 'The exchange rate must be greater than zero'),
  check(
    'CORE-HEAD-004',
    ['header.documentType.base'],
    "header.documentType.base must equal the request's documentType.base",
    "equal to the request's documentType.base",
    baseMatchesRequest,
  ),
  check(
    'CORE-HEAD-005',
    ['header.invoicePeriod.endDate'],
    'The invoice period must not end before it starts',
    'not before header.invoicePeriod.startDate',
    periodInOrder,
  ),
]);

/**
 * Document number reuse (docs/api/unify.md): a number that belongs to a live document or to one
 * that ended `final_invalid` is refused. It needs the event store, so the command layer
 * enforces it; the code and message live here so that its finding looks like every other.
 */
export const DOCUMENT_NUMBER_REUSE = {
  code: 'CORE-HEAD-010',
  message: 'The document number is already used by a document that is in progress, compliant or final_invalid; send a new number',
  severity: 'error',
  ruleSet: 'core.document_number',
  path: ['header', 'documentNumber'],
} as const;

// Parties -----------------------------------------------------------------------------------------

export const coreParties = ruleSet('core.parties', 'Formats of party values', ALL, [
  format(
    'CORE-PARTY-001',
    ['parties.seller.address.country', 'parties.buyer.address.country', 'parties.delivery.address.country'],
    countryFormat,
    'Country codes must be ISO 3166-1 alpha-2 codes (two capital letters)',
  ),
]);

// Lines and totals --------------------------------------------------------------------------------

const hasLines: CheckFn = (doc, ctx) => {
  const lines = doc['lineItems'];
  if (lines !== undefined && lines !== null && !Array.isArray(lines)) return false; // preflight reports the type
  if (!Array.isArray(lines) || lines.length === 0) ctx.report(['lineItems']);
  return true;
};

export const coreLines = ruleSet('core.lines', 'Presence of line items', ALL, [
  check('CORE-LINE-001', ['lineItems'], 'The document has no line items', 'at least one line item', hasLines, { severity: 'warning' }),
]);

const lineTaxable: CheckFn = (doc, ctx) => {
  const lines = doc['lineItems'];
  if (!Array.isArray(lines)) return false;
  let applied = false;
  for (let i = 0; i < lines.length; i++) {
    const line: unknown = lines[i];
    if (!isRecord(line)) continue;
    const quantity = num(line['quantity']);
    const taxable = num(line['lineTaxableValue']);
    const price = num(rec(line['price'])?.['amount']);
    if (quantity === undefined || taxable === undefined || price === undefined) continue;
    applied = true;
    const expected = dec(quantity).times(dec(price));
    if (!near(taxable, expected, AMOUNT_TOLERANCE)) {
      ctx.report(['lineItems', i, 'lineTaxableValue'], `lineTaxableValue ${show(taxable)} differs from quantity × price.amount = ${expected.toString()}`);
    }
  }
  return applied;
};

const lineTax: CheckFn = (doc, ctx) => {
  const lines = doc['lineItems'];
  if (!Array.isArray(lines)) return false;
  let applied = false;
  for (let i = 0; i < lines.length; i++) {
    const line: unknown = lines[i];
    if (!isRecord(line)) continue;
    const taxable = num(line['lineTaxableValue']);
    const rate = num(line['taxRate']);
    const tax = num(line['taxAmount']);
    if (taxable === undefined || rate === undefined || tax === undefined) continue;
    // Reverse charge (AE) and margin scheme (N): the rate is stated but no tax is charged on the line.
    const category = typeof line['taxCategory'] === 'string' ? line['taxCategory'].trim().toUpperCase() : '';
    if (category === 'AE' || category === 'N') continue;
    applied = true;
    const expected = dec(taxable).times(dec(rate)).div(100);
    if (!near(tax, expected, AMOUNT_TOLERANCE)) {
      ctx.report(['lineItems', i, 'taxAmount'], `taxAmount ${show(tax)} differs from lineTaxableValue × taxRate / 100 = ${expected.toString()}`);
    }
  }
  return applied;
};

/** The sum of `field` over all lines, or undefined when a line lacks it (nothing to compare). */
function sumOfLines(doc: Readonly<Record<string, unknown>>, field: 'lineTaxableValue' | 'taxAmount'): { sum: number; count: number } | undefined {
  const lines = doc['lineItems'];
  if (!Array.isArray(lines) || lines.length === 0) return undefined;
  let sum = dec(0);
  for (let i = 0; i < lines.length; i++) {
    const line: unknown = lines[i];
    if (!isRecord(line)) return undefined;
    const v = num(field === 'taxAmount' ? line['taxAmount'] : line['lineTaxableValue']);
    if (v === undefined) return undefined;
    sum = sum.plus(dec(v));
  }
  return { sum: sum.toNumber(), count: lines.length };
}

const totalLineTaxable: CheckFn = (doc, ctx) => {
  const total = num(rec(doc['totals'])?.['totalLineTaxableAmount']);
  if (total === undefined) return false;
  const lines = sumOfLines(doc, 'lineTaxableValue');
  if (!lines) return false;
  if (!near(total, lines.sum, AMOUNT_TOLERANCE)) {
    ctx.report(['totals', 'totalLineTaxableAmount'], `totalLineTaxableAmount ${show(total)} differs from the sum of line taxable values ${show(lines.sum)}`);
  }
  return true;
};

const totalTax: CheckFn = (doc, ctx) => {
  const total = num(rec(doc['totals'])?.['totalTaxAmount']);
  if (total === undefined) return false;
  const lines = sumOfLines(doc, 'taxAmount');
  if (!lines) return false;
  // Tax may be computed per category on summed amounts: allow half a cent of rounding per line.
  if (!near(total, lines.sum, Math.max(AMOUNT_TOLERANCE, 0.005 * lines.count))) {
    ctx.report(['totals', 'totalTaxAmount'], `totalTaxAmount ${show(total)} differs from the sum of line tax amounts ${show(lines.sum)}`);
  }
  return true;
};

const totalExcluding: CheckFn = (doc, ctx) => {
  const totals = recordAt(doc, 'totals');
  const excluding = num(totals?.['totalAmountExcludingTax']);
  if (excluding === undefined) return false;
  const expected = num(totals?.['totalLineTaxableAmount']) ?? sumOfLines(doc, 'lineTaxableValue')?.sum;
  if (expected === undefined) return false;
  if (!near(excluding, expected, AMOUNT_TOLERANCE)) {
    ctx.report(['totals', 'totalAmountExcludingTax'], `totalAmountExcludingTax ${show(excluding)} differs from the total of line taxable values ${show(expected)}`);
  }
  return true;
};

const totalIncluding: CheckFn = (doc, ctx) => {
  const totals = recordAt(doc, 'totals');
  const including = num(totals?.['totalAmountIncludingTax']);
  const excluding = num(totals?.['totalAmountExcludingTax']);
  const tax = num(totals?.['totalTaxAmount']);
  if (including === undefined || excluding === undefined || tax === undefined) return false;
  const expected = dec(excluding).plus(dec(tax));
  if (!near(including, expected, AMOUNT_TOLERANCE)) {
    ctx.report(['totals', 'totalAmountIncludingTax'], `totalAmountIncludingTax ${show(including)} differs from totalAmountExcludingTax + totalTaxAmount = ${expected.toString()}`);
  }
  return true;
};

const amountDue: CheckFn = (doc, ctx) => {
  const totals = recordAt(doc, 'totals');
  const due = num(totals?.['amountDue']);
  const including = num(totals?.['totalAmountIncludingTax']);
  if (due === undefined || including === undefined) return false;
  if (due < -AMOUNT_TOLERANCE || due > including + AMOUNT_TOLERANCE) {
    ctx.report(['totals', 'amountDue'], `amountDue ${show(due)} is not between 0 and totalAmountIncludingTax ${show(including)}`);
  }
  return true;
};

const warning = { severity: 'warning' } as const;

export const coreArithmetic = ruleSet('core.arithmetic', 'Arithmetic consistency of lines and totals (warnings)', ALL, [
  check('CORE-CALC-001', ['lineItems[].lineTaxableValue'], 'A line taxable value differs from quantity × price', 'quantity × price.amount, within 0.01', lineTaxable, warning),
  check('CORE-CALC-002', ['lineItems[].taxAmount'], 'A line tax amount differs from taxable value × rate / 100', 'lineTaxableValue × taxRate / 100, within 0.01', lineTax, warning),
  check('CORE-CALC-003', ['totals.totalLineTaxableAmount'], 'The total line taxable amount differs from the sum of the lines', 'sum of lineItems[].lineTaxableValue, within 0.01', totalLineTaxable, warning),
  check('CORE-CALC-004', ['totals.totalTaxAmount'], 'The total tax amount differs from the sum of the line tax amounts', 'sum of lineItems[].taxAmount, within 0.005 per line (at least 0.01)', totalTax, warning),
  check('CORE-CALC-005', ['totals.totalAmountIncludingTax'], 'The total including tax differs from total excluding tax + total tax', 'totalAmountExcludingTax + totalTaxAmount, within 0.01', totalIncluding, warning),
  check('CORE-CALC-006', ['totals.totalAmountExcludingTax'], 'The total excluding tax differs from the total of the line taxable values', 'totalLineTaxableAmount (or the sum of the lines), within 0.01', totalExcluding, warning),
  check('CORE-CALC-007', ['totals.amountDue'], 'The amount due is not between 0 and the total including tax', 'between 0 and totalAmountIncludingTax', amountDue, warning),
]);

export const coreRuleSets: readonly RuleSet[] = [coreHeader, coreParties, coreLines, coreArithmetic];
