/**
 * United Arab Emirates: the PINT AE 1.0.4 rules (billing and self-billing Schematron) on the
 * fields the payload carries, checked before the XML is written so that a document the real
 * network would reject is refused with a 422 that names the field and the official rule
 * (`official`, e.g. `ibr-174-ae`). The generator (`domain/artifacts/pint-ae.ts`) writes what the
 * rules demand from a document that passed these rules; `domain/validation/README.md` lists
 * which official rules are implemented here, which the generator guarantees, and which cannot be
 * checked because the payload has no place for their fields.
 *
 * Line categories are the PINT AE aligned codes (ibr-139-ae): S standard, Z zero, E exempt,
 * O not subject, AE reverse charge, N margin scheme ("standard rate additional VAT").
 */
import { dec, money, type ExactDecimal } from '../../artifacts/normalize.js';
import { PINT_AE_TAX_CATEGORIES, pintAeIsCommercial } from '../../artifacts/pint-ae.js';
import { all, baseIs, fieldEquals, hasAnyModifier, hasModifier, not } from '../conditions.js';
import { codeList, countryFormat, type StringFormat } from '../formats.js';
import { isRecord, recordAt, type PathSegment } from '../paths.js';
import { check, format, required, ruleSet, type CheckContext, type CheckFn, type RuleSet } from './define.js';

const AE = ['AE'] as const;

type Rec = Readonly<Record<string, unknown>>;
const num = (v: unknown): number | undefined => (typeof v === 'number' && v - v === 0 ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : undefined);
const rec = (v: unknown): Rec | undefined => (isRecord(v) ? v : undefined);
const cents = (n: number) => Math.round(n * 100);
/** Absent for a "must be given" check: a wrongly typed value counts as given (the preflight reports it once). */
const absent = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
const show = (n: number) => String(Math.round(n * 1e6) / 1e6);

/** Every line item that is an object, with its index; false when there is nothing to check. */
function lines(doc: Rec): { line: Rec; i: number }[] | undefined {
  const list = doc['lineItems'];
  if (!Array.isArray(list)) return undefined;
  const out: { line: Rec; i: number }[] = [];
  list.forEach((line: unknown, i) => {
    if (isRecord(line)) out.push({ line, i });
  });
  return out;
}

const categoryOf = (line: Rec): string | undefined => text(line['taxCategory'])?.toUpperCase();
const ext = (line: Rec, name: string): string | undefined => text(rec(line['extensions'])?.[name]);

/** A line item with its index and its tax category (upper case, trimmed). */
interface LineView {
  readonly line: Rec;
  readonly i: number;
  readonly category: string | undefined;
}

/**
 * The lines of the document being validated, with their categories, worked out once per
 * validation (the context is one validation's): some thirty rules walk every line.
 */
interface ValidationLines {
  readonly doc: Rec;
  readonly views: LineView[] | undefined;
  /** Reports on line `index` (set before each line's test). */
  readonly reporter: { index: number; fail: (field: PathSegment[], message?: string) => void };
}
const linesOfValidation = new WeakMap<CheckContext, ValidationLines>();
function validationLines(doc: Rec, ctx: CheckContext): ValidationLines {
  const known = linesOfValidation.get(ctx);
  if (known?.doc === doc) return known;
  const reporter = { index: 0, fail: (field: PathSegment[], message?: string) => ctx.report(['lineItems', reporter.index, ...field], message) };
  const entry = { doc, views: lines(doc)?.map(({ line, i }) => ({ line, i, category: categoryOf(line) })), reporter };
  linesOfValidation.set(ctx, entry);
  return entry;
}
const lineViews = (doc: Rec, ctx: CheckContext): LineView[] | undefined => validationLines(doc, ctx).views;

type LineTest = (line: Rec, fail: (field: PathSegment[], message?: string) => void, ctx: CheckContext, category: string | undefined) => boolean | void;

/** A per-line check: `test` reports through `fail(field, message)`; returns whether the line was looked at. */
function eachLine(test: LineTest): CheckFn {
  return (doc, ctx) => {
    const { views, reporter } = validationLines(doc, ctx);
    if (!views || views.length === 0) return false;
    let applied = false;
    for (const view of views) {
      reporter.index = view.i;
      if (test(view.line, reporter.fail, ctx, view.category) !== false) applied = true;
    }
    return applied;
  };
}

/** A check on the lines of one category. */
function forCategory(categories: readonly string[], test: (line: Rec, fail: (field: PathSegment[], message?: string) => void) => void): CheckFn {
  return eachLine((line, fail, _ctx, category) => {
    if (!category || !categories.includes(category)) return false;
    test(line, fail);
    return true;
  });
}

// Code lists (PINT AE 1.0.4 genericode lists and the Schematron's inline lists) -----------------

