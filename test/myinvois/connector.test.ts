/**
 * The MyInvois connector and client against the contract server (a test fixture), below the
 * HTTP service: the published batch limits (documents and bytes per submission, bytes per
 * document), intermediary login on behalf of a TIN, the shared rate limits of several instances,
 * taxpayers not onboarded, credentials sealed at rest, and the configuration.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateInvoiceXml } from '../../domain/artifacts/index.js';
import type { DeliveryRequest } from '../../commands/delivery/connector.js';
import { MyInvoisClient, MyInvoisError } from '../../commands/myinvois/client.js';
import { MyInvoisConnector } from '../../commands/myinvois/connector.js';
import { MyInvoisCredentials, MyInvoisCredentialsError } from '../../commands/myinvois/credentials.js';
import { createMyInvoisConnector, withMyInvois } from '../../commands/myinvois/index.js';
import { sandboxConnectors } from '../../commands/delivery/sandbox-connectors.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { systemClock } from '../../platform/clock.js';
import { ConfigError, loadConfig, type MyInvoisConfig } from '../../platform/config.js';
import { testDb } from '../support/db.js';
import { MyInvoisContractServer } from './fixtures/contract-server.js';
import { taxpayerPki, xmlsecVerify, type TaxpayerPki } from './support.js';

const TIN = 'C21234567080';
const OTHER_TIN = 'C30000000010';

function request(number: string, options: { lines?: number; sellerTin?: string; attempt?: number } = {}): DeliveryRequest {
  const doc = sampleDocument('MY', { lines: options.lines ?? 1, documentNumber: number }) as Record<string, any>;
  if (options.sellerTin) doc.parties.seller.taxIds = [{ type: 'TIN', value: options.sellerTin }];
  const documentType = { base: 'tax_invoice', modifiers: [] };
  const uuid = randomUUID();
  const xml = generateInvoiceXml({ country: 'MY', documentType, document: doc, uuid } as never).bytes;
  return { documentId: randomUUID(), uuid, attempt: options.attempt ?? 1, environment: 'production', country: 'MY', documentType, documentNumber: number, coreDocument: doc, xml };
}

describe('MyInvois connector: limits, logins, rate limits, credentials (contract server test fixture)', function () {
  this.timeout(120000);
  let pki: TaxpayerPki;
  let fixture: MyInvoisContractServer;
  const key = randomBytes(32);
  let config: MyInvoisConfig;
  let credentials: MyInvoisCredentials;
  let connector: MyInvoisConnector;
  let n = 0;
  const number = () => `MYC-${process.pid}-${Date.now().toString(36)}-${++n}`;

  before(async () => {
    pki = await taxpayerPki(TIN);
    fixture = new MyInvoisContractServer({
      clients: { 'erp-client': { secret: 'erp-secret', tin: TIN }, 'intermediary-client': { secret: 'int-secret', tin: null, onBehalfOf: [OTHER_TIN] } },
      trustedCaPem: pki.caPem,
    });
    await fixture.start();
    config = {
      system: 'preprod',
      apiBaseUrl: fixture.url,
      identityBaseUrl: fixture.url,
      portalBaseUrl: 'https://preprod.myinvois.hasil.gov.my',
      intermediary: { clientId: 'intermediary-client', clientSecret: 'int-secret' },
      credentialsKey: key,
      requestTimeoutMs: 10_000,
      batchWindowMs: 100,
    };
    await testDb().knex('myinvois_rate_limits').delete();
    credentials = new MyInvoisCredentials(testDb().knex, key);
    await credentials.set({ environment: 'production', tin: TIN, mode: 'taxpayer', clientId: 'erp-client', clientSecret: 'erp-secret', signingKeyPem: pki.keyPem, certificatePem: pki.certificatePem }, new Date());
    await credentials.set({ environment: 'production', tin: OTHER_TIN, mode: 'intermediary', signingKeyPem: pki.keyPem, certificatePem: pki.certificatePem }, new Date());
    connector = new MyInvoisConnector({ config, client: new MyInvoisClient({ config, knex: testDb().knex, rateLimits: { submit: 1000 } }), credentials, clock: systemClock });
  });
  after(async () => fixture?.close());

  /**
   * A connector that gathers documents for a minute (signing a burst takes a while on a busy
   * machine); `settle` sends the last submission once every document is waiting.
   */
  const patient = () => {
    const slow = { ...config, batchWindowMs: 60_000, requestTimeoutMs: 60_000 };
    return new MyInvoisConnector({ config: slow, client: new MyInvoisClient({ config: slow, knex: testDb().knex, rateLimits: { submit: 1000 } }), credentials, clock: systemClock });
  };
  async function settle(c: MyInvoisConnector, total: number) {
    while (c.stats.documents + c.pending() < total) await new Promise((r) => setTimeout(r, 20));
    c.flushAll();
  }

  it('submits 150 documents that arrive together as two submissions of at most 100', async () => {
    const before = fixture.submissions.size;
    const c = patient();
    const delivering = Promise.all(Array.from({ length: 150 }, () => c.deliver(request(number()))));
    // The 101st document sent the first 100 at once; the other 50 wait for the window.
    await settle(c, 150);
    const answers = await delivering;
    expect(answers.every((a) => a.kind === 'delivered'), JSON.stringify(answers.find((a) => a.kind !== 'delivered'))).to.equal(true);
    const sizes = [...fixture.submissions.values()].slice(before).map((s) => s.uuids.length).sort((a, b) => b - a);
    expect(sizes).to.deep.equal([100, 50]);
  });

  it('keeps each submission under 5 MB, and refuses a document over 300 KB without sending it', async () => {
    // About 250 KB each signed: at most 15 fit in 5 MB once base64-encoded.
    const big = Array.from({ length: 20 }, () => request(number(), { lines: 250 }));
    const sizes = big.map((r) => r.xml!.length);
    expect(Math.min(...sizes)).to.be.above(200 * 1024);
    expect(Math.max(...sizes)).to.be.below(290 * 1024);
    const before = fixture.submissions.size;
    const c = patient();
    const delivering = Promise.all(big.map((r) => c.deliver(r)));
    // A submission is sent as soon as the next document would take it over 5 MB; the rest wait.
    await settle(c, 20);
    const answers = await delivering;
    expect(answers.every((a) => a.kind === 'delivered'), JSON.stringify(answers.find((a) => a.kind !== 'delivered'))).to.equal(true);
    const submissions = [...fixture.submissions.values()].slice(before);
    // 20 documents of 200-290 KB (base64: a third more) need two submissions of 5 MB at most.
    expect(submissions).to.have.length(2);
    expect(submissions.map((s) => s.uuids.length).reduce((a, b) => a + b)).to.equal(20);
    expect(fixture.log.filter((l) => l.op === 'submit' && l.status === 400)).to.have.length(0);
    const tooBig = request(number(), { lines: 330 });
    const sent = fixture.count('submit');
    const answer = await connector.deliver(tooBig);
    expect(answer.kind).to.equal('refused');
    if (answer.kind === 'refused') expect(answer.errors[0]).to.include({ code: 'MYINVOIS_DOCUMENT_TOO_LARGE', source: 'delivery' });
    expect(fixture.count('submit')).to.equal(sent);
  });

  it('logs in as the intermediary on behalf of the TIN, and the document verifies with xmlsec1', async () => {
    const r = request(number(), { sellerTin: OTHER_TIN });
    const answer = await connector.deliver(r);
    expect(answer.kind, JSON.stringify(answer)).to.equal('delivered');
    expect(fixture.log.some((l) => l.op === 'login' && l.clientId === 'intermediary-client' && l.onBehalfOf === OTHER_TIN && l.status === 200)).to.equal(true);
    if (answer.kind !== 'delivered') return;
    expect(answer.government).to.include({ issuerTin: OTHER_TIN, login: 'intermediary' });
    expect((await xmlsecVerify(pki, answer.xml!, 'intermediary.xml')).ok).to.equal(true);
    const final = await connector.finalResult(r, answer.government);
    expect(final?.outcome).to.equal('valid');
  });

  it('sends the same bytes on every attempt, so MyInvois recognises a document it holds and the earlier one is taken', async () => {
    const r = request(number());
    const first = await connector.deliver(r);
    expect(first.kind).to.equal('delivered');
    // The same document again (two reactions at once, or a retry counted as a first attempt).
    const again = await connector.deliver({ ...r });
    expect(again.kind, JSON.stringify(again)).to.equal('delivered');
    if (first.kind !== 'delivered' || again.kind !== 'delivered') return;
    expect(again.xml!.equals(first.xml!)).to.equal(true);
    expect(again.alreadyReceived).to.equal(true);
    expect(again.government.uuid).to.equal(first.government.uuid);
    expect([...fixture.documents.values()].filter((d) => d.internalId === r.documentNumber)).to.have.length(1);
  });

  it('a taxpayer not onboarded fails retryably; a document without a supplier TIN is refused', async () => {
    const missing = await connector.deliver(request(number(), { sellerTin: 'C99999999990' }));
    expect(missing).to.deep.include({ kind: 'failed', outcomeUnknown: false });
    if (missing.kind === 'failed') expect(missing.error.code).to.equal('MYINVOIS_TAXPAYER_NOT_ONBOARDED');
    const r = request(number());
    (r.coreDocument as any).parties.seller.taxIds = [];
    const refused = await connector.deliver(r);
    expect(refused.kind).to.equal('refused');
    if (refused.kind === 'refused') expect(refused.errors[0]!.code).to.equal('MYINVOIS_SUPPLIER_TIN_MISSING');
  });

  it('a submission over the published size is refused by the authority with its error object, mapped', async () => {
    fixture.faults.submit = [{ kind: 'status', status: 400, body: { error: { code: 'BadStructure', message: 'The submission exceeds the maximum size', target: 'documents', details: null } } }];
    const answer = await connector.deliver(request(number()));
    expect(answer.kind).to.equal('refused');
    if (answer.kind === 'refused') expect(answer.errors[0]).to.include({ code: 'BadStructure', message: 'The submission exceeds the maximum size', source: 'government' });
  });

  it('a refused submission of several documents sends each again alone', async () => {
    const c = patient();
    fixture.faults.submit = [{ kind: 'status', status: 400, body: { error: { code: 'BadStructure', message: 'The submission is not valid', target: 'documents', details: null } } }];
    const before = fixture.log.filter((l) => l.op === 'submit').length;
    const delivering = Promise.all([c.deliver(request(number())), c.deliver(request(number()))]);
    await settle(c, 2);
    const answers = await delivering;
    expect(answers.map((a) => a.kind)).to.deep.equal(['delivered', 'delivered']);
    expect(fixture.log.filter((l) => l.op === 'submit').slice(before).map((l) => l.status)).to.deep.equal([400, 202, 202]);
  });

  it('several instances share the rate limit: the calls over it wait, then fail as throttled without being sent', async () => {
    await testDb().knex('myinvois_rate_limits').delete();
    const mk = () => new MyInvoisClient({ config, knex: testDb().knex, rateLimits: { getDocumentDetails: 3 }, maxWaitMs: 200 });
    const [a, b] = [mk(), mk()];
    const login = { clientId: 'erp-client', clientSecret: 'erp-secret', onBehalfOf: null };
    const uuid = [...fixture.documents.values()].find((d) => d.issuerTin === TIN)!.uuid;
    const sent = fixture.count('getDocumentDetails');
    const results = await Promise.allSettled([a, b, a, b, a].map((c) => c.getDocumentDetails(login, uuid)));
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(3);
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as MyInvoisError);
    expect(failures).to.have.length(2);
    for (const f of failures) expect(f).to.include({ kind: 'throttled', outcomeUnknown: false });
    expect(fixture.count('getDocumentDetails') - sent).to.equal(3);
  });

  it('a time-out is an unknown outcome; an unreachable authority a plain failure', async () => {
    const slow = new MyInvoisConnector({ config: { ...config, requestTimeoutMs: 300 }, client: new MyInvoisClient({ config: { ...config, requestTimeoutMs: 300 }, knex: testDb().knex }), credentials, clock: systemClock });
    fixture.faults.submit = [{ kind: 'hang' }];
    const answer = await slow.deliver(request(number()));
    expect(answer).to.deep.include({ kind: 'failed', outcomeUnknown: true });
    if (answer.kind === 'failed') expect(answer.error.code).to.equal('DELIVERY_TIMEOUT');
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = { ...config, apiBaseUrl: `http://127.0.0.1:${port}`, identityBaseUrl: `http://127.0.0.1:${port}` };
    const unreachable = await new MyInvoisConnector({ config: down, client: new MyInvoisClient({ config: down, knex: testDb().knex }), credentials, clock: systemClock }).deliver(request(number()));
    expect(unreachable).to.deep.include({ kind: 'failed', outcomeUnknown: false });
    if (unreachable.kind === 'failed') expect(unreachable.error.code).to.equal('DESTINATION_UNAVAILABLE');
  });

  it('keeps secrets sealed at rest, bound to their taxpayer, and refuses a key that is not the certificate’s', async () => {
    const row = await testDb().knex('myinvois_taxpayers').where({ environment: 'production', tin: TIN }).first();
    expect(row.client_secret_sealed).to.match(/^enc:v1:/).and.not.contain('erp-secret');
    expect(row.signing_key_sealed).to.match(/^enc:v1:/).and.not.contain('PRIVATE KEY');
    const listed = JSON.stringify(await credentials.list('production'));
    expect(listed).to.not.contain('erp-secret').and.not.contain('PRIVATE');
    const wrongKey = new MyInvoisCredentials(testDb().knex, randomBytes(32), 0);
    try {
      await wrongKey.get('production', TIN);
      expect.fail('opened with another key');
    } catch (err) {
      expect(err).to.be.instanceOf(MyInvoisCredentialsError);
    }
    const other = await taxpayerPki('C40000000020');
    try {
      await credentials.set({ environment: 'production', tin: 'C40000000020', mode: 'intermediary', signingKeyPem: other.keyPem, certificatePem: pki.certificatePem }, new Date());
      expect.fail('accepted a key of another certificate');
    } catch (err) {
      expect((err as Error).message).to.contain('does not belong to the certificate');
    }
  });

  it('is registered for production only when configured: /readyz then lists it present, else missing', () => {
    const sandbox = sandboxConnectors(testDb().knex, systemClock, { latencyMs: 0, finalResultAfterMs: 0 });
    const without = withMyInvois(sandbox, createMyInvoisConnector({ config: loadConfig({}), knex: testDb().knex, clock: systemClock }));
    expect(without.missing()).to.deep.include({ environment: 'production', destination: 'MYINVOIS' });
    expect(without.present!()).to.not.deep.include({ environment: 'production', destination: 'MYINVOIS', connector: 'myinvois-api' });
    expect(without.connectorFor('production', 'MYINVOIS')).to.equal(null);
    const configured = loadConfig({ MYINVOIS_SYSTEM: 'production', MYINVOIS_CREDENTIALS_KEY: randomBytes(32).toString('hex') });
    const withIt = withMyInvois(sandbox, createMyInvoisConnector({ config: configured, knex: testDb().knex, clock: systemClock }));
    expect(withIt.missing()).to.not.deep.include({ environment: 'production', destination: 'MYINVOIS' });
    expect(withIt.present!()).to.deep.include({ environment: 'production', destination: 'MYINVOIS', connector: 'myinvois-api' });
    expect(withIt.connectorFor('sandbox', 'MYINVOIS')!.name).to.equal('myinvois-sandbox');
  });

  it('reads its configuration from MYINVOIS_* and refuses incomplete or bad settings', () => {
    const base = { MYINVOIS_SYSTEM: 'preprod', MYINVOIS_CREDENTIALS_KEY: randomBytes(32).toString('base64') };
    const c = loadConfig(base).myinvois!;
    expect(c).to.include({ system: 'preprod', apiBaseUrl: 'https://preprod-api.myinvois.hasil.gov.my', portalBaseUrl: 'https://preprod.myinvois.hasil.gov.my', intermediary: null });
    expect(loadConfig({ ...base, MYINVOIS_SYSTEM: 'production' }).myinvois!.apiBaseUrl).to.equal('https://api.myinvois.hasil.gov.my');
    expect(loadConfig({}).myinvois).to.equal(null);
    const withClient = loadConfig({ ...base, MYINVOIS_CLIENT_ID: 'id', MYINVOIS_CLIENT_SECRET: 'very-secret' }).myinvois!;
    expect(JSON.stringify(withClient)).to.not.contain('very-secret');
    expect(() => loadConfig({ MYINVOIS_SYSTEM: 'preprod' })).to.throw(ConfigError, /MYINVOIS_CREDENTIALS_KEY/);
    expect(() => loadConfig({ ...base, MYINVOIS_SYSTEM: 'sandbox' })).to.throw(ConfigError, /preprod or production/);
    expect(() => loadConfig({ ...base, MYINVOIS_CLIENT_ID: 'id' })).to.throw(ConfigError, /go together/);
    expect(() => loadConfig({ ...base, MYINVOIS_API_BASE_URL: 'ftp://x' })).to.throw(ConfigError, /MYINVOIS_API_BASE_URL/);
    expect(() => loadConfig({ MYINVOIS_CLIENT_ID: 'id' })).to.throw(ConfigError, /without MYINVOIS_SYSTEM/);
    expect(() => loadConfig({ ...base, MYINVOIS_CREDENTIALS_KEY: 'short' })).to.throw(ConfigError, /32 bytes/);
  });
});
