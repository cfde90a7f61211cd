/** Mapping templates: data in, core document and path map out; payload paths in findings. */
import { expect } from 'chai';
import {
  applyTemplate,
  builtInTemplates,
  identityTemplate,
  payloadPathFor,
  sampleDocument,
  templateProblems,
  validateDocument,
  type MappingTemplate,
} from '../../domain/validation/index.js';
import { assertConsistent, dt, NOW } from './helpers.js';

describe('identity template core-identity-ae-1', () => {
  it('is built in and maps the seven sections onto themselves', () => {
    expect(builtInTemplates.get('core-identity-ae-1')).to.equal(identityTemplate);
    expect(identityTemplate.entries.map((e) => `${e.corePath}<-${e.payloadPath}`)).to.deep.equal([
      'header<-header',
      'parties<-parties',
      'lineItems<-lineItems',
      'payment<-payment',
      'taxTotals<-taxTotals',
      'totals<-totals',
      'extensions<-extensions',
    ]);
    expect(templateProblems(identityTemplate)).to.deep.equal([]);
  });

  it('gives back the docs/api/unify.md payload as the core document, dropping unknown sections', () => {
    const payload = { ...sampleDocument('AE'), somethingElse: { x: 1 } };
    const { document, problems } = applyTemplate(identityTemplate, payload);
    const { somethingElse: _dropped, ...expected } = payload;
    expect(document).to.deep.equal(expected);
    expect(problems).to.deep.equal([]);
  });

  it('maps core paths to the same payload paths', () => {
    const { pathMap } = applyTemplate(identityTemplate, {});
    expect(payloadPathFor(pathMap, ['lineItems', 3, 'taxAmount'])).to.equal('lineItems[3].taxAmount');
    expect(payloadPathFor(pathMap, 'parties.buyer.address.stateOrProvince')).to.equal('parties.buyer.address.stateOrProvince');
    expect(payloadPathFor(pathMap, [])).to.equal('');
    expect(payloadPathFor(pathMap, ['meta'])).to.equal(null);
  });

  it('passes a payload that is not an object through, for the preflight to report', () => {
    for (const payload of [null, 'x', 3, [1]]) {
      const { document } = applyTemplate(identityTemplate, payload);
      expect(document).to.equal(payload);
    }
  });
});