export const PINT_AE_ITEM_TYPES = ['G', 'S', 'B'] as const;
export const PINT_AE_RCM_TYPES = ['DL8.48.8.2', 'DL8.48.8.1', 'DL8.48.3.1', 'DL8.48.3.2', 'DL8.48.3.3'] as const;
export const PINT_AE_CREDIT_NOTE_REASONS = ['DL8.61.1.A', 'DL8.61.1.B', 'DL8.61.1.C', 'DL8.61.1.D', 'DL8.61.1.E', 'VD'] as const;
/** Legal registration identifier types of a UAE party on Peppol (ibr-173-ae / ibr-183-ae). */
export const PINT_AE_REGISTRATION_TYPES = ['TL', 'EID', 'PAS', 'CD'] as const;

const itemTypeFormat: StringFormat = codeList('PINT AE item type', PINT_AE_ITEM_TYPES, 'G goods, S services, B both (BTAE-13)');
const rcmFormat: StringFormat = codeList('PINT AE reverse-charge goods or services type', PINT_AE_RCM_TYPES);
const reasonFormat: StringFormat = codeList('PINT AE credit note reason', PINT_AE_CREDIT_NOTE_REASONS);
const aedFormat: StringFormat = codeList('AED', ['AED'], 'AED (the only UAE tax accounting currency)');
const sacFormat: StringFormat = codeList('SAC', ['SAC'], 'SAC (service accounting code)');

/** A code-list check on a line extension (format rules cannot name every line). */
function lineExtensionIn(name: string, fmt: StringFormat): CheckFn {
  return eachLine((line, fail) => {
    const v = rec(line['extensions'])?.[name];
    if (typeof v !== 'string') return false;
    if (!fmt.test(v)) fail(['extensions', name], `extensions.${name} ${JSON.stringify(v)} must be ${fmt.description}`);
  });
}

// Lines ------------------------------------------------------------------------------------------

const categoryPresent = eachLine((line, fail) => {
  if (absent(line['taxCategory'])) fail(['taxCategory']);
});

const categoryCode = eachLine((_line, fail, _ctx, c) => {
  if (c === undefined) return false;
  if (!(PINT_AE_TAX_CATEGORIES as readonly string[]).includes(c)) {
    fail(['taxCategory'], `taxCategory ${c} is not a PINT AE tax category (${PINT_AE_TAX_CATEGORIES.join(', ')})`);
  }
});

const marginUsesN = eachLine((_line, fail, _ctx, c) => {
  if (c === undefined) return false;
  if (c !== 'N') fail(['taxCategory'], `With margin_scheme every line must use tax category N (margin scheme), not ${c}`);
});

const rateOf = (line: Rec) => num(line['taxRate']);
const taxOf = (line: Rec) => num(line['taxAmount']);

const standardRate = forCategory(['S'], (line, fail) => {
  const rate = rateOf(line);
  if (rate !== 5) fail(['taxRate'], `A standard-rated (S) line must have taxRate 5${rate === undefined ? '' : `, not ${show(rate)}`}`);
});
const marginRate = forCategory(['N'], (line, fail) => {
  const rate = rateOf(line);
  if (rate === undefined || rate <= 0) fail(['taxRate'], 'A margin-scheme (N) line must have a taxRate greater than 0');
});
const zeroRate = forCategory(['Z'], (line, fail) => {
  const rate = rateOf(line);
  if (rate === undefined || rate !== 0) fail(['taxRate'], 'A zero-rated (Z) line must have taxRate 0');
});
const reverseRate = forCategory(['AE'], (line, fail) => {
  if (rateOf(line) === undefined) fail(['taxRate'], 'A reverse-charge (AE) line must have a taxRate');
});
const noLineTax = (categories: readonly string[], label: string): CheckFn =>
  forCategory(categories, (line, fail) => {
    const tax = taxOf(line);
    if (tax !== undefined && tax !== 0) fail(['taxAmount'], `A ${label} line must have taxAmount 0 (not ${show(tax)})`);
  });

const exemptionCode = forCategory(['E'], (line, fail) => {
  if (absent(line['taxExemptionReasonCode'])) fail(['taxExemptionReasonCode']);
});
const noExemptionOnStandard = forCategory(['S'], (line, fail) => {
  if (text(line['taxExemptionReasonCode'])) fail(['taxExemptionReasonCode'], 'A standard-rated (S) line must not carry a tax exemption reason code');
  if (text(line['taxExemptionReason'])) fail(['taxExemptionReason'], 'A standard-rated (S) line must not carry a tax exemption reason');
});

