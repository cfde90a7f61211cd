/**
 * Back-pressure (http/write-limit.ts) over real HTTP: a flood of write requests against a tiny
 * limit gets the family's 503 with Retry-After for what does not fit, nothing of a refused
 * request is written, reads pass, and the service serves writes normally once the flood is over.
 */
import { expect } from 'chai';
import type { Config } from '../../platform/config.js';
import { connectError, freshName } from '../connect/support.js';
import { startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';

type Response = { status: number; json: any; text: string; headers: Headers };

const FLOOD = 40;

function expectRetryAfter(r: Response): void {
  const value = r.headers.get('retry-after');
  expect(value, r.text).to.match(/^[1-9][0-9]*$/);
  expect(Number(value)).to.be.at.most(60);
}

describe('HTTP: back-pressure on write requests (bounded queue, 503 with Retry-After)', function () {
  this.timeout(120000);

  describe('a limit of 1 executing and 1 waiting', () => {
    let t: TestService;
    let u: UnifyTenant;
    const limit = (c: Config): Config => ({ ...c, writeLimit: { concurrency: 1, queueLength: 1, queueTimeoutMs: 10_000 } });

    before(async () => {
      t = await startTestService({ config: limit });
      u = await unifyTenant(t);
    });
    after(async () => t?.close());

    it('a flood of submissions: each is a 200 or the Unify 503 with Retry-After; refused ones wrote nothing; the service recovers', async () => {
      const numbers = Array.from({ length: FLOOD }, () => freshNumber('FLOOD'));
      const responses: Response[] = await Promise.all(numbers.map((n) => u.submit(u.request(uaeInvoice({ documentNumber: n })))));
      const accepted = responses.filter((r) => r.status === 200);
      const refused = responses.filter((r) => r.status === 503);
      expect(accepted.length + refused.length, JSON.stringify(responses.map((r) => r.status))).to.equal(FLOOD);
      expect(refused.length).to.be.greaterThan(0);
      expect(accepted.length).to.be.greaterThan(0);
      for (const r of refused) {
        expect(r.json).to.have.keys(['code', 'message', 'requestId']);
        expect(r.json.code).to.equal('unavailable');
        expect(r.json.message).to.match(/limit of concurrent write requests/);
        expect(r.json.requestId).to.equal(r.headers.get('x-request-id'));
        expectRetryAfter(r);
      }

      // Nothing of a refused submission exists: the workspace holds exactly the accepted documents.
      const knex = t.service.runtime.db.knex;
      const rows = await knex('sales_documents').select('document_id').where({ workspace_id: u.client.workspaceId });
      expect(rows.map((r) => r.document_id).sort()).to.deep.equal(accepted.map((r) => r.json.documentId).sort());

      // Recovery: one at a time, the refused numbers are all accepted now (their numbers were never claimed).
      const refusedNumbers = numbers.filter((_, i) => responses[i]!.status === 503);
      for (const n of refusedNumbers.slice(0, 5)) {
        const r = await u.submit(u.request(uaeInvoice({ documentNumber: n })));
        expect(r.status, r.text).to.equal(200);
      }
    });

    it('the earlier format gets its own envelope for the 503', async () => {
      const responses: Response[] = await Promise.all(
        Array.from({ length: FLOOD }, () => {
          const [name, version] = [u.source.slice(0, u.source.lastIndexOf(':')), u.source.slice(u.source.lastIndexOf(':') + 1)];
          return u.legacy({
            action: 'submit',
            purpose: 'invoicing',
            env: 'sandbox',
            defaults: { country: 'AE', logicalDocumentType: 'TAX_INVOICE', source: { name, version }, destinations: [{ type: 'TAX_AUTHORITY' }] },
            invoices: [{ payload: uaeInvoice() }],
          });
        }),
      );
      const refused = responses.filter((r) => r.status === 503);
      expect(refused.length).to.be.greaterThan(0);
      for (const r of refused) {
        expect(r.json.status).to.equal('error');
        expect(r.json.code).to.equal('SERVICE_UNAVAILABLE');
        expect(r.json.errors[0].code).to.equal('SERVICE_UNAVAILABLE');
        expectRetryAfter(r);
      }
      for (const r of responses) expect([200, 503], r.text.slice(0, 300)).to.include(r.status);
    });

    it('Connect writes: the Connect 503 with retryable true and the workspace in meta; reads are not limited', async () => {
      const company = await u.client.onboard();
      const names = Array.from({ length: FLOOD }, () => freshName('Branch'));
      const flood = names.map((sourceName, i) => u.client.post(`/v3/connect/companies/${company.companyId}/branches`, { branchName: `Branch ${i}`, sourceName, sourceVersion: 'v1' }));
      const reads = Array.from({ length: 10 }, () => u.client.get('/v3/connect/companies'));
      const [responses, readResponses] = await Promise.all([Promise.all(flood), Promise.all(reads)]);
      const refused = responses.filter((r) => r.status === 503);
      expect(refused.length).to.be.greaterThan(0);
      for (const r of refused) {
        const error = connectError(r);
        expect(error.code).to.equal('CONNECT_SERVICE_UNAVAILABLE');
        expect(error.retryable).to.equal(true);
        expect(r.json.meta.workspaceId).to.equal(u.client.workspaceId);
        expectRetryAfter(r);
      }
      for (const r of responses) expect([201, 503], r.text.slice(0, 300)).to.include(r.status);
      for (const r of readResponses) expect(r.status, r.text.slice(0, 300)).to.equal(200);
      // A refused branch was not created (its source name is unknown); an accepted one was.
      for (const [i, r] of responses.entries()) {
        const read = await u.client.get(`/v3/connect/companies/${encodeURIComponent(names[i]!)}?sourceVersion=v1`);
        expect(read.status, read.text.slice(0, 300)).to.equal(r.status === 201 ? 200 : 404);
      }
    });
  });

  describe('a request that waits longer than the queue time-out', () => {
    let t: TestService;
    let u: UnifyTenant;

    before(async () => {
      t = await startTestService({ config: (c) => ({ ...c, writeLimit: { concurrency: 1, queueLength: 1000, queueTimeoutMs: 1 } }) });
      u = await unifyTenant(t);
    });
    after(async () => t?.close());

    it('is refused with the 503 although the queue has room', async () => {
      const responses: Response[] = await Promise.all(Array.from({ length: 20 }, () => u.submit(u.request(uaeInvoice()))));
      const refused = responses.filter((r) => r.status === 503);
      expect(refused.length).to.be.greaterThan(0);
      for (const r of refused) {
        expect(r.json.code).to.equal('unavailable');
        expect(r.json.message).to.match(/waited 1 ms/);
        expectRetryAfter(r);
      }
      const ok = await u.submit(u.request(uaeInvoice()));
      expect(ok.status, ok.text).to.equal(200);
    });
  });
});
