/**
 * Participant lookup through the real server (docs/api/participant-lookup.md): the sandbox
 * network for sandbox keys; for production keys the access point's discovery against a DNS
 * server and a signed SMP on loopback (test/peppol/fixtures/dns-smp.ts).
 */
import { expect } from 'chai';
import { createPeppolDiscovery } from '../../commands/peppol/discovery/index.js';
import { createPeppolTrust } from '../../platform/peppol-pki.js';
import { receiver } from '../purchases/support.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { startDnsSmpFixture, type DnsSmpFixture } from './fixtures/dns-smp.js';
import { startAccessPoint } from './support/access-point.js';
import { createTestPki, type TestPki } from './support/pki.js';

const PINT_AE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:peppol:pint:billing-1@ae-1::2.1';
const BIS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';
const BILLING = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const IR = 'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:invoice_response:3::2.1';
const IR_PROCESS = 'urn:fdc:peppol.eu:poacc:bis:invoice_response:3';

const lookup = (t: TestService, apiKey: string, id: string, query = '') =>
  call(`${t.url}/api/v3/unify/participants/${encodeURIComponent(id)}${query}`, { headers: { authorization: `Bearer ${apiKey}` } });

describe('participant lookup: the sandbox network', function () {
  this.timeout(120_000);
  let t: TestService;

  before(async () => {
    t = await startTestService({ config: (c) => ({ ...c, participantLookupRateLimit: { perSecond: 1, burst: 12 } }) });
  });
  after(async () => t.close());

  it('a participant onboarded in sandbox is registered, with what the network carries; an unknown one is not', async () => {
    const buyer = await receiver(t);
    const asker = await t.tenant();
    const found = await lookup(t, asker.apiKey, `0235:${buyer.tin}`);
    expect(found.status, found.text).to.equal(200);
    expect(found.json).to.include({ participantId: `0235:${buyer.tin}`, participantScheme: 'iso6523-actorid-upis', environment: 'sandbox', source: 'sandbox_network', status: 'REGISTERED', reachable: true, detail: null, requested: null });
    const types = found.json.documentTypes.map((d: any) => d.documentTypeId);
    expect(types).to.include.members([`busdox-docid-qns::${PINT_AE}`, `busdox-docid-qns::${BIS}`, `busdox-docid-qns::${IR}`]);
    expect(found.headers.get('cache-control')).to.equal('private, max-age=0');
    // The same with the scheme prefix and another case of the prefix.
    const prefixed = await lookup(t, asker.apiKey, `ISO6523-ACTORID-UPIS::0235:${buyer.tin}`);
    expect(prefixed.json.status).to.equal('REGISTERED');

    const missing = await lookup(t, asker.apiKey, '0235:9999999991');
    expect(missing.status, missing.text).to.equal(200);
    expect(missing.json).to.include({ status: 'NOT_REGISTERED', reachable: false });
    expect(missing.json.documentTypes).to.deep.equal([]);
    expect(missing.json.detail).to.contain('0235:9999999991');
  });

  it('"registered, but not for this document type" is its own answer', async () => {
    const buyer = await receiver(t);
    const asker = await t.tenant();
    const yes = await lookup(t, asker.apiKey, `0235:${buyer.tin}`, `?documentTypeId=${encodeURIComponent(PINT_AE)}&processId=${encodeURIComponent('urn:peppol:bis:billing')}`);
    expect(yes.json).to.include({ status: 'REGISTERED', reachable: true });
    expect(yes.json.requested).to.deep.equal({ documentTypeId: `busdox-docid-qns::${PINT_AE}`, processId: 'cenbii-procid-ubl::urn:peppol:bis:billing' });
    const ir = await lookup(t, asker.apiKey, `0235:${buyer.tin}`, `?documentTypeId=${encodeURIComponent(IR)}`);
    expect(ir.json).to.include({ status: 'REGISTERED', reachable: true });
    const order = 'urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1';
    const no = await lookup(t, asker.apiKey, `0235:${buyer.tin}`, `?documentTypeId=${encodeURIComponent(order)}`);
    expect(no.status, no.text).to.equal(200);
    expect(no.json).to.include({ status: 'DOCUMENT_TYPE_NOT_SUPPORTED', reachable: false });
    const wrongProcess = await lookup(t, asker.apiKey, `0235:${buyer.tin}`, `?documentTypeId=${encodeURIComponent(PINT_AE)}&processId=${encodeURIComponent(BILLING)}`);
    expect(wrongProcess.json).to.include({ status: 'PROCESS_NOT_SUPPORTED', reachable: false });
  });

  it('a malformed identifier or query is a 400 with its path', async () => {
    const asker = await t.tenant();
    const cases: [string, string, (string | number)[]][] = [
      ['0235', '', ['path', 'participantId']],
      ['abcd:123', '', ['path', 'participantId']],
      ['1234:5678', '', ['path', 'participantId']],
      [`0235:${'1'.repeat(51)}`, '', ['path', 'participantId']],
      ['0235:has space', '', ['path', 'participantId']],
      ['0235:1000000001', '?colour=red', ['query', 'colour']],
      ['0235:1000000001', `?processId=${BILLING}`, ['query', 'documentTypeId']],
      ['0235:1000000001', '?documentTypeId=a&documentTypeId=b', ['query', 'documentTypeId']],
    ];
    for (const [id, query, path] of cases) {
      const r = await lookup(t, asker.apiKey, id, query);
      expect(r.status, `${id}${query}: ${r.text}`).to.equal(400);
      expect(r.json).to.include({ code: 'invalid_argument' });
      expect(r.json.path, `${id}${query}`).to.deep.equal(path);
    }
  });

  it('has its own rate limit per workspace (429 with Retry-After)', async () => {
    const asker = await t.tenant();
    const answers: number[] = [];
    for (let i = 0; i < 14; i++) answers.push((await lookup(t, asker.apiKey, '0235:1000000001')).status);
    expect(answers.slice(0, 12).every((s) => s === 200)).to.equal(true);
    const refused = await lookup(t, asker.apiKey, '0235:1000000001');
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    // Another workspace is not affected.
    expect((await lookup(t, (await t.tenant()).apiKey, '0235:1000000001')).status).to.equal(200);
  });

  it('a production key without an access point: 503 peppol_not_configured', async () => {
    const asker = await t.tenant({ environment: 'production' });
    const r = await lookup(t, asker.apiKey, '0088:1234567890128');
    expect(r.status, r.text).to.equal(503);
    expect(r.json.code).to.equal('peppol_not_configured');
  });
});

