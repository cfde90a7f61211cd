import { expect } from 'chai';
import fc from 'fast-check';
import type { TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant, withUnifyService } from './support.js';

describe('Unify earlier format (docs/api/unify.md)', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;

  withUnifyService((service, tenant) => {
    t = service;
    u = tenant;
  });

  const submit = (invoices: unknown[], extra: Record<string, unknown> = {}) => {
    const [name, version] = [u.source.slice(0, u.source.lastIndexOf(':')), u.source.slice(u.source.lastIndexOf(':') + 1)];
    return {
      action: 'submit',
      purpose: 'invoicing',
      env: 'sandbox',
      defaults: { country: 'AE', logicalDocumentType: 'TAX_INVOICE', source: { name, version }, destinations: [{ type: 'TAX_AUTHORITY' }] },
      invoices,
      ...extra,
    };
  };

  it('answers the success envelope with one result per invoice, derived flags and a summary', async () => {
    const r = await u.legacy(submit([{ payload: uaeInvoice(), externalId: 'erp-1' }, { payload: uaeInvoice(), externalId: 'erp-2' }]));
    expect(r.status, r.text).to.equal(200);
    expect(r.json).to.include({ status: 'success', code: 'OK' });
    expect(r.json.requestId).to.equal(r.headers.get('x-request-id'));
    expect(r.json.errors).to.deep.equal([]);
    expect(r.json.data.summary).to.deep.equal({ total: 2, success: 2, failed: 0 });
    const [first] = r.json.data.results;
    expect(first).to.include({ index: 0, externalId: 'erp-1', status: 'success', country: 'AE', inputLogicalDocumentType: 'TAX_INVOICE' });
    expect(first.resolvedDocumentType).to.deep.include({ base: 'tax_invoice', modifiers: [] });
    expect(Object.keys(first.derivedFlags).sort()).to.deep.equal(
      ['isExport', 'isSelfBilled', 'isThirdParty', 'isNominalSupply', 'isSummary', 'isB2B', 'isPrepayment', 'isAdjusted', 'isReceipt', 'isB2G', 'isPartial', 'isPartialConstruction', 'isPartialFinalConst', 'isFinalConstruction'].sort(),
    );
    expect(first.validation).to.deep.equal({ success: true, errors: [] });
    expect(first.submission.success).to.equal(true);
    expect(first.documentId).to.be.a('string');
    expect((await u.status(first.documentId)).json.data.state).to.equal('submitted');
  });

  it('warns of payload members the service does not read as the new format does (UNKNOWN_FIELD, closest name, near miss)', async () => {
    const typo = uaeInvoice() as any;
    typo.header.buyerReferance = 'PO-1';
    typo.remarks = 'kept nowhere';
    const missing = uaeInvoice() as any;
    missing.header.documentNumbr = missing.header.documentNumber;
    delete missing.header.documentNumber;
    const r = await u.legacy(submit([{ payload: typo }, { payload: missing }, { payload: uaeInvoice() }]));
    expect(r.status, r.text).to.equal(200);
    const [accepted, failed, clean] = r.json.data.results;
    expect(accepted.status).to.equal('success');
    const byField = Object.fromEntries(accepted.warnings.map((w: any) => [w.payloadField, w]));
    expect(Object.keys(byField)).to.have.members(['header.buyerReferance', 'remarks']);
    expect(byField['header.buyerReferance']).to.deep.equal({
      code: 'UNKNOWN_FIELD',
      message: 'header.buyerReferance is not read by the service; the closest known name is "buyerReference"',
      field: null,
      payloadField: 'header.buyerReferance',
      suggestion: 'buyerReference',
    });
    expect(failed.status).to.equal('failed');
    const numberError = failed.validation.errors.find((e: any) => e.field === 'header.documentNumber');
    expect(numberError.message).to.contain('the payload has header.documentNumbr');
    expect(failed.warnings.map((w: any) => w.payloadField)).to.include('header.documentNumbr');
    expect(clean.warnings).to.deep.equal([]);
  });

  it('continues after a failed invoice when continueOnError is true, and stops at it when false', async () => {
    const bad = uaeInvoice();
    delete bad.header.issueDate;
    const go = await u.legacy(submit([{ payload: bad }, { payload: uaeInvoice() }], { options: { continueOnError: true } }));
    expect(go.json.data.summary).to.deep.equal({ total: 2, success: 1, failed: 1 });
    expect(go.json.data.results.map((x: { status: string }) => x.status)).to.deep.equal(['failed', 'success']);
    expect(go.json.data.results[0].validation.errors[0].path).to.deep.equal(['invoices', 0, 'payload', 'header', 'issueDate']);

    const stop = await u.legacy(submit([{ payload: bad }, { payload: uaeInvoice() }, { payload: uaeInvoice() }], { options: { continueOnError: false } }));
    expect(stop.json.data.results.map((x: { status: string }) => x.status)).to.deep.equal(['failed', 'not_processed', 'not_processed']);
    expect(stop.json.data.summary.success).to.equal(0);
  });

  it('refuses 0 and 11 invoices, metaConfig anywhere, and submitToGovernment false, in the earlier error envelope', async () => {
    const cases: [unknown, (string | number)[]][] = [
      [submit([]), ['invoices']],
      [submit(Array.from({ length: 11 }, () => ({ payload: uaeInvoice() }))), ['invoices']],
      [{ ...submit([{ payload: uaeInvoice() }]), defaults: { ...(submit([]) as any).defaults, metaConfig: {} } }, ['defaults', 'metaConfig']],
      [submit([{ payload: uaeInvoice() }, { payload: uaeInvoice(), metaConfig: { a: 1 } }]), ['invoices', 1, 'metaConfig']],
      [submit([{ payload: uaeInvoice() }], { options: { submitToGovernment: false } }), ['options', 'submitToGovernment']],
      [submit([{ payload: {} }]), ['invoices', 0, 'payload']],
      [{ ...submit([{ payload: uaeInvoice() }]), env: 'moon' }, ['env']],
    ];
    for (const [body, path] of cases) {
      const r = await u.legacy(body);
      expect(r.status, JSON.stringify(path)).to.equal(400);
      expect(r.json).to.include({ status: 'error', code: 'VALIDATION_ERROR', data: null });
      expect(r.json.errors[0].code).to.equal('REQ_INVALID_INPUT');
      expect(r.json.errors[0].path, r.text).to.deep.equal(path);
    }
  });

  it('answers AUTH_INVALID_API_KEY when the key does not serve env, and accepts prod as production', async () => {
    const r = await u.legacy(submit([{ payload: uaeInvoice() }], { env: 'prod' }));
    expect(r.status).to.equal(403);
    expect(r.json).to.include({ status: 'error', code: 'AUTH_INVALID_API_KEY' });
    const simulation = await u.legacy(submit([{ payload: uaeInvoice({ documentNumber: freshNumber('SIM') }) }], { env: 'simulation' }));
    expect(simulation.status).to.equal(200);
  });

  it('stores MAPPING samples without submitting them', async () => {
    const r = await u.legacy(submit([{ payload: { anything: 'goes', nested: { a: 1 } } }], { purpose: 'MAPPING' }));
    expect(r.status, r.text).to.equal(200);
    expect(r.json.data.results[0]).to.include({ status: 'stored', documentId: null });
    expect(r.json.data.results[0].payloadId).to.be.a('string');
  });

  it('lists Malaysian documents by uuid and documentId, refusing tinNumber and other countries', async () => {
    const list = (filters: Record<string, unknown>, extra: Record<string, unknown> = {}) => u.legacy({ action: 'list', env: 'sandbox', filters, ...extra });
    const ok = await list({ country: 'MY', uuid: 'u-1', documentId: 'd-1' }, { page: 1, limit: 5, sort: 'createdAt:desc' });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.json.data.summary).to.deep.equal({ total: 0, returned: 0, page: 1, limit: 5 });
    const tin = await list({ country: 'MY', uuid: 'u', documentId: 'd', tinNumber: '1' });
    expect(tin.status).to.equal(400);
    expect(tin.json.errors[0].path).to.deep.equal(['filters', 'tinNumber']);
    const sa = await list({ country: 'SA', uuid: 'u', documentId: 'd' });
    expect(sa.status).to.equal(400);
    const missing = await list({ country: 'MY', uuid: 'u' });
    expect(missing.status).to.equal(400);
    expect(missing.json.errors[0].path).to.deep.equal(['filters', 'documentId']);
  });

  it('answers any generated payload with 200 or 422 with at least one error in the new format (property)', async () => {
    const base = uaeInvoice();
    const paths = [['header', 'issueDate'], ['header', 'currency'], ['header', 'dueDate'], ['parties', 'seller', 'name'], ['parties', 'buyer', 'address'], ['lineItems'], ['totals', 'totalAmountIncludingTax'], ['header', 'exchangeRate']];
    const value = fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 }), fc.string(), fc.integer(), fc.constant(null));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...paths), value), { maxLength: 4 }), fc.subarray(['export', 'summary', 'reverse_charge', 'e_commerce', 'deemed_supply', 'out_of_scope']), async (changes, modifiers) => {
        const payload = structuredClone(base);
        payload.header.documentNumber = freshNumber('PROP');
        for (const [path, v] of changes) {
          let target: any = payload;
          for (const key of path.slice(0, -1)) target = target[key] ?? (target[key] = {});
          if (v === undefined) delete target[path[path.length - 1]!];
          else target[path[path.length - 1]!] = v;
        }
        const r = await u.submit(u.request(payload, { documentType: { base: 'tax_invoice', modifiers } }));
        expect([200, 422], r.text).to.include(r.status);
        if (r.status === 422) expect(r.json.errors.length).to.be.greaterThan(0);
      }),
      { numRuns: 60 },
    );
  });
});
