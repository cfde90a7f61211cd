import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { createTestPki, TEST_CA_SUBJECT, type TestPki } from './support/pki.js';

const run = promisify(execFile);

/** OpenSSL's own chain verification, independent of Node's X509 helpers. */
async function opensslVerify(caPath: string, certPath: string): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout, stderr } = await run('openssl', ['verify', '-CAfile', caPath, certPath]);
    return { ok: true, out: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('peppol test PKI', function () {
  this.timeout(60_000);
  let pki: TestPki;

  before(async () => {
    pki = await createTestPki();
  });
  after(async () => {
    if (pki) await rm(pki.dir, { recursive: true, force: true });
  });

  it('issues Peppol-like RSA 2048 / SHA-256 access-point certificates from the test CA', async () => {
    const ca = new X509Certificate(pki.caCertPem);
    expect(ca.ca).to.equal(true);
    for (const [party, cn] of [
      [pki.service, 'POP000001'],
      [pki.service2, 'POP000002'],
      [pki.peer, 'POP000003'],
    ] as const) {
      const cert = new X509Certificate(party.certPem);
      expect(party.commonName).to.equal(cn);
      expect(cert.subject).to.match(new RegExp(`^C=\\w\\w\\nO=.+\\nOU=PEPPOL TEST AP\\nCN=${cn}$`));
      expect(cert.ca).to.equal(false);
      expect(cert.checkIssued(ca)).to.equal(true);
      expect(cert.verify(ca.publicKey)).to.equal(true);
      expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).to.equal(2048);
      expect(new Date(cert.validTo).getTime()).to.be.greaterThan(Date.now());
      const text = (await run('openssl', ['x509', '-in', party.certPath, '-noout', '-text'])).stdout;
      expect(text).to.include('sha256WithRSAEncryption');
      expect((await opensslVerify(pki.caCertPath, party.certPath)).ok).to.equal(true);
    }
    expect(new X509Certificate(pki.smp.certPem).verify(ca.publicKey)).to.equal(true);
  });

  it('gives the rogue certificate an issuer name equal to the test CA, but not its signature', async () => {
    const ca = new X509Certificate(pki.caCertPem);
    const other = new X509Certificate(pki.otherCaCertPem);
    const rogue = new X509Certificate(pki.rogue.certPem);
    const expectedDn = TEST_CA_SUBJECT.slice(1).split('/').join('\n');
    expect(ca.subject).to.equal(expectedDn);
    expect(other.subject).to.equal(ca.subject);
    expect(rogue.issuer).to.equal(ca.subject);
    expect(rogue.verify(ca.publicKey)).to.equal(false);
    expect(rogue.verify(other.publicKey)).to.equal(true);
    const verdict = await opensslVerify(pki.caCertPath, pki.rogue.certPath);
    expect(verdict.ok).to.equal(false);
    expect(verdict.out).to.match(/signature failure|unable to get local issuer/i);
  });

  it('issues an expired certificate that a chain check refuses for its dates', async () => {
    const cert = new X509Certificate(pki.expired.certPem);
    expect(cert.verify(new X509Certificate(pki.caCertPem).publicKey)).to.equal(true);
    expect(new Date(cert.validTo).getTime()).to.be.lessThan(Date.now());
    const verdict = await opensslVerify(pki.caCertPath, pki.expired.certPath);
    expect(verdict.ok).to.equal(false);
    expect(verdict.out).to.match(/certificate has expired/);
  });

  it('packs each key with its certificate and the CA into a PKCS#12 under the common name', async () => {
    const { stdout } = await run('openssl', [
      'pkcs12', '-in', pki.peer.p12Path, '-passin', `pass:${pki.peer.p12Password}`, '-nodes', '-info',
    ]);
    expect(stdout).to.include('friendlyName: POP000003');
    expect(stdout).to.include('subject=C = BE, O = phase4 Test Peer, OU = PEPPOL TEST AP, CN = POP000003');
    expect(stdout).to.include('subject=C = BE, O = OpenPEPPOL AISBL, OU = FOR TEST ONLY, CN = PEPPOL ACCESS POINT TEST CA - G2');
    expect(stdout).to.include('PRIVATE KEY');
  });
});
