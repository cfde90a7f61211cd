/** Derived flags (docs/api/unify.md) and the resolution of logicalDocumentType per country. */
import { expect } from 'chai';
import { DomainError } from '../../domain/errors.js';
import {
  checkDocumentType,
  countryDocumentTypes,
  derivedFlags,
  DocumentTypeError,
  LOGICAL_DOCUMENT_TYPES,
  resolveLogicalDocumentType,
  supportedCountries,
  type DerivedFlags,
} from '../../domain/validation/index.js';

const FLAG_NAMES = [
  'isExport',
  'isSelfBilled',
  'isThirdParty',
  'isNominalSupply',
  'isSummary',
  'isB2B',
  'isPrepayment',
  'isAdjusted',
  'isReceipt',
  'isB2G',
  'isPartial',
  'isPartialConstruction',
  'isPartialFinalConst',
  'isFinalConstruction',
];

const only = (...names: (keyof DerivedFlags)[]) => Object.fromEntries(FLAG_NAMES.map((n) => [n, names.includes(n as keyof DerivedFlags)]));

describe('derivedFlags', () => {
  it('has the 14 booleans of docs/api/unify.md', () => {
    const flags = derivedFlags({ modifiers: [] });
    expect(Object.keys(flags)).to.deep.equal(FLAG_NAMES);
    for (const v of Object.values(flags)) expect(v).to.be.a('boolean');
  });
  const table: Array<[string, { modifiers?: string[]; variant?: string | null }, (keyof DerivedFlags)[]]> = [
    ['plain tax invoice', { modifiers: [] }, ['isB2B']],
    ['export', { modifiers: ['export'] }, ['isExport', 'isB2B']],
    ['self-billed', { modifiers: ['self_billed'] }, ['isSelfBilled', 'isB2B']],
    ['third party (disclosed agent)', { modifiers: ['disclosed_agent'] }, ['isThirdParty', 'isB2B']],
    ['nominal supply (deemed supply)', { modifiers: ['deemed_supply'] }, ['isNominalSupply', 'isB2B']],
    ['summary', { modifiers: ['summary'] }, ['isSummary', 'isB2B']],
    ['simplified (B2C)', { modifiers: [], variant: 'simplified' }, []],
    ['B2G', { modifiers: [], variant: 'b2g' }, ['isB2G']],
    ['receipt', { modifiers: [], variant: 'receipt' }, ['isReceipt']],
    ['prepayment', { modifiers: [], variant: 'prepayment' }, ['isPrepayment', 'isB2B']],
    ['adjusted', { modifiers: [], variant: 'adjusted' }, ['isAdjusted', 'isB2B']],
    ['partial', { modifiers: [], variant: 'partial' }, ['isPartial', 'isB2B']],
    ['partial construction', { modifiers: [], variant: 'partial_construction' }, ['isPartialConstruction', 'isB2B']],
    ['partial final construction', { modifiers: [], variant: 'partial_final_construction' }, ['isPartialFinalConst', 'isB2B']],
    ['final construction', { modifiers: [], variant: 'final_construction' }, ['isFinalConstruction', 'isB2B']],
    ['several modifiers', { modifiers: ['export', 'summary', 'self_billed'] }, ['isExport', 'isSummary', 'isSelfBilled', 'isB2B']],
    ['modifiers that set no flag', { modifiers: ['free_trade_zone', 'e_commerce', 'reverse_charge', 'continuous_supply', 'out_of_scope', 'margin_scheme'] }, ['isB2B']],
  ];
  for (const [name, type, flags] of table) {
    it(name, () => expect(derivedFlags(type)).to.deep.equal(only(...flags)));
  }
  it('tolerates missing or malformed modifiers', () => {
    expect(derivedFlags({} as never)).to.deep.equal(only('isB2B'));
    expect(derivedFlags({ modifiers: null, variant: null })).to.deep.equal(only('isB2B'));
  });
});

