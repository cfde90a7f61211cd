/**
 * The requirements catalogue is generated from the rules the validator runs: spot checks of
 * the UAE exceptions, and a cross-check against validateDocument for many document types.
 */
import { expect } from 'chai';
import {
  describeRules,
  EMIRATE_CODES,
  INVOICE_FREQUENCIES,
  requirementsCatalogue,
  supportedCountries,
  countryDocumentTypes,
  type FieldRequirement,
  type RequirementsCatalogue,
} from '../../domain/validation/index.js';
import { ruleSets } from '../../domain/validation/rules/index.js';
import { docFor, dt, unset, validate } from './helpers.js';

function catalogue(country: string, base: string, modifiers: string[] = [], variant?: string): RequirementsCatalogue {
  const r = requirementsCatalogue({ country, base, modifiers, variant: variant ?? null });
  if (!r.ok) throw r.error;
  return r.value;
}
const field = (c: RequirementsCatalogue, path: string): FieldRequirement => {
  const f = c.fields.find((x) => x.path === path);
  if (!f) throw new Error(`no catalogue entry for ${path}`);
  return f;
};

describe('requirements catalogue (UAE)', () => {
  it('lists the mandatory fields of rule 1 as required', () => {
    const c = catalogue('AE', 'tax_invoice');
    for (const path of [
      'header.documentNumber',
      'header.issueDate',
      'header.currency',
      'header.documentType.base',
      'parties.seller.name',
      'parties.seller.registrationNumbers[0].type',
      'parties.seller.registrationNumbers[0].value',
      'parties.seller.peppolId',
      'parties.seller.address.addressLine1',
      'parties.seller.address.city',
      'parties.seller.address.stateOrProvince',
      'parties.seller.address.country',
      'parties.seller.taxIds[0].type',
      'parties.buyer.name',
      'parties.buyer.address.stateOrProvince',
    ]) {
      expect(field(c, path).requirement, path).to.equal('required');
    }
    expect(field(c, 'header.documentId').requirement).to.equal('optional');
    expect(field(c, 'header.documentNumber')).to.deep.include({ type: 'string', rules: ['AE-HEAD-001'] });
    expect(c.ruleSets).to.include('ae.mandatory');
  });

  it('buyer tax id value: required, with export only for reverse-charge lines (ibr-103-ae), required again with reverse_charge', () => {
    const path = 'parties.buyer.taxIds[0].value';
    expect(field(catalogue('AE', 'tax_invoice'), path).requirement).to.equal('required');
    const exported = field(catalogue('AE', 'tax_invoice', ['export']), path);
    expect(exported.requirement).to.equal('conditional');
    expect(exported.conditions).to.deep.equal(['required when a line has taxCategory AE']);
    expect(exported.officialRules).to.deep.equal(['ibr-103-ae']);
    expect(exported.notApplicable).to.deep.equal([{ rule: 'AE-BUY-010', appliesWhen: 'modifier reverse_charge is present or modifier export is absent' }]);
    expect(field(catalogue('AE', 'tax_invoice', ['export', 'reverse_charge']), path).requirement).to.equal('required');
    expect(field(catalogue('AE', 'tax_invoice', ['reverse_charge']), path).requirement).to.equal('required');
  });

  it('seller tax id value is optional with out_of_scope', () => {
    expect(field(catalogue('AE', 'tax_invoice'), 'parties.seller.taxIds[0].value').requirement).to.equal('required');
    expect(field(catalogue('AE', 'tax_invoice', ['out_of_scope']), 'parties.seller.taxIds[0].value').requirement).to.equal('optional');
  });

  it('due date: required for tax invoices, optional with deemed_supply and for credit notes', () => {
    expect(field(catalogue('AE', 'tax_invoice'), 'header.dueDate')).to.deep.include({ requirement: 'required', type: 'date', formats: ['date'] });
    expect(field(catalogue('AE', 'tax_invoice', ['deemed_supply']), 'header.dueDate').requirement).to.equal('optional');
    expect(field(catalogue('AE', 'credit_note'), 'header.dueDate').requirement).to.equal('optional');
  });

  it('preceding invoice: required for credit notes except reason VD (ibr-055-ae), issue date from either place', () => {
    const c = catalogue('AE', 'credit_note');
    expect(field(c, 'header.precedingInvoiceReference.id').requirement).to.equal('conditional');
    const issue = field(c, 'header.precedingInvoiceReference.issueDate');
    expect(issue.requirement).to.equal('conditional');
    expect(issue.alternatives).to.deep.equal(['extensions.peppol_precedingInvoiceIssueDate']);
    const ext = field(c, 'extensions.peppol_precedingInvoiceIssueDate');
    expect(ext.requirement).to.equal('conditional');
    expect(ext.conditions).to.deep.equal([
      'required when header.precedingInvoiceReference.issueDate is absent and not (header.creditNoteReason.code is VD or extensions.ae_creditNoteReasonCode is VD)',
    ]);
    expect(field(catalogue('AE', 'tax_invoice'), 'header.precedingInvoiceReference.id').requirement).to.equal('optional');
  });

  it('summary: invoice period required, frequencies listed', () => {
    const c = catalogue('AE', 'tax_invoice', ['summary']);
    for (const p of ['startDate', 'endDate', 'frequency']) expect(field(c, `header.invoicePeriod.${p}`).requirement).to.equal('required');
    expect(field(c, 'header.invoicePeriod.frequency').acceptedValues).to.deep.equal([...INVOICE_FREQUENCIES]);
    expect(field(catalogue('AE', 'tax_invoice'), 'header.invoicePeriod.startDate').requirement).to.equal('optional');
  });

  it('currency other than AED: tax currency and exchange rate conditional', () => {
    const c = catalogue('AE', 'tax_invoice');
    for (const p of ['header.taxCurrency', 'header.exchangeRate.rate']) {
      expect(field(c, p).requirement).to.equal('conditional');
      expect(field(c, p).conditions).to.deep.equal(['required when header.currency is given and header.currency is not AED']);
    }
    expect(field(c, 'header.currency').formats).to.deep.equal(['currency']);
  });

  it('delivery address with e_commerce or export; emirate codes with their condition', () => {
    for (const m of ['e_commerce', 'export']) {
      const c = catalogue('AE', 'tax_invoice', [m]);
      for (const p of ['addressLine1', 'city', 'countrySubdivision', 'country']) expect(field(c, `parties.delivery.address.${p}`).requirement, `${m} ${p}`).to.equal('required');
    }
    const plain = catalogue('AE', 'tax_invoice');
    expect(field(plain, 'parties.delivery.address.city').requirement).to.equal('optional');
    const sub = field(plain, 'parties.delivery.address.countrySubdivision');
    expect(sub.acceptedValues).to.deep.equal([...EMIRATE_CODES]);
    expect(sub.constraints[0]).to.deep.include({ rule: 'AE-DLV-005', when: 'parties.delivery.address.country is AE' });
    expect(field(plain, 'parties.seller.address.stateOrProvince').acceptedValues).to.deep.equal([...EMIRATE_CODES]);
  });

  it('identifier formats and arithmetic checks are listed on their paths', () => {
    const c = catalogue('AE', 'tax_invoice');
    expect(field(c, 'parties.seller.taxIds[].value').constraints[0]).to.deep.include({ rule: 'AE-SELL-012', kind: 'check' });
    expect(field(c, 'lineItems[].taxAmount').constraints[0]).to.deep.include({ rule: 'CORE-CALC-002', severity: 'warning' });
    expect(field(c, 'parties.seller.peppolId').constraints[0]).to.deep.include({ rule: 'AE-SELL-013', when: 'extensions.peppol_seller_peppolIdScheme is 0235' });
  });

  it('answers a typed error for unsupported countries and inapplicable types', () => {
    const r1 = requirementsCatalogue({ country: 'SG', base: 'tax_invoice' });
    expect(r1.ok).to.equal(false);
    if (!r1.ok) expect(r1.error.reason).to.equal('unsupported_country');
    const r2 = requirementsCatalogue({ country: 'DE', base: 'tax_invoice', modifiers: ['e_commerce'] });
    expect(r2.ok).to.equal(false);
    if (!r2.ok) expect(r2.error.reason).to.equal('not_applicable');
  });
});

