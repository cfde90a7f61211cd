/**
 * Malaysia in production, end to end: a document submitted to the real server over HTTP goes
 * through the production MyInvois connector to the MyInvois contract server (a test fixture) and
 * ends final_valid with the MyInvois UUID, long id and validation link; the signed XML it sent is
 * the document's artifact and verifies with xmlsec1. Then the invalid, 429, time-out and
 * cancellation cases, and /readyz.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { sampleDocument } from '../../domain/validation/index.js';
import { MyInvoisCredentials } from '../../commands/myinvois/credentials.js';
import { cancelMyInvoisDocument, CancellationRefused } from '../../commands/myinvois/cancel.js';
import type { MyInvoisConnector } from '../../commands/myinvois/connector.js';
import { ManualClock } from '../../platform/clock.js';
import { SEARCH_STATES_TABLE } from '../../readmodels/search/postgres.js';
import { testDb } from '../support/db.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { MyInvoisContractServer } from './fixtures/contract-server.js';
import { taxpayerPki, xmlsecVerify, type TaxpayerPki } from './support.js';

const TIN = 'C21234567080';
const PORTAL = 'https://preprod.myinvois.hasil.gov.my';

describe('MyInvois production connector against the contract server (test fixture)', function () {
  this.timeout(60000);
  let pki: TaxpayerPki;
  let fixture: MyInvoisContractServer;
  let t: TestService;
  let u: UnifyTenant;
  const key = randomBytes(32);

  before(async () => {
    pki = await taxpayerPki(TIN);
    fixture = new MyInvoisContractServer({ clients: { 'erp-client': { secret: 'erp-secret', tin: TIN } }, trustedCaPem: pki.caPem });
    await fixture.start();
    t = await startTestService({
      config: (c) => ({
        ...c,
        delivery: { ...c.delivery, retryBaseMs: 300, retryMaxMs: 1000, workerIntervalMs: 100, maxAttempts: 4 },
        myinvois: {
          system: 'preprod',
          apiBaseUrl: fixture.url,
          identityBaseUrl: fixture.url,
          portalBaseUrl: PORTAL,
          intermediary: null,
          credentialsKey: key,
          requestTimeoutMs: 3000,
          batchWindowMs: 20,
        },
      }),
    });
    await new MyInvoisCredentials(testDb().knex, key).set(
      { environment: 'production', tin: TIN, mode: 'taxpayer', clientId: 'erp-client', clientSecret: 'erp-secret', signingKeyPem: pki.keyPem, certificatePem: pki.certificatePem },
      new Date(),
    );
    u = await unifyTenant(t, { environment: 'production' });
  });
  after(async () => {
    await t?.close();
    await fixture?.close();
  });

  async function submit(buyerTin?: string): Promise<{ documentId: string; number: string }> {
    const number = freshNumber('MY');
    const payload = sampleDocument('MY', { lines: 2, documentNumber: number }) as Record<string, any>;
    if (buyerTin) payload.parties.buyer.taxIds = [{ type: 'TIN', value: buyerTin }];
    const r = await u.submit(u.request(payload, { country: 'MY', environment: 'production' }));
    expect(r.status, r.text).to.equal(200);
    return { documentId: r.json.documentId as string, number };
  }

  async function settled(documentId: string, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await u.status(documentId, 'status');
      const data = r.json.data;
      if (['final_valid', 'final_invalid'].includes(data.state) || Date.now() > deadline) return data;
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  it('a Malaysian invoice goes from submit to final_valid, signed, with the UUID, long id and validation link', async () => {
    const { documentId, number } = await submit();
    const data = await settled(documentId);
    expect(data.state, JSON.stringify(data)).to.equal('final_valid');
    const g = data.government;
    expect(g).to.include({ authority: 'MyInvois', status: 'VALID', result: 'Valid', issuerTin: TIN, internalId: number, system: 'preprod' });
    const stored = [...fixture.documents.values()].find((d) => d.internalId === number)!;
    expect(g.uuid).to.equal(stored.uuid);
    expect(g.longId).to.equal(stored.longId);
    expect(g.validationLink).to.equal(`${PORTAL}/${stored.uuid}/share/${stored.longId}`);
    expect(g.submissionUid).to.equal(stored.submissionUid);
    // The document's XML is the signed one MyInvois received, and xmlsec1 verifies it.
    const full = await u.status(documentId, 'read');
    const xml = Buffer.from(full.json.data?.artifacts?.invoiceXmlBase64 ?? full.json.artifacts?.invoiceXmlBase64 ?? data.artifacts.invoiceXmlBase64, 'base64').toString('utf8');
    expect(xml).to.equal(stored.xml);
    expect(xml).to.contain('<ext:UBLExtensions>').and.to.contain('<cac:Signature>');
    const verified = await xmlsecVerify(pki, xml, `${number}.xml`);
    expect(verified.ok, verified.output).to.equal(true);
  });

  it('an invalid document ends final_invalid with the validation errors mapped onto error items with their paths', async () => {
    const { documentId } = await submit('C10987699999');
    const data = await settled(documentId);
    expect(data.state).to.equal('final_invalid');
    expect(data.government).to.include({ status: 'INVALID', result: 'Invalid' });
    const errors = data.errors as { code: string; message: string; path: (string | number)[]; source: string }[];
    expect(errors).to.deep.include.members([
      {
        code: 'CF414',
        message: 'Step06-Taxpayer Validator: The buyer TIN C10987699999 is not registered',
        path: ['Invoice', 'AccountingCustomerParty', 'Party', 'PartyIdentification', 'ID'],
        source: 'government',
      },
    ]);
  });

  it('a 429 is honoured: the submission waits out Retry-After and goes through', async () => {
    fixture.faults.submit = [{ kind: 'status', status: 429, retryAfter: 1 }];
    const before = fixture.log.length;
    const started = Date.now();
    const { documentId } = await submit();
    const data = await settled(documentId);
    expect(data.state).to.equal('final_valid');
    const submits = fixture.log.slice(before).filter((l) => l.op === 'submit');
    expect(submits.map((s) => s.status)).to.deep.equal([429, 202]);
    expect(submits[1]!.at - submits[0]!.at).to.be.at.least(950);
    expect(Date.now() - started).to.be.at.least(1000);
  });

  it('a time-out after MyInvois received the document: outcome unknown, retried, reconciled, registered once', async () => {
    fixture.faults.submit = [{ kind: 'process-then-hang' }];
    const { documentId, number } = await submit();
    const data = await settled(documentId);
    expect(data.state, JSON.stringify(data)).to.equal('final_valid');
    const registered = [...fixture.documents.values()].filter((d) => d.internalId === number);
    expect(registered).to.have.length(1);
    expect(data.government.uuid).to.equal(registered[0]!.uuid);
    expect(fixture.count('recentDocuments')).to.be.at.least(1);
  });

  it('cancels a valid document within 72 hours (it then shows final_invalid, DOCUMENT_CANCELLED), and refuses precisely outside the window and a second time', async () => {
    const { documentId, number } = await submit();
    expect((await settled(documentId)).state).to.equal('final_valid');
    const connector = t.service.processes.connectors.connectorFor('production', 'MYINVOIS') as MyInvoisConnector;
    const deps = { ...connector.deps, knex: testDb().knex, store: t.service.runtime.store };
    const workspaceId = (await u.status(documentId, 'read')).json.workspaceId ?? (await testDb().knex('sales_documents').where({ document_id: documentId }).first()).workspace_id;
    // Outside the window: refused here, without asking MyInvois.
    const late = new ManualClock(new Date(Date.now() + 73 * 3600 * 1000));
    const cancels = fixture.count('cancel');
    try {
      await cancelMyInvoisDocument({ ...deps, clock: late }, { workspaceId, documentId, reason: 'wrong buyer' });
      expect.fail('cancelled outside the window');
    } catch (err) {
      expect(err).to.be.instanceOf(CancellationRefused);
      expect((err as CancellationRefused).code).to.equal('MYINVOIS_CANCELLATION_WINDOW_CLOSED');
      expect((err as Error).message).to.match(/until .* \(72 hours\)/);
    }
    expect(fixture.count('cancel')).to.equal(cancels);
    const cancelled = await cancelMyInvoisDocument(deps, { workspaceId, documentId, reason: 'wrong buyer' });
    expect(cancelled).to.include({ documentId, status: 'Cancelled', reason: 'wrong buyer', state: 'final_invalid' });
    const stored = [...fixture.documents.values()].find((d) => d.internalId === number)!;
    expect(stored.status).to.equal('Cancelled');
    // The cancellation shows on the document: its status read over HTTP.
    let data: any;
    for (const deadline = Date.now() + 10_000; ; ) {
      data = (await u.status(documentId, 'status')).json.data;
      if (data.state === 'final_invalid' || Date.now() > deadline) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(data.state).to.equal('final_invalid');
    expect(data.errors).to.have.length(1);
    expect(data.errors[0]).to.include({ code: 'DOCUMENT_CANCELLED', source: 'government' });
    expect(data.errors[0].message).to.contain('wrong buyer');
    expect(data.government).to.include({ authority: 'MyInvois', uuid: stored.uuid });
    expect(data.government.cancellation).to.include({ status: 'Cancelled', reason: 'wrong buyer', by: 'seller', cancelledAt: cancelled.cancelledAt });
    // The search index follows: the document's indexed state is final_invalid.
    let indexed: any;
    for (const deadline = Date.now() + 10_000; ; ) {
      const row = await testDb().knex(SEARCH_STATES_TABLE).where({ workspace_id: workspaceId, document_id: documentId }).first();
      indexed = row ? JSON.parse(row.state) : null;
      if (indexed?.coreDocument?.meta?.statuses?.internal?.state === 'final_invalid' || Date.now() > deadline) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(indexed.coreDocument.meta.statuses.internal.state).to.equal('final_invalid');
    expect(indexed.statusHistory.map((h: any) => h.state).slice(-2)).to.deep.equal(['final_valid', 'final_invalid']);
    const events = await t.service.runtime.store.readStream(`document-${documentId}`);
    expect(events.filter((e) => e.type === 'DocumentCancelled')).to.have.length(1);
    // Cancelled already: refused here, without asking MyInvois again, and nothing more is recorded.
    const before = fixture.count('cancel');
    try {
      await cancelMyInvoisDocument(deps, { workspaceId, documentId, reason: 'again' });
      expect.fail('cancelled twice');
    } catch (err) {
      expect((err as CancellationRefused).code).to.equal('DOCUMENT_ALREADY_CANCELLED');
    }
    expect(fixture.count('cancel')).to.equal(before);
    expect(await t.service.runtime.store.readStream(`document-${documentId}`)).to.have.length(events.length);
  });

  it('logs in once for many documents, and again after MyInvois drops the token (401)', async () => {
    const logins = fixture.count('login');
    const first = await Promise.all([submit(), submit(), submit()]);
    for (const d of first) expect((await settled(d.documentId)).state).to.equal('final_valid');
    expect(fixture.count('login')).to.equal(logins);
    fixture.expireTokens();
    const again = await submit();
    expect((await settled(again.documentId)).state).to.equal('final_valid');
    expect(fixture.count('login')).to.equal(logins + 1);
    expect(fixture.log.some((l) => l.status === 401)).to.equal(true);
  });

  it('/readyz lists the production MyInvois connector as present', async () => {
    const ready = await call(`${t.url}/readyz`);
    const connectors = ready.json.checks.connectors;
    expect(connectors.present).to.deep.include({ environment: 'production', destination: 'MYINVOIS', connector: 'myinvois-api' });
    expect(connectors.missing).to.not.deep.include({ environment: 'production', destination: 'MYINVOIS' });
    expect(t.service.processes.connectors.connectorFor('sandbox', 'MYINVOIS')!.name).to.equal('myinvois-sandbox');
  });
});