describe('participant lookup: production, from the SML and the signed SMP', function () {
  this.timeout(120_000);
  let pki: TestPki;
  let fixture: DnsSmpFixture;
  let t: TestService;

  before(async () => {
    pki = await createTestPki();
    const ap = (id: string, extra: object = {}) => ({ id, endpointUrl: 'https://ap2.example.test/as4', certificatePem: pki.service2.certPem, ...extra });
    fixture = await startDnsSmpFixture({
      pki,
      registrations: [
        { participant: { scheme: 'iso6523-actorid-upis', value: '0088:1234567890128' }, documentTypes: [{ id: BIS, processes: [ap(BILLING)] }, { id: IR, processes: [ap(IR_PROCESS)] }] },
        { participant: { scheme: 'iso6523-actorid-upis', value: '0235:1000000004' }, documentTypes: [{ id: BIS, processes: [ap(BILLING, { transportProfile: 'busdox-transport-as2-ver1p0' })] }] },
      ],
    });
    const discovery = createPeppolDiscovery({ smlZone: fixture.smlZone, dnsServers: [fixture.dnsServer], trust: createPeppolTrust([pki.caCertPem]), now: () => new Date() });
    t = await startAccessPoint(pki, pki.service, discovery);
  });
  after(async () => {
    await t?.close();
    await fixture?.stop();
  });

  it('lists the document types and processes the SMP publishes, cached until its validity ends', async () => {
    const asker = await t.tenant({ environment: 'production' });
    const r = await lookup(t, asker.apiKey, '0088:1234567890128');
    expect(r.status, r.text).to.equal(200);
    expect(r.json).to.include({ environment: 'production', source: 'smp', status: 'REGISTERED', reachable: true });
    expect(r.json.documentTypes).to.deep.include({ documentTypeId: `busdox-docid-qns::${BIS}`, processes: [{ processId: `cenbii-procid-ubl::${BILLING}`, transportProfiles: ['peppol-transport-as4-v2_0'] }] });
    expect(r.json.documentTypes).to.have.length(2);
    const maxAge = Number(/max-age=(\d+)/.exec(r.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).to.be.greaterThan(60).and.at.most(3600);
    const served = fixture.requests.smp;
    const again = await lookup(t, asker.apiKey, '0088:1234567890128');
    expect(again.json.validUntil).to.equal(r.json.validUntil);
    expect(fixture.requests.smp, 'served from the cache').to.equal(served);
  });

  it('tells "not registered" from "registered, but not for this document type (or transport)"', async () => {
    const asker = await t.tenant({ environment: 'production' });
    const none = await lookup(t, asker.apiKey, '0088:0000000000000');
    expect(none.json).to.include({ status: 'NOT_REGISTERED', reachable: false });
    const pint = await lookup(t, asker.apiKey, '0088:1234567890128', `?documentTypeId=${encodeURIComponent(PINT_AE)}`);
    expect(pint.json).to.include({ status: 'DOCUMENT_TYPE_NOT_SUPPORTED', reachable: false });
    const bis = await lookup(t, asker.apiKey, '0088:1234567890128', `?documentTypeId=${encodeURIComponent(BIS)}&processId=${encodeURIComponent(BILLING)}`);
    expect(bis.json).to.include({ status: 'REGISTERED', reachable: true });
    const as2 = await lookup(t, asker.apiKey, '0235:1000000004', `?documentTypeId=${encodeURIComponent(BIS)}`);
    expect(as2.json).to.include({ status: 'TRANSPORT_NOT_SUPPORTED', reachable: false });
  });
});
