/**
 * Reading the core document into the figures every generator writes: the resolved document type,
 * numbers, lines with their net and tax amounts, the tax breakdown per category and rate, and the
 * document totals. Pure; tolerant of missing optional data (see core-document.ts).
 */
import { Dec, ExactDecimal } from './exact-decimal.js';
import type {
  ArtifactDocumentType,
  CoreDocument,
  CoreIdentifier,
  CoreNumber,
  CoreParty,
  CoreTaxSubtotal,
} from './core-document.js';

export type DocumentKind = 'invoice' | 'credit_note' | 'debit_note';

export interface ResolvedDocumentType {
  kind: DocumentKind;
  modifiers: ReadonlySet<string>;
  variant: string | undefined;
  /** Saudi simplified (B2C) documents. */
  simplified: boolean;
  selfBilled: boolean;
}

const MODIFIER_ALIASES: Record<string, string> = {
  ecommerce: 'e_commerce',
  exports: 'export',
  free_zone: 'free_trade_zone',
  freezone: 'free_trade_zone',
  agent: 'disclosed_agent',
  disclosed_agent_billing: 'disclosed_agent',
  margin: 'margin_scheme',
  summary_invoice: 'summary',
  self_billing: 'self_billed',
  selfbilled: 'self_billed',
  nominal: 'nominal_supply',
  third_party_invoice: 'third_party',
};

function token(value: string): string {
  return value.trim().toLowerCase().replace(/[\s-]+/g, '_');
}

export function normalizeModifier(value: string): string {
  const t = token(value);
  return MODIFIER_ALIASES[t] ?? t;
}

export function resolveDocumentType(documentType: ArtifactDocumentType): ResolvedDocumentType {
  const base = token(documentType.base ?? '');
  const modifiers = new Set((documentType.modifiers ?? []).map(normalizeModifier));
  const variant = documentType.variant ? token(documentType.variant) : undefined;
  const kind: DocumentKind = base.includes('credit') ? 'credit_note' : base.includes('debit') ? 'debit_note' : 'invoice';
  const simplified = base.includes('simplified') || variant === 'simplified' || modifiers.has('simplified');
  const selfBilled = base.includes('self_billed') || modifiers.has('self_billed') || variant === 'self_billed';
  return { kind, modifiers, variant, simplified, selfBilled };
}

// ---------------------------------------------------------------------------------------------
// Numbers and text
// ---------------------------------------------------------------------------------------------