const standardItemId = forCategory(['AE'], (line, fail) => {
  const sid = rec(line['standardItemId']);
  if (absent(sid?.['id'])) fail(['standardItemId', 'id'], 'A reverse-charge (AE) line must carry the item standard identifier (standardItemId.id, scheme 0160)');
  else if (text(sid?.['scheme']) !== '0160') fail(['standardItemId', 'scheme'], 'The item standard identifier of a reverse-charge (AE) line must use scheme 0160 (GTIN)');
});
const rcmTypePresent = forCategory(['AE'], (line, fail) => {
  if (absent(rec(line['extensions'])?.['ae_rcmType'])) fail(['extensions', 'ae_rcmType']);
});
const standardItemScheme = eachLine((line, fail) => {
  const sid = rec(line['standardItemId']);
  if (!sid || !text(sid['id'])) return false;
  if (!text(sid['scheme'])) fail(['standardItemId', 'scheme'], 'The item standard identifier needs its scheme (standardItemId.scheme, e.g. 0160)');
});

const reverseChargeBuyerVat: CheckFn = (doc, ctx) => {
  if (!lineViews(doc, ctx)?.some(({ category }) => category === 'AE')) return false;
  const buyer = rec(recordAt(doc, 'parties')?.['buyer']);
  const ids = buyer?.['taxIds'];
  const first = Array.isArray(ids) ? rec(ids[0]) : undefined;
  if (absent(first?.['value'])) ctx.report(['parties', 'buyer', 'taxIds', 0, 'value']);
  return true;
};

const itemTypeRules = eachLine((line, fail) => {
  const type = ext(line, 'ae_itemType');
  if (type === undefined) return false;
  const classification = text(rec(line['commodityClassification'])?.['code']);
  const sac = ext(line, 'ae_serviceAccountingCode');
  if ((type === 'G' || type === 'B') && !classification && absent(rec(line['commodityClassification'])?.['code'])) {
    fail(['commodityClassification', 'code'], `Item type ${type} needs the item classification code (commodityClassification.code, HS)`);
  }
  if ((type === 'S' || type === 'B') && !sac && absent(rec(line['extensions'])?.['ae_serviceAccountingCode'])) {
    fail(['extensions', 'ae_serviceAccountingCode'], `Item type ${type} needs the service accounting code (extensions.ae_serviceAccountingCode)`);
  }
});

const classificationScheme = eachLine((line, fail) => {
  const cc = rec(line['commodityClassification']);
  if (!text(cc?.['code'])) return false;
  if (text(cc?.['scheme']) !== 'HS') fail(['commodityClassification', 'scheme'], 'The item classification scheme must be HS when a classification code is given');
});

const itemDescription = eachLine((line, fail) => {
  if (absent(line['name']) && absent(line['description'])) fail(['name'], 'Each line needs an item name or description');
});

const priceAmount = eachLine((line, fail) => {
  const raw = rec(line['price'])?.['amount'];
  const price = num(raw);
  if (absent(raw)) fail(['price', 'amount'], 'Each line needs its net unit price (price.amount)');
  else if (price !== undefined && price < 0) fail(['price', 'amount'], 'The net unit price must not be negative');
});

const grossPrice = eachLine((line, fail) => {
  const price = num(rec(line['price'])?.['amount']);
  const gross = num(rec(line['price'])?.['grossPrice']);
  if (price === undefined || gross === undefined) return false;
  if (gross < price) fail(['price', 'grossPrice'], `The gross price ${show(gross)} is below the net price ${show(price)} (net = gross - discount, the discount cannot be negative)`);
});

const lineNet = eachLine((line, fail) => {
  const quantity = num(line['quantity']);
  const price = num(rec(line['price'])?.['amount']);
  const net = num(line['lineTaxableValue']);
  if (quantity === undefined || price === undefined || net === undefined) return false;
  const expected = Math.round(quantity * price * 100) / 100;
  if (cents(net) !== cents(expected)) {
    fail(['lineTaxableValue'], `lineTaxableValue ${show(net)} must equal quantity × price.amount rounded to cents (${expected.toFixed(2)})`);
  }
});

const lineQuantity = eachLine((line, fail) => {
  if (absent(line['quantity'])) fail(['quantity'], 'Each line needs its quantity');
  if (absent(line['lineTaxableValue'])) fail(['lineTaxableValue'], 'Each line needs its taxable value (lineTaxableValue)');
});

/** aligned-ibrp-s-09: per standard rate, the category tax within 0.02 of taxable × rate. */
const breakdownTax: CheckFn = (doc, ctx) => {
  const list = lineViews(doc, ctx);
  if (!list) return false;
  const groups = new Map<string, { taxable: ExactDecimal; tax: ExactDecimal; rate: number }>();
  for (const { line, category: c } of list) {
    const rate = rateOf(line);
    const taxable = num(line['lineTaxableValue']);
    const tax = taxOf(line);
    if (c !== 'S' || rate === undefined || taxable === undefined || tax === undefined) continue;
    const g = groups.get(String(rate)) ?? { taxable: dec(0), tax: dec(0), rate };
    g.taxable = g.taxable.plus(dec(taxable));
    g.tax = g.tax.plus(dec(tax));
    groups.set(String(rate), g);
  }
  if (groups.size === 0) return false;
  for (const g of groups.values()) {
    const expected = money(g.taxable.times(dec(g.rate)).div(100));
    if (g.tax.minus(expected).abs().gt(dec('0.02'))) {
      ctx.report(['lineItems'], `The tax of the standard-rated lines at ${show(g.rate)}% (${g.tax.toFixed(2)}) differs by more than 0.02 from their taxable amount × rate (${expected.toFixed(2)})`);
    }
  }
  return true;
};