describe('requirements catalogue matches the validator', () => {
  // A spread of document types per country: no modifier, each modifier alone, and the variants.
  const types: Array<[string, string, string[], string | undefined]> = [];
  for (const country of supportedCountries) {
    const c = countryDocumentTypes[country];
    for (const base of c.bases) {
      types.push([country, base, [], undefined]);
      for (const m of c.modifiers) types.push([country, base, [m], undefined]);
      for (const v of c.variants) types.push([country, base, [], v]);
    }
  }

  for (const [country, base, modifiers, variant] of types) {
    it(`${country} ${base} ${modifiers.join(',')} ${variant ?? ''}`, () => {
      const cat = catalogue(country, base, modifiers, variant);
      const type = dt(base, modifiers, variant);
      const report = validate(country, type, docFor(country as never, type));
      expect(report.errors, 'the sample is valid').to.deep.equal([]);
      expect(cat.ruleSets).to.deep.equal(report.metadata.ruleSetStats.map((s) => s.name));
      for (const f of cat.fields) {
        if (f.path.includes('[]')) continue;
        const r = validate(country, type, docFor(country as never, type, (d) => unset(d, f.path)));
        const atPath = r.errors.filter((e) => e.corePath === f.path || e.corePath.startsWith(`${f.path}.`) || e.corePath.startsWith(`${f.path}[`));
        if (f.requirement === 'required') {
          // Removing a required field is an error at that path (or, for a container, under it).
          expect(atPath.length, `${f.path} is required`).to.be.greaterThan(0);
        } else if (f.requirement === 'optional' && f.alternatives.length === 0) {
          // Removing an optional field never gives an error.
          expect(r.errors, `${f.path} is optional`).to.deep.equal([]);
        }
      }
    });
  }

  it('every rule of a selected set is reflected in the catalogue', () => {
    const cat = catalogue('AE', 'tax_invoice', ['summary', 'e_commerce']);
    const listed = new Set(cat.fields.flatMap((f) => [...f.rules, ...f.notApplicable.map((n) => n.rule)]));
    for (const set of ruleSets) {
      if (!cat.ruleSets.includes(set.name)) continue;
      for (const rule of set.rules) expect(listed.has(rule.code), rule.code).to.equal(true);
    }
  });
});

describe('describeRules', () => {
  it('lists every code once, with CORE-HEAD-010 reserved for the command layer', () => {
    const all = describeRules();
    const codes = all.map((r) => r.code);
    expect(new Set(codes).size).to.equal(codes.length);
    expect(all.find((r) => r.code === 'CORE-HEAD-010')).to.include({ kind: 'command', ruleSet: 'core.document_number' });
    expect(codes).to.include.members(['CORE-PRE-001', 'CORE-PRE-002', 'AE-HEAD-001', 'AE-BUY-010', 'AE-DLV-005', 'SA-SELL-012', 'BE-SELL-012', 'DE-SELL-012', 'MY-SELL-012']);
    const due = all.find((r) => r.code === 'AE-HEAD-005')!;
    expect(due.appliesWhen).to.equal('documentType.base is tax_invoice and modifier deemed_supply is absent');
  });
  it('filters by country', () => {
    const ae = describeRules('AE');
    expect(ae.some((r) => r.code.startsWith('SA-'))).to.equal(false);
    expect(ae.some((r) => r.code.startsWith('CORE-CALC'))).to.equal(true);
  });
});
