/**
 * The eight UAE rules of docs/api/unify.md and their modifier exceptions, as a table of payload
 * variants -> the exact error codes (and paths) expected; then formats and arithmetic warnings.
 */
import { expect } from 'chai';
import { EMIRATE_CODES, INVOICE_FREQUENCIES } from '../../domain/validation/index.js';
import { codes, docFor, dt, unset, validate, type Doc } from './helpers.js';

interface Case {
  name: string;
  base?: string;
  modifiers?: string[];
  mutate?: (d: Doc) => void;
  errors: string[];
  /** Expected core paths of the errors, in any order (optional). */
  paths?: string[];
  warnings?: string[];
}

const PARTY_FIELDS: Array<[string, string]> = [
  ['001', 'registrationNumbers[0].type'],
  ['002', 'name'],
  ['003', 'registrationNumbers[0].value'],
  ['004', 'peppolId'],
  ['005', 'address.addressLine1'],
  ['006', 'address.city'],
  ['007', 'address.stateOrProvince'],
  ['008', 'address.country'],
];

const cases: Case[] = [
  { name: 'a complete tax invoice is valid', errors: [] },

  // Rule 1: mandatory fields ------------------------------------------------------------------
  { name: 'rule 1: document number missing', mutate: (d) => delete d.header.documentNumber, errors: ['AE-HEAD-001'], paths: ['header.documentNumber'] },
  { name: 'rule 1: document number blank', mutate: (d) => (d.header.documentNumber = '   '), errors: ['AE-HEAD-001'] },
  { name: 'rule 1: document number null', mutate: (d) => (d.header.documentNumber = null), errors: ['AE-HEAD-001'] },
  { name: 'rule 1: issue date missing', mutate: (d) => delete d.header.issueDate, errors: ['AE-HEAD-002'], paths: ['header.issueDate'] },
  { name: 'rule 1: currency missing (the AED rule then does not apply)', mutate: (d) => delete d.header.currency, errors: ['AE-HEAD-003'], paths: ['header.currency'] },
  { name: 'rule 1: document base missing', mutate: (d) => delete d.header.documentType, errors: ['AE-HEAD-004'], paths: ['header.documentType.base'] },
  ...(['seller', 'buyer'] as const).flatMap((role) =>
    PARTY_FIELDS.map(([n, path]): Case => ({
      name: `rule 1: ${role} ${path} missing`,
      mutate: (d) => unset(d, `parties.${role}.${path}`),
      errors: [`AE-${role === 'seller' ? 'SELL' : 'BUY'}-${n}`],
      paths: [`parties.${role}.${path}`],
    })),
  ),
  { name: 'rule 1: seller registration numbers empty (type and value)', mutate: (d) => (d.parties.seller.registrationNumbers = []), errors: ['AE-SELL-001', 'AE-SELL-003'] },
  { name: 'rule 1: buyer name null', mutate: (d) => (d.parties.buyer.name = null), errors: ['AE-BUY-002'] },
  { name: 'rule 1: seller tax id type missing', mutate: (d) => delete d.parties.seller.taxIds[0].type, errors: ['AE-SELL-009'], paths: ['parties.seller.taxIds[0].type'] },
  { name: 'rule 1 + 6: seller tax ids absent', mutate: (d) => delete d.parties.seller.taxIds, errors: ['AE-SELL-009', 'AE-SELL-010'] },
  {
    name: 'rule 1: a whole party missing gives every party rule once',
    mutate: (d) => delete d.parties.buyer,
    errors: ['AE-BUY-001', 'AE-BUY-002', 'AE-BUY-003', 'AE-BUY-004', 'AE-BUY-005', 'AE-BUY-006', 'AE-BUY-007', 'AE-BUY-008', 'AE-BUY-010'],
  },

  // Rule 2: currency other than AED -------------------------------------------------------------
  { name: 'rule 2: USD without tax currency and exchange rate', mutate: (d) => (d.header.currency = 'USD'), errors: ['AE-HEAD-012', 'AE-HEAD-013'], paths: ['header.taxCurrency', 'header.exchangeRate.rate'] },
  {
    name: 'rule 2: USD with tax currency and exchange rate',
    mutate: (d) => Object.assign(d.header, { currency: 'USD', taxCurrency: 'AED', exchangeRate: { rate: 3.6725 } }),
    errors: [],
  },
  { name: 'rule 2: USD with an exchange rate object but no rate', mutate: (d) => Object.assign(d.header, { currency: 'USD', taxCurrency: 'AED', exchangeRate: {} }), errors: ['AE-HEAD-013'] },
  { name: 'rule 2: AED needs neither', mutate: (d) => Object.assign(d.header, { currency: 'AED' }), errors: [] },
  {
    name: 'rule 2: exchange rate must be positive',
    mutate: (d) => Object.assign(d.header, { currency: 'EUR', taxCurrency: 'AED', exchangeRate: { rate: 0 } }),
    errors: ['CORE-HEAD-003'],
  },
  { name: 'rule 2: lower-case currency is not ISO 4217 (and is not AED)', mutate: (d) => (d.header.currency = 'aed'), errors: ['AE-HEAD-012', 'AE-HEAD-013', 'CORE-HEAD-002'] },

  // Rule 3: due date ------------------------------------------------------------------------------
  { name: 'rule 3: tax invoice without due date', mutate: (d) => delete d.header.dueDate, errors: ['AE-HEAD-005'], paths: ['header.dueDate'] },
  { name: 'rule 3: tax invoice with deemed_supply without due date', modifiers: ['deemed_supply'], mutate: (d) => delete d.header.dueDate, errors: [] },
  { name: 'rule 3: credit note without due date', base: 'credit_note', mutate: (d) => delete d.header.dueDate, errors: [] },
  // A debit note is written as a tax invoice (380) with a preceding invoice reference: PINT AE wants its due date (ibr-127-ae).
  { name: 'rule 3: debit note without due date', base: 'debit_note', mutate: (d) => delete d.header.dueDate, errors: ['AE-HEAD-014'] },
  { name: 'rule 3: deemed-supply debit note without due date', base: 'debit_note', modifiers: ['deemed_supply'], mutate: (d) => delete d.header.dueDate, errors: [] },
  { name: 'rule 3: other modifiers keep the due date mandatory', modifiers: ['free_trade_zone', 'continuous_supply'], mutate: (d) => delete d.header.dueDate, errors: ['AE-HEAD-005'] },

  // Rule 4: preceding invoice --------------------------------------------------------------------
  {
    name: 'rule 4: credit note without preceding invoice reference',
    base: 'credit_note',
    mutate: (d) => delete d.header.precedingInvoiceReference,
    errors: ['AE-HEAD-006', 'AE-HEAD-007'],
    paths: ['header.precedingInvoiceReference.id', 'header.precedingInvoiceReference.issueDate'],
  },
  {
    name: 'rule 4: credit note with the issue date in extensions.peppol_precedingInvoiceIssueDate',
    base: 'credit_note',
    mutate: (d) => {
      delete d.header.precedingInvoiceReference.issueDate;
      d.extensions.peppol_precedingInvoiceIssueDate = '2026-01-02';
    },
    errors: [],
  },
  { name: 'rule 4: credit note with an id but no issue date', base: 'credit_note', mutate: (d) => delete d.header.precedingInvoiceReference.issueDate, errors: ['AE-HEAD-007'] },
  { name: 'rule 4: credit note with an issue date but no id', base: 'credit_note', mutate: (d) => delete d.header.precedingInvoiceReference.id, errors: ['AE-HEAD-006'] },
  { name: 'rule 4: tax invoice without preceding invoice reference', mutate: (d) => delete d.header.precedingInvoiceReference, errors: [] },
  {
    name: 'rule 4: preceding issue date must be a calendar date',
    base: 'credit_note',
    mutate: (d) => (d.header.precedingInvoiceReference.issueDate = '2026-02-30'),
    errors: ['CORE-HEAD-001'],
    paths: ['header.precedingInvoiceReference.issueDate'],
  },
  {
    name: 'rule 4: extension issue date must be a calendar date too',
    base: 'credit_note',
    mutate: (d) => {
      delete d.header.precedingInvoiceReference.issueDate;
      d.extensions.peppol_precedingInvoiceIssueDate = '02/01/2026';
    },
    errors: ['CORE-HEAD-001'],
    paths: ['extensions.peppol_precedingInvoiceIssueDate'],
  },

  // Rule 5: summary ----------------------------------------------------------------------------------
  {
    name: 'rule 5: summary without invoice period',
    modifiers: ['summary'],
    mutate: (d) => delete d.header.invoicePeriod,
    errors: ['AE-HEAD-008', 'AE-HEAD-009', 'AE-HEAD-010'],
    paths: ['header.invoicePeriod.startDate', 'header.invoicePeriod.endDate', 'header.invoicePeriod.frequency'],
  },
  { name: 'rule 5: summary without frequency', modifiers: ['summary'], mutate: (d) => delete d.header.invoicePeriod.frequency, errors: ['AE-HEAD-010'] },
  { name: 'rule 5: frequency outside the list', modifiers: ['summary'], mutate: (d) => (d.header.invoicePeriod.frequency = 'YEARLY'), errors: ['AE-HEAD-011'] },
  { name: 'rule 5: frequency is case-sensitive', modifiers: ['summary'], mutate: (d) => (d.header.invoicePeriod.frequency = 'monthly'), errors: ['AE-HEAD-011'] },
  ...INVOICE_FREQUENCIES.map((f): Case => ({ name: `rule 5: frequency ${f}`, modifiers: ['summary'], mutate: (d) => (d.header.invoicePeriod.frequency = f), errors: [] })),
  {
    name: 'rule 5: period ending before it starts',
    modifiers: ['summary'],
    mutate: (d) => Object.assign(d.header.invoicePeriod, { startDate: '2026-01-31', endDate: '2026-01-01' }),
    errors: ['CORE-HEAD-005'],
  },
  { name: 'rule 5: no summary, no period needed', mutate: (d) => delete d.header.invoicePeriod, errors: [] },
  { name: 'rule 5: frequency checked even without summary', mutate: (d) => (d.header.invoicePeriod = { frequency: 'HOURLY' }), errors: ['AE-HEAD-011'] },

  // Rule 6: tax id values -------------------------------------------------------------------------
  { name: 'rule 6: seller tax id value missing', mutate: (d) => delete d.parties.seller.taxIds[0].value, errors: ['AE-SELL-010'], paths: ['parties.seller.taxIds[0].value'] },
  { name: 'rule 6: seller tax id value optional with out_of_scope', modifiers: ['out_of_scope'], mutate: (d) => delete d.parties.seller.taxIds[0].value, errors: [] },
  { name: 'rule 6: seller tax id type stays mandatory with out_of_scope', modifiers: ['out_of_scope'], mutate: (d) => (d.parties.seller.taxIds = [{}]), errors: ['AE-SELL-009'] },
  { name: 'rule 6: buyer tax id value missing', mutate: (d) => (d.parties.buyer.taxIds = []), errors: ['AE-BUY-010'], paths: ['parties.buyer.taxIds[0].value'] },
  { name: 'rule 6: buyer tax id value optional with export', modifiers: ['export'], mutate: (d) => (d.parties.buyer.taxIds = []), errors: [] },
  { name: 'rule 6: buyer tax id value mandatory with reverse_charge', modifiers: ['reverse_charge'], mutate: (d) => (d.parties.buyer.taxIds = []), errors: ['AE-BUY-010'] },
  { name: 'rule 6: reverse_charge wins over export', modifiers: ['export', 'reverse_charge'], mutate: (d) => (d.parties.buyer.taxIds = []), errors: ['AE-BUY-010'] },
  { name: 'rule 6: buyer tax id value without a type', mutate: (d) => delete d.parties.buyer.taxIds[0].type, errors: ['AE-BUY-009'] },

  // Rule 7: delivery address ------------------------------------------------------------------------
  ...(['e_commerce', 'export'] as const).flatMap((m): Case[] => [
    {
      name: `rule 7: ${m} without delivery address`,
      modifiers: [m],
      mutate: (d) => delete d.parties.delivery,
      errors: ['AE-DLV-001', 'AE-DLV-002', 'AE-DLV-003', 'AE-DLV-004'],
      paths: ['parties.delivery.address.addressLine1', 'parties.delivery.address.city', 'parties.delivery.address.countrySubdivision', 'parties.delivery.address.country'],
    },
    { name: `rule 7: ${m} with delivery address`, modifiers: [m], errors: [] },
    { name: `rule 7: ${m} with delivery city missing`, modifiers: [m], mutate: (d) => delete d.parties.delivery.address.city, errors: ['AE-DLV-002'] },
  ]),
  { name: 'rule 7: no delivery address needed otherwise', mutate: (d) => delete d.parties.delivery, errors: [] },

  // Rule 8: emirates ------------------------------------------------------------------------------------
  ...EMIRATE_CODES.map((e): Case => ({
    name: `rule 8: emirate ${e} for seller, buyer and delivery`,
    modifiers: ['e_commerce'],
    mutate: (d) => {
      d.parties.seller.address.stateOrProvince = e;
      d.parties.buyer.address.stateOrProvince = e;
      d.parties.delivery.address.countrySubdivision = e;
    },
    errors: [],
  })),
  { name: 'rule 8: seller state "Dubai" is not an emirate code', mutate: (d) => (d.parties.seller.address.stateOrProvince = 'Dubai'), errors: ['AE-SELL-011'], paths: ['parties.seller.address.stateOrProvince'] },
  { name: 'rule 8: buyer state in lower case', mutate: (d) => (d.parties.buyer.address.stateOrProvince = 'dxb'), errors: ['AE-BUY-011'] },
  {
    name: 'rule 8: delivery subdivision in AE',
    modifiers: ['export'],
    mutate: (d) => (d.parties.delivery.address.countrySubdivision = 'XX'),
    errors: ['AE-DLV-005'],
    paths: ['parties.delivery.address.countrySubdivision'],
  },
  {
    name: 'rule 8: a foreign buyer has its own state names',
    modifiers: ['export'],
    mutate: (d) => Object.assign(d.parties.buyer.address, { country: 'SA', stateOrProvince: 'Riyadh Region', city: 'Riyadh' }),
    errors: [],
  },
  {
    name: 'rule 8: a foreign delivery address has its own subdivisions',
    modifiers: ['export'],
    mutate: (d) => Object.assign(d.parties.delivery.address, { country: 'OM', countrySubdivision: 'Muscat' }),
    errors: [],
  },

  // Formats -------------------------------------------------------------------------------------------
  { name: 'format: issue date month 13', mutate: (d) => (d.header.issueDate = '2026-13-01'), errors: ['CORE-HEAD-001'], paths: ['header.issueDate'] },
  { name: 'format: 29 February of a common year', mutate: (d) => (d.header.issueDate = '2026-02-29'), errors: ['CORE-HEAD-001'] },
  { name: 'format: 29 February of a leap year', mutate: (d) => (d.header.issueDate = '2024-02-29'), errors: [] },
  { name: 'format: day-first date', mutate: (d) => (d.header.dueDate = '14/02/2026'), errors: ['CORE-HEAD-001'], paths: ['header.dueDate'] },
  { name: 'format: date with a time', mutate: (d) => (d.header.issueDate = '2026-01-15T10:00:00Z'), errors: ['CORE-HEAD-001'] },
  { name: 'format: four-letter currency', mutate: (d) => Object.assign(d.header, { currency: 'AEDX' }), errors: ['AE-HEAD-012', 'AE-HEAD-013', 'CORE-HEAD-002'] },
  {
    name: 'format: tax currency code',
    mutate: (d) => Object.assign(d.header, { currency: 'USD', taxCurrency: 'dirham', exchangeRate: { rate: 3.67 } }),
    errors: ['AE-HEAD-017', 'CORE-HEAD-002'],
    paths: ['header.taxCurrency', 'header.taxCurrency'],
  },
  { name: 'format: seller TRN too short', mutate: (d) => (d.parties.seller.taxIds[0].value = '10023456780000'), errors: ['AE-SELL-012'], paths: ['parties.seller.taxIds[0].value'] },
  { name: 'format: buyer TRN with letters', mutate: (d) => (d.parties.buyer.taxIds[0].value = '10098765430000A'), errors: ['AE-BUY-012'] },
  { name: 'format: TRN given as type VAT', mutate: (d) => (d.parties.seller.taxIds[0] = { type: 'VAT', value: '12345' }), errors: ['AE-SELL-012'] },
  { name: 'format: TIN must be 10 digits', mutate: (d) => d.parties.seller.taxIds.push({ type: 'TIN', value: '100234567' }), errors: ['AE-SELL-012'], paths: ['parties.seller.taxIds[1].value'] },
  { name: 'format: TIN of 10 digits', mutate: (d) => d.parties.seller.taxIds.push({ type: 'TIN', value: '1002345678' }), errors: [] },
  { name: 'format: TIN registration number', mutate: (d) => (d.parties.buyer.registrationNumbers[0] = { type: 'TIN', value: '12345678901' }), errors: ['AE-BUY-014'] },
  { name: 'format: Peppol id under scheme 0235', mutate: (d) => (d.parties.seller.peppolId = '100234567800003'), errors: ['AE-SELL-013'], paths: ['parties.seller.peppolId'] },
  {
    name: 'format: Peppol id under another scheme is not checked',
    mutate: (d) => {
      d.parties.buyer.peppolId = 'buyer-123';
      d.extensions.peppol_buyer_peppolIdScheme = '9930';
    },
    errors: [],
  },
  { name: 'format: three-letter country code', mutate: (d) => (d.parties.seller.address.country = 'ARE'), errors: ['CORE-PARTY-001'], paths: ['parties.seller.address.country'] },
  { name: 'consistency: header base differs from the request', mutate: (d) => (d.header.documentType.base = 'credit_note'), errors: ['CORE-HEAD-004'] },
];

