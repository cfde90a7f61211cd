/**
 * Saudi Arabia in production, end to end: an EGS unit onboarded with the admin CLI against the
 * ZATCA contract server (a test fixture), then a standard and a simplified invoice submitted over
 * HTTP to the real server go through the production code path (stamp, chain per EGS unit, the
 * ZATCA connector) to final_valid; the contract server checks each stamp with OpenSSL and xmlsec1
 * and the ICV/PIH chain; the cleared XML ZATCA returned is the standard invoice's artifact. /readyz
 * lists the ZATCA connector for production only when ZATCA_ENVIRONMENT is configured.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sampleDocument } from '../../domain/validation/index.js';
import { verifyStamp } from '../../domain/zatca/stamp.js';
import { admin } from '../support/cli.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { FIXTURE_OTP, startZatcaContractServer, type ZatcaContractServer } from './fixtures/contract-server.js';
import { checkStamp } from './fixtures/stamp-check.js';

const SELLER_VAT = '300000000000003'; // the seller of the Saudi sample document

describe('ZATCA in production: CLI onboarding, then submit → final_valid through the contract server', function () {
  this.timeout(400_000); // the CLI steps each start a process (tsx, the database)
  let server: ZatcaContractServer;
  let t: TestService;
  let seller: UnifyTenant;
  const egsUnitId = `egs-${randomUUID().slice(0, 8)}`;
  // The service's production documents go to ZATCA's simulation here, as before going live: the unit is onboarded there.
  const cliEnv = () => ({ ZATCA_ENVIRONMENT: 'simulation', ZATCA_BASE_URL: server.url });

  before(async () => {
    server = await startZatcaContractServer({ requireStamp: true });
    t = await startTestService({
      config: (c) => ({
        ...c,
        zatca: { environment: 'simulation', baseUrl: server.url, timeoutMs: 10_000, maxAttempts: 2, retryBaseMs: 50, maxRetryAfterMs: 2000 },
        delivery: { ...c.delivery, retryBaseMs: 200, retryMaxMs: 1000, workerIntervalMs: 100 },
      }),
    });
    seller = await unifyTenant(t, { environment: 'production' });
  });
  after(async () => {
    await t?.close();
    await server?.close();
  });

  async function cli(args: string[]) {
    const r = await admin(['zatca', ...args], cliEnv());
    return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as Record<string, any>) : null };
  }

  it('/readyz lists the ZATCA connector for production', async function () {
    const r = await call(`${t.url}/readyz`);
    const { present, missing } = r.json.checks.connectors;
    expect(present).to.deep.include({ environment: 'production', destination: 'ZATCA', connector: 'zatca-api' });
    expect(missing).to.not.deep.include({ environment: 'production', destination: 'ZATCA' });
  });

  it('onboards an EGS unit step by step with the admin CLI', async function () {
    const registered = await cli([
      'register', '--workspace', seller.client.workspaceId, '--egs-unit', egsUnitId, '--environment', 'simulation', '--seller-vat', SELLER_VAT,
      '--common-name', 'EGS1-886431145', '--serial-number', `1-Ledger|2-1.0|3-${egsUnitId}`, '--organization-unit', 'Riyadh Branch',
      '--organization-name', 'Riyadh Roasters Co', '--invoice-type', '1100', '--location', 'King Fahd Road 1234', '--industry', 'Retail',
    ]);
    expect(registered.code, registered.stderr).to.equal(0);
    expect(registered.json).to.include({ egsUnitId, step: 'registered', sellerVat: SELLER_VAT });

    const csr = await cli(['csr', '--egs-unit', egsUnitId]);
    expect(csr.code, csr.stderr).to.equal(0);
    expect(csr.json!.csrPem).to.match(/^-----BEGIN CERTIFICATE REQUEST-----/);
    expect(csr.json!.step).to.equal('csr_created');

    const badArg = await cli(['compliance-csid', '--egs-unit', egsUnitId, '--otp', '12']);
    expect(badArg.code).to.equal(2);
    expect(badArg.stderr).to.contain('6-digit OTP');
    const wrongOtp = await cli(['compliance-csid', '--egs-unit', egsUnitId, '--otp', '999999']);
    expect(wrongOtp.code).to.equal(2);
    expect(wrongOtp.stderr).to.match(/^admin: compliance CSID: ZATCA answered 400 Invalid-OTP/);

    const compliance = await cli(['compliance-csid', '--egs-unit', egsUnitId, '--otp', FIXTURE_OTP]);
    expect(compliance.code, compliance.stderr).to.equal(0);
    expect(compliance.json!.step).to.equal('compliance_csid_issued');

    const checks = await cli(['compliance-checks', '--egs-unit', egsUnitId]);
    expect(checks.code, checks.stderr).to.equal(0);
    expect(checks.json!.checks).to.have.length(6);
    expect(checks.json!.checks.every((c: { passed: boolean }) => c.passed)).to.equal(true);

    const production = await cli(['production-csid', '--egs-unit', egsUnitId]);
    expect(production.code, production.stderr).to.equal(0);
    expect(production.json!.step).to.equal('production');

    const status = await cli(['status', '--egs-unit', egsUnitId]);
    expect(status.json!.production.keyId).to.equal(1);
    expect(status.stdout).to.not.match(/secret|PRIVATE KEY/i);
    // The CLI went through ZATCA's API: every call the contract server received carried Accept-Version V2.
    expect(server.calls.map((c) => `${c.method} ${c.path}`)).to.include.members(['POST /compliance', 'POST /compliance/invoices', 'POST /production/csids']);
  });

  async function submit(variant: 'simplified' | null) {
    const payload = sampleDocument('SA', { lines: 2, documentNumber: freshNumber('SA') }) as Record<string, any>;
    const documentType = { base: 'tax_invoice', modifiers: [], ...(variant ? { variant } : {}) };
    const r = await seller.submit(seller.request(payload, { country: 'SA', documentType }));
    expect(r.status, r.text).to.equal(200);
    return r.json.documentId as string;
  }
  async function settled(documentId: string) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await seller.status(documentId, 'status');
      if (!['submitted', 'processing', 'delivery_failed'].includes(r.json.data.state) || Date.now() > deadline) return r.json.data;
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  it('a standard invoice is cleared and a simplified one reported: final_valid, stamps verified by OpenSSL and xmlsec1', async function () {
    const standardId = await submit(null);
    const standard = await settled(standardId);
    expect(standard.state, JSON.stringify(standard)).to.equal('final_valid');
    expect(standard.government).to.include({ authority: 'ZATCA', endpoint: 'clearance', clearanceStatus: 'CLEARED', result: 'CLEARED' });

    const simplifiedId = await submit('simplified');
    const simplified = await settled(simplifiedId);
    expect(simplified.state, JSON.stringify(simplified)).to.equal('final_valid');
    expect(simplified.government).to.include({ authority: 'ZATCA', endpoint: 'reporting', reportingStatus: 'REPORTED', result: 'REPORTED' });

    // The standard invoice's artifact is the XML ZATCA cleared and returned.
    const cleared = Buffer.from(standard.artifacts.invoiceXmlBase64, 'base64').toString('utf8');
    expect(cleared).to.contain('cleared by the ZATCA contract server');
    const reported = Buffer.from(simplified.artifacts.invoiceXmlBase64, 'base64').toString('utf8');
    for (const [xml, government] of [[cleared, standard.government], [reported, simplified.government]] as const) {
      expect(verifyStamp(xml)).to.deep.equal([]);
      const unit = [...server.chains.entries()].find(([, links]) => links.some((l) => l.hash === government.invoiceHash));
      expect(unit, 'the authority received the invoice').to.not.equal(undefined);
    }
    // The independent check the authority made, made again on the stored documents.
    const certificatePem = `-----BEGIN CERTIFICATE-----\n${/<ds:X509Certificate>([^<]+)</.exec(reported)![1]!.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
    expect(await checkStamp(reported, certificatePem, simplified.government.invoiceHash)).to.deep.equal([]);
    expect(await checkStamp(cleared, certificatePem, standard.government.invoiceHash)).to.deep.equal([]);

    // The chain the authority received from this unit: counters 1, 2, each PIH the hash before, no warning.
    const [, links] = [...server.chains.entries()].find(([, l]) => l.some((x) => x.hash === standard.government.invoiceHash))!;
    expect(links.map((l) => l.icv)).to.deep.equal([1, 2]);
    expect(links[1]!.pih).to.equal(links[0]!.hash);
    expect(standard.government.validationResults.warningMessages).to.deep.equal([]);
    expect(simplified.government.validationResults.warningMessages).to.deep.equal([]);
  });

  it('a throttled clearance is retried on the delivery schedule and ends final_valid', async function () {
    server.inject('/invoices/clearance/single', { status: 429, retryAfter: '30' }, 1);
    const id = await submit(null);
    const data = await settled(id);
    expect(data.state, JSON.stringify(data)).to.equal('final_valid');
    const clearances = server.calls.filter((c) => c.path === '/invoices/clearance/single').slice(-2);
    expect(clearances.map((c) => c.status)).to.deep.equal([429, 200]);
  });
});

describe('ZATCA not configured', function () {
  this.timeout(60_000);
  it('/readyz lists ZATCA as missing for production', async function () {
    const t = await startTestService({ config: (c) => ({ ...c, zatca: null }) });
    try {
      const r = await call(`${t.url}/readyz`);
      expect(r.json.checks.connectors.missing).to.deep.include({ environment: 'production', destination: 'ZATCA' });
      expect(r.json.checks.connectors.present.map((p: { connector: string }) => p.connector)).to.not.include('zatca-api');
    } finally {
      await t.close();
    }
  });
});
