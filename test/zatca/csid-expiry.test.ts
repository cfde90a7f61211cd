/**
 * An EGS unit whose production CSID is outside its validity never stamps: the delivery attempt
 * fails retryable with ZATCA_CSID_EXPIRED (naming the unit, the expiry and the renew command),
 * nothing is chained or sent; once the unit is renewed against the ZATCA contract server (a test
 * fixture), the next attempt is stamped with the new CSID and cleared to final valid. Real
 * PostgreSQL, real certificates (the fixture's OpenSSL CA), the delivery clock moved past expiry.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { deliverDocument, type DeliveryDeps } from '../../commands/delivery/deliver.js';
import type { ConnectorRegistry } from '../../commands/delivery/connector.js';
import { execute } from '../../commands/execute.js';
import { secretBox } from '../../commands/webhooks/secrets.js';
import { ZatcaApiClient } from '../../commands/zatca/api/client.js';
import { ZatcaConnector } from '../../commands/zatca/connector.js';
import { loadEgsUnit, registerEgsUnit, type EgsUnitDeps } from '../../commands/zatca/egs-units.js';
import { renewProductionCsid, requestComplianceCsid, requestProductionCsid, runComplianceChecks, sellerProductionCsid, type OnboardingDeps } from '../../commands/zatca/onboarding.js';
import type { CoreDocument } from '../../domain/artifacts/index.js';
import { zatcaUnitChainStream } from '../../domain/delivery/zatca-chain.js';
import { documentDecider, documentStream } from '../../domain/document/document.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { csidValidityProblem, verifyStamp } from '../../domain/zatca/stamp.js';
import { ManualClock } from '../../platform/clock.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { testDb } from '../support/db.js';
import { FIXTURE_OTP, startZatcaContractServer, type ZatcaContractServer } from './fixtures/contract-server.js';

const SELLER_VAT = '300000000000003';
const DAY = 86_400_000;

describe('ZATCA: an expired production CSID does not stamp; renewal lets the next attempt through (contract server)', function () {
  this.timeout(120_000);
  let server: ZatcaContractServer;
  let store: PostgresEventStore;
  let onboarding: OnboardingDeps;
  const clock = new ManualClock(new Date());
  const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
  const egsUnitId = `egs-${randomUUID().slice(0, 8)}`;
  const secrets = secretBox(Buffer.alloc(32, 5));
  const ctx = () => ({ now: clock.now(), actor: 'test' });
  const client = () => new ZatcaApiClient({ baseUrl: server.url, timeoutMs: 5000, maxAttempts: 2, retryBaseMs: 20, maxRetryAfterMs: 2000 });
  const connectors = (): ConnectorRegistry => {
    const connector = new ZatcaConnector({
      client: client(),
      clock,
      zatcaEnvironment: 'simulation',
      credentials: (r) => sellerProductionCsid(onboarding as EgsUnitDeps, { workspaceId: r.workspaceId!, environment: 'simulation', sellerVat: SELLER_VAT }),
    });
    return { missing: () => [], connectorFor: (env, destination) => (env === 'production' && destination === 'ZATCA' ? connector : null) };
  };
  const deps = (): DeliveryDeps => ({
    store,
    clock,
    connectors: connectors(),
    policy: { maxAttempts: 5, retryBaseMs: 10_000, retryMaxMs: 60_000, startGraceMs: 200 },
    zatca: { secrets, unitEnvironment: () => 'simulation' },
  });

  before(async () => {
    server = await startZatcaContractServer({ requireStamp: true });
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    onboarding = { store, secrets, client: client() };
  });
  after(async () => {
    await store?.close();
    await server?.close();
  });

  async function submittedSaudi(): Promise<string> {
    const documentId = randomUUID();
    const coreDocument = sampleDocument('SA', { lines: 2, documentNumber: `SA-${documentId.slice(0, 8)}` }) as CoreDocument;
    await execute(store, documentDecider, documentStream(documentId), {
      type: 'Receive',
      event: {
        type: 'DocumentSubmitted',
        data: {
          documentId, uuid: randomUUID(), documentNumber: coreDocument.header!.documentNumber!, country: 'SA', environment: 'production', documentType: { base: 'tax_invoice', modifiers: [] },
          source: { name: 'erp', version: '1', companyId: null }, format: 'new', externalId: null, destinations: ['TAX_AUTHORITY'], coreDocument,
          validation: { validatedAt: clock.now().toISOString() }, xml: null,
        },
      },
    } as never, { now: clock.now(), workspaceId, actor: 'test' });
    return documentId;
  }

  it('the validity rule: inside [notBefore, notAfter] null, else expired / not yet valid with both instants', () => {
    const cert = { validFrom: 'Jan  1 00:00:00 2026 GMT', validTo: 'Jan 31 00:00:00 2026 GMT' };
    expect(csidValidityProblem(cert, new Date('2026-01-15T00:00:00Z'))).to.equal(null);
    expect(csidValidityProblem(cert, new Date('2026-01-31T00:00:00Z'))).to.equal(null);
    expect(csidValidityProblem(cert, new Date('2026-01-31T00:00:01Z'))).to.deep.equal({ reason: 'expired', notBefore: '2026-01-01T00:00:00.000Z', notAfter: '2026-01-31T00:00:00.000Z' });
    expect(csidValidityProblem(cert, new Date('2025-12-31T23:59:59Z'))?.reason).to.equal('not_yet_valid');
  });

  it('fails retryable with ZATCA_CSID_EXPIRED, chains and sends nothing; after renewal the next attempt is final valid', async () => {
    // Onboarded with a production CSID valid for one day.
    server.productionValidityDays = 1;
    await registerEgsUnit(onboarding, {
      egsUnitId, workspaceId, environment: 'simulation', sellerVat: SELLER_VAT,
      subject: { commonName: 'EGS-expiry', serialNumber: `1-Ledger|2-1.0|3-${egsUnitId}`, organizationUnit: 'Riyadh Branch', organizationName: 'Riyadh Roasters Co', country: 'SA', invoiceType: '1100', location: 'RRRD2929', industry: 'Retail' },
    }, ctx());
    await requestComplianceCsid(onboarding, egsUnitId, FIXTURE_OTP, ctx());
    await runComplianceChecks(onboarding, egsUnitId, ctx());
    const onboarded = await requestProductionCsid(onboarding, egsUnitId, ctx());
    const firstCsid = onboarded.keys.find((k) => k.keyId === onboarded.activeKeyId)!.productionCsid!;

    // Two days later the CSID has expired.
    clock.advance(2 * DAY);
    const documentId = await submittedSaudi();
    const callsBefore = server.calls.length;
    expect(await deliverDocument(deps(), documentId)).to.equal('retry_scheduled');
    const events = await store.readStream(documentStream(documentId));
    const failed = events.find((e) => e.type === 'DocumentDeliveryFailed')!.data as { error: { code: string; message: string }; retryable: boolean; nextAttemptAt: string };
    expect(failed.retryable).to.equal(true);
    expect(failed.error.code).to.equal('ZATCA_CSID_EXPIRED');
    expect(failed.error.message).to.contain(`EGS unit ${egsUnitId} expired at ${firstCsid.notAfter}`);
    expect(failed.error.message).to.contain(`admin zatca renew --egs-unit ${egsUnitId}`);
    expect(await store.readStream(zatcaUnitChainStream(egsUnitId))).to.deep.equal([]);
    expect(server.calls.slice(callsBefore)).to.deep.equal([]);

    // The operator renews against ZATCA (here the contract server): a new key and a one-year CSID.
    server.productionValidityDays = 365;
    const renewed = await renewProductionCsid(onboarding, egsUnitId, FIXTURE_OTP, ctx());
    expect(renewed.activeKeyId).to.equal(2);
    expect((await loadEgsUnit(store, egsUnitId))!.keys.find((k) => k.keyId === 2)!.productionCsid!.notAfter > clock.now().toISOString()).to.equal(true);

    clock.advance(Date.parse(failed.nextAttemptAt) - clock.now().getTime() + 1);
    expect(await deliverDocument(deps(), documentId)).to.equal('final');
    const after = await store.readStream(documentStream(documentId));
    const finalized = after.filter((e) => e.type === 'DocumentDelivered' || e.type === 'DocumentFinalized').map((e) => e.data as { final?: { outcome?: string }; outcome?: string });
    expect(finalized.some((d) => d.final?.outcome === 'valid' || d.outcome === 'valid')).to.equal(true);
    const chain = await store.readStream(zatcaUnitChainStream(egsUnitId));
    expect(chain).to.have.length(1);
    expect(server.calls.slice(callsBefore).map((c) => `${c.method} ${c.path} ${c.status}`)).to.deep.equal(['PATCH /production/csids 200', 'POST /invoices/clearance/single 200']);
    const sha = (after.find((e) => e.type === 'DocumentDelivered')!.data as { xml: { sha256: string } }).xml.sha256;
    expect(verifyStamp((await store.readArtifacts([sha])).get(sha)!.toString('utf8'))).to.deep.equal([]);
  });
});
