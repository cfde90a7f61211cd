/**
 * Onboarding through ZATCA's API and the production connector, against the contract server (a
 * test fixture) that checks every stamp with OpenSSL and xmlsec1: the compliance checks sign the
 * required sample documents with the compliance CSID; clearance and reporting answers map onto the
 * delivery states; throttling, time-outs and refusals are retried or refused as they should be.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { secretBox } from '../../commands/webhooks/secrets.js';
import { ZatcaApiClient } from '../../commands/zatca/api/client.js';
import { clearedInvoiceProblem, ZatcaConnector } from '../../commands/zatca/connector.js';
import { registerEgsUnit, sellerSigningMaterial, type EgsUnitDeps } from '../../commands/zatca/egs-units.js';
import { onboardingStatus, renewProductionCsid, requestComplianceCsid, requestProductionCsid, runComplianceChecks, sellerProductionCsid, type OnboardingDeps } from '../../commands/zatca/onboarding.js';
import type { DeliveryRequest } from '../../commands/delivery/connector.js';
import { DomainError } from '../../domain/errors.js';
import { generateInvoiceXml, ZATCA_INITIAL_PREVIOUS_INVOICE_HASH } from '../../domain/artifacts/index.js';
import { stampInvoice, verifyStamp } from '../../domain/zatca/stamp.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { saudiDocument } from '../artifacts/fixtures.js';
import { testDb } from '../support/db.js';
import { FIXTURE_OTP, startZatcaContractServer, type ZatcaContractServer } from './fixtures/contract-server.js';

const subject = { commonName: 'TST-886431145-399999999900003', serialNumber: '1-Ledger|2-1.0|3-ed22f1d8', organizationUnit: 'Riyadh Branch', organizationName: 'Riyadh Roasters Co', country: 'SA' as const, invoiceType: '1100', location: 'RRRD2929', industry: 'Supply activities' };
const SELLER_VAT = '300000000000003';

async function rejects(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err, 'expected a rejection').to.be.instanceOf(Error);
  expect((err as Error).message).to.match(pattern);
}

describe('ZATCA onboarding and the production connector (contract server, stamps checked by OpenSSL and xmlsec1)', function () {
  this.timeout(120_000);
  let server: ZatcaContractServer;
  let store: PostgresEventStore;
  let deps: OnboardingDeps;
  const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
  const egsUnitId = `egs-${randomUUID().slice(0, 8)}`;
  const now = new Date();
  const ctx = () => ({ now: new Date(), actor: 'test' });
  const client = (o: Partial<ConstructorParameters<typeof ZatcaApiClient>[0]> = {}) => new ZatcaApiClient({ baseUrl: server.url, timeoutMs: 5000, maxAttempts: 2, retryBaseMs: 20, maxRetryAfterMs: 2000, ...o });

  before(async () => {
    server = await startZatcaContractServer({ requireStamp: true });
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    deps = { store, secrets: secretBox(Buffer.alloc(32, 9)), client: client() };
  });
  after(async () => {
    await store?.close();
    await server?.close();
  });

  describe('onboarding', function () {
    it('a wrong OTP is refused by ZATCA and nothing is recorded', async function () {
      await registerEgsUnit(deps, { egsUnitId, workspaceId, environment: 'simulation', sellerVat: SELLER_VAT, subject }, ctx());
      const err = await requestComplianceCsid(deps, egsUnitId, '999999', ctx()).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(DomainError);
      expect((err as DomainError).message).to.contain('Invalid-OTP');
      const { loadEgsUnit } = await import('../../commands/zatca/egs-units.js');
      expect(onboardingStatus((await loadEgsUnit(store, egsUnitId))!).pending!.complianceCsid).to.equal(null);
    });
    it('compliance CSID, the six compliance checks (stamped samples verified by the server), production CSID', async function () {
      const withCompliance = await requestComplianceCsid(deps, egsUnitId, FIXTURE_OTP, ctx());
      expect(onboardingStatus(withCompliance).step).to.equal('compliance_csid_issued');
      await rejects(requestProductionCsid(deps, egsUnitId, ctx()), /not passed the compliance checks/);
      // A sample ZATCA refuses: the checks fail with its message, and nothing is recorded.
      const refusal = { validationResults: { status: 'ERROR', infoMessages: [], warningMessages: [], errorMessages: [{ type: 'ERROR', code: 'BR-KSA-44', category: 'KSA', message: 'sample refused by the test', status: 'ERROR' }] }, clearanceStatus: 'NOT_CLEARED' };
      server.inject('/compliance/invoices', { status: 400, body: refusal });
      const failed = await runComplianceChecks(deps, egsUnitId, ctx()).then(() => null, (e: unknown) => e as DomainError);
      expect(failed?.code).to.equal('ZATCA_COMPLIANCE_CHECKS_FAILED');
      expect(failed?.message).to.contain('standard tax_invoice: BR-KSA-44 sample refused by the test');
      const { loadEgsUnit } = await import('../../commands/zatca/egs-units.js');
      expect(onboardingStatus((await loadEgsUnit(store, egsUnitId))!).step).to.equal('compliance_csid_issued');
      const { results } = await runComplianceChecks(deps, egsUnitId, ctx());
      expect(results.map((r) => `${r.kind}/${r.base}:${r.passed}`)).to.deep.equal([
        'standard/tax_invoice:true', 'standard/credit_note:true', 'standard/debit_note:true',
        'simplified/tax_invoice:true', 'simplified/credit_note:true', 'simplified/debit_note:true',
      ]);
      const checks = server.calls.filter((c) => c.path === '/compliance/invoices');
      expect(checks.map((c) => c.status)).to.deep.equal([400, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200]);
      const unit = await requestProductionCsid(deps, egsUnitId, ctx());
      const status = onboardingStatus(unit);
      expect(status.step).to.equal('production');
      expect(status.production!.notAfter).to.match(/^\d{4}-/);
      expect(JSON.stringify(status)).to.not.match(/secret|PRIVATE KEY/i);
      const csid = await sellerProductionCsid(deps, { workspaceId, environment: 'simulation', sellerVat: SELLER_VAT });
      expect(csid?.binarySecurityToken).to.be.a('string');
    });
  });

  describe('clearance and reporting through the connector', function () {
    let counter = 0;
    let pih = ZATCA_INITIAL_PREVIOUS_INVOICE_HASH;
    const connector = (c = client(), at = now) =>
      new ZatcaConnector({
        client: c,
        clock: { now: () => at },
        zatcaEnvironment: 'simulation',
        credentials: (r) => sellerProductionCsid(deps as EgsUnitDeps, { workspaceId: r.workspaceId!, environment: 'simulation', sellerVat: SELLER_VAT }),
      });
    /** A Saudi document chained and stamped as delivery does it. */
    const document = async (kind: 'standard' | 'simplified', number: string, issueDate = now.toISOString().slice(0, 10)): Promise<DeliveryRequest> => {
      const material = (await sellerSigningMaterial(deps, { workspaceId, environment: 'simulation', sellerVat: SELLER_VAT }))!;
      const simplified = kind === 'simplified';
      const coreDocument = saudiDocument({ simplified, number });
      coreDocument.header!.issueDate = issueDate;
      const uuid = randomUUID();
      const documentType = { base: 'tax_invoice', modifiers: [], ...(simplified ? { variant: 'simplified' } : {}) };
      const xml = generateInvoiceXml({ country: 'SA', documentType, document: coreDocument, uuid, invoiceCounter: ++counter, previousInvoiceHash: pih }).xml;
      const stamped = stampInvoice(xml, { privateKey: material.privateKey, certificate: material.certificate }, now);
      expect(verifyStamp(stamped.xml)).to.deep.equal([]);
      pih = stamped.invoiceHash;
      return { documentId: `doc-${number}`, workspaceId, uuid, attempt: 1, environment: 'production', country: 'SA', documentType, documentNumber: number, coreDocument, xml: stamped.bytes, invoiceHash: stamped.invoiceHash };
    };

    it('a standard invoice is cleared: final valid, the cleared XML returned as the document\'s XML', async function () {
      const request = await document('standard', 'P-1');
      const answer = await connector().deliver(request);
      expect(answer.kind).to.equal('delivered');
      if (answer.kind !== 'delivered') return;
      expect(answer.final?.outcome).to.equal('valid');
      expect(answer.alreadyReceived).to.equal(false);
      expect(answer.government).to.include({ authority: 'ZATCA', endpoint: 'clearance', clearanceStatus: 'CLEARED', result: 'CLEARED', httpStatus: 200, status: 'VALID' });
      expect(answer.xml!.toString('utf8')).to.equal(server.cleared.get(request.uuid));
      // The cleared document still carries a stamp that verifies.
      expect(verifyStamp(answer.xml!.toString('utf8'))).to.deep.equal([]);
    });
    it('a cleared invoice that is not this invoice is not stored as its XML (the record says why)', async function () {
      const request = await document('standard', 'P-1b');
      const other = `<?xml version="1.0"?><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:UUID>${randomUUID()}</cbc:UUID></Invoice>`;
      const pass = { status: 'PASS', infoMessages: [], warningMessages: [], errorMessages: [] };
      server.inject('/invoices/clearance/single', { status: 200, body: { validationResults: pass, clearanceStatus: 'CLEARED', clearedInvoice: Buffer.from(other).toString('base64') } });
      const answer = await connector().deliver(request);
      expect(answer.kind).to.equal('delivered');
      if (answer.kind !== 'delivered') return;
      expect(answer.xml).to.equal(null);
      expect(String(answer.government.clearedInvoiceProblem)).to.match(/^the cleared invoice's UUID is .* not /);
      expect(clearedInvoiceProblem(Buffer.from('not xml <').toString('base64'), request.uuid)).to.match(/not well-formed|not a UBL Invoice/);
    });
    it('a simplified invoice is reported: final valid', async function () {
      const answer = await connector().deliver(await document('simplified', 'P-2'));
      expect(answer).to.deep.include({ kind: 'delivered', alreadyReceived: false });
      if (answer.kind === 'delivered') expect(answer.government).to.include({ endpoint: 'reporting', reportingStatus: 'REPORTED', result: 'REPORTED' });
    });
    it('sent again (an answer lost): 208 / 409 give the earlier result, marked alreadyReceived', async function () {
      const standard = await document('standard', 'P-3');
      await connector().deliver(standard);
      const again = await connector().deliver({ ...standard, attempt: 2 });
      expect(again).to.deep.include({ kind: 'delivered', alreadyReceived: true });
      if (again.kind === 'delivered') {
        expect(again.government).to.include({ httpStatus: 208, result: 'CLEARED_SUCCESSFULLY_EARLIER' });
        expect(again.xml!.toString('utf8')).to.equal(server.cleared.get(standard.uuid));
      }
      const simplified = await document('simplified', 'P-4');
      await connector().deliver(simplified);
      const twice = await connector().deliver({ ...simplified, attempt: 2 });
      expect(twice).to.deep.include({ kind: 'delivered', alreadyReceived: true });
      if (twice.kind === 'delivered') expect(twice.government).to.include({ httpStatus: 409, result: 'REPORTED_SUCCESSFULLY_EARLIER' });
    });
    it('NOT_CLEARED: refused, each error message of ZATCA an error item with source government', async function () {
      const request = await document('standard', 'P-5');
      server.businessErrors.set(request.uuid, [{ type: 'ERROR', code: 'BR-KSA-37', category: 'KSA', message: 'The seller VAT registration number is not valid', status: 'ERROR' }]);
      const answer = await connector().deliver(request);
      expect(answer.kind).to.equal('refused');
      if (answer.kind !== 'refused') return;
      expect(answer.errors).to.deep.equal([{ code: 'BR-KSA-37', message: 'KSA: The seller VAT registration number is not valid', path: [], source: 'government' }]);
      expect(answer.government).to.include({ clearanceStatus: 'NOT_CLEARED', status: 'INVALID', httpStatus: 400 });
    });
    it('a document whose stamp does not verify is refused by the authority', async function () {
      const request = await document('simplified', 'P-6');
      const tampered = request.xml!.toString('utf8').replace(/<ds:SignatureValue>[^<]+</, `<ds:SignatureValue>${Buffer.alloc(70, 1).toString('base64')}<`);
      const answer = await connector().deliver({ ...request, xml: Buffer.from(tampered, 'utf8') });
      expect(answer.kind).to.equal('refused');
      if (answer.kind === 'refused') expect(answer.errors.map((e) => e.message).join(' ')).to.match(/does not verify over the invoice hash/);
    });
    it('303 (clearance switched off): the standard invoice is reported instead', async function () {
      server.clearanceOff = true;
      try {
        const answer = await connector().deliver(await document('standard', 'P-7'));
        expect(answer.kind).to.equal('delivered');
        if (answer.kind === 'delivered') expect(answer.government).to.include({ clearanceSwitchedOff: true, endpoint: 'reporting', reportingStatus: 'REPORTED' });
      } finally {
        server.clearanceOff = false;
      }
    });
    it('throttled past the client\'s patience, a 503, a time-out: failed and retried on the schedule', async function () {
      server.inject('/invoices/clearance/single', { status: 429, retryAfter: '600' });
      const throttled = await connector().deliver(await document('standard', 'P-8'));
      expect(throttled).to.deep.include({ kind: 'failed', outcomeUnknown: false });
      if (throttled.kind === 'failed') expect(throttled.error).to.include({ code: 'ZATCA_THROTTLED', source: 'delivery' });

      server.inject('/invoices/reporting/single', { status: 503 }, 2);
      const unavailable = await connector().deliver(await document('simplified', 'P-9'));
      expect(unavailable).to.deep.include({ kind: 'failed', outcomeUnknown: false });

      server.inject('/invoices/reporting/single', { delayMs: 3000 }, 2);
      const timedOut = await connector(client({ timeoutMs: 1000 })).deliver(await document('simplified', 'P-10'));
      expect(timedOut).to.deep.include({ kind: 'failed', outcomeUnknown: true });
      if (timedOut.kind === 'failed') expect(timedOut.error.code).to.equal('ZATCA_TIMEOUT');
    });
    it('a simplified invoice reported after the 24-hour window is still reported, and says so', async function () {
      const old = await document('simplified', 'P-11', new Date(now.getTime() - 3 * 86_400_000).toISOString().slice(0, 10));
      const answer = await connector().deliver(old);
      expect(answer.kind).to.equal('delivered');
      if (answer.kind === 'delivered') expect(answer.government).to.include({ reportedLate: true });
    });
    it('a seller without an onboarded EGS unit: failed (retried once onboarded), nothing sent', async function () {
      const before = server.calls.length;
      const c = new ZatcaConnector({ client: client(), clock: { now: () => now }, zatcaEnvironment: 'simulation', credentials: async () => null });
      const answer = await c.deliver(await document('standard', 'P-12'));
      expect(answer).to.deep.include({ kind: 'failed', outcomeUnknown: false });
      if (answer.kind === 'failed') expect(answer.error.code).to.equal('ZATCA_EGS_UNIT_NOT_ONBOARDED');
      expect(server.calls.length).to.equal(before);
    });
    it('renewal: a new key and production CSID; invoices stamped with it clear, the old CSID no longer authenticates', async function () {
      const oldCsid = (await sellerProductionCsid(deps, { workspaceId, environment: 'simulation', sellerVat: SELLER_VAT }))!;
      await rejects(renewProductionCsid(deps, egsUnitId, '000000', ctx()), /Invalid-OTP/);
      const unit = await renewProductionCsid(deps, egsUnitId, FIXTURE_OTP, ctx());
      expect(onboardingStatus(unit).production!.keyId).to.equal(2);
      const answer = await connector().deliver(await document('standard', 'P-13'));
      expect(answer.kind).to.equal('delivered');
      const refused = await client().clearance(oldCsid, { invoiceHash: 'x', uuid: 'y', invoice: 'z' });
      expect(refused).to.deep.include({ kind: 'refused', status: 401 });
    });
  });
});
