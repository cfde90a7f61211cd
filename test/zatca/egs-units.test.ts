/**
 * ZATCA EGS units against the real PostgreSQL event store: a unit's key pair on secp256k1, its
 * CSR (accepted by OpenSSL, with exactly the subject and extensions ZATCA's onboarding asks
 * for), its CSIDs issued by an OpenSSL test CA, keys and secrets sealed in the log, renewal and
 * revocation, and the seller's signing material for the delivery path.
 */
import { expect } from 'chai';
import { generateKeyPairSync, randomUUID, sign, verify } from 'node:crypto';
import { secretBox } from '../../commands/webhooks/secrets.js';
import {
  buildCsr,
  createEgsCsr,
  csidCredentials,
  generateEgsKey,
  loadEgsUnit,
  recordComplianceChecksPassed,
  recordComplianceCsid,
  recordProductionCsid,
  registerEgsUnit,
  revokeEgsUnit,
  sellerSigningMaterial,
  signingMaterial,
  type EgsUnitDeps,
} from '../../commands/zatca/egs-units.js';
import { DomainError } from '../../domain/errors.js';
import { egsUnitStep, zatcaEgsUnitStream } from '../../domain/zatca/egs-unit.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { testDb } from '../support/db.js';
import { binarySecurityToken, openssl, openTestCa, type TestCa } from './test-ca.js';

const subject = {
  commonName: 'TST-886431145-399999999900003',
  serialNumber: '1-Ledger|2-1.0|3-ed22f1d8-e6a2-1118-9b58-d9a8f11e445f',
  organizationUnit: 'Riyadh Branch',
  organizationName: 'Maximum Speed Tech Supply LTD',
  country: 'SA' as const,
  invoiceType: '1100',
  location: 'RRRD2929',
  industry: 'Supply activities',
};

