/**
 * The engine: report shape and counters, preflight (wrong types anywhere never throw),
 * document-type problems, truncation, payload paths, and the CORE-HEAD-010 finding.
 */
import { expect } from 'chai';
import {
  applyTemplate,
  documentNumberReuseFinding,
  identityTemplate,
  sampleDocument,
  validateDocument,
  type ValidationReport,
} from '../../domain/validation/index.js';
import { schemaPaths, typeName } from '../../domain/validation/schema.js';
import { assertConsistent, codes, docFor, dt, NOW, set, validate, type Doc } from './helpers.js';

describe('validation report (meta.coreValidation, docs/api/invoice-query.md)', () => {
  it('has success, errors, warnings, metadata and validatedAt', () => {
    const r = validateDocument({ country: 'AE', documentType: dt('tax_invoice', ['export']), document: docFor('AE', dt('tax_invoice', ['export'])), now: NOW });
    expect(Object.keys(r)).to.deep.equal(['success', 'errors', 'warnings', 'metadata', 'validatedAt']);
    expect(r.validatedAt).to.equal('2026-01-15T10:00:00.000Z');
    expect(r.metadata).to.include({ country: 'AE', base: 'tax_invoice', variant: null, truncated: false });
    expect(r.metadata.modifiers).to.deep.equal(['export']);
    expect(r.metadata.durationMs).to.be.a('number').and.at.least(0);
    expect(Object.keys(r.metadata.totals)).to.deep.equal([
      'ruleSets',
      'rules',
      'passed',
      'failed',
      'warned',
      'skipped',
      'errors',
      'warnings',
      'preflightChecks',
      'preflightPassed',
      'preflightFailed',
    ]);
    expect(r.metadata.ruleSetStats.map((s) => s.name)).to.deep.equal([
      'core.header',
      'core.parties',
      'core.lines',
      'core.arithmetic',
      'ae.mandatory',
      'ae.currency',
      'ae.due_date',
      'ae.tax_ids',
      'ae.delivery',
      'ae.code_lists',
      'ae.identifiers',
      'ae.pint_document',
      'ae.pint_lines',
    ]);
    for (const s of r.metadata.ruleSetStats) expect(Object.keys(s)).to.deep.equal(['name', 'rules', 'passed', 'failed', 'warned', 'skipped', 'errors', 'warnings']);
    assertConsistent(r);
  });

  it('uses the durationMs it is given', () => {
    const r = validateDocument({ country: 'AE', documentType: dt('tax_invoice'), document: {}, now: NOW, durationMs: 1.5 });
    expect(r.metadata.durationMs).to.equal(1.5);
  });

  it('selects rule sets by base, modifiers and variant', () => {
    const names = (type: ReturnType<typeof dt>) => validate('AE', type, docFor('AE', type)).metadata.ruleSetStats.map((s) => s.name);
    expect(names(dt('credit_note'))).to.include('ae.preceding_invoice').and.not.include('ae.due_date');
    expect(names(dt('tax_invoice'))).to.include('ae.due_date').and.not.include('ae.preceding_invoice');
    expect(names(dt('tax_invoice', ['summary']))).to.include('ae.summary');
    expect(names(dt('tax_invoice', ['e_commerce']))).to.include('ae.delivery');
    expect(names(dt('tax_invoice'))).to.not.include('ae.delivery');
    const sa = (variant?: string) => validate('SA', dt('tax_invoice', [], variant), docFor('SA', dt('tax_invoice', [], variant))).metadata;
    expect(sa('simplified').ruleSetStats.find((s) => s.name === 'sa.mandatory')!.skipped).to.equal(4);
    expect(sa().ruleSetStats.find((s) => s.name === 'sa.mandatory')!.skipped).to.equal(0);
  });

  it('counts rules switched off by the document type as skipped', () => {
    const r = validate('AE', dt('tax_invoice', ['deemed_supply', 'export', 'out_of_scope']), docFor('AE', dt('tax_invoice', ['deemed_supply', 'export', 'out_of_scope'])));
    expect(r.metadata.ruleSetStats.find((s) => s.name === 'ae.due_date')).to.include({ rules: 1, skipped: 1, passed: 0 });
    expect(r.metadata.ruleSetStats.find((s) => s.name === 'ae.tax_ids')).to.include({ rules: 3, skipped: 2 });
  });

  it('counters stay consistent on valid, invalid and empty documents of every country', () => {
    for (const country of ['AE', 'SA', 'MY', 'BE', 'DE'] as const) {
      for (const base of ['tax_invoice', 'credit_note', 'debit_note']) {
        const type = dt(base);
        assertConsistent(validate(country, type, docFor(country, type)));
        assertConsistent(validate(country, type, {}));
        assertConsistent(validate(country, type, docFor(country, type, (d) => {
          d.header = { issueDate: 5, currency: 'xx' };
          d.lineItems.push(null, 'x');
          d.parties.seller.taxIds = [{ type: 'VAT', value: '1' }];
        })));
      }
    }
  });

  it('a document that is not an object: one preflight error, every rule skipped', () => {
    for (const document of [null, undefined, 'invoice', 42, [], [{}], true]) {
      const r = validate('AE', dt('tax_invoice'), document);
      expect(codes(r.errors)).to.deep.equal(['CORE-PRE-001']);
      expect(r.errors[0]!.path).to.deep.equal([]);
      expect(r.metadata.totals.skipped).to.equal(r.metadata.totals.rules);
      expect(r.metadata.totals.rules).to.be.greaterThan(0);
    }
  });
});

