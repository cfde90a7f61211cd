/** The ZATCA EGS unit decider as given / when / then specifications (no I/O). */
import { expect } from 'chai';
import { egsUnitDecider, egsUnitStep, type EgsUnitEvent } from '../../domain/zatca/egs-unit.js';
import { fold } from '../../domain/decider.js';
import { deciderSpecification } from '../support/decider-spec.js';

const now = '2026-06-01T10:00:00.000Z';
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
const register = { type: 'RegisterEgsUnit' as const, egsUnitId: 'egs_1', workspaceId: 'ws_a', environment: 'sandbox' as const, sellerVat: '399999999900003', subject, now };
const registered: EgsUnitEvent = { type: 'ZatcaEgsUnitRegistered', data: { egsUnitId: 'egs_1', workspaceId: 'ws_a', environment: 'sandbox', sellerVat: '399999999900003', subject, registeredAt: now } };
const key = (keyId: number, pem = `PUB${keyId}`): EgsUnitEvent => ({ type: 'ZatcaEgsKeyGenerated', data: { egsUnitId: 'egs_1', keyId, publicKeyPem: pem, privateKeySealed: `enc:v1:k${keyId}`, generatedAt: now } });
const csr = (keyId: number): EgsUnitEvent => ({ type: 'ZatcaEgsCsrCreated', data: { egsUnitId: 'egs_1', keyId, csrPem: `CSR${keyId}`, createdAt: now } });
const cert = (keyId: number, pem = `PUB${keyId}`) => ({ certificate: `CERT${keyId}`, publicKeyPem: pem, notAfter: '2031-06-01T00:00:00.000Z' });
const csidData = (keyId: number, requestId: string) => ({ egsUnitId: 'egs_1', keyId, certificate: `CERT${keyId}`, secretSealed: 'enc:v1:s', requestId, notAfter: '2031-06-01T00:00:00.000Z', recordedAt: now });
const compliance = (keyId: number): EgsUnitEvent => ({ type: 'ZatcaEgsComplianceCsidRecorded', data: csidData(keyId, 'c1') });
const checked = (keyId: number): EgsUnitEvent => ({ type: 'ZatcaEgsComplianceChecksPassed', data: { egsUnitId: 'egs_1', keyId, passedAt: now } });
const production = (keyId: number): EgsUnitEvent => ({ type: 'ZatcaEgsProductionCsidRecorded', data: csidData(keyId, 'p1') });
const onboarded = [registered, key(1), csr(1), compliance(1), checked(1), production(1)];