export const aePintLines = ruleSet(
  'ae.pint_lines',
  'PINT AE 1.0.4 line rules: tax categories and rates, exemption codes, reverse charge, item type and classification, prices and line amounts',
  AE,
  [
    check('AE-LINE-001', ['lineItems[].taxCategory'], 'Each line must have a tax category', 'present on every line', categoryPresent, { official: 'ibr-145-ae', requires: 'always' }),
    check('AE-LINE-002', ['lineItems[].taxCategory'], 'The tax category must be a PINT AE category', `one of ${PINT_AE_TAX_CATEGORIES.join(', ')}`, categoryCode, { official: 'ibr-139-ae' }),
    check('AE-LINE-003', ['lineItems[].taxCategory'], 'With margin_scheme every line must use tax category N', 'N on every line', marginUsesN, {
      official: 'ibr-116-ae',
      when: hasModifier('margin_scheme'),
    }),
    check('AE-LINE-004', ['lineItems[].taxRate'], 'A standard-rated line must have taxRate 5', 'S lines: 5', standardRate, { official: 'ibr-190-ae' }),
    check('AE-LINE-005', ['lineItems[].taxRate'], 'A margin-scheme line must have a taxRate above 0', 'N lines: > 0', marginRate, { official: 'ibr-111-ae' }),
    check('AE-LINE-006', ['lineItems[].taxRate'], 'A zero-rated line must have taxRate 0', 'Z lines: 0', zeroRate, { official: 'aligned-ibrp-z-05' }),
    check('AE-LINE-007', ['lineItems[].taxRate'], 'A reverse-charge line must have a taxRate', 'AE lines: present', reverseRate, { official: 'aligned-ibrp-ae-05-ae' }),
    check('AE-LINE-008', ['lineItems[].taxAmount'], 'A reverse-charge line must have taxAmount 0', 'AE lines: 0', noLineTax(['AE'], 'reverse-charge (AE)'), { official: 'ibr-162-ae' }),
    check('AE-LINE-009', ['lineItems[].taxAmount'], 'A zero-rated line must have taxAmount 0', 'Z lines: 0', noLineTax(['Z'], 'zero-rated (Z)'), { official: 'ibr-165-ae' }),
    check('AE-LINE-010', ['lineItems[].taxAmount'], 'An exempt line must have taxAmount 0', 'E lines: 0', noLineTax(['E'], 'exempt (E)'), { official: 'aligned-ibrp-e-09' }),
    check('AE-LINE-011', ['lineItems[].taxAmount'], 'A not-subject line must have taxAmount 0', 'O lines: 0', noLineTax(['O'], 'not-subject (O)'), { official: 'aligned-ibrp-o-09' }),
    check('AE-LINE-012', ['lineItems[].taxAmount'], 'A margin-scheme line must have taxAmount 0 (the VAT on the margin is not shown)', 'N lines: 0', noLineTax(['N'], 'margin-scheme (N)'), {
      official: 'ibr-108-ae',
    }),
    check('AE-LINE-013', ['lineItems[].taxExemptionReasonCode'], 'An exempt line must have a tax exemption reason code', 'E lines: present', exemptionCode, { official: 'ibr-167-ae', requires: 'the line taxCategory is E' }),
    check('AE-LINE-014', ['lineItems[].taxExemptionReasonCode', 'lineItems[].taxExemptionReason'], 'A standard-rated line must not carry an exemption reason', 'S lines: absent', noExemptionOnStandard, {
      official: 'aligned-ibrp-s-10',
    }),
    check('AE-LINE-015', ['lineItems[].standardItemId.id', 'lineItems[].standardItemId.scheme'], 'A reverse-charge line must carry the item standard identifier with scheme 0160', 'AE lines: standardItemId {id, scheme 0160}', standardItemId, {
      official: 'ibr-174-ae',
      requires: 'the line taxCategory is AE',
    }),
    check('AE-LINE-016', ['lineItems[].extensions.ae_rcmType'], 'A reverse-charge line must carry the type of goods or services (extensions.ae_rcmType)', 'AE lines: present', rcmTypePresent, {
      official: 'ibr-166-ae',
      requires: 'the line taxCategory is AE',
    }),
    check('AE-LINE-017', ['lineItems[].extensions.ae_rcmType'], 'The reverse-charge goods or services type must come from the PINT AE list', rcmFormat.description, lineExtensionIn('ae_rcmType', rcmFormat), {
      official: 'ibr-006-ae',
    }),
    check('AE-LINE-018', ['lineItems[].standardItemId.scheme'], 'The item standard identifier needs its scheme', 'present with standardItemId.id', standardItemScheme, { official: 'ibr-064' }),
    check('AE-LINE-019', ['parties.buyer.taxIds[0].value'], 'A document with reverse-charge lines needs the buyer tax id (TRN)', 'present when a line is AE', reverseChargeBuyerVat, {
      official: 'ibr-103-ae',
      requires: 'a line has taxCategory AE',
      // With reverse_charge AE-BUY-010 already requires it.
      when: not(hasModifier('reverse_charge')),
    }),
    check('AE-LINE-020', ['lineItems[].extensions.ae_itemType'], 'The item type must be G (goods), S (services) or B (both)', itemTypeFormat.description, lineExtensionIn('ae_itemType', itemTypeFormat), {
      official: 'BTAE-13',
    }),
    check(
      'AE-LINE-021',
      ['lineItems[].commodityClassification.code', 'lineItems[].extensions.ae_serviceAccountingCode'],
      'Item type G needs the classification code, S the service accounting code, B both',
      'G: commodityClassification.code; S: extensions.ae_serviceAccountingCode; B: both',
      itemTypeRules,
      { official: 'ibr-184-ae', requires: 'extensions.ae_itemType is G or B (code), S or B (service accounting code)' },
    ),
    check('AE-LINE-022', ['lineItems[].commodityClassification.scheme'], 'The item classification scheme must be HS', 'HS when a code is given', classificationScheme, { official: 'ibr-188-ae' }),
    check('AE-LINE-023', ['lineItems[].extensions.ae_sacScheme'], 'The service accounting code scheme must be SAC', sacFormat.description, lineExtensionIn('ae_sacScheme', sacFormat), { official: 'ibr-189-ae' }),
    check('AE-LINE-024', ['lineItems[].name', 'lineItems[].description'], 'Each line needs an item name or description', 'name or description', itemDescription, { official: 'ibr-125-ae', requires: 'the other of name and description is absent' }),
    check('AE-LINE-025', ['lineItems[].price.amount'], 'Each line needs a net unit price that is not negative', 'price.amount ≥ 0', priceAmount, { official: 'ibr-026', requires: 'always' }),
    check('AE-LINE-026', ['lineItems[].price.grossPrice'], 'The gross price must not be below the net price', 'grossPrice ≥ price.amount', grossPrice, { official: 'aligned-ibrp-004' }),
    check('AE-LINE-027', ['lineItems[].quantity', 'lineItems[].lineTaxableValue'], 'Each line needs its quantity and taxable value', 'present', lineQuantity, { official: 'ibr-022', requires: 'always' }),
    check('AE-LINE-028', ['lineItems[].lineTaxableValue'], 'The line taxable value must equal quantity × net price', 'quantity × price.amount, rounded to cents', lineNet, { official: 'ibr-147-ae' }),
    check('AE-LINE-029', ['lineItems[].taxAmount'], 'The tax of the standard-rated lines must match their taxable amount × rate', 'within 0.02 per rate', breakdownTax, {
      official: 'aligned-ibrp-s-09',
    }),
  ],
);