describe('preflight: wrong types never throw and are reported at their path', () => {
  const WRONG: unknown[] = [0, 1.5, -1, 'text', '', true, false, {}, { a: 1 }, [], [1, 'x'], [null], NaN, Infinity];
  const matches = (type: string, v: unknown): boolean => {
    switch (type) {
      case 'string':
      case 'date':
      case 'code':
        return typeof v === 'string';
      case 'number':
        return typeof v === 'number' && Number.isFinite(v);
      case 'string or number':
        return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
      case 'string, number or boolean':
        return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
      case 'object':
      case 'map':
        return typeof v === 'object' && v !== null && !Array.isArray(v);
      case 'array':
        return Array.isArray(v);
      case 'object or array':
        return typeof v === 'object' && v !== null;
      default:
        return true;
    }
  };

  for (const { path, node } of schemaPaths()) {
    const concrete = path.replace(/\[\]/g, '[0]');
    it(`${concrete}`, () => {
      for (const value of WRONG) {
        const type = dt('tax_invoice', ['summary', 'export']);
        const doc = docFor('AE', type, (d) => set(d, concrete, value));
        let r: ValidationReport;
        expect(() => (r = validate('AE', type, doc))).to.not.throw();
        const preflight = r!.errors.filter((e) => e.code === 'CORE-PRE-002' && e.corePath.startsWith(concrete));
        if (matches(typeName(node), value)) {
          // The right type at this path: any preflight error is about a child (an object/array value).
          for (const e of preflight) expect(e.corePath).to.not.equal(concrete);
        } else {
          expect(preflight.map((e) => e.corePath), `${concrete} = ${JSON.stringify(value)}`).to.include(concrete);
          expect(r!.success).to.equal(false);
        }
      }
    });
  }

  it('null means absent, except as an array element', () => {
    const r = validate('AE', dt('tax_invoice'), docFor('AE', dt('tax_invoice'), (d) => {
      d.header.documentId = null;
      d.payment = null;
      d.lineItems.push(null);
    }));
    // payment null is absent: PINT AE then misses the payment means of an invoice (ibr-191-ae).
    expect(r.errors.map((e) => [e.code, e.corePath])).to.deep.equal([
      ['CORE-PRE-002', 'lineItems[3]'],
      ['AE-HEAD-015', 'payment.paymentMeans[0].paymentMeansCode'],
    ]);
  });

  it('extension values must be scalars', () => {
    const r = validate('AE', dt('tax_invoice'), docFor('AE', dt('tax_invoice'), (d) => {
      d.extensions.ae_beneficiaryId = { id: 1 };
      d.extensions.custom_flag = true;
      d.lineItems[1].extensions = { ae_itemType: ['GOODS'] };
    }));
    expect(r.errors.map((e) => e.corePath).sort()).to.deep.equal(['extensions.ae_beneficiaryId', 'lineItems[1].extensions.ae_itemType']);
  });

  it('a wrongly typed container does not also report its required children', () => {
    const r = validate('AE', dt('tax_invoice'), docFor('AE', dt('tax_invoice'), (d) => (d.parties.seller = 'Falcon Trading')));
    expect(codes(r.errors)).to.deep.equal(['CORE-PRE-002']);
    expect(r.errors[0]!.message).to.equal('parties.seller must be an object, not a string');
  });

  it('wrong types everywhere at once', () => {
    const doc = {
      header: { documentType: 'tax_invoice', documentNumber: 7, issueDate: 20260115, currency: ['AED'], exchangeRate: 3.67, invoicePeriod: [] },
      parties: { seller: { name: {}, address: 'Dubai', taxIds: { type: 'TRN' }, registrationNumbers: 'TL', peppolId: 1 }, buyer: [] },
      lineItems: { 0: {} },
      payment: { paymentMeans: [1] },
      taxTotals: 'none',
      totals: { totalAmountExcludingTax: '100' },
      extensions: [],
    };
    const r = validate('AE', dt('tax_invoice'), doc);
    expect(r.success).to.equal(false);
    expect(r.errors.filter((e) => e.code === 'CORE-PRE-002').map((e) => e.corePath)).to.have.members([
      'header.documentType',
      'header.documentNumber',
      'header.issueDate',
      'header.currency',
      'header.exchangeRate',
      'header.invoicePeriod',
      'parties.seller.name',
      'parties.seller.address',
      'parties.seller.taxIds',
      'parties.seller.registrationNumbers',
      'parties.seller.peppolId',
      'parties.buyer',
      'lineItems',
      'payment.paymentMeans[0]',
      'taxTotals',
      'totals.totalAmountExcludingTax',
      'extensions',
    ]);
  });
});

