/**
 * The README walk-through and the example payloads under examples/: the company body of the
 * walk-through onboards, and every example file submits as pasted with 200.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { clientFor } from '../connect/support.js';
import { call, startTestService, withoutProcesses, type TestService } from '../support/http.js';

const EXAMPLES = path.resolve('examples');

describe('examples/: the README walk-through submits every example payload', function () {
  this.timeout(60000);
  let t: TestService;
  let apiKey: string;

  before(async () => {
    t = await startTestService({ processes: withoutProcesses });
    const tenant = await t.tenant();
    apiKey = tenant.apiKey;
    const c = clientFor(t, tenant);
    await c.authorize('1234567890', 'finance@acme.ae', 'sandbox');
    const company = await c.post('/v3/connect/companies', JSON.parse(fs.readFileSync(path.join(EXAMPLES, 'connect-company.json'), 'utf8')));
    expect(company.status, company.text).to.equal(201);
  });
  after(async () => t.close());

  it('the README points at the example files', () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    expect(readme).to.contain('-d @examples/connect-company.json');
    expect(readme).to.contain('-d @examples/ae-tax-invoice.json');
  });

  const files = fs.readdirSync(EXAMPLES).filter((f) => f.endsWith('.json') && f !== 'connect-company.json').sort();

  it('ships a UAE tax invoice, a credit note, an export invoice and an earlier-format MY batch', () => {
    expect(files).to.include.members(['ae-tax-invoice.json', 'ae-credit-note.json', 'ae-export-invoice.json', 'my-earlier-format-batch.json']);
  });

  for (const file of files) {
    it(`${file} → 200`, async () => {
      const text = fs.readFileSync(path.join(EXAMPLES, file), 'utf8');
      const body = JSON.parse(text);
      const earlier = 'action' in body;
      const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      if (!earlier) headers['new-api'] = 'true';
      const r = await call(`${t.url}/api/v3/unify`, { method: 'POST', headers, rawBody: text });
      expect(r.status, r.text.slice(0, 2000)).to.equal(200);
      if (earlier) {
        expect(r.json.data.summary.failed, r.text.slice(0, 2000)).to.equal(0);
      } else {
        expect(r.json.documentId).to.be.a('string');
      }
    });
  }
});