describe('UAE rules (docs/api/unify.md), table of payload variants', () => {
  for (const c of cases) {
    it(`${c.name} -> ${c.errors.length ? c.errors.join(', ') : 'valid'}`, () => {
      const type = dt(c.base ?? 'tax_invoice', c.modifiers ?? []);
      const report = validate('AE', type, docFor('AE', type, c.mutate));
      expect(codes(report.errors), JSON.stringify(report.errors.map((e) => [e.code, e.corePath, e.message]))).to.deep.equal([...c.errors].sort());
      if (c.paths) expect(report.errors.map((e) => e.corePath)).to.have.members(c.paths);
      expect(codes(report.warnings)).to.deep.equal([...(c.warnings ?? [])].sort());
      expect(report.success).to.equal(c.errors.length === 0);
    });
  }

  it('reports each finding with code, message, path, severity and rule set', () => {
    const type = dt('tax_invoice');
    const report = validate('AE', type, docFor('AE', type, (d) => delete d.parties.buyer.address.city));
    expect(report.errors).to.deep.equal([
      {
        code: 'AE-BUY-006',
        message: 'Buyer city is required [ibr-144-ae]',
        path: ['parties', 'buyer', 'address', 'city'],
        corePath: 'parties.buyer.address.city',
        severity: 'error',
        ruleSet: 'ae.mandatory',
        officialRule: 'ibr-144-ae',
      },
    ]);
  });

  it('counts a rule that fails on several paths once', () => {
    const type = dt('tax_invoice');
    const report = validate('AE', type, docFor('AE', type, (d) => Object.assign(d.header, { issueDate: 'x', dueDate: 'y' })));
    expect(codes(report.errors)).to.deep.equal(['CORE-HEAD-001', 'CORE-HEAD-001']);
    expect(report.metadata.totals.failed).to.equal(1);
    expect(report.metadata.ruleSetStats.find((s) => s.name === 'core.header')).to.include({ failed: 1, errors: 2 });
  });
});