describe('document type problems in validateDocument', () => {
  const run = (country: unknown, documentType: unknown) => validate(country as string, documentType, sampleDocument('AE'));

  it('unsupported country', () => {
    const r = run('FR', dt('tax_invoice'));
    expect(r.errors.map((e) => [e.code, e.path])).to.deep.equal([['CORE-PRE-003', ['country']]]);
    expect(r.metadata.totals).to.include({ ruleSets: 0, rules: 0 });
    expect(r.metadata.country).to.equal('FR');
  });
  it('unknown or missing base', () => {
    expect(run('AE', dt('invoice')).errors.map((e) => [e.code, e.path])).to.deep.equal([['CORE-PRE-004', ['documentType', 'base']]]);
    expect(codes(run('AE', {}).errors)).to.deep.equal(['CORE-PRE-004']);
    expect(codes(run('AE', null).errors)).to.deep.equal(['CORE-PRE-004']);
    expect(codes(run('AE', 'tax_invoice').errors)).to.deep.equal(['CORE-PRE-004']);
  });
  it('unknown or inapplicable modifier', () => {
    expect(run('AE', dt('tax_invoice', ['foo'])).errors.map((e) => [e.code, e.path])).to.deep.equal([['CORE-PRE-005', ['documentType', 'modifiers', 0]]]);
    expect(codes(run('BE', dt('tax_invoice', ['free_trade_zone'])).errors)).to.include('CORE-PRE-005');
    expect(codes(run('AE', { base: 'tax_invoice', modifiers: 'export' }).errors)).to.deep.equal(['CORE-PRE-005']);
  });
  it('unknown or inapplicable variant', () => {
    expect(run('AE', dt('tax_invoice', [], 'simplified')).errors.map((e) => [e.code, e.path])).to.deep.equal([['CORE-PRE-006', ['documentType', 'variant']]]);
    expect(codes(run('AE', { base: 'tax_invoice', variant: 3 }).errors)).to.deep.equal(['CORE-PRE-006']);
  });
  it('metadata echoes what was sent', () => {
    const r = run('AE', { base: 'tax_invoice', modifiers: ['export', 7, 'foo'], variant: 'x' });
    expect(r.metadata).to.include({ base: 'tax_invoice', variant: 'x' });
    expect(r.metadata.modifiers).to.deep.equal(['export', 'foo']);
  });
  it('modifiers are de-duplicated and reported sorted', () => {
    const type = dt('tax_invoice', ['export', 'e_commerce', 'export']);
    const r = validate('AE', type, docFor('AE', type));
    expect(r.metadata.modifiers).to.deep.equal(['e_commerce', 'export']);
    expect(r.success).to.equal(true);
  });
  it('requires a valid now', () => {
    expect(() => validateDocument({ country: 'AE', documentType: dt('tax_invoice'), document: {}, now: new Date(NaN) })).to.throw(TypeError);
  });
});

