/**
 * Unknown members: in the payload they are answered with UNKNOWN_FIELD warnings naming the
 * closest known name (200 and 422); in the request envelope they are refused with their path;
 * a missing required field whose near miss is present names it.
 */
import { expect } from 'chai';
import { unknownFields } from '../../domain/validation/codec.js';
import type { TestService } from '../support/http.js';
import { uaeInvoice, unifyTenant, type UnifyTenant, withUnifyService } from './support.js';

describe('Unify new format: unknown fields', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;

  withUnifyService((service, tenant) => {
    t = service;
    u = tenant;
  });

  it('finds every unknown member of a document with the closest known name at its place', () => {
    const doc = uaeInvoice() as any;
    doc.header.buyerReferance = 'PO-1';
    doc.lineItems[0].nmae = 'x';
    doc.lineItems[0].extensions = { ...(doc.lineItems[0].extensions ?? {}), ae_itemTyp: 'G' };
    doc.remarks = 'top-level';
    const found = unknownFields(doc).map((f) => [f.path, f.closest]);
    expect(found).to.deep.include.members([
      ['lineItems[0].nmae', 'name'],
    ]);
    expect(found.map((f) => f[0])).to.include.members(['header.buyerReferance', 'remarks', 'lineItems[0].extensions.ae_itemTyp']);
    expect(found.find((f) => f[0] === 'lineItems[0].extensions.ae_itemTyp')![1]).to.equal('ae_itemType');
    expect(unknownFields(uaeInvoice())).to.deep.equal([]);
  });

  it('answers 200 with a warning per unknown payload member (path, not read, closest name)', async () => {
    const payload = uaeInvoice() as any;
    payload.header.buyerReferance = 'PO-1';
    payload.lineItems[0].nmae = 'Consulting';
    payload.remarks = 'kept nowhere';
    const r = await u.submit(u.request(payload));
    expect(r.status, r.text).to.equal(200);
    expect(r.json.kind).to.equal('document');
    const byField = Object.fromEntries(r.json.warnings.map((w: any) => [w.payloadField, w]));
    expect(Object.keys(byField)).to.have.members(['header.buyerReferance', 'lineItems[0].nmae', 'remarks']);
    expect(byField['lineItems[0].nmae']).to.deep.equal({
      code: 'UNKNOWN_FIELD',
      message: 'lineItems[0].nmae is not read by the service; the closest known name is "name"',
      field: null,
      payloadField: 'lineItems[0].nmae',
      suggestion: 'name',
    });
    expect(byField['remarks'].message).to.contain('not read by the service');
  });

  it('names the near miss when a required field is missing (documentNumbr), and warns of it on the 422', async () => {
    const payload = uaeInvoice() as any;
    payload.header.documentNumbr = payload.header.documentNumber;
    delete payload.header.documentNumber;
    const r = await u.submit(u.request(payload));
    expect(r.status, r.text).to.equal(422);
    const missing = r.json.errors.find((e: any) => e.payloadField === 'header.documentNumber');
    expect(missing, r.text).to.not.equal(undefined);
    expect(missing.message).to.contain('header.documentNumbr').and.to.contain('misspelling of documentNumber');
    expect(r.json.warnings.map((w: any) => [w.code, w.payloadField, w.suggestion])).to.deep.include(['UNKNOWN_FIELD', 'header.documentNumbr', 'documentNumber']);
  });

  it('refuses an unknown member of the request envelope with its path (400), top level, documentType and batch', async () => {
    const top = await u.submit({ ...u.request(uaeInvoice()), enviroment: 'sandbox' });
    expect(top.status, top.text).to.equal(400);
    expect(top.json.path).to.deep.equal(['enviroment']);
    expect(top.json.message).to.contain('unknown field "enviroment"');
    const inner = await u.submit({ ...u.request(uaeInvoice()), documentType: { base: 'tax_invoice', modifiers: [], modifers: ['export'] } });
    expect(inner.status, inner.text).to.equal(400);
    expect(inner.json.path).to.deep.equal(['documentType', 'modifers']);
    const batch = await u.submit({ invoices: [u.request(uaeInvoice())], continueOnError: true });
    expect(batch.status, batch.text).to.equal(400);
    expect(batch.json.path).to.deep.equal(['continueOnError']);
  });
});