describe('UAE arithmetic consistency (core warnings; PINT AE makes the line and total equalities errors)', () => {
  const type = dt('tax_invoice');
  const run = (mutate: (d: Doc) => void) => validate('AE', type, docFor('AE', type, mutate));

  it('a consistent invoice has no warnings', () => {
    const r = run(() => {});
    expect(r.warnings).to.deep.equal([]);
    expect(r.metadata.ruleSetStats.find((s) => s.name === 'core.arithmetic')).to.include({ passed: 7, warned: 0, skipped: 0 });
  });

  it('line taxable value differing from quantity x price', () => {
    const r = run((d) => (d.lineItems[0].lineTaxableValue += 1));
    expect(r.success).to.equal(false);
    // ibr-147-ae (line net), ibr-co-10 (sum of lines) and aligned-ibrp-s-09 (category tax) reject it.
    expect(codes(r.errors)).to.deep.equal(['AE-DOC-006', 'AE-LINE-028', 'AE-LINE-029']);
    expect(r.errors.map((e) => e.officialRule).sort()).to.deep.equal(['aligned-ibrp-s-09', 'ibr-147-ae', 'ibr-co-10']);
    expect(codes(r.warnings)).to.deep.equal(['CORE-CALC-001', 'CORE-CALC-002', 'CORE-CALC-003']);
    expect(r.warnings.find((w) => w.code === 'CORE-CALC-001')!.path).to.deep.equal(['lineItems', 0, 'lineTaxableValue']);
  });

  it('line tax differing from taxable x rate / 100, and the total tax from the lines', () => {
    const r = run((d) => (d.lineItems[2].taxAmount += 0.5));
    expect(codes(r.warnings)).to.deep.equal(['CORE-CALC-002', 'CORE-CALC-004']);
    expect(r.warnings[0]!.corePath).to.equal('lineItems[2].taxAmount');
  });

  it('rounding differences within a cent are accepted', () => {
    const r = run((d) => (d.lineItems[1].taxAmount += 0.004));
    expect(r.warnings).to.deep.equal([]);
  });

  it('total including tax differing from excluding + tax', () => {
    const r = run((d) => (d.totals.totalAmountIncludingTax += 1));
    expect(codes(r.warnings)).to.deep.equal(['CORE-CALC-005']);
  });

  it('total excluding tax differing from the line total', () => {
    const r = run((d) => (d.totals.totalAmountExcludingTax += 1));
    expect(codes(r.warnings)).to.deep.equal(['CORE-CALC-005', 'CORE-CALC-006']);
  });

  it('amount due above the total, or negative', () => {
    expect(codes(run((d) => (d.totals.amountDue = d.totals.totalAmountIncludingTax + 5)).warnings)).to.deep.equal(['CORE-CALC-007']);
    expect(codes(run((d) => (d.totals.amountDue = -1)).warnings)).to.deep.equal(['CORE-CALC-007']);
    expect(run((d) => (d.totals.amountDue = 0)).warnings).to.deep.equal([]);
  });

  it('no line items (and no totals) is a UAE error (ibr-016, ibr-012..015), and the line arithmetic is skipped', () => {
    const r = run((d) => {
      d.lineItems = [];
      delete d.totals;
    });
    expect(r.success).to.equal(false);
    expect(codes(r.errors)).to.deep.equal(['AE-DOC-001', 'AE-DOC-002', 'AE-DOC-003', 'AE-DOC-004', 'AE-DOC-005']);
    expect(r.errors.map((e) => e.officialRule)).to.deep.equal(['ibr-016', 'ibr-012', 'ibr-013', 'ibr-014', 'ibr-015']);
    expect(codes(r.warnings)).to.deep.equal(['CORE-LINE-001']);
    expect(r.metadata.ruleSetStats.find((s) => s.name === 'core.arithmetic')).to.include({ skipped: 7 });
  });

  it('lines without price or rate are not judged', () => {
    const r = run((d) => {
      for (const l of d.lineItems) {
        delete l.price;
        delete l.taxRate;
      }
    });
    expect(r.warnings).to.deep.equal([]);
    const s = r.metadata.ruleSetStats.find((x) => x.name === 'core.arithmetic')!;
    expect(s.skipped).to.equal(2);
  });

  it('a wrongly typed amount is a preflight error, not an arithmetic warning', () => {
    const r = run((d) => (d.lineItems[0].taxAmount = '5.00'));
    expect(codes(r.errors)).to.deep.equal(['CORE-PRE-002']);
    expect(r.errors[0]!.corePath).to.equal('lineItems[0].taxAmount');
    expect(codes(r.warnings)).to.deep.equal([]);
  });
});

