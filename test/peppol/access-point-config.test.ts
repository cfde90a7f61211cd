/**
 * The access point's configuration: PEPPOL_* settings, the keystore and trust store (shared test
 * PKI, made by OpenSSL), certificate chains really verified, CRL revocation, the start refusing
 * an unloadable keystore in one line, and /readyz naming the access point's state.
 */
import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Connector } from '../../commands/delivery/connector.js';
import { withProductionConnector } from '../../commands/delivery/connector.js';
import { ConfigError, loadConfig, type Config } from '../../platform/config.js';
import { createPeppolTrust, loadAccessPointIdentity, loadPeppolTrust, openPeppolAccessPoint } from '../../platform/peppol-pki.js';
import { startTestService } from '../support/http.js';
import { createTestPki, type TestPki } from './support/pki.js';

const run = promisify(execFile);
const peppolOf = (env: Record<string, string>) => loadConfig(env).peppol;

describe('Peppol access point configuration', function () {
  this.timeout(120_000);
  let pki: TestPki;
  before(async () => {
    pki = await createTestPki();
  });

  describe('PEPPOL_* settings', () => {
    it('leaves the access point unset by default, revocation checking off', () => {
      expect(peppolOf({})).to.deep.equal({ keystore: null, truststorePath: null, smlZone: null, dnsServers: null, endpointUrl: null, revocationCheck: 'off', corner5Participant: null, receiveThreads: null });
    });

    it('reads every setting', () => {
      const p = peppolOf({
        PEPPOL_KEYSTORE: '/etc/ap/ap.p12',
        PEPPOL_KEYSTORE_PASSWORD: 'x',
        PEPPOL_TRUSTSTORE: '/etc/ap/cas',
        PEPPOL_SML_ZONE: 'ACC.edelivery.tech.ec.europa.eu.',
        PEPPOL_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2',
        PEPPOL_ENDPOINT_URL: 'https://ap.example.com/as4',
        PEPPOL_REVOCATION_CHECK: 'crl',
        PEPPOL_CORNER5_PARTICIPANT: 'iso6523-actorid-upis::0235:000000000',
        PEPPOL_RECEIVE_THREADS: '3',
      });
      expect(p).to.deep.equal({
        keystore: { kind: 'pkcs12', path: '/etc/ap/ap.p12', password: 'x' },
        truststorePath: '/etc/ap/cas',
        smlZone: 'acc.edelivery.tech.ec.europa.eu',
        dnsServers: ['127.0.0.1:5353', '10.0.0.2'],
        endpointUrl: 'https://ap.example.com/as4',
        revocationCheck: 'crl',
        corner5Participant: { scheme: 'iso6523-actorid-upis', value: '0235:000000000' },
        receiveThreads: 3,
      });
      expect(JSON.stringify(p)).not.to.include('"x"');
      expect(JSON.stringify(p.keystore)).to.include('[redacted]');
      expect(peppolOf({ PEPPOL_KEY: '/k.pem', PEPPOL_CERTIFICATE: '/c.pem' }).keystore).to.deep.equal({ kind: 'pem', keyPath: '/k.pem', certificatePath: '/c.pem' });
    });

    it('refuses settings that cannot work, naming the variable', () => {
      const refused = (env: Record<string, string>, name: RegExp) => expect(() => loadConfig(env)).to.throw(ConfigError, name);
      refused({ PEPPOL_KEYSTORE: '/a.p12' }, /PEPPOL_KEYSTORE_PASSWORD/);
      refused({ PEPPOL_KEYSTORE: '/a.p12', PEPPOL_KEYSTORE_PASSWORD: '', PEPPOL_KEY: '/k.pem' }, /not both/);
      refused({ PEPPOL_KEY: '/k.pem' }, /PEPPOL_CERTIFICATE/);
      refused({ PEPPOL_SML_ZONE: 'not a zone' }, /PEPPOL_SML_ZONE/);
      refused({ PEPPOL_DNS_SERVERS: 'dns://1.1.1.1' }, /PEPPOL_DNS_SERVERS/);
      refused({ PEPPOL_DNS_SERVERS: 'resolver.example.com' }, /PEPPOL_DNS_SERVERS/);
      expect(peppolOf({ PEPPOL_DNS_SERVERS: '[::1]:53,::1' }).dnsServers).to.deep.equal(['[::1]:53', '::1']);
      refused({ PEPPOL_ENDPOINT_URL: 'ap.example.com/as4' }, /PEPPOL_ENDPOINT_URL/);
      refused({ PEPPOL_RECEIVE_THREADS: 'two' }, /PEPPOL_RECEIVE_THREADS/);
      refused({ PEPPOL_ENDPOINT_URL: 'https://user:pw@ap.example.com/as4' }, /PEPPOL_ENDPOINT_URL/);
      refused({ PEPPOL_REVOCATION_CHECK: 'yes' }, /PEPPOL_REVOCATION_CHECK/);
      refused({ PEPPOL_CORNER5_PARTICIPANT: '0235:000000000' }, /PEPPOL_CORNER5_PARTICIPANT/);
    });
  });

  describe('keystore', () => {
    it('loads the key, certificate and chain from a PKCS#12 keystore', () => {
      const id = loadAccessPointIdentity(peppolOf({ PEPPOL_KEYSTORE: pki.service.p12Path, PEPPOL_KEYSTORE_PASSWORD: pki.service.p12Password }));
      expect(id.commonName).to.equal(pki.service.commonName);
      expect(id.certificatePem.trim()).to.equal(pki.service.certPem.trim());
      expect(id.chainPem.map((c) => c.trim())).to.deep.equal([pki.caCertPem.trim()]);
      expect(id.privateKeyPem).to.match(/^-----BEGIN PRIVATE KEY-----/);
    });

    it('loads PEM key and certificate files', () => {
      const id = loadAccessPointIdentity(peppolOf({ PEPPOL_KEY: pki.service2.keyPath, PEPPOL_CERTIFICATE: pki.service2.certPath }));
      expect(id.commonName).to.equal(pki.service2.commonName);
      expect(id.chainPem).to.deep.equal([]);
    });

    it('refuses a wrong password, a missing file, a key of another certificate and an expired certificate in one line without secrets', () => {
      const refusal = (env: Record<string, string>) => {
        try {
          loadAccessPointIdentity(peppolOf(env));
        } catch (err) {
          expect(err).to.be.instanceOf(ConfigError);
          return (err as Error).message;
        }
        throw new Error('expected a ConfigError');
      };
      const wrong = refusal({ PEPPOL_KEYSTORE: pki.service.p12Path, PEPPOL_KEYSTORE_PASSWORD: 'not-the-password-7f3a' });
      expect(wrong).to.match(/PEPPOL_KEYSTORE .*cannot be opened \(wrong PEPPOL_KEYSTORE_PASSWORD/);
      expect(wrong).not.to.include('not-the-password-7f3a');
      expect(wrong).not.to.include('\n');
      expect(refusal({ PEPPOL_KEYSTORE: '/nonexistent/ap.p12', PEPPOL_KEYSTORE_PASSWORD: 'x' })).to.match(/no such file/);
      expect(refusal({ PEPPOL_KEYSTORE: pki.service.certPath, PEPPOL_KEYSTORE_PASSWORD: 'x' })).to.match(/cannot be opened/);
      expect(refusal({ PEPPOL_KEY: pki.service.keyPath, PEPPOL_CERTIFICATE: pki.service2.certPath })).to.match(/no certificate matches the private key/);
      const expired = refusal({ PEPPOL_KEYSTORE: pki.expired.p12Path, PEPPOL_KEYSTORE_PASSWORD: pki.expired.p12Password });
      expect(expired).to.match(/expired on/);
      expect(expired).not.to.include(pki.expired.p12Password);
    });
  });

  describe('trust store', () => {
    it('verifies the chain by signature: the same-named other CA\'s certificate is refused', () => {
      const trust = loadPeppolTrust(peppolOf({ PEPPOL_TRUSTSTORE: pki.caCertPath }));
      expect(trust.caCertificatesPem).to.have.length(1);
      const now = new Date();
      expect(trust.verifyCertificate(pki.service.certPem, now, 'ap')).to.deep.equal({ ok: true, commonName: pki.service.commonName });
      expect(trust.verifyCertificate(pki.smp.certPem, now, 'smp')).to.include({ ok: true });
      const rogue = trust.verifyCertificate(pki.rogue.certPem, now, 'ap');
      expect(rogue.ok).to.equal(false);
      expect((rogue as { reason: string }).reason).to.match(/not issued by a trusted CA/);
      expect((trust.verifyCertificate(pki.expired.certPem, now, 'ap') as { reason: string }).reason).to.match(/expired on/);
      expect((trust.verifyCertificate(pki.caCertPem, now, 'ap') as { reason: string }).reason).to.match(/CA certificate/);
      expect((trust.verifyCertificate('not a certificate', now, 'ap') as { reason: string }).reason).to.match(/not an X.509 certificate/);
      // a time outside the certificate's validity
      expect(trust.verifyCertificate(pki.service.certPem, new Date(Date.now() + 5 * 365 * 86_400_000), 'ap').ok).to.equal(false);
      // the other CA trusts only its own
      const other = createPeppolTrust([pki.otherCaCertPem]);
      expect(other.verifyCertificate(pki.rogue.certPem, now, 'ap').ok).to.equal(true);
      expect(other.verifyCertificate(pki.service.certPem, now, 'ap').ok).to.equal(false);
    });

    it('reads a directory of CA certificates and refuses one holding a non-CA certificate', () => {
      const dir = fs.mkdtempSync(path.join(pki.dir, 'trust-'));
      fs.copyFileSync(pki.caCertPath, path.join(dir, 'test-ca.pem'));
      fs.copyFileSync(pki.otherCaCertPath, path.join(dir, 'other-ca.crt'));
      fs.writeFileSync(path.join(dir, 'README.txt'), 'ignored');
      const trust = loadPeppolTrust(peppolOf({ PEPPOL_TRUSTSTORE: dir }));
      expect(trust.caCertificatesPem).to.have.length(2);
      expect(trust.verifyCertificate(pki.rogue.certPem, new Date(), 'ap').ok).to.equal(true);
      fs.copyFileSync(pki.service.certPath, path.join(dir, 'leaf.pem'));
      expect(() => loadPeppolTrust(peppolOf({ PEPPOL_TRUSTSTORE: dir }))).to.throw(ConfigError, /not a CA certificate/);
      expect(() => loadPeppolTrust(peppolOf({ PEPPOL_TRUSTSTORE: path.join(dir, 'none') }))).to.throw(ConfigError, /no such file/);
    });

    it('checks revocation by CRL when configured: a revoked certificate is refused, an unreachable CRL leaves the status unknown', async () => {
      // A certificate naming a CRL distribution point, issued and then revoked by the test CA (openssl ca).
      const caDir = path.dirname(pki.caCertPath);
      const cnf = path.join(caDir, 'openssl.cnf');
      const crlPath = path.join(caDir, 'ca.crl.der');
      let serveCrl = true;
      const server = http.createServer((req, res) => {
        if (!serveCrl || req.url !== '/ca.crl') return void res.writeHead(503).end();
        res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(fs.readFileSync(crlPath));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const crlUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ca.crl`;
        const ext = path.join(caDir, 'crl-ext.cnf');
        fs.writeFileSync(ext, `[ crl_ap ]\nbasicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment\ncrlDistributionPoints = URI:${crlUrl}\n`);
        const issue = async (name: string) => {
          const key = path.join(caDir, `${name}.key.pem`);
          const csr = path.join(caDir, `${name}.csr.pem`);
          const cert = path.join(caDir, `${name}.cert.pem`);
          await run('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key]);
          await run('openssl', ['req', '-config', cnf, '-new', '-key', key, '-subj', `/C=AE/O=CRL Test/CN=${name}`, '-out', csr]);
          await run('openssl', ['ca', '-batch', '-config', cnf, '-extfile', ext, '-extensions', 'crl_ap', '-notext', '-md', 'sha256', '-days', '30', '-keyfile', path.join(caDir, 'ca.key.pem'), '-cert', pki.caCertPath, '-in', csr, '-out', cert]);
          return cert;
        };
        const good = fs.readFileSync(await issue('POPCRL01'), 'utf8');
        const revokedPath = await issue('POPCRL02');
        const revoked = fs.readFileSync(revokedPath, 'utf8');
        const caArgs = ['-config', cnf, '-keyfile', path.join(caDir, 'ca.key.pem'), '-cert', pki.caCertPath];
        await run('openssl', ['ca', ...caArgs, '-revoke', revokedPath]);
        const pem = path.join(caDir, 'ca.crl.pem');
        await run('openssl', ['ca', ...caArgs, '-gencrl', '-crldays', '7', '-out', pem]);
        await run('openssl', ['crl', '-in', pem, '-outform', 'DER', '-out', crlPath]);

        const now = new Date();
        const trust = createPeppolTrust([pki.caCertPem], 'crl');
        expect((trust.verifyCertificate(good, now, 'ap') as { reason: string }).reason).to.match(/revocation status \(CRL\).*not known/);
        expect(await trust.verifyCertificateOnline(good, now, 'ap')).to.include({ ok: true });
        const refused = await trust.verifyCertificateOnline(revoked, now, 'ap');
        expect(refused.ok).to.equal(false);
        expect((refused as { reason: string }).reason).to.match(/revoked on .*CRL/);
        // cached until the CRL's next update: synchronous checks now know both
        expect(trust.verifyCertificate(good, now, 'ap').ok).to.equal(true);
        expect(trust.verifyCertificate(revoked, now, 'ap').ok).to.equal(false);
        // a certificate without a CRL distribution point, or a CRL that cannot be fetched, is not trusted
        serveCrl = false;
        const fresh = createPeppolTrust([pki.caCertPem], 'crl');
        expect((await fresh.verifyCertificateOnline(good, now, 'ap') as { reason: string }).reason).to.match(/not known: .*503/);
        expect((await fresh.verifyCertificateOnline(pki.service.certPem, now, 'ap') as { reason: string }).reason).to.match(/no CRL distribution point/);
        // off by default: nothing is fetched
        expect(createPeppolTrust([pki.caCertPem]).verifyCertificate(revoked, now, 'ap').ok).to.equal(true);
      } finally {
        server.close();
      }
    });
  });

  it('checks revocation by OCSP when configured, asking an OpenSSL OCSP responder', async () => {
    const caDir = path.dirname(pki.caCertPath);
    const cnf = path.join(caDir, 'openssl.cnf');
    const caArgs = ['-config', cnf, '-keyfile', path.join(caDir, 'ca.key.pem'), '-cert', pki.caCertPath];
    const free = http.createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const port = (free.address() as AddressInfo).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const ext = path.join(caDir, 'ocsp-ext.cnf');
    fs.writeFileSync(ext, `[ ocsp_ap ]\nbasicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment\nauthorityInfoAccess = OCSP;URI:http://127.0.0.1:${port}/\n`);
    const issue = async (name: string) => {
      const key = path.join(caDir, `${name}.key.pem`);
      const csr = path.join(caDir, `${name}.csr.pem`);
      const cert = path.join(caDir, `${name}.cert.pem`);
      await run('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key]);
      await run('openssl', ['req', '-config', cnf, '-new', '-key', key, '-subj', `/C=AE/O=OCSP Test/CN=${name}`, '-out', csr]);
      await run('openssl', ['ca', '-batch', ...caArgs, '-extfile', ext, '-extensions', 'ocsp_ap', '-notext', '-md', 'sha256', '-days', '30', '-in', csr, '-out', cert]);
      return cert;
    };
    const good = fs.readFileSync(await issue('POPOCSP1'), 'utf8');
    const revokedPath = await issue('POPOCSP2');
    const revoked = fs.readFileSync(revokedPath, 'utf8');
    await run('openssl', ['ca', ...caArgs, '-revoke', revokedPath]);
    const trust = createPeppolTrust([pki.caCertPem], 'ocsp');
    const now = new Date();
    // no responder yet: the status is unknown
    expect((await trust.verifyCertificateOnline(good, now, 'ap') as { reason: string }).reason).to.match(/revocation status \(OCSP\).*not known/);
    const responder = spawn('openssl', ['ocsp', '-index', path.join(caDir, 'index.txt'), '-port', String(port), '-rsigner', pki.caCertPath, '-rkey', path.join(caDir, 'ca.key.pem'), '-CA', pki.caCertPath, '-ignore_err'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        let seen = '';
        const watch = (b: Buffer) => {
          seen += b.toString();
          if (seen.includes('waiting for OCSP client connections')) resolve();
        };
        responder.stdout.on('data', watch);
        responder.stderr.on('data', watch);
        responder.on('exit', (code) => reject(new Error(`openssl ocsp exited (${code}): ${seen}`)));
      });
      const fresh = createPeppolTrust([pki.caCertPem], 'ocsp');
      expect(await fresh.verifyCertificateOnline(good, now, 'ap')).to.include({ ok: true });
      const refused = await fresh.verifyCertificateOnline(revoked, now, 'ap');
      expect(refused.ok).to.equal(false);
      expect((refused as { reason: string }).reason).to.match(/revoked on .*OCSP/);
    } finally {
      responder.kill();
    }
  });

  describe('at start and on /readyz', () => {
    const full = (): Record<string, string> => ({
      PEPPOL_KEYSTORE: pki.service.p12Path,
      PEPPOL_KEYSTORE_PASSWORD: pki.service.p12Password,
      PEPPOL_TRUSTSTORE: pki.caCertPath,
      PEPPOL_SML_ZONE: 'acc.edelivery.tech.ec.europa.eu',
      PEPPOL_ENDPOINT_URL: 'https://ap.example.com/as4',
    });

    it('opens the access point only when keystore, trust store, SML zone and endpoint URL are all set', () => {
      const opened = openPeppolAccessPoint(peppolOf(full()));
      expect(opened.missing).to.deep.equal([]);
      expect(opened.accessPoint?.identity.commonName).to.equal(pki.service.commonName);
      for (const unset of ['PEPPOL_TRUSTSTORE', 'PEPPOL_SML_ZONE', 'PEPPOL_ENDPOINT_URL']) {
        const env = full();
        delete env[unset];
        const partial = openPeppolAccessPoint(peppolOf(env));
        expect(partial.accessPoint).to.equal(null);
        expect(partial.missing).to.deep.equal([unset]);
      }
      // a keystore whose certificate the trust store does not vouch for
      expect(() => openPeppolAccessPoint(peppolOf({ ...full(), PEPPOL_TRUSTSTORE: pki.otherCaCertPath }))).to.throw(ConfigError, /does not chain to PEPPOL_TRUSTSTORE/);
    });

    it('npm start refuses a keystore it cannot open in one line on stderr, without the password', async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
        env: { ...process.env, ...full(), PEPPOL_KEYSTORE_PASSWORD: 'wrong-secret-91c2', DATABASE_URL: 'postgres://127.0.0.1:1/none', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).to.equal(1);
      expect(stderr.trim().split('\n')).to.have.length(1);
      expect(stderr).to.match(/^einvoicing: PEPPOL_KEYSTORE .*cannot be opened \(wrong PEPPOL_KEYSTORE_PASSWORD/);
      expect(stderr + stdout).not.to.include('wrong-secret-91c2');
      expect(stderr).not.to.match(/\bat .*\.ts:\d+/);
    });

    it('/readyz says which settings the access point still needs', async () => {
      const t = await startTestService({ startWorkers: false });
      try {
        const ready = (await (await fetch(`${t.url}/readyz`)).json()) as { checks: { connectors: { missing: unknown[]; present: unknown[]; peppolAccessPoint: string } } };
        expect(ready.checks.connectors.peppolAccessPoint).to.match(/^not configured: set PEPPOL_KEYSTORE .*PEPPOL_TRUSTSTORE, PEPPOL_SML_ZONE, PEPPOL_ENDPOINT_URL$/);
        expect(ready.checks.connectors.missing).to.deep.include({ environment: 'production', destination: 'PEPPOL' });
        expect(ready.checks.connectors.present).to.deep.include({ environment: 'sandbox', destination: 'PEPPOL', connector: 'peppol-sandbox-ap' });
      } finally {
        await t.close();
      }
    });

    it('/readyz says "configured" with the access point set, and lists a production Peppol connector as present', async () => {
      const withPeppol = (c: Config): Config => ({ ...c, peppol: loadConfig(full()).peppol });
      let handedOver: unknown = undefined;
      const t = await startTestService({
        startWorkers: false,
        config: withPeppol,
        processes: (deps) => {
          handedOver = deps.peppol;
          // The registry the service builds when a Peppol connector exists for production.
          const peppolConnector: Connector = {
            name: 'peppol-as4',
            destination: 'PEPPOL',
            deliver: async () => ({ kind: 'failed', error: { code: 'UNUSED', message: 'not used in this test', path: [], source: 'delivery' }, outcomeUnknown: false }),
            finalResult: async () => null,
          };
          const registry = withProductionConnector({ connectorFor: () => null, missing: () => [{ environment: 'production', destination: 'PEPPOL' }, { environment: 'production', destination: 'ZATCA' }] }, peppolConnector);
          return { reactors: [], workers: [], connectors: registry };
        },
      });
      try {
        expect((handedOver as { identity: { commonName: string } } | null)?.identity.commonName).to.equal(pki.service.commonName);
        const ready = (await (await fetch(`${t.url}/readyz`)).json()) as { checks: { connectors: { missing: unknown[]; present: unknown[]; peppolAccessPoint: string } } };
        expect(ready.checks.connectors.peppolAccessPoint).to.equal('configured');
        expect(ready.checks.connectors.present).to.deep.equal([{ environment: 'production', destination: 'PEPPOL', connector: 'peppol-as4' }]);
        expect(ready.checks.connectors.missing).to.deep.equal([{ environment: 'production', destination: 'ZATCA' }]);
      } finally {
        await t.close();
      }
    });
  });
});