describe('decider specification: ZATCA EGS units', () => {
  const given = deciderSpecification(egsUnitDecider);

  it('registers a unit once; the same registration again is nothing, another is ZATCA_EGS_EXISTS', () => {
    given([]).when(register).then([registered]);
    given([registered]).when(register).thenNothingHappened();
    given([registered]).when({ ...register, sellerVat: '311111111100003' }).thenThrows('ZATCA_EGS_EXISTS');
  });

  it('refuses a registration with a bad VAT number, serial number, invoice type or an empty field, naming the field', () => {
    const path = (expected: string[]) => (err: unknown) => expect((err as { path: string[] }).path).to.deep.equal(expected);
    given([]).when({ ...register, sellerVat: '123' }).thenThrows(path(['sellerVat']));
    given([]).when({ ...register, subject: { ...subject, serialNumber: 'EGS-1' } }).thenThrows(path(['subject', 'serialNumber']));
    given([]).when({ ...register, subject: { ...subject, invoiceType: '0011' } }).thenThrows(path(['subject', 'invoiceType']));
    given([]).when({ ...register, subject: { ...subject, location: ' ' } }).thenThrows(path(['subject', 'location']));
  });

  it('walks key, CSR, compliance CSID, compliance checks, production CSID in order, each step once', () => {
    given([registered]).when({ type: 'AddKey', publicKeyPem: 'PUB1', privateKeySealed: 'enc:v1:k1', now }).then([key(1)]);
    given([registered, key(1)]).when({ type: 'RecordComplianceCsid', keyId: 1, cert: cert(1), secretSealed: 'enc:v1:s', requestId: 'c1', now }).thenThrows('ZATCA_EGS_WRONG_STEP');
    given([registered, key(1)]).when({ type: 'RecordCsr', keyId: 1, csrPem: 'CSR1', now }).then([csr(1)]);
    given([registered, key(1), csr(1)]).when({ type: 'RecordCsr', keyId: 1, csrPem: 'CSR1', now }).thenNothingHappened();
    given([registered, key(1), csr(1)]).when({ type: 'RecordProductionCsid', keyId: 1, cert: cert(1), secretSealed: 'enc:v1:s', requestId: 'p1', now }).thenThrows('ZATCA_EGS_WRONG_STEP');
    given([registered, key(1), csr(1)]).when({ type: 'RecordComplianceCsid', keyId: 1, cert: cert(1, 'OTHER'), secretSealed: 'enc:v1:s', requestId: 'c1', now }).thenThrows('ZATCA_EGS_CERTIFICATE_KEY_MISMATCH');
    given([registered, key(1), csr(1)]).when({ type: 'RecordComplianceCsid', keyId: 1, cert: cert(1), secretSealed: 'enc:v1:s', requestId: 'c1', now }).then([compliance(1)]);
    given([registered, key(1), csr(1), compliance(1)]).when({ type: 'RecordComplianceCsid', keyId: 1, cert: cert(1), secretSealed: 'enc:v1:other-seal', requestId: 'c1', now }).thenNothingHappened();
    given([registered, key(1), csr(1), compliance(1)]).when({ type: 'RecordComplianceChecksPassed', keyId: 1, now }).then([checked(1)]);
    given(onboarded.slice(0, 5)).when({ type: 'RecordProductionCsid', keyId: 1, cert: cert(1), secretSealed: 'enc:v1:s', requestId: 'p1', now }).then([production(1)]);
    given(onboarded).when({ type: 'RecordProductionCsid', keyId: 1, cert: cert(1), secretSealed: 'enc:v1:s', requestId: 'p1', now }).thenNothingHappened();
    const state = fold(egsUnitDecider, onboarded).unit!;
    expect([egsUnitStep(state), state.activeKeyId, state.pendingKeyId]).to.deep.equal(['active', 1, null]);
  });

  it('renews a unit in production: a new key and CSR, then its CSID directly (no compliance step); the old key stays', () => {
    const renewing = [...onboarded, key(2), csr(2)];
    given(renewing).when({ type: 'RecordComplianceCsid', keyId: 2, cert: cert(2), secretSealed: 'enc:v1:s', requestId: 'c2', now }).thenThrows('ZATCA_EGS_WRONG_STEP');
    given(renewing)
      .when({ type: 'RecordProductionCsid', keyId: 2, cert: cert(2), secretSealed: 'enc:v1:s', requestId: 'p2', now })
      .then([{ type: 'ZatcaEgsCsidRenewed', data: { ...csidData(2, 'p2'), previousKeyId: 1 } }]);
    const state = fold(egsUnitDecider, renewing).unit!;
    expect([state.activeKeyId, state.pendingKeyId, state.keys.length]).to.deep.equal([1, 2, 2]);
  });

  it('revokes once; a revoked unit takes no further step', () => {
    const revoked: EgsUnitEvent = { type: 'ZatcaEgsUnitRevoked', data: { egsUnitId: 'egs_1', reason: 'retired', revokedAt: now } };
    given(onboarded).when({ type: 'RevokeEgsUnit', reason: 'retired', now }).then([revoked]);
    given([...onboarded, revoked]).when({ type: 'RevokeEgsUnit', reason: 'retired', now }).thenNothingHappened();
    given([...onboarded, revoked]).when({ type: 'AddKey', publicKeyPem: 'P', privateKeySealed: 'S', now }).thenThrows('ZATCA_EGS_REVOKED');
    given([]).when({ type: 'AddKey', publicKeyPem: 'P', privateKeySealed: 'S', now }).thenThrows('ZATCA_EGS_NOT_FOUND');
  });
});