describe('ZATCA EGS units: keys, CSR, CSIDs (real PostgreSQL, OpenSSL)', function () {
  this.timeout(60000);
  let store: PostgresEventStore;
  let ca: TestCa;
  let deps: EgsUnitDeps;
  const ctx = { now: new Date('2026-06-01T10:00:00Z'), actor: 'test' };
  const register = async (environment: 'sandbox' | 'simulation' | 'production' = 'sandbox', workspaceId = `ws_${randomUUID().slice(0, 8)}`) => {
    const egsUnitId = randomUUID();
    return registerEgsUnit(deps, { egsUnitId, workspaceId, environment, sellerVat: '399999999900003', subject }, ctx);
  };
  /** Onboards a unit to production with CSIDs from the test CA; answers the unit id. */
  const onboard = async (environment: 'sandbox' | 'production' = 'sandbox', workspaceId?: string) => {
    const unit = await register(environment, workspaceId);
    const { keyId } = await generateEgsKey(deps, unit.egsUnitId, ctx);
    const { csrPem } = await createEgsCsr(deps, unit.egsUnitId, ctx);
    await recordComplianceCsid(deps, unit.egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 'compliance-secret', requestId: '1234567890123' }, ctx);
    await recordComplianceChecksPassed(deps, unit.egsUnitId, keyId, ctx);
    await recordProductionCsid(deps, unit.egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 'production-secret', requestId: '30368' }, ctx);
    return unit;
  };

  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    ca = openTestCa();
    deps = { store, secrets: secretBox(Buffer.alloc(32, 7)) };
  });
  after(async () => {
    ca.close();
    await store.close();
  });

  it('builds a CSR that OpenSSL verifies, with the subject and extensions ZATCA asks for', async () => {
    const unit = await register('simulation');
    const { publicKeyPem } = await generateEgsKey(deps, unit.egsUnitId, ctx);
    const { csrPem, csrBase64, keyId } = await createEgsCsr(deps, unit.egsUnitId, ctx);
    expect(keyId).to.equal(1);
    expect(Buffer.from(csrBase64, 'base64').toString('utf8')).to.equal(csrPem);
    const text = openssl(['req', '-verify', '-noout', '-text', '-nameopt', 'RFC2253'], csrPem).toString('utf8');
    expect(text).to.include('Subject: CN=TST-886431145-399999999900003,O=Maximum Speed Tech Supply LTD,OU=Riyadh Branch,C=SA');
    expect(text).to.include('ASN1 OID: secp256k1');
    expect(text).to.include('Signature Algorithm: ecdsa-with-SHA256');
    expect(text).to.match(/1\.3\.6\.1\.4\.1\.311\.20\.2:\s*\n\s*\.\.PREZATCA-Code-Signing/);
    expect(text).to.match(
      /X509v3 Subject Alternative Name: \n\s+DirName:\/SN=1-Ledger\|2-1\.0\|3-ed22f1d8-e6a2-1118-9b58-d9a8f11e445f\/UID=399999999900003\/title=1100\/registeredAddress=RRRD2929\/businessCategory=Supply activities\n/,
    );
    // The template name is a PrintableString, the country too; the rest UTF8String.
    const parsed = openssl(['asn1parse'], csrPem).toString('utf8');
    expect(parsed).to.match(/PRINTABLESTRING\s+:SA/);
    expect(openssl(['asn1parse', '-strparse', String(Number(/(\d+):d=\d+\s+hl=\d+ l=\s*\d+ prim:\s+OCTET STRING\s+\[HEX DUMP\]:13/.exec(parsed)![1]))], csrPem).toString('utf8')).to.match(/PRINTABLESTRING\s+:PREZATCA-Code-Signing/);
    // The CSR holds the unit's public key.
    const pub = openssl(['req', '-noout', '-pubkey'], csrPem).toString('utf8');
    expect(pub.replace(/\s/g, '')).to.equal(publicKeyPem.replace(/\s/g, ''));
  });

  it('names the template of each environment: TSTZATCA, PREZATCA, ZATCA', async () => {
    for (const [environment, name] of [['sandbox', 'TSTZATCA-Code-Signing'], ['production', 'ZATCA-Code-Signing']] as const) {
      const unit = await register(environment);
      await generateEgsKey(deps, unit.egsUnitId, ctx);
      const { csrPem } = await createEgsCsr(deps, unit.egsUnitId, ctx);
      const text = openssl(['req', '-verify', '-noout', '-text'], csrPem).toString('utf8');
      expect(text).to.match(new RegExp(`1\\.3\\.6\\.1\\.4\\.1\\.311\\.20\\.2:\\s*\\n\\s*\\.\\.${name}`));
    }
  });

  it('keeps private keys and CSID secrets sealed in the log, and opens them to sign and to authenticate', async () => {
    const unit = await onboard();
    const raw = JSON.stringify((await store.readStream(zatcaEgsUnitStream(unit.egsUnitId))).map((e) => e.data));
    expect(raw).not.to.include('PRIVATE KEY');
    expect(raw).not.to.include('production-secret');
    expect(raw).not.to.include('compliance-secret');
    expect(raw).to.include('enc:v1:');
    const loaded = (await loadEgsUnit(store, unit.egsUnitId))!;
    expect(egsUnitStep(loaded)).to.equal('active');
    const material = signingMaterial(deps, loaded, 'production')!;
    const signature = sign('sha256', Buffer.from('invoice'), material.privateKey);
    expect(verify('sha256', Buffer.from('invoice'), material.x509.publicKey, signature)).to.equal(true);
    const credentials = csidCredentials(deps, loaded, 'production')!;
    expect(credentials.password).to.equal('production-secret');
    expect(Buffer.from(credentials.username, 'base64').toString('latin1')).to.equal(material.certificate);
    // Another key does not open them.
    expect(() => signingMaterial({ secrets: secretBox(Buffer.alloc(32, 8)) }, loaded, 'production')).to.throw(/does not open/);
  });

  it('refuses a certificate for another key, and steps out of order, with precise errors', async () => {
    const unit = await register();
    await generateEgsKey(deps, unit.egsUnitId, ctx);
    const other = await register();
    await generateEgsKey(deps, other.egsUnitId, ctx);
    const { csrPem: otherCsr } = await createEgsCsr(deps, other.egsUnitId, ctx);
    const code = async (p: Promise<unknown>) => p.then(() => null, (e: unknown) => (e instanceof DomainError ? [e.code, e.path.join('.')] : e));
    expect(await code(recordComplianceCsid(deps, unit.egsUnitId, { keyId: 1, binarySecurityToken: binarySecurityToken(ca.issue(otherCsr)), secret: 's', requestId: 'r' }, ctx))).to.deep.equal([
      'ZATCA_EGS_WRONG_STEP',
      'keyId',
    ]);
    await createEgsCsr(deps, unit.egsUnitId, ctx);
    expect(await code(recordComplianceCsid(deps, unit.egsUnitId, { keyId: 1, binarySecurityToken: binarySecurityToken(ca.issue(otherCsr)), secret: 's', requestId: 'r' }, ctx))).to.deep.equal([
      'ZATCA_EGS_CERTIFICATE_KEY_MISMATCH',
      'certificate',
    ]);
    expect(await code(recordComplianceCsid(deps, unit.egsUnitId, { keyId: 1, binarySecurityToken: 'bm90IGEgY2VydA==', secret: 's', requestId: 'r' }, ctx))).to.deep.equal([
      'ZATCA_EGS_VALIDATION',
      'binarySecurityToken',
    ]);
    expect(await code(recordProductionCsid(deps, unit.egsUnitId, { keyId: 1, binarySecurityToken: binarySecurityToken(ca.issue(otherCsr)), secret: 's', requestId: 'r' }, ctx))).to.deep.equal([
      'ZATCA_EGS_CERTIFICATE_KEY_MISMATCH',
      'certificate',
    ]);
    expect(await code(generateEgsKey(deps, randomUUID(), ctx))).to.deep.equal(['ZATCA_EGS_NOT_FOUND', 'egsUnitId']);
    expect(await code(registerEgsUnit(deps, { egsUnitId: randomUUID(), workspaceId: 'ws', environment: 'sandbox', sellerVat: '12345', subject }, ctx))).to.deep.equal([
      'ZATCA_EGS_VALIDATION',
      'sellerVat',
    ]);
  });

  it("makes the onboarded unit its seller's signer; renews with a new key while the old one stays; revocation stops signing", async () => {
    const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
    const seller = { workspaceId, environment: 'sandbox', sellerVat: '399999999900003' };
    expect(await sellerSigningMaterial(deps, seller)).to.equal(null);
    const unit = await onboard('sandbox', workspaceId);
    const first = (await sellerSigningMaterial(deps, seller))!;
    expect([first.egsUnitId, first.keyId]).to.deep.equal([unit.egsUnitId, 1]);

    // Renewal: a new key and CSR; the old key signs until the renewed CSID is recorded.
    const { keyId } = await generateEgsKey(deps, unit.egsUnitId, ctx);
    expect(keyId).to.equal(2);
    const { csrPem } = await createEgsCsr(deps, unit.egsUnitId, ctx);
    expect((await sellerSigningMaterial(deps, seller))!.keyId).to.equal(1);
    const answer = { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 'renewed-secret', requestId: '30369' };
    await recordProductionCsid(deps, unit.egsUnitId, answer, ctx);
    await recordProductionCsid(deps, unit.egsUnitId, answer, ctx); // a retry changes nothing
    const renewed = (await loadEgsUnit(store, unit.egsUnitId))!;
    expect(renewed.activeKeyId).to.equal(2);
    expect(renewed.keys.map((k) => [k.keyId, k.productionCsid?.requestId])).to.deep.equal([[1, '30368'], [2, '30369']]);
    expect((await store.readStream(zatcaEgsUnitStream(unit.egsUnitId))).map((e) => e.type).slice(-1)).to.deep.equal(['ZatcaEgsCsidRenewed']);
    expect((await sellerSigningMaterial(deps, seller))!.keyId).to.equal(2);

    await revokeEgsUnit(deps, unit.egsUnitId, 'device retired', ctx);
    expect(await sellerSigningMaterial(deps, seller)).to.equal(null);
  });

  it('signs the CSR with the key it names (buildCsr alone, checked by OpenSSL)', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const csr = buildCsr({ environment: 'production', sellerVat: '300000000000003', subject }, privateKey, publicKey.export({ type: 'spki', format: 'pem' }).toString());
    expect(openssl(['req', '-verify', '-noout'], csr).toString() + '').to.equal('');
  });
});
