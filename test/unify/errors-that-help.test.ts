/**
 * Answers that point at the fix: the new-api hint, RFC 6750's WWW-Authenticate challenge, the
 * setting behind a refused private webhook target, the assumed production environment, and the
 * payload limits with the 413 code.
 */
import { expect } from 'chai';
import { urlProblem } from '../../domain/webhooks/targets.js';
import { PAYLOAD_LIMITS } from '../../domain/validation/limits.js';
import { call, type TestService } from '../support/http.js';
import { uaeInvoice, unifyTenant, type UnifyTenant, withUnifyService } from './support.js';

describe('Errors that point at the fix', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;

  withUnifyService((service, tenant) => {
    t = service;
    u = tenant;
  });

  it('a new-format body sent without new-api: true is told to send that header', async () => {
    const r = await call(`${t.url}/api/v3/unify`, { method: 'POST', headers: { authorization: `Bearer ${u.apiKey}` }, body: u.request(uaeInvoice()) });
    expect(r.status).to.equal(400);
    expect(r.json.message).to.contain('new-api: true');
    const earlier = await call(`${t.url}/api/v3/unify`, { method: 'POST', headers: { authorization: `Bearer ${u.apiKey}` }, body: { action: 'nothing' } });
    expect(earlier.json.message).to.equal('action must be "submit" or "list"');
  });

  it('a 401 carries WWW-Authenticate: Bearer, saying that X-API-Key is not read by Unify and Documents', async () => {
    const viaApiKey = await call(`${t.url}/api/v3/unify`, { method: 'POST', headers: { 'x-api-key': u.apiKey, 'new-api': 'true' }, body: {} });
    expect(viaApiKey.status).to.equal(401);
    expect(viaApiKey.json).to.deep.equal({ error: 'Unauthorized' });
    expect(viaApiKey.headers.get('www-authenticate')).to.match(/^Bearer realm="einvoicing", error="invalid_request", error_description=".*Authorization: Bearer <API_KEY>.*X-API-Key header is not read here"$/);
    const none = await call(`${t.url}/api/v3/documents/doc_1?type=sales`);
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.equal('Bearer realm="einvoicing", error_description="send the key as Authorization: Bearer <API_KEY>"');
    const wrong = await call(`${t.url}/invoices/query`, { method: 'POST', headers: { authorization: 'Bearer nope' }, body: {} });
    expect(wrong.headers.get('www-authenticate')).to.equal('Bearer realm="einvoicing", error="invalid_token", error_description="The API key is not valid."');
  });

  it('a refused private webhook target names the development setting that allows it', () => {
    const problem = urlProblem('http://127.0.0.1:9000/hook', { environment: 'sandbox', allowPrivateTargets: false });
    expect(problem).to.contain('WEBHOOK_ALLOW_PRIVATE_TARGETS=true');
    expect(urlProblem('http://127.0.0.1:9000/hook', { environment: 'sandbox', allowPrivateTargets: true })).to.equal(null);
  });

  it('a Connect read without X-Environment says that production was assumed', async () => {
    const assumed = await call(`${t.url}/v3/connect/invoices/counts?countryCode=AE&from=2026-01-01&to=2026-01-31`, { headers: { 'x-api-key': u.apiKey } });
    expect(assumed.status, assumed.text).to.equal(200);
    expect(assumed.headers.get('x-environment-assumed')).to.equal('production');
    const chosen = await call(`${t.url}/v3/connect/invoices/counts?countryCode=AE&from=2026-01-01&to=2026-01-31`, { headers: { 'x-api-key': u.apiKey, 'x-environment': 'sandbox' } });
    expect(chosen.status).to.equal(200);
    expect(chosen.headers.get('x-environment-assumed')).to.equal(null);
  });

  it('refuses a payload value over its limit with 413 payload_too_large and its path, in both formats', async () => {
    const payload = uaeInvoice() as any;
    payload.lineItems[0].name = 'x'.repeat(2 * 1024 * 1024);
    const r = await u.submit(u.request(payload));
    expect(r.status).to.equal(413);
    expect(r.json.code).to.equal('payload_too_large');
    expect(r.json.path).to.deep.equal(['payload', 'lineItems', 0, 'name']);
    expect(r.json.message).to.equal(`lineItems[0].name is ${2 * 1024 * 1024} characters long; the limit is ${PAYLOAD_LIMITS.maxStringChars}`);
    expect(r.text.length).to.be.lessThan(1000);
    const withinLimit = uaeInvoice() as any;
    withinLimit.lineItems[0].description = 'y'.repeat(PAYLOAD_LIMITS.maxStringChars);
    expect((await u.submit(u.request(withinLimit))).status).to.not.equal(413);

    const earlier = await call(`${t.url}/api/v3/unify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.apiKey}` },
      body: {
        action: 'submit',
        purpose: 'invoicing',
        env: 'sandbox',
        defaults: { country: 'AE', logicalDocumentType: 'TAX_INVOICE', source: { name: 'Nowhere', version: 'v1' } },
        invoices: [{ payload: { header: { documentNumber: 'x'.repeat(PAYLOAD_LIMITS.maxStringChars + 1) } } }],
      },
    });
    expect(earlier.status, earlier.text).to.equal(413);
    expect(earlier.json.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(earlier.json.errors[0]).to.deep.include({ code: 'REQ_PAYLOAD_TOO_LARGE', path: ['invoices', 0, 'payload', 'header', 'documentNumber'] });
  });
});