// Document ---------------------------------------------------------------------------------------

function totalsSum(doc: Rec, field: 'lineTaxableValue' | 'taxAmount'): number | undefined {
  const list = lines(doc);
  if (!list || list.length === 0) return undefined;
  let sum = 0;
  for (const { line } of list) {
    const v = num(line[field]);
    if (v === undefined) return undefined;
    sum += v;
  }
  return Math.round(sum * 100) / 100;
}

const totalsAgree = (field: string, expected: (doc: Rec, totals: Rec) => number | undefined, what: string): CheckFn => (doc, ctx) => {
  const totals = rec(doc['totals']);
  const value = num(totals?.[field]);
  if (!totals || value === undefined) return false;
  const want = expected(doc, totals);
  if (want === undefined) return false;
  if (cents(value) !== cents(want)) ctx.report(['totals', field], `totals.${field} ${show(value)} must equal ${what} (${want.toFixed(2)})`);
  return true;
};

const twoDecimals: CheckFn = (doc, ctx) => {
  const totals = rec(doc['totals']);
  if (!totals) return false;
  for (const field of ['totalLineTaxableAmount', 'totalAmountExcludingTax', 'totalTaxAmount', 'totalAmountIncludingTax', 'amountDue']) {
    const v = num(totals[field]);
    if (v !== undefined && dec(v).decimalPlaces() > 2) ctx.report(['totals', field], `totals.${field} must have at most 2 decimals`);
  }
  return true;
};