describe('truncation, payload paths and CORE-HEAD-010', () => {
  it('lists at most maxFindings per list but counts all', () => {
    const doc = docFor('AE', dt('tax_invoice'), (d: Doc) => {
      d.lineItems = Array.from({ length: 50 }, () => 'not a line');
    });
    const r = validateDocument({ country: 'AE', documentType: dt('tax_invoice'), document: doc, now: NOW, maxFindings: 10 });
    expect(r.errors).to.have.length(10);
    expect(r.metadata.totals.errors).to.equal(50);
    expect(r.metadata.truncated).to.equal(true);
    expect(r.success).to.equal(false);
    assertConsistent(r);
  });

  it('names the payload path of every finding when given a path map', () => {
    const payload = docFor('AE', dt('tax_invoice'), (d) => {
      delete d.header.dueDate;
      d.lineItems[1].quantity = 'two';
    });
    const { document, pathMap, problems } = applyTemplate(identityTemplate, payload);
    const r = validateDocument({ country: 'AE', documentType: dt('tax_invoice'), document, now: NOW, pathMap, mappingProblems: problems });
    expect(r.errors.map((e) => [e.code, e.corePath, e.payloadPath])).to.deep.equal([
      ['CORE-PRE-002', 'lineItems[1].quantity', 'lineItems[1].quantity'],
      ['AE-HEAD-005', 'header.dueDate', 'header.dueDate'],
    ]);
    const notObject = validateDocument({ country: 'AE', documentType: dt('tax_invoice'), document: 'x', now: NOW, pathMap });
    expect(notObject.errors[0]).to.include({ code: 'CORE-PRE-001', payloadPath: '' });
    const badType = validateDocument({ country: 'XX', documentType: dt('tax_invoice'), document, now: NOW, pathMap });
    expect(badType.errors[0]).to.include({ code: 'CORE-PRE-003', payloadPath: null });
  });

  it('findings carry no payloadPath without a path map', () => {
    const r = validate('AE', dt('tax_invoice'), docFor('AE', dt('tax_invoice'), (d) => delete d.header.dueDate));
    expect(r.errors[0]).to.not.have.property('payloadPath');
  });

  it('documentNumberReuseFinding', () => {
    expect(documentNumberReuseFinding()).to.deep.include({
      code: 'CORE-HEAD-010',
      path: ['header', 'documentNumber'],
      corePath: 'header.documentNumber',
      severity: 'error',
      ruleSet: 'core.document_number',
    });
    const { pathMap } = applyTemplate({ id: 't', entries: [{ corePath: 'header.documentNumber', payloadPath: 'invoiceNo' }] }, {});
    expect(documentNumberReuseFinding(pathMap).payloadPath).to.equal('invoiceNo');
  });

  it('does not modify the document it validates', () => {
    const doc = docFor('AE', dt('tax_invoice', ['summary']), (d) => (d.header.currency = 'USD'));
    const before = JSON.stringify(doc);
    validate('AE', dt('tax_invoice', ['summary']), doc);
    expect(JSON.stringify(doc)).to.equal(before);
  });
});