describe('custom templates', () => {
  const template: MappingTemplate = {
    id: 'erp-x-1',
    entries: [
      { corePath: 'header', payloadPath: 'invoice.head' },
      { corePath: 'header.documentNumber', payloadPath: 'invoice.number' },
      { corePath: 'parties', payloadPath: 'parties' },
      { corePath: 'parties.seller.name', payloadPath: 'supplierName' },
      { corePath: 'lineItems[].name', payloadPath: 'items[].description' },
      { corePath: 'lineItems[].quantity', payloadPath: 'items[].qty' },
      { corePath: 'lineItems[].taxAmount', payloadPath: 'items[].vat.amount' },
      { corePath: 'totals', payloadPath: 'sums' },
    ],
  };

  it('builds the core document from payload paths, [] mapping every element', () => {
    const payload = {
      invoice: { head: { issueDate: '2026-01-15', currency: 'AED' }, number: 'INV-9' },
      parties: { seller: { name: 'Old name', peppolId: '1' } },
      supplierName: 'New name',
      items: [
        { description: 'A', qty: 2, vat: { amount: 1 } },
        { description: 'B', qty: 3 },
      ],
      sums: { amountDue: 5 },
    };
    const before = JSON.stringify(payload);
    const { document, problems } = applyTemplate(template, payload);
    expect(problems).to.deep.equal([]);
    expect(document).to.deep.equal({
      header: { issueDate: '2026-01-15', currency: 'AED', documentNumber: 'INV-9' },
      parties: { seller: { name: 'New name', peppolId: '1' } },
      lineItems: [
        { name: 'A', quantity: 2, taxAmount: 1 },
        { name: 'B', quantity: 3 },
      ],
      totals: { amountDue: 5 },
    });
    expect(JSON.stringify(payload), 'the payload is not modified').to.equal(before);
  });

  it('names the payload path of a finding through the most specific entry', () => {
    const { pathMap } = applyTemplate(template, {});
    expect(payloadPathFor(pathMap, 'header.documentNumber')).to.equal('invoice.number');
    expect(payloadPathFor(pathMap, 'header.dueDate')).to.equal('invoice.head.dueDate');
    expect(payloadPathFor(pathMap, ['lineItems', 4, 'taxAmount'])).to.equal('items[4].vat.amount');
    expect(payloadPathFor(pathMap, ['lineItems', 4, 'price'])).to.equal(null);
    expect(payloadPathFor(pathMap, 'parties.seller.name')).to.equal('supplierName');
    expect(payloadPathFor(pathMap, 'parties.buyer.taxIds[0].value')).to.equal('parties.buyer.taxIds[0].value');
  });

  it('422 errors name the core field and the payload field', () => {
    const payload = {
      invoice: { head: { issueDate: '2026-01-15', currency: 'AED', dueDate: '2026-02-01', documentType: { base: 'tax_invoice' } } },
      items: [{ description: 'A', qty: 'two', vat: { amount: 1 } }],
    };
    const { document, pathMap, problems } = applyTemplate(template, payload);
    const r = validateDocument({ country: 'AE', documentType: dt('tax_invoice'), document, now: NOW, pathMap, mappingProblems: problems });
    assertConsistent(r);
    const byCode = (code: string) => r.errors.find((e) => e.code === code)!;
    expect(byCode('AE-HEAD-001')).to.include({ corePath: 'header.documentNumber', payloadPath: 'invoice.number' });
    expect(byCode('CORE-PRE-002')).to.include({ corePath: 'lineItems[0].quantity', payloadPath: 'items[0].qty' });
    expect(byCode('AE-SELL-002')).to.include({ corePath: 'parties.seller.name', payloadPath: 'supplierName' });
  });

  it('reports payload containers of the wrong type as mapping problems (CORE-PRE-007)', () => {
    const { document, pathMap, problems } = applyTemplate(template, { invoice: 'INV-1', items: 'none', parties: { seller: 5 } });
    expect(problems.map((p) => [p.corePath, p.payloadPath, p.message])).to.deep.equal([
      ['header', 'invoice', 'invoice must be an object'],
      ['header.documentNumber', 'invoice', 'invoice must be an object'],
      ['lineItems', 'items', 'items must be an array'],
    ]);
    const r = validateDocument({ country: 'AE', documentType: dt('tax_invoice'), document, now: NOW, pathMap, mappingProblems: problems });
    assertConsistent(r);
    const mapping = r.errors.filter((e) => e.code === 'CORE-PRE-007');
    expect(mapping).to.have.length(3);
    expect(mapping[2]).to.include({ corePath: 'lineItems', payloadPath: 'items', ruleSet: 'core.preflight', message: 'items must be an array' });
    expect(mapping[2]!.path).to.deep.equal(['lineItems']);
    expect(r.errors.find((e) => e.corePath === 'parties.seller')).to.include({ code: 'CORE-PRE-002', payloadPath: 'parties.seller' });
  });

  it('numeric indices map one element', () => {
    const t: MappingTemplate = { id: 't', entries: [{ corePath: 'parties.seller.taxIds[0].value', payloadPath: 'sellerTrn' }] };
    const { document, pathMap } = applyTemplate(t, { sellerTrn: '100234567800003' });
    expect(document).to.deep.equal({ parties: { seller: { taxIds: [{ value: '100234567800003' }] } } });
    expect(payloadPathFor(pathMap, 'parties.seller.taxIds[0].value')).to.equal('sellerTrn');
    expect(payloadPathFor(pathMap, 'parties.seller.taxIds[1].value')).to.equal(null);
  });
});

describe('templateProblems', () => {
  it('finds malformed templates', () => {
    expect(templateProblems(null)).to.not.deep.equal([]);
    expect(templateProblems({ id: 'x' })).to.not.deep.equal([]);
    expect(templateProblems({ id: 'x', entries: [{ corePath: 'a..b', payloadPath: 'b' }] })[0]).to.match(/malformed path/);
    expect(templateProblems({ id: 'x', entries: [{ corePath: 'lineItems[].x', payloadPath: 'items' }] })[0]).to.match(/same number of \[\]/);
    expect(templateProblems({ id: 'x', entries: [{ corePath: 'a', payloadPath: 'b' }, { corePath: 'a', payloadPath: 'c' }] })[0]).to.match(/mapped twice/);
    expect(templateProblems({ id: 'x', entries: [{ corePath: '__proto__.x', payloadPath: 'b' }] })[0]).to.match(/malformed/);
    expect(templateProblems({ id: 'x', entries: [{ corePath: '', payloadPath: 'b' }] })[0]).to.match(/must not be empty/);
  });
  it('applyTemplate refuses an invalid template', () => {
    expect(() => applyTemplate({ id: 'x', entries: [{ corePath: 'a[]', payloadPath: 'b' }] }, {})).to.throw(/invalid/);
  });
});