const rateDecimals: CheckFn = (doc, ctx) => {
  const rate = num(rec(recordAt(doc, 'header')?.['exchangeRate'])?.['rate']);
  if (rate === undefined) return false;
  if (dec(rate).decimalPlaces() > 6) ctx.report(['header', 'exchangeRate', 'rate'], 'The exchange rate must have at most 6 decimals');
  return true;
};

const accountForCreditTransfer: CheckFn = (doc, ctx) => {
  const means = recordAt(doc, 'payment')?.['paymentMeans'];
  if (!Array.isArray(means)) return false;
  let applied = false;
  means.forEach((m: unknown, i) => {
    const r = rec(m);
    if (!r || text(r['paymentMeansCode']) !== '30') return;
    applied = true;
    if (absent(rec(r['creditTransferInfo'])?.['payeeFinancialAccountId'])) {
      ctx.report(['payment', 'paymentMeans', i, 'creditTransferInfo', 'payeeFinancialAccountId'], 'Credit transfer (payment means 30) needs the payee account (creditTransferInfo.payeeFinancialAccountId)');
    }
  });
  return applied;
};

/** ibr-157-ae: the commercial codes 480/81 (no taxable line) exclude summary, deemed supply and margin scheme. */
const taxableLineNeeded: CheckFn = (doc, ctx) => {
  const list = lineViews(doc, ctx);
  if (!list || list.length === 0) return false;
  const categories = list.map(({ category }) => category);
  if (categories.some((c) => c === undefined)) return false;
  const outOfScope = ctx.documentType.modifiers.includes('out_of_scope');
  if (pintAeIsCommercial(outOfScope, categories as string[])) {
    const which = ctx.documentType.modifiers.filter((m) => m === 'summary' || m === 'deemed_supply' || m === 'margin_scheme').join(', ');
    ctx.report(
      outOfScope ? ['header', 'documentType', 'modifiers'] : ['lineItems'],
      outOfScope
        ? `out_of_scope (invoice type 480/81) cannot be combined with ${which}`
        : `A document whose lines are all exempt (E) or not subject (O) is a commercial invoice (480/81), which cannot be ${which}: it needs a taxable line`,
    );
  }
  return true;
};

/** ibr-122-ae: a commercial document (480/81) carries only E, O or Z lines. */
const outOfScopeCategories = eachLine((_line, fail, _ctx, c) => {
  if (c === undefined) return false;
  if (c !== 'E' && c !== 'O' && c !== 'Z') fail(['taxCategory'], `With out_of_scope (invoice type 480/81) a line must be E, O or Z, not ${c}`);
});

const principalNotSeller: CheckFn = (doc, ctx) => {
  const principal = text(recordAt(doc, 'extensions')?.['ae_principalTRN']);
  if (!principal) return false;
  const seller = rec(recordAt(doc, 'parties')?.['seller']);
  const ids = seller?.['taxIds'];
  const values = Array.isArray(ids) ? ids.map((x: unknown) => text(rec(x)?.['value'])) : [];
  if (values.includes(principal)) ctx.report(['extensions', 'ae_principalTRN'], 'The principal (extensions.ae_principalTRN) must not be the seller itself');
  return true;
};

/** ibr-173-ae / ibr-183-ae: the registration type of a UAE party on Peppol. */
const registrationType = (role: 'seller' | 'buyer'): CheckFn => (doc, ctx) => {
  const party = rec(recordAt(doc, 'parties')?.[role]);
  const regs = party?.['registrationNumbers'];
  const first = Array.isArray(regs) ? rec(regs[0]) : undefined;
  const type = text(first?.['type'])?.toUpperCase();
  if (!party || !type || !text(first?.['value'])) return false;
  const scheme = text(recordAt(doc, 'extensions')?.[`peppol_${role}_peppolIdScheme`]) ?? '0235';
  if (scheme !== '0235') return false;
  if (role === 'seller') {
    if (text(rec(party['address'])?.['country']) !== 'AE') return false;
  } else {
    const peppolId = text(party['peppolId']);
    // Exempt: no buyer endpoint of its own (the predefined 99000000xx ones) or an endpoint starting with 1 or 9.
    if (!peppolId || /^[19]/.test(peppolId) || ctx.documentType.modifiers.includes('deemed_supply')) return false;
  }
  if (!(PINT_AE_REGISTRATION_TYPES as readonly string[]).includes(type)) {
    ctx.report(['parties', role, 'registrationNumbers', 0, 'type'], `The ${role}'s registration type must be one of ${PINT_AE_REGISTRATION_TYPES.join(', ')} (TL trade licence, EID Emirates ID, PAS passport, CD cabinet decision), not ${type}`);
  }
  return true;
};