describe('resolveLogicalDocumentType', () => {
  const expected: Record<string, [string, string[], string | null]> = {
    TAX_INVOICE: ['tax_invoice', [], null],
    TAX_INVOICE_CREDIT_NOTE: ['credit_note', [], null],
    TAX_INVOICE_DEBIT_NOTE: ['debit_note', [], null],
    SIMPLIFIED_TAX_INVOICE: ['tax_invoice', [], 'simplified'],
    SIMPLIFIED_TAX_INVOICE_CREDIT_NOTE: ['credit_note', [], 'simplified'],
    EXPORT_INVOICE: ['tax_invoice', ['export'], null],
    SELF_BILLED_INVOICE: ['tax_invoice', ['self_billed'], null],
    THIRD_PARTY_INVOICE: ['tax_invoice', ['disclosed_agent'], null],
    DEEMED_SUPPLY: ['tax_invoice', ['deemed_supply'], null],
    MARGIN_SCHEME: ['tax_invoice', ['margin_scheme'], null],
    CONTINUOUS_SUPPLY: ['tax_invoice', ['continuous_supply'], null],
  };

  it('knows the eleven names of docs/api/unify.md', () => {
    expect(Object.keys(LOGICAL_DOCUMENT_TYPES).sort()).to.deep.equal(Object.keys(expected).sort());
  });

  for (const country of supportedCountries) {
    for (const [name, [base, modifiers, variant]] of Object.entries(expected)) {
      const c = countryDocumentTypes[country];
      const applies = (c.modifiers as readonly string[]).includes(modifiers[0] ?? 'export') && (variant === null || (c.variants as readonly string[]).includes(variant));
      it(`${country} ${name} -> ${applies ? `${base} [${modifiers.join(',')}] ${variant ?? ''}` : 'not applicable'}`, () => {
        const r = resolveLogicalDocumentType(country, name);
        if (applies) {
          expect(r).to.deep.equal({ ok: true, value: { base, modifiers, variant } });
        } else {
          expect(r.ok).to.equal(false);
          if (!r.ok) {
            expect(r.error).to.be.instanceOf(DocumentTypeError).and.instanceOf(DomainError);
            expect(r.error).to.include({ reason: 'not_applicable', kind: 'validation' });
          }
        }
      });
    }
  }

  it('UAE accepts all names except the simplified ones', () => {
    const accepted = Object.keys(expected).filter((n) => resolveLogicalDocumentType('AE', n).ok);
    expect(accepted.sort()).to.deep.equal(Object.keys(expected).filter((n) => !n.startsWith('SIMPLIFIED')).sort());
  });

  it('names are case-insensitive', () => {
    expect(resolveLogicalDocumentType('AE', 'export_invoice')).to.deep.equal({ ok: true, value: { base: 'tax_invoice', modifiers: ['export'], variant: null } });
  });

  it('unknown names', () => {
    const r = resolveLogicalDocumentType('AE', 'PROFORMA_INVOICE');
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.error).to.include({ reason: 'unknown_document_type', code: 'CORE-PRE-004' });
  });

  it('object form', () => {
    expect(resolveLogicalDocumentType('AE', { base: 'credit_note', modifiers: ['export', 'e_commerce', 'export'], variant: 'b2g' })).to.deep.equal({
      ok: true,
      value: { base: 'credit_note', modifiers: ['export', 'e_commerce'], variant: 'b2g' },
    });
    expect(resolveLogicalDocumentType('SA', { base: 'tax_invoice' })).to.deep.equal({ ok: true, value: { base: 'tax_invoice', modifiers: [], variant: null } });
  });

  it('object form problems carry a path', () => {
    const cases: Array<[unknown, string, (string | number)[]]> = [
      [{ modifiers: [] }, 'invalid_document_type', ['base']],
      [{ base: 'invoice' }, 'unknown_document_type', ['base']],
      [{ base: 'tax_invoice', modifiers: 'export' }, 'invalid_document_type', ['modifiers']],
      [{ base: 'tax_invoice', modifiers: ['export', 3] }, 'invalid_document_type', ['modifiers', 1]],
      [{ base: 'tax_invoice', modifiers: ['made_up'] }, 'unknown_document_type', ['modifiers', 0]],
      [{ base: 'tax_invoice', modifiers: ['e_commerce'] }, 'not_applicable', ['modifiers', 0]],
      [{ base: 'tax_invoice', variant: 'simplified' }, 'not_applicable', ['variant']],
      [{ base: 'tax_invoice', variant: 'weird' }, 'unknown_document_type', ['variant']],
    ];
    for (const [input, reason, path] of cases) {
      const r = resolveLogicalDocumentType('BE', input);
      expect(r.ok, JSON.stringify(input)).to.equal(false);
      if (!r.ok) {
        expect(r.error.reason, JSON.stringify(input)).to.equal(reason);
        expect(r.error.segments).to.deep.equal(path);
        expect(r.error.path).to.deep.equal(path.map(String));
      }
    }
  });

  it('unsupported country, or a value of the wrong type', () => {
    for (const country of ['SG', 'FR', '', null, 7]) {
      const r = resolveLogicalDocumentType(country, 'TAX_INVOICE');
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.error).to.include({ reason: 'unsupported_country', code: 'CORE-PRE-003' });
    }
    for (const value of [null, undefined, 3, [], true]) {
      const r = resolveLogicalDocumentType('AE', value);
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.error.reason).to.equal('invalid_document_type');
    }
  });

  it('checkDocumentType is the object-form check of the new request format', () => {
    expect(checkDocumentType('MY', { base: 'debit_note', modifiers: ['self_billed'] }).ok).to.equal(true);
    expect(checkDocumentType('MY', { base: 'debit_note', modifiers: ['margin_scheme'] }).ok).to.equal(false);
  });
});
