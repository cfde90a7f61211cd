/**
 * Peppol discovery against a DNS server and an SMP on loopback: the SML's U-NAPTR records are
 * served by a library DNS server, the service metadata is signed by xmlsec1 with the test PKI's
 * SMP key (test/peppol/fixtures/dns-smp.ts).
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { createPeppolDiscovery, PeppolDiscoveryError, smlDnsName, type DiscoveryResult } from '../../commands/peppol/discovery/index.js';
import { createPeppolTrust } from '../../platform/peppol-pki.js';
import { startDnsSmpFixture, type DnsSmpFixture } from './fixtures/dns-smp.js';
import { createTestPki, type TestPki } from './support/pki.js';

const SCHEME = 'iso6523-actorid-upis';
const BIS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';
const PINT_AE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:peppol:pint:billing-1@ae-1::2.1';
const PINT_ANY = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:peppol:pint:billing-1*::2.1';
const CREDIT_NOTE = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';
const BILLING = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const OTHER_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:selfbilling:01:1.0';
const DAY = 86_400_000;

const p = (value: string) => ({ scheme: SCHEME, value });
const sameCert = (a: string, b: string) => new X509Certificate(a).fingerprint256 === new X509Certificate(b).fingerprint256;

async function rejection(promise: Promise<unknown>): Promise<PeppolDiscoveryError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(PeppolDiscoveryError);
    return err as PeppolDiscoveryError;
  }
  throw new Error('expected the lookup to fail');
}

describe('Peppol discovery (SML by U-NAPTR, signed SMP metadata)', function () {
  this.timeout(120_000);
  let pki: TestPki;
  let fixture: DnsSmpFixture;
  let clock: Date;
  const discovery = () =>
    createPeppolDiscovery({ smlZone: fixture.smlZone, dnsServers: [fixture.dnsServer], trust: createPeppolTrust([pki.caCertPem]), now: () => clock });

  before(async () => {
    pki = await createTestPki();
    const now = Date.now();
    const ap = (url: string, extra: object = {}) => ({ id: BILLING, endpointUrl: url, certificatePem: pki.service2.certPem, ...extra });
    fixture = await startDnsSmpFixture({
      pki,
      registrations: [
        { participant: p('0088:1234567890128'), documentTypes: [{ id: BIS, processes: [ap('https://ap2.example.test/as4', { expiration: new Date(now + 10 * DAY).toISOString() })] }, { id: PINT_AE, processes: [ap('https://ap2.example.test/as4')] }] },
        { participant: p('0235:1000000001'), documentTypes: [{ id: BIS, processes: [{ ...ap('https://ap2.example.test/as4'), id: OTHER_PROCESS }] }] },
        { participant: p('0235:1000000002'), documentTypes: [{ id: BIS, processes: [ap('https://ap2.example.test/as4', { expiration: new Date(now - DAY).toISOString() })] }] },
        { participant: p('0235:1000000003'), documentTypes: [{ id: BIS, processes: [ap('https://ap2.example.test/as4', { activation: new Date(now + 2 * DAY).toISOString() })] }] },
        { participant: p('0235:1000000004'), documentTypes: [{ id: BIS, processes: [ap('https://ap2.example.test/as4', { transportProfile: 'busdox-transport-as2-ver1p0' })] }] },
        { participant: p('0235:1000000005'), tamper: true, documentTypes: [{ id: BIS, processes: [ap('https://ap2.example.test/as4')] }] },
        { participant: p('0235:1000000006'), signer: pki.rogue, documentTypes: [{ id: BIS, processes: [ap('https://ap2.example.test/as4')] }] },
        { participant: p('0235:1000000007'), documentTypes: [{ id: BIS, processes: [{ ...ap('https://rogue.example.test/as4'), certificatePem: pki.rogue.certPem }] }] },
        { participant: p('0235:1000000008'), unknownToSmp: true, documentTypes: [] },
        // PINT receivers register their document types in the wildcard scheme
        { participant: p('0235:1000000009'), documentTypes: [{ id: PINT_ANY, scheme: 'peppol-doctype-wildcard', processes: [ap('https://pint.example.test/as4')] }] },
        {
          participant: p('0235:1000000010'),
          documentTypes: [
            { id: PINT_AE, scheme: 'peppol-doctype-wildcard', processes: [ap('https://pint-ae.example.test/as4')] },
            { id: PINT_ANY, scheme: 'peppol-doctype-wildcard', processes: [ap('https://pint-any.example.test/as4')] },
          ],
        },
      ],
    });
  });
  after(async () => fixture?.stop());
  beforeEach(() => {
    clock = new Date();
  });

  it('hashes the participant as the Peppol SML does (lower-cased value, SHA-256, base32 without padding, scheme, zone)', () => {
    // Examples from the Peppol Policy for use of Identifiers and the SML specification.
    expect(smlDnsName(p('0088:123ABC'), 'acc.edelivery.tech.ec.europa.eu')).to.equal('y7dzfxaf3d4cjz4kcgrxtec6twvcga4ky7zwa5boif6mswd4tdrq.iso6523-actorid-upis.acc.edelivery.tech.ec.europa.eu');
    expect(smlDnsName(p('0010:5798000000001'), 'acc.edelivery.tech.ec.europa.eu')).to.equal('xukhfqabqziki3ykvr2fhr4snfa3pf5vpq6k4tonv3lmvsy5arvq.iso6523-actorid-upis.acc.edelivery.tech.ec.europa.eu');
  });

  it('finds a registered participant\'s AS4 endpoint and certificate for the document type and process', async () => {
    const r = await discovery().lookup(p('0088:1234567890128'), BIS, BILLING);
    expect(r.found).to.equal(true);
    const { endpoint } = r as Extract<DiscoveryResult, { found: true }>;
    expect(endpoint.url).to.equal('https://ap2.example.test/as4');
    expect(endpoint.transportProfile).to.equal('peppol-transport-as4-v2_0');
    expect(sameCert(endpoint.certificatePem, pki.service2.certPem)).to.equal(true);
    expect(endpoint.serviceExpiration).to.be.a('string');
    // identifiers with their scheme prefixes, and the participant in another case, find the same endpoint
    const again = await discovery().lookup(p('0088:1234567890128'.toUpperCase()), `busdox-docid-qns::${PINT_AE}`, `cenbii-procid-ubl::${BILLING}`);
    expect(again).to.deep.include({ found: true });
  });

  it('matches PINT document types registered in the wildcard scheme: exact customization first, then the closest "*" pattern', async () => {
    const broad = await discovery().lookup(p('0235:1000000009'), PINT_AE, BILLING);
    expect(broad).to.deep.include({ found: true });
    expect((broad as Extract<DiscoveryResult, { found: true }>).endpoint.url).to.equal('https://pint.example.test/as4');
    const exact = await discovery().lookup(p('0235:1000000010'), `peppol-doctype-wildcard::${PINT_AE}`, BILLING);
    expect((exact as Extract<DiscoveryResult, { found: true }>).endpoint.url).to.equal('https://pint-ae.example.test/as4');
    // a busdox-docid-qns type named as such is matched exactly only
    expect(await discovery().lookup(p('0235:1000000009'), `busdox-docid-qns::${PINT_AE}`, BILLING)).to.deep.include({ found: false, reason: 'DOCUMENT_TYPE_NOT_SUPPORTED' });
    // another PINT family is not covered by billing-1*
    expect(await discovery().lookup(p('0235:1000000009'), PINT_AE.replace('billing-1', 'selfbilling-1'), BILLING)).to.deep.include({ found: false, reason: 'DOCUMENT_TYPE_NOT_SUPPORTED' });
  });

  it('answers PARTICIPANT_NOT_REGISTERED for a participant the SML does not know, or its SMP does not know', async () => {
    const r = await discovery().lookup(p('0088:0000000000000'), BIS, BILLING);
    expect(r).to.deep.include({ found: false, reason: 'PARTICIPANT_NOT_REGISTERED' });
    expect((r as { detail: string }).detail).to.include('0088:0000000000000');
    const s = await discovery().lookup(p('0235:1000000008'), BIS, BILLING);
    expect(s).to.deep.include({ found: false, reason: 'PARTICIPANT_NOT_REGISTERED' });
  });

  it('answers DOCUMENT_TYPE_NOT_SUPPORTED for a registered participant that does not receive the document type', async () => {
    const r = await discovery().lookup(p('0088:1234567890128'), CREDIT_NOTE, BILLING);
    expect(r).to.deep.include({ found: false, reason: 'DOCUMENT_TYPE_NOT_SUPPORTED' });
    expect((r as { detail: string }).detail).to.include('CreditNote');
  });

  it('answers PROCESS_NOT_SUPPORTED when the document type is received in another process only', async () => {
    const r = await discovery().lookup(p('0235:1000000001'), BIS, BILLING);
    expect(r).to.deep.include({ found: false, reason: 'PROCESS_NOT_SUPPORTED' });
  });

  it('answers TRANSPORT_NOT_SUPPORTED without an AS4 endpoint, or when the endpoint expired or is not active yet', async () => {
    expect(await discovery().lookup(p('0235:1000000004'), BIS, BILLING)).to.deep.include({ found: false, reason: 'TRANSPORT_NOT_SUPPORTED' });
    const expired = await discovery().lookup(p('0235:1000000002'), BIS, BILLING);
    expect(expired).to.deep.include({ found: false, reason: 'TRANSPORT_NOT_SUPPORTED' });
    expect((expired as { detail: string }).detail).to.match(/expired on/);
    const future = await discovery().lookup(p('0235:1000000003'), BIS, BILLING);
    expect(future).to.deep.include({ found: false, reason: 'TRANSPORT_NOT_SUPPORTED' });
    expect((future as { detail: string }).detail).to.match(/active only from/);
    // once the activation date has come, the same endpoint is used
    clock = new Date(Date.now() + 3 * DAY);
    expect(await discovery().lookup(p('0235:1000000003'), BIS, BILLING)).to.deep.include({ found: true });
  });

  it('refuses service metadata whose signature does not verify (altered after signing)', async () => {
    const err = await rejection(discovery().lookup(p('0235:1000000005'), BIS, BILLING));
    expect(err.code).to.equal('SMP_SIGNATURE_INVALID');
    expect(err.transient).to.equal(false);
  });

  it('refuses service metadata signed by an SMP certificate of another CA', async () => {
    const err = await rejection(discovery().lookup(p('0235:1000000006'), BIS, BILLING));
    expect(err.code).to.equal('SMP_CERTIFICATE_UNTRUSTED');
    expect(err.message).to.include('not issued by a trusted CA');
  });

  it('refuses an endpoint whose access point certificate is of another CA', async () => {
    const err = await rejection(discovery().lookup(p('0235:1000000007'), BIS, BILLING));
    expect(err.code).to.equal('ENDPOINT_CERTIFICATE_UNTRUSTED');
  });

  it('refuses the SMP signature when the trust store is another CA\'s', async () => {
    const d = createPeppolDiscovery({ smlZone: fixture.smlZone, dnsServers: [fixture.dnsServer], trust: createPeppolTrust([pki.otherCaCertPem]), now: () => clock });
    const err = await rejection(d.lookup(p('0088:1234567890128'), BIS, BILLING));
    expect(err.code).to.equal('SMP_CERTIFICATE_UNTRUSTED');
  });

  it('caches answers until the endpoint\'s expiration, and "not found" for a few minutes', async () => {
    const d = discovery();
    const before = { ...fixture.requests };
    const first = await d.lookup(p('0088:1234567890128'), BIS, BILLING);
    const mid = { ...fixture.requests };
    expect(mid.dns).to.be.greaterThan(before.dns);
    expect(mid.smp).to.equal(before.smp + 2); // service group + service metadata
    clock = new Date(clock.getTime() + 30 * 60_000);
    expect(await d.lookup(p('0088:1234567890128'), BIS, BILLING)).to.deep.equal(first);
    expect(fixture.requests).to.deep.equal(mid);
    // past one hour the answer is fetched again
    clock = new Date(clock.getTime() + 31 * 60_000);
    await d.lookup(p('0088:1234567890128'), BIS, BILLING);
    expect(fixture.requests.smp).to.equal(mid.smp + 2);
    // past the endpoint's expiration (10 days) it is no longer found
    clock = new Date(Date.now() + 11 * DAY);
    expect(await d.lookup(p('0088:1234567890128'), BIS, BILLING)).to.deep.include({ found: false, reason: 'TRANSPORT_NOT_SUPPORTED' });

    const n0 = { ...fixture.requests };
    await d.lookup(p('0088:0000000000001'), BIS, BILLING);
    const n1 = { ...fixture.requests };
    expect(n1.dns).to.be.greaterThan(n0.dns);
    await d.lookup(p('0088:0000000000001'), BIS, BILLING);
    expect(fixture.requests).to.deep.equal(n1);
    clock = new Date(clock.getTime() + 6 * 60_000);
    await d.lookup(p('0088:0000000000001'), BIS, BILLING);
    expect(fixture.requests.dns).to.be.greaterThan(n1.dns);
  });

  it('shares one lookup between concurrent callers', async () => {
    const d = discovery();
    const before = { ...fixture.requests };
    const answers = await Promise.all([1, 2, 3, 4].map(() => d.lookup(p('0088:1234567890128'), PINT_AE, BILLING)));
    expect(answers.every((a) => a.found)).to.equal(true);
    expect(fixture.requests.smp).to.equal(before.smp + 2);
  });

  it('fails transiently (no answer cached) when the SML does not answer', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    silent.close();
    const d = createPeppolDiscovery({ smlZone: fixture.smlZone, dnsServers: [`127.0.0.1:${port}`], trust: createPeppolTrust([pki.caCertPem]), now: () => clock });
    const err = await rejection(d.lookup(p('0088:1234567890128'), BIS, BILLING));
    expect(err.code).to.equal('SML_LOOKUP_FAILED');
    expect(err.transient).to.equal(true);
  });
});