describe('UAE modifiers without rules of their own', () => {
  for (const m of ['free_trade_zone', 'disclosed_agent', 'continuous_supply', 'self_billed', 'margin_scheme']) {
    it(`${m}: the sample stays valid`, () => {
      const type = dt('tax_invoice', [m]);
      expect(validate('AE', type, docFor('AE', type)).errors).to.deep.equal([]);
    });
  }
  it('every modifier at once (with what they need), except out_of_scope with summary, deemed supply or margin scheme (ibr-157-ae)', () => {
    const every = ['free_trade_zone', 'disclosed_agent', 'e_commerce', 'export', 'reverse_charge', 'continuous_supply', 'summary', 'deemed_supply', 'self_billed', 'margin_scheme'];
    const type = dt('tax_invoice', every);
    expect(validate('AE', type, docFor('AE', type)).errors).to.deep.equal([]);
    const withOutOfScope = dt('tax_invoice', [...every, 'out_of_scope']);
    const r = validate('AE', withOutOfScope, docFor('AE', withOutOfScope));
    expect(codes(r.errors)).to.include('AE-HEAD-021');
    expect(r.errors.find((e) => e.code === 'AE-HEAD-021')).to.include({ officialRule: 'ibr-157-ae', corePath: 'header.documentType.modifiers' });
  });
});
