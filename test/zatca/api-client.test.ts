import { X509Certificate } from 'node:crypto';
import { expect } from 'chai';
import { ZatcaApiClient, retryAfterMs, type ZatcaClientOptions, type ZatcaResult } from '../../commands/zatca/api/client.js';
import { certificatePemOf, type CsidAnswer, type ZatcaCsid } from '../../commands/zatca/api/contract.js';
import { FIXTURE_OTP, startZatcaContractServer, type ZatcaContractServer } from './fixtures/contract-server.js';
import { opensslCsr } from './fixtures/ca.js';
import { saudiInvoice, type Base, type Kind } from './support.js';

function answer<A>(r: ZatcaResult<A>): { status: number; body: A } {
  if (r.kind !== 'answer') throw new Error(`expected an answer, got ${JSON.stringify(r)}`);
  return r;
}
const csidOf = (a: CsidAnswer): ZatcaCsid => ({ binarySecurityToken: a.binarySecurityToken, secret: a.secret });

describe('ZATCA API client against the contract server (test fixture)', function () {
  this.timeout(60_000);
  let server: ZatcaContractServer;
  let client: ZatcaApiClient;
  let production: ZatcaCsid;
  const options = (o: Partial<ZatcaClientOptions> = {}): ZatcaClientOptions => ({ baseUrl: server.url, timeoutMs: 5000, maxAttempts: 3, retryBaseMs: 20, maxRetryAfterMs: 5000, ...o });

  before(async function () {
    server = await startZatcaContractServer();
    client = new ZatcaApiClient(options());
  });
  after(async () => server?.close());

  describe('onboarding', function () {
    let compliance: CsidAnswer;
    it('refuses a compliance CSID with a wrong OTP (400 Invalid-OTP)', async function () {
      const { csrPem } = await opensslCsr();
      const r = await client.complianceCsid(csrPem, '000000');
      expect(r).to.deep.include({ kind: 'refused', status: 400, code: 'Invalid-OTP' });
    });
    it('refuses a CSR that is not one (400 Invalid-CSR)', async function () {
      const r = await client.complianceCsid('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n', FIXTURE_OTP);
      expect(r).to.deep.include({ kind: 'refused', status: 400, code: 'Invalid-CSR' });
    });
    it('issues a compliance CSID: the token is the Base64 of the certificate issued for the CSR', async function () {
      const { csrPem } = await opensslCsr();
      const r = answer(await client.complianceCsid(csrPem, FIXTURE_OTP));
      compliance = r.body;
      expect(compliance.dispositionMessage).to.equal('ISSUED');
      const cert = new X509Certificate(certificatePemOf(compliance.binarySecurityToken));
      expect(cert.checkIssued(new X509Certificate(server.ca.certificatePem))).to.equal(true);
      expect(cert.subject).to.contain('CN=EGS1-886431145');
      expect(server.calls.at(-1)!.headers['accept-version']).to.equal('V2');
      expect(server.calls.at(-1)!.headers.otp).to.equal(FIXTURE_OTP);
    });
    it('a production CSID needs every compliance step first (400 Missing-ComplianceSteps)', async function () {
      const r = await client.productionCsid(csidOf(compliance), String(compliance.requestID));
      expect(r).to.deep.include({ kind: 'refused', status: 400, code: 'Missing-ComplianceSteps' });
      if (r.kind === 'refused') expect(r.message).to.contain('simplified-credit-note');
    });
    it('passes the six compliance checks and gets the production CSID', async function () {
      const kinds: [Kind, Base][] = [['standard', 'tax_invoice'], ['standard', 'credit_note'], ['standard', 'debit_note'], ['simplified', 'tax_invoice'], ['simplified', 'credit_note'], ['simplified', 'debit_note']];
      for (const [kind, base] of kinds) {
        const r = answer(await client.complianceCheck(csidOf(compliance), saudiInvoice({ kind, base, number: `C-${kind}-${base}` }).body));
        expect(r.status, `${kind} ${base}`).to.equal(200);
        expect(r.body.validationResults.status).to.equal('PASS');
        expect(kind === 'standard' ? r.body.clearanceStatus : r.body.reportingStatus).to.equal(kind === 'standard' ? 'CLEARED' : 'REPORTED');
      }
      const p = answer(await client.productionCsid(csidOf(compliance), String(compliance.requestID)));
      production = csidOf(p.body);
      const cert = new X509Certificate(certificatePemOf(p.body.binarySecurityToken));
      expect(cert.subject).to.equal(new X509Certificate(certificatePemOf(compliance.binarySecurityToken)).subject);
    });
    it('the compliance CSID does not authenticate clearance (401)', async function () {
      const r = await client.clearance(csidOf(compliance), saudiInvoice({ number: 'X-1' }).body);
      expect(r).to.deep.include({ kind: 'refused', status: 401 });
    });
  });

  describe('clearance and reporting', function () {
    let counter = 0;
    let pih: string | undefined;
    const next = (kind: Kind, number: string) => {
      const inv = saudiInvoice({ kind, number, counter: ++counter, previousInvoiceHash: pih });
      pih = inv.hash;
      return inv;
    };

    it('clears a standard invoice: 200 CLEARED with the cleared XML', async function () {
      const inv = next('standard', 'S-1');
      const r = answer(await client.clearance(production, inv.body));
      expect(r.status).to.equal(200);
      expect(r.body.clearanceStatus).to.equal('CLEARED');
      expect(Buffer.from(r.body.clearedInvoice!, 'base64').toString('utf8')).to.contain('cleared by the ZATCA contract server');
      expect(server.calls.at(-1)!.headers['clearance-status']).to.equal('1');
    });
    it('the same invoice again: 208 with the earlier cleared invoice', async function () {
      const again = saudiInvoice({ kind: 'standard', number: 'S-1', counter: 1 });
      const r = answer(await client.clearance(production, again.body));
      expect(r.status).to.equal(208);
      expect(r.body.clearanceStatus).to.equal('CLEARED');
      expect(r.body.validationResults.errorMessages![0]!.category).to.equal('Duplicate-Invoice');
    });
    it('reports a simplified invoice, and answers 409 REPORTED_SUCCESSFULLY_EARLIER to the same one', async function () {
      const inv = next('simplified', 'R-1');
      const r = answer(await client.reporting(production, inv.body));
      expect(r).to.deep.include({ status: 200 });
      expect(r.body.reportingStatus).to.equal('REPORTED');
      expect(server.calls.at(-1)!.headers['clearance-status']).to.equal('0');
      const again = answer(await client.reporting(production, inv.body));
      expect(again.status).to.equal(409);
      expect(again.body.reportingStatus).to.equal('REPORTED_SUCCESSFULLY_EARLIER');
    });
    it('a wrong invoice hash: 400 NOT_CLEARED with the error message', async function () {
      const inv = next('standard', 'S-2');
      const r = answer(await client.clearance(production, { ...inv.body, invoiceHash: Buffer.alloc(32).toString('base64') }));
      expect(r.status).to.equal(400);
      expect(r.body.clearanceStatus).to.equal('NOT_CLEARED');
      expect(r.body.validationResults.errorMessages!.map((m) => m.code)).to.include('invalid-invoice-hash');
    });
    it('a chain gap: 202 CLEARED with a warning', async function () {
      counter += 5;
      const inv = next('standard', 'S-3');
      const r = answer(await client.clearance(production, inv.body));
      expect(r.status).to.equal(202);
      expect(r.body.clearanceStatus).to.equal('CLEARED');
      expect(r.body.validationResults.warningMessages!.map((m) => m.code)).to.include('KSA-13');
    });
    it('a wrong secret: 401, refused', async function () {
      const r = await client.reporting({ ...production, secret: 'wrong' }, next('simplified', 'R-2').body);
      expect(r).to.deep.include({ kind: 'refused', status: 401 });
    });
    it('303 when clearance is switched off', async function () {
      server.clearanceOff = true;
      try {
        const r = await client.clearance(production, next('standard', 'S-4').body);
        expect(r.kind).to.equal('clearance_off');
      } finally {
        server.clearanceOff = false;
      }
    });
  });

  describe('throttling, failures and time-outs', function () {
    const inv = (n: string) => saudiInvoice({ kind: 'simplified', number: n, counter: 100 });
    it('429 with Retry-After: waits that long, then retries', async function () {
      server.inject('/invoices/reporting/single', { status: 429, retryAfter: '1' });
      const start = Date.now();
      const r = await client.reporting(production, inv('T-1').body);
      expect(r.kind).to.equal('answer');
      const calls = server.calls.filter((c) => c.path === '/invoices/reporting/single').slice(-2);
      expect(calls[0]!.status).to.equal(429);
      expect(calls[1]!.status).to.be.oneOf([200, 202]); // 202: this EGS unit's chain has a gap here, a warning
      expect(calls[1]!.at - calls[0]!.at).to.be.at.least(1000);
      expect(Date.now() - start).to.be.at.least(1000);
    });
    it('429 asking for longer than the client waits: handed back with the hint, not retried', async function () {
      server.inject('/invoices/reporting/single', { status: 429, retryAfter: '120' });
      const before = server.calls.length;
      const r = await client.reporting(production, inv('T-2').body);
      expect(r).to.deep.include({ kind: 'unavailable', status: 429, code: 'ZATCA_THROTTLED', retryAfterMs: 120_000, outcomeUnknown: false });
      expect(server.calls.length - before).to.equal(1);
    });
    it('503 twice, then the answer', async function () {
      server.inject('/invoices/reporting/single', { status: 503 }, 2);
      const r = await client.reporting(production, inv('T-3').body);
      expect(r.kind).to.equal('answer');
      expect(server.calls.slice(-3).map((c) => (c.status === 202 ? 200 : c.status))).to.deep.equal([503, 503, 200]);
    });
    it('500 on every attempt: unavailable once the attempts are spent, the outcome unknown', async function () {
      server.inject('/invoices/reporting/single', { status: 500, body: { code: 'Internal', message: 'boom' } }, 3);
      const r = await client.reporting(production, inv('T-4').body);
      expect(r).to.deep.include({ kind: 'unavailable', status: 500, code: 'ZATCA_UNAVAILABLE', outcomeUnknown: true });
    });
    it('a time-out after the authority processed it: the retry gets the earlier result (409)', async function () {
      const c = new ZatcaApiClient(options({ timeoutMs: 4000 }));
      server.inject('/invoices/reporting/single', { delayMs: 6000 });
      const r = answer(await c.reporting(production, inv('T-5').body));
      expect(r.status).to.equal(409);
      expect(r.body.reportingStatus).to.equal('REPORTED_SUCCESSFULLY_EARLIER');
    });
    it('a time-out on every attempt: unavailable, outcome unknown', async function () {
      const c = new ZatcaApiClient(options({ timeoutMs: 200, maxAttempts: 2 }));
      server.inject('/invoices/reporting/single', { delayMs: 600 }, 2);
      const r = await c.reporting(production, inv('T-6').body);
      expect(r).to.deep.include({ kind: 'unavailable', code: 'ZATCA_TIMEOUT', outcomeUnknown: true });
    });
    it('a CSID request is not repeated after a time-out (it spends the OTP)', async function () {
      const c = new ZatcaApiClient(options({ timeoutMs: 300 }));
      server.inject('/compliance', { delayMs: 1500 });
      const csr = (await opensslCsr()).csrPem;
      const before = server.calls.length;
      const r = await c.complianceCsid(csr, FIXTURE_OTP);
      expect(r).to.deep.include({ kind: 'unavailable', code: 'ZATCA_TIMEOUT' });
      // The held answer is recorded once it is sent; a retry (sent at once, after a back-off of ~20 ms) would be recorded too.
      const received = () => server.calls.slice(before).filter((x) => x.path === '/compliance');
      for (const deadline = Date.now() + 20_000; received().length === 0 && Date.now() < deadline; ) await new Promise((res) => setTimeout(res, 100));
      await new Promise((res) => setTimeout(res, 3000));
      expect(received()).to.have.length(1);
    });
    it('an answer that does not match the contract is a protocol error, never trusted', async function () {
      server.inject('/invoices/reporting/single', { status: 200, body: { reportingStatus: 'REPORTED' } }, 3);
      const r = await client.reporting(production, inv('T-7').body);
      expect(r).to.deep.include({ kind: 'unavailable', code: 'ZATCA_PROTOCOL_ERROR', outcomeUnknown: true });
    });
    it('413 for a body over the limit', async function () {
      const small = await startZatcaContractServer({ maxBodyBytes: 1000 });
      try {
        const r = await new ZatcaApiClient(options({ baseUrl: small.url })).reporting(production, inv('T-8').body);
        expect(r).to.deep.include({ kind: 'refused', status: 413, code: 'Request-Too-Large' });
      } finally {
        await small.close();
      }
    });
    it('the contract server answers 406 without Accept-Version: V2, as the gateway does', async function () {
      const res = await fetch(`${server.url}/invoices/reporting/single`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      expect(res.status).to.equal(406);
      expect(((await res.json()) as { code: string }).code).to.equal('Invalid-Version');
      const c = server.calls.find((x) => x.path === '/invoices/reporting/single' && x.status === 200)!;
      expect(c.headers).to.include({ 'accept-version': 'V2', 'accept-language': 'en', 'content-type': 'application/json' });
      expect(c.headers.authorization).to.match(/^Basic /);
    });
    it('reads Retry-After as seconds or an HTTP date', function () {
      expect(retryAfterMs('7')).to.equal(7000);
      expect(retryAfterMs(new Date(Date.now() + 60_000).toUTCString())).to.be.within(58_000, 60_000);
      expect(retryAfterMs('soon')).to.equal(null);
      expect(retryAfterMs(null)).to.equal(null);
    });
  });
});