/** The first registration's type of a party is `type` (TL, PAS). */
const registrationIs = (role: 'seller' | 'buyer', type: string) => fieldEquals(`parties.${role}.registrationNumbers[0].type`, type);


export const aePintDocument = ruleSet(
  'ae.pint_document',
  'PINT AE 1.0.4 document rules: lines and totals, payment, currency, credit note reason, transaction-type fields, party registration',
  AE,
  [
    required('AE-DOC-001', 'lineItems', 'A UAE document needs at least one line item', { official: 'ibr-016' }),
    required('AE-DOC-002', 'totals.totalLineTaxableAmount', 'The sum of the line taxable values (totals.totalLineTaxableAmount) is required', { official: 'ibr-012' }),
    required('AE-DOC-003', 'totals.totalAmountExcludingTax', 'The total without tax (totals.totalAmountExcludingTax) is required', { official: 'ibr-013' }),
    required('AE-DOC-004', 'totals.totalAmountIncludingTax', 'The total with tax (totals.totalAmountIncludingTax) is required', { official: 'ibr-014' }),
    required('AE-DOC-005', 'totals.amountDue', 'The amount due (totals.amountDue) is required', { official: 'ibr-015' }),
    check('AE-DOC-006', ['totals.totalLineTaxableAmount'], 'The sum of line taxable values must equal the lines', 'sum of lineItems[].lineTaxableValue, to the cent', totalsAgree('totalLineTaxableAmount', (d) => totalsSum(d, 'lineTaxableValue'), 'the sum of the line taxable values'), {
      official: 'ibr-co-10',
    }),
    check('AE-DOC-007', ['totals.totalAmountExcludingTax'], 'The total without tax must equal the sum of the lines', 'totalLineTaxableAmount (no document allowances), to the cent', totalsAgree('totalAmountExcludingTax', (d, t) => num(t['totalLineTaxableAmount']) ?? totalsSum(d, 'lineTaxableValue'), 'the sum of the line taxable values'), {
      official: 'ibr-co-13',
    }),
    check('AE-DOC-008', ['totals.totalTaxAmount'], 'The total tax must equal the sum of the line tax amounts', 'sum of lineItems[].taxAmount, to the cent', totalsAgree('totalTaxAmount', (d) => totalsSum(d, 'taxAmount'), 'the sum of the line tax amounts (the tax breakdown)'), {
      official: 'ibr-co-14',
    }),
    check('AE-DOC-009', ['totals.totalAmountIncludingTax'], 'The total with tax must equal the total without tax plus the tax', 'totalAmountExcludingTax + totalTaxAmount, to the cent', totalsAgree('totalAmountIncludingTax', (d, t) => {
      const excl = num(t['totalAmountExcludingTax']);
      const tax = num(t['totalTaxAmount']) ?? totalsSum(d, 'taxAmount');
      return excl === undefined || tax === undefined ? undefined : Math.round((excl + tax) * 100) / 100;
    }, 'totalAmountExcludingTax + totalTaxAmount'), { official: 'ibr-co-15' }),
    check('AE-DOC-010', ['totals.amountDue'], 'The amount due must be between 0 and the total with tax', '0 ≤ amountDue ≤ totalAmountIncludingTax', (doc, ctx) => {
      const t = rec(doc['totals']);
      const due = num(t?.['amountDue']);
      const incl = num(t?.['totalAmountIncludingTax']);
      if (due === undefined || incl === undefined) return false;
      if (due < 0 || cents(due) > cents(incl)) ctx.report(['totals', 'amountDue'], `totals.amountDue ${show(due)} must be between 0 and the total with tax ${show(incl)} (the difference is written as the prepaid amount)`);
      return true;
    }, { official: 'ibr-co-16' }),
    check('AE-DOC-011', ['totals'], 'Amounts must have at most 2 decimals', 'at most 2 decimals', twoDecimals, { official: 'ibr-123' }),
    required('AE-HEAD-014', 'header.dueDate', 'The due date is required for debit notes (written as tax invoices 380 with a preceding invoice reference)', {
      official: 'ibr-127-ae',
      when: all(baseIs('debit_note'), not(hasModifier('deemed_supply'))),
    }),
    required('AE-HEAD-015', 'payment.paymentMeans[0].paymentMeansCode', 'The payment means code is required for invoices and debit notes (except deemed supplies)', {
      official: 'ibr-191-ae',
      when: all(baseIs('tax_invoice', 'debit_note'), not(hasModifier('deemed_supply'))),
    }),
    check('AE-HEAD-016', ['payment.paymentMeans[].creditTransferInfo.payeeFinancialAccountId'], 'Credit transfer (code 30) needs the payee account', 'present when paymentMeansCode is 30', accountForCreditTransfer, {
      official: 'ibr-192-ae',
    }),
    format('AE-HEAD-017', 'header.taxCurrency', aedFormat, 'The tax currency, when given, must be AED', { official: 'ibr-140-ae' }),
    check('AE-HEAD-018', ['header.exchangeRate.rate'], 'The exchange rate must have at most 6 decimals', 'at most 6 decimals', rateDecimals, { official: 'ibr-002-ae' }),
    required('AE-HEAD-019', 'header.creditNoteReason.code', 'The credit note reason code is required for credit notes (header.creditNoteReason.code or extensions.ae_creditNoteReasonCode)', {
      official: 'ibr-158-ae',
      alternatives: ['extensions.ae_creditNoteReasonCode'],
      when: all(baseIs('credit_note'), not(hasModifier('out_of_scope')), not(hasModifier('self_billed'))),
    }),
    format('AE-HEAD-020', ['header.creditNoteReason.code', 'extensions.ae_creditNoteReasonCode'], reasonFormat, `The credit note reason code must be one of ${PINT_AE_CREDIT_NOTE_REASONS.join(', ')}`, {
      official: 'ibr-001-ae',
    }),
    check('AE-HEAD-021', ['header.documentType.modifiers', 'lineItems[].taxCategory'], 'A commercial invoice (480/81) cannot be a summary, deemed supply or margin scheme', 'a taxable line (not only E/O), and no out_of_scope', taxableLineNeeded, {
      official: 'ibr-157-ae',
      when: hasAnyModifier('summary', 'deemed_supply', 'margin_scheme'),
    }),
    check('AE-LINE-030', ['lineItems[].taxCategory'], 'With out_of_scope the lines must be E, O or Z', 'E, O or Z', outOfScopeCategories, {
      official: 'ibr-122-ae',
      when: hasModifier('out_of_scope'),
    }),
    required('AE-HEAD-022', 'extensions.ae_beneficiaryId', 'The beneficiary id (extensions.ae_beneficiaryId) is required with free_trade_zone', {
      official: 'ibr-007-ae',
      when: hasModifier('free_trade_zone'),
    }),
    required('AE-HEAD-023', 'extensions.ae_principalTRN', 'The principal id (extensions.ae_principalTRN) is required with disclosed_agent', {
      official: 'ibr-137-ae',
      when: hasModifier('disclosed_agent'),
    }),
    check('AE-HEAD-024', ['extensions.ae_principalTRN'], 'The principal must not be the seller', 'differs from the seller tax id', principalNotSeller, { official: 'ibr-176-ae', when: hasModifier('disclosed_agent') }),
    required('AE-SELL-015', 'extensions.ae_seller_authorityName', 'The seller authority name (extensions.ae_seller_authorityName) is required when the seller registration type is TL (trade licence)', {
      official: 'ibr-172-ae',
      when: registrationIs('seller', 'TL'),
    }),
    required('AE-BUY-015', 'extensions.ae_buyer_authorityName', 'The buyer authority name (extensions.ae_buyer_authorityName) is required when the buyer registration type is TL (trade licence)', {
      official: 'ibr-101-ae',
      when: registrationIs('buyer', 'TL'),
    }),
    required('AE-SELL-016', 'extensions.ae_seller_passportIssuingCountry', 'The passport issuing country (extensions.ae_seller_passportIssuingCountry) is required when the seller registration type is PAS', {
      official: 'ibr-012-ae',
      when: registrationIs('seller', 'PAS'),
    }),
    required('AE-BUY-016', 'extensions.ae_buyer_passportCountry', 'The passport issuing country (extensions.ae_buyer_passportCountry) is required when the buyer registration type is PAS', {
      official: 'ibr-010-ae',
      when: registrationIs('buyer', 'PAS'),
    }),
    format('AE-SELL-017', 'extensions.ae_seller_passportIssuingCountry', countryFormat, 'The passport issuing country must be an ISO 3166-1 alpha-2 code', { official: 'ibr-013-ae' }),
    format('AE-BUY-017', 'extensions.ae_buyer_passportCountry', countryFormat, 'The passport issuing country must be an ISO 3166-1 alpha-2 code', { official: 'ibr-011-ae' }),
    check('AE-SELL-018', ['parties.seller.registrationNumbers[0].type'], 'The seller registration type must be TL, EID, PAS or CD', 'TL, EID, PAS or CD (UAE seller on scheme 0235)', registrationType('seller'), { official: 'ibr-173-ae' }),
    check('AE-BUY-018', ['parties.buyer.registrationNumbers[0].type'], 'The buyer registration type must be TL, EID, PAS or CD', 'TL, EID, PAS or CD (buyer on scheme 0235 with its own endpoint not starting 1 or 9)', registrationType('buyer'), {
      official: 'ibr-183-ae',
    }),
  ],
);

export const aePintRuleSets: readonly RuleSet[] = [aePintDocument, aePintLines];