export function num(value: CoreNumber | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Decimal arithmetic for amounts (`exact-decimal.ts`: integers of units while they fit, decimal.js
 * beyond): a number enters as the decimal it is written as (its shortest JavaScript form: 1.005
 * is 1.005, not the binary value below it), sums and products are exact, and rounding is half
 * away from zero to 2 decimals, as EN 16931 and the Peppol rules compute (BR-CO-10..17, BR-CO-17's
 * category tax). Figures leave this module as numbers holding exactly the rounded decimal, which
 * `formatAmount` writes back digit for digit.
 */
export { Dec, ExactDecimal };

/** The decimal a number or numeric string stands for. */
export function dec(n: number | string | ExactDecimal): ExactDecimal {
  return ExactDecimal.of(n);
}

/** Rounds half away from zero to 2 decimals. */
export function money(d: ExactDecimal): ExactDecimal {
  return d.toDecimalPlaces(2);
}

/** Half-away-from-zero rounding to 2 decimals, in decimal arithmetic (1.005 → 1.01). */
export function round2(n: number): number {
  if (!Number.isFinite(n)) return n;
  const r = money(dec(n)).toNumber();
  return r === 0 ? 0 : r;
}

/** The sum of numbers, exact, then rounded to 2 decimals. */
export function sum2(values: readonly number[]): number {
  let total = dec(0);
  for (const v of values) total = total.plus(dec(v));
  return round2(total.toNumber());
}

/**
 * Below this magnitude a whole number of cents is written from the integer (see `centsText`): the
 * figures are those of `round2(n).toFixed(2)`, without its cost (amounts are most of a document's
 * text). Larger values, NaN and infinities take `toFixed`.
 */
const CENTS_FAST_LIMIT = 1e12;

/** `cents` hundredths (a non-negative integer below 2^53) written with 2 decimals, "-" first when `negative`. */
function centsText(cents: number, negative: boolean): string {
  const whole = Math.floor(cents / 100);
  const fraction = cents - whole * 100;
  return (negative ? '-' : '') + whole + (fraction < 10 ? '.0' : '.') + fraction;
}

/**
 * From 1e21 on, `toFixed` writes exponent notation ("2.5e+22"), which is no xs:decimal. Such a
 * double is a whole number: written in full from JavaScript's shortest form of it ("25" and 21
 * zeros, as it was most likely written, not the double's exact binary value). Null below that
 * limit, and for NaN and infinities (which toFixed writes as they are).
 */
function hugeInteger(n: number): string | null {
  if (!Number.isFinite(n) || (n < 1e21 && n > -1e21)) return null;
  const [mantissa, exponent] = String(n < 0 ? -n : n).split('e+') as [string, string];
  const [whole, fraction = ''] = mantissa.split('.') as [string, string?];
  return (n < 0 ? '-' : '') + whole + fraction + '0'.repeat(Number(exponent) - fraction.length);
}

/** An amount as UBL writes it: 2 decimals, rounded as `round2` rounds, never "-0.00". */
export function formatAmount(n: number): string {
  const abs = n < 0 ? -n : n;
  if (!(abs < CENTS_FAST_LIMIT)) {
    const huge = hugeInteger(n);
    return huge === null ? round2(n).toFixed(2) : `${huge}.00`;
  }
  // The same integer as round2 (which divides it by 100 again).
  const cents = Math.round(abs * 100 + 1e-7);
  return centsText(cents, n < 0 && cents !== 0);
}

/** A quantity or rate with up to 6 decimals and no trailing zeros. */
export function formatDecimal(n: number, maxDecimals = 6): string {
  // Safe integers (most quantities) are written as they are, which is what trimming toFixed gives.
  if (Number.isSafeInteger(n)) return String(n);
  const huge = hugeInteger(n);
  if (huge !== null) return huge;
  const fixed = n.toFixed(maxDecimals);
  if (!fixed.includes('.')) return fixed === '-0' ? '0' : fixed;
  // Drop the trailing zeros, then a trailing point.
  let end = fixed.length;
  while (fixed.charCodeAt(end - 1) === 48 /* 0 */) end--;
  if (fixed.charCodeAt(end - 1) === 46 /* . */) end--;
  const trimmed = end === fixed.length ? fixed : fixed.slice(0, end);
  return trimmed === '-0' ? '0' : trimmed;
}

/** A percentage with 2 decimals ("5.00"). */
export function formatPercent(n: number): string {
  return formatAmount(n);
}

export function str(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const s = typeof value === 'string' ? value.trim() : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
  return s === undefined || s === '' ? undefined : s;
}

/** YYYY-MM-DD from a date or a date-time. */
export function isoDate(value: string | undefined): string | undefined {
  const s = str(value);
  return s ? s.slice(0, 10) : undefined;
}

/** HH:MM:SS from an ISO timestamp (UTC as given) or a time value. */
export function isoTime(value: string | undefined): string | undefined {
  const s = str(value);
  if (!s) return undefined;
  const m = /(?:T|^)(\d{2}):(\d{2})(?::(\d{2}))?/.exec(s);
  if (!m) return undefined;
  return `${m[1]}:${m[2]}:${m[3] ?? '00'}`;
}

// ---------------------------------------------------------------------------------------------
// Parties
// ---------------------------------------------------------------------------------------------

function matchId(ids: CoreIdentifier[] | undefined, types: readonly string[]): CoreIdentifier | undefined {
  if (!ids || ids.length === 0) return undefined;
  const wanted = types.map((t) => t.toUpperCase());
  return ids.find((id) => id.value && wanted.includes((id.type ?? '').toUpperCase()));
}

/** The party's tax id of one of `types` (case-insensitive), else its first tax id with a value. */
export function taxIdOf(party: CoreParty | undefined, types: readonly string[]): string | undefined {
  const ids = party?.taxIds;
  return str(matchId(ids, types)?.value ?? ids?.find((id) => str(id.value))?.value);
}

/** Only a tax id of one of `types`. */
export function taxIdOfType(party: CoreParty | undefined, types: readonly string[]): string | undefined {
  return str(matchId(party?.taxIds, types)?.value);
}

export function registrationOf(party: CoreParty | undefined, types?: readonly string[]): CoreIdentifier | undefined {
  const ids = party?.registrationNumbers;
  if (!ids) return undefined;
  return (types ? matchId(ids, types) : undefined) ?? ids.find((id) => str(id.value));
}

/** Splits "0235:1234567890" into scheme and value when a payload sends the prefix anyway. */
export function splitParticipantId(id: string | undefined, scheme: string | undefined): { scheme: string | undefined; value: string | undefined } {
  const value = str(id);
  if (value && /^\d{4}:/.test(value)) return { scheme: value.slice(0, 4), value: value.slice(5) };
  return { scheme: str(scheme), value };
}

// ---------------------------------------------------------------------------------------------
// Lines, breakdown, totals
// ---------------------------------------------------------------------------------------------

export interface NormalizedLine {
  id: string;
  name: string | undefined;
  description: string | undefined;
  quantity: number;
  unitCode: string;
  /** Net unit price. */
  price: number;
  /** Gross unit price (before the price discount); equals `price` when not given. */
  grossPrice: number;
  baseQuantity: number;
  /** Line net (taxable) amount. */
  net: number;
  tax: number;
  /** Whether the payload gave the line's tax amount (then the breakdown sums the lines' taxes). */
  taxGiven: boolean;
  /** Category as sent, upper-cased (the generator maps it to its own code list). */
  rawCategory: string | undefined;
  rate: number;
  exemptionReason: string | undefined;
  exemptionReasonCode: string | undefined;
  classification: { code: string; scheme: string | undefined } | undefined;
  sellerItemId: string | undefined;
  /** Item standard identifier (IBT-157), e.g. a GTIN under scheme 0160. */
  standardItemId: { id: string; scheme: string | undefined } | undefined;
  ext: Record<string, unknown>;
}

export function normalizeLines(doc: CoreDocument, defaultUnit = 'C62'): NormalizedLine[] {
  return (doc.lineItems ?? []).map((item, index) => {
    const quantity = num(item.quantity) ?? 1;
    const price = num(item.price?.amount);
    const netGiven = num(item.lineTaxableValue);
    const baseQuantity = num(item.price?.baseQuantity) ?? 1;
    const unitPrice = price ?? (netGiven !== undefined && quantity !== 0 ? dec(netGiven).div(dec(quantity)).toDecimalPlaces(6).toNumber() : 0);
    // Line net = quantity × (price / base quantity), rounded to 2 decimals (decimal arithmetic).
    const net = netGiven ?? money(dec(quantity).times(dec(unitPrice)).div(dec(baseQuantity || 1))).toNumber();
    const rate = num(item.taxRate) ?? 0;
    const tax = num(item.taxAmount) ?? money(dec(net).times(dec(rate)).div(100)).toNumber();
    const code = str(item.commodityClassification?.code);
    return {
      id: str(item.id) ?? String(index + 1),
      name: str(item.name),
      description: str(item.description),
      quantity,
      unitCode: str(item.unitCode) ?? defaultUnit,
      price: unitPrice,
      grossPrice: num(item.price?.grossPrice) ?? unitPrice,
      baseQuantity,
      net,
      tax,
      taxGiven: num(item.taxAmount) !== undefined,
      rawCategory: str(item.taxCategory)?.toUpperCase(),
      rate,
      exemptionReason: str(item.taxExemptionReason),
      exemptionReasonCode: str(item.taxExemptionReasonCode),
      classification: code ? { code, scheme: str(item.commodityClassification?.scheme) } : undefined,
      sellerItemId: str(item.sellerItemId),
      standardItemId: str(item.standardItemId?.id) ? { id: str(item.standardItemId?.id)!, scheme: str(item.standardItemId?.scheme) } : undefined,
      ext: item.extensions ?? {},
    };
  });
}

/** UNCL 5305 codes the Peppol-family generators accept as sent. */
const UNCL5305 = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M', 'B', 'N']);

const CATEGORY_WORDS: Record<string, string> = {
  STANDARD: 'S',
  STANDARD_RATED: 'S',
  STANDARD_RATE: 'S',
  ZERO: 'Z',
  ZERO_RATED: 'Z',
  ZERO_RATE: 'Z',
  EXEMPT: 'E',
  EXEMPTED: 'E',
  OUT_OF_SCOPE: 'O',
  OUTSIDE_SCOPE: 'O',
  NOT_SUBJECT: 'O',
  REVERSE_CHARGE: 'AE',
  INTRA_COMMUNITY: 'K',
  EXPORT: 'G',
  MARGIN: 'N',
  MARGIN_SCHEME: 'N',
};

/**
 * The UNCL 5305 tax category of a line for the Peppol-family and ZATCA generators: the sent code
 * or word when recognised, otherwise derived from the modifiers and the rate.
 */
export function uncl5305Category(raw: string | undefined, rate: number, modifiers: ReadonlySet<string>): string {
  if (raw) {
    if (UNCL5305.has(raw)) return raw;
    const key = raw.replace(/[\s-]+/g, '_');
    if (UNCL5305.has(key)) return key;
    const word = CATEGORY_WORDS[key];
    if (word) return word;
  }
  if (modifiers.has('out_of_scope')) return 'O';
  if (modifiers.has('reverse_charge')) return 'AE';
  return rate > 0 ? 'S' : 'Z';
}

export interface BreakdownEntry {
  category: string;
  rate: number;
  taxable: number;
  tax: number;
  exemptionReason: string | undefined;
  exemptionReasonCode: string | undefined;
}

function payloadSubtotals(doc: CoreDocument): CoreTaxSubtotal[] | undefined {
  const tt = doc.taxTotals;
  if (!tt) return undefined;
  const list = Array.isArray(tt) ? tt : (tt.taxSubtotals ?? tt.subtotals);
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const usable = list.every((s) => num(s.taxableAmount) !== undefined && num(s.taxAmount) !== undefined);
  return usable ? list : undefined;
}

/**
 * The tax breakdown per category and rate: the payload's `taxTotals` when it carries a usable
 * breakdown (its rounding is authoritative), otherwise the lines grouped by (category, rate).
 * `categoryOf` maps a raw category and rate to the generator's code list.
 */
export function taxBreakdown(
  doc: CoreDocument,
  lines: readonly NormalizedLine[],
  categoryOf: (raw: string | undefined, rate: number) => string,
): BreakdownEntry[] {
  const given = payloadSubtotals(doc);
  if (given) {
    return given.map((s) => {
      const rate = num(s.taxRate ?? s.rate) ?? 0;
      const category = categoryOf(str(s.taxCategory ?? s.category)?.toUpperCase(), rate);
      const fromLine = lines.find((l) => categoryOf(l.rawCategory, l.rate) === category);
      return {
        category,
        rate,
        taxable: num(s.taxableAmount) ?? 0,
        tax: num(s.taxAmount) ?? 0,
        exemptionReason: str(s.taxExemptionReason) ?? fromLine?.exemptionReason,
        exemptionReasonCode: str(s.taxExemptionReasonCode) ?? fromLine?.exemptionReasonCode,
      };
    });
  }
  const groups = new Map<string, { entry: BreakdownEntry; taxable: ExactDecimal; tax: ExactDecimal; given: boolean }>();
  for (const line of lines) {
    const category = categoryOf(line.rawCategory, line.rate);
    const key = `${category}|${line.rate}`;
    const group = groups.get(key);
    if (group) {
      group.taxable = group.taxable.plus(dec(line.net));
      group.tax = group.tax.plus(dec(line.tax));
      group.given ||= line.taxGiven;
      group.entry.exemptionReason ??= line.exemptionReason;
      group.entry.exemptionReasonCode ??= line.exemptionReasonCode;
    } else {
      const entry = { category, rate: line.rate, taxable: 0, tax: 0, exemptionReason: line.exemptionReason, exemptionReasonCode: line.exemptionReasonCode };
      groups.set(key, { entry, taxable: dec(line.net), tax: dec(line.tax), given: line.taxGiven });
    }
  }
  // Line taxes the payload gives are authoritative (their sum is its total tax): summed. Otherwise
  // a category has the tax of its taxable total at its rate, rounded once (EN 16931 BR-CO-17);
  // reverse charge (AE) and margin scheme (N) charge none on the document.
  return [...groups.values()].map(({ entry, taxable, tax, given }) => {
    const uncharged = entry.category === 'AE' || entry.category === 'N';
    const categoryTax = given || uncharged ? money(tax) : money(taxable.times(dec(entry.rate)).div(100));
    return { ...entry, taxable: money(taxable).toNumber(), tax: categoryTax.toNumber() };
  });
}

export interface DocumentTotals {
  lineExtension: number;
  taxExclusive: number;
  tax: number;
  taxInclusive: number;
  prepaid: number | undefined;
  rounding: number | undefined;
  payable: number;
}

/**
 * Totals from `totals` where given, else computed. When `amountDue` differs from the total with
 * tax and no prepaid amount is given, the difference is written as the prepaid amount so that
 * payable = inclusive - prepaid + rounding holds (EN 16931 BR-CO-16).
 */
export function documentTotals(doc: CoreDocument, lines: readonly NormalizedLine[], breakdown: readonly BreakdownEntry[]): DocumentTotals {
  const t = doc.totals ?? {};
  const lineExtension = num(t.totalLineTaxableAmount) ?? sum2(lines.map((l) => l.net));
  const taxExclusive = num(t.totalAmountExcludingTax) ?? lineExtension;
  const tax = num(t.totalTaxAmount) ?? sum2(breakdown.map((b) => b.tax));
  const taxInclusive = num(t.totalAmountIncludingTax) ?? sum2([taxExclusive, tax]);
  const rounding = num(t.roundingAmount);
  const payable = num(t.amountDue) ?? sum2([taxInclusive, rounding ?? 0]);
  let prepaid = num(t.prepaidAmount);
  if (prepaid === undefined) {
    const gap = round2(dec(taxInclusive).plus(dec(rounding ?? 0)).minus(dec(payable)).toNumber());
    if (gap !== 0) prepaid = gap;
  }
  return { lineExtension, taxExclusive, tax, taxInclusive, prepaid, rounding, payable };
}

/** The document currency, defaulting per country. */
export function documentCurrency(doc: CoreDocument, fallback: string): string {
  return (str(doc.header?.currency) ?? fallback).toUpperCase();
}
