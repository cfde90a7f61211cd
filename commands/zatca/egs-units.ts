/**
 * ZATCA EGS units: registering a unit, its key pair, its CSR, and recording what ZATCA's
 * onboarding API answers (compliance CSID, compliance checks, production CSID, renewal).
 *
 * The interface (everything else in this file serves it):
 *
 *   registerEgsUnit(deps, input, ctx)                 → the unit (stream `zatcaegs-<egsUnitId>`)
 *   generateEgsKey(deps, egsUnitId, ctx)              → a new secp256k1 key pair (the pending key)
 *   createEgsCsr(deps, egsUnitId, ctx)                → the pending key's CSR: { keyId, csrPem, csrBase64 }
 *                                                       (csrBase64: the PEM, base64, as the CSID APIs take it)
 *   recordComplianceCsid(deps, egsUnitId, answer, ctx)  answer: { keyId, binarySecurityToken, secret, requestId }
 *   recordComplianceChecksPassed(deps, egsUnitId, keyId, ctx)
 *   recordProductionCsid(deps, egsUnitId, answer, ctx)  the same answer shape; on a unit in production it is
 *                                                       the renewal (generateEgsKey + createEgsCsr first); it also
 *                                                       makes the unit the signer of its seller's invoices
 *   revokeEgsUnit(deps, egsUnitId, reason, ctx)
 *   loadEgsUnit(store, egsUnitId)                     → the unit's state (no secrets opened)
 *   csidCredentials(deps, unit, 'compliance' | 'production') → { username, password } for the API's basic auth
 *   signingMaterial(deps, unit, 'compliance' | 'production') → the private key and certificate that stamp invoices
 *   sellerSigningMaterial(deps, { workspaceId, environment, sellerVat }) → the production material of the unit
 *                                                       signing that seller's invoices, or null (no unit / no CSID)
 *   egsSecretBox(config)                              → the `secrets` of deps, for every entry point
 *
 * Delivery (commands/delivery/deliver.ts) stamps a Saudi invoice with sellerSigningMaterial and
 * hands the connector `zatcaEgsUnitId` with the stamped XML: a production connector opens the
 * unit's production CSID with csidCredentials to authenticate its call.
 *
 * Private keys and CSID secrets enter the log sealed by `deps.secrets` (AES-256-GCM, bound to the
 * unit), as webhook signing secrets are, and are opened only to sign or to call the API.
 */
import { createPrivateKey, generateKeyPairSync, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { Attribute, AttributeTypeAndValue, AttributeValue, Extension, Extensions, GeneralName, Name, RelativeDistinguishedName, SubjectAlternativeName, SubjectPublicKeyInfo, AlgorithmIdentifier, id_ce_subjectAltName } from '@peculiar/asn1-x509';
import { Attributes, CertificationRequest, CertificationRequestInfo } from '@peculiar/asn1-csr';
import * as asn1js from 'asn1js';
import { DomainError } from '../../domain/errors.js';
import {
  CERTIFICATE_TEMPLATE_NAMES,
  egsUnitDecider,
  signerDecider,
  ZatcaEgsErrorCodes,
  zatcaEgsUnitStream,
  zatcaSellerSignerStream,
  ZatcaEgsUnitRegistered,
  type CertificateFacts,
  type CsrSubject,
  type EgsKey,
  type EgsUnit,
  type ZatcaEgsEnvironment,
} from '../../domain/zatca/egs-unit.js';
import { csidRenewalDue } from '../../domain/zatca/stamp.js';
import { START, type EventStore } from '../../platform/eventstore/port.js';
import { execute, loadAggregate, type CommandContext } from '../execute.js';
import type { SecretBox } from '../webhooks/secrets.js';

import { secretBox } from '../webhooks/secrets.js';
import type { Config } from '../../platform/config.js';

/**
 * The box that seals the units' private keys and CSID secrets: AES-256-GCM under the service's
 * secret-encryption key (WEBHOOK_SECRET_ENCRYPTION_KEY; its public development key when unset),
 * each value bound to its unit. Every entry point (delivery, the admin CLI) must use this one.
 */
export const egsSecretBox = (config: Pick<Config, 'webhooks'>): SecretBox => secretBox(config.webhooks.secretEncryptionKey);
export type { EgsUnit, EgsKey, CsrSubject, ZatcaEgsEnvironment };

export interface EgsUnitDeps {
  store: EventStore;
  /** Seals private keys and CSID secrets before they enter the log, and opens them. */
  secrets: SecretBox;
}

export interface RegisterEgsUnitInput {
  /** The unit's id: its stream's name; the `3-…` part of the serial number is a good choice. */
  egsUnitId: string;
  workspaceId: string;
  environment: ZatcaEgsEnvironment;
  sellerVat: string;
  subject: CsrSubject;
}

/** What ZATCA's CSID APIs answer: the certificate (binarySecurityToken), the secret, the request id. */
export interface CsidAnswer {
  keyId: number;
  binarySecurityToken: string;
  secret: string;
  requestId: string;
}

export interface SigningMaterial {
  egsUnitId: string;
  keyId: number;
  privateKey: KeyObject;
  /** The certificate, base64 DER (the body of its PEM). */
  certificate: string;
  x509: X509Certificate;
}

const keyAad = (egsUnitId: string) => `zatcaegs:${egsUnitId}:private-key`;
const secretAad = (egsUnitId: string, kind: 'compliance' | 'production') => `zatcaegs:${egsUnitId}:${kind}-csid-secret`;

const OID = {
  commonName: '2.5.4.3',
  surname: '2.5.4.4', // "SN" of ZATCA's SAN: the EGS serial number 1-…|2-…|3-…
  country: '2.5.4.6',
  organization: '2.5.4.10',
  organizationUnit: '2.5.4.11',
  title: '2.5.4.12',
  businessCategory: '2.5.4.15',
  registeredAddress: '2.5.4.26',
  userId: '0.9.2342.19200300.100.1.1',
  certificateTemplateName: '1.3.6.1.4.1.311.20.2',
  extensionRequest: '1.2.840.113549.1.9.14',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
} as const;

export async function loadEgsUnit(store: EventStore, egsUnitId: string): Promise<EgsUnit | null> {
  return (await loadAggregate(store, egsUnitDecider, zatcaEgsUnitStream(egsUnitId))).state.unit;
}

async function mustLoad(store: EventStore, egsUnitId: string): Promise<EgsUnit> {
  const unit = await loadEgsUnit(store, egsUnitId);
  if (!unit) throw new DomainError('not_found', ZatcaEgsErrorCodes.notFound, `no EGS unit ${egsUnitId}`, ['egsUnitId']);
  return unit;
}

const ctxFor = (ctx: CommandContext, unit: { workspaceId: string; environment: string } | null): CommandContext =>
  unit ? { ...ctx, workspaceId: ctx.workspaceId ?? unit.workspaceId, environment: ctx.environment ?? unit.environment } : ctx;

export async function registerEgsUnit(deps: EgsUnitDeps, input: RegisterEgsUnitInput, ctx: CommandContext): Promise<EgsUnit> {
  const result = await execute(deps.store, egsUnitDecider, zatcaEgsUnitStream(input.egsUnitId), { type: 'RegisterEgsUnit', ...input, now: ctx.now.toISOString() }, ctxFor(ctx, input));
  return result.state.unit!;
}

/** A new key pair on secp256k1: the unit's pending key (onboarding, or a renewal of a unit in production). */
export async function generateEgsKey(deps: EgsUnitDeps, egsUnitId: string, ctx: CommandContext): Promise<{ keyId: number; publicKeyPem: string }> {
  const unit = await mustLoad(deps.store, egsUnitId);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privateKeySealed = deps.secrets.seal(keyAad(egsUnitId), privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const result = await execute(deps.store, egsUnitDecider, zatcaEgsUnitStream(egsUnitId), { type: 'AddKey', publicKeyPem, privateKeySealed, now: ctx.now.toISOString() }, ctxFor(ctx, unit));
  return { keyId: result.state.unit!.pendingKeyId!, publicKeyPem };
}

const utf8 = (value: string) => new AttributeValue({ utf8String: value });
const rdn = (type: string, value: AttributeValue) => new RelativeDistinguishedName([new AttributeTypeAndValue({ type, value })]);

/**
 * The PKCS#10 request of a unit's key, as ZATCA's onboarding asks for it: subject C, OU, O, CN;
 * extensions: the certificate template name (by environment) and a subject alternative name
 * holding a directory name with SN (the EGS serial number), UID (the VAT number), title (the
 * invoice types), registeredAddress and businessCategory. Signed ECDSA with SHA-256.
 */
export function buildCsr(unit: Pick<EgsUnit, 'environment' | 'sellerVat' | 'subject'>, privateKey: KeyObject, publicKeyPem: string): string {
  const s = unit.subject;
  const subject = new Name([
    rdn(OID.country, new AttributeValue({ printableString: s.country })),
    rdn(OID.organizationUnit, utf8(s.organizationUnit)),
    rdn(OID.organization, utf8(s.organizationName)),
    rdn(OID.commonName, utf8(s.commonName)),
  ]);
  const altName = new Name([
    rdn(OID.surname, utf8(s.serialNumber)),
    rdn(OID.userId, utf8(unit.sellerVat)),
    rdn(OID.title, utf8(s.invoiceType)),
    rdn(OID.registeredAddress, utf8(s.location)),
    rdn(OID.businessCategory, utf8(s.industry)),
  ]);
  const templateName = new asn1js.PrintableString({ value: CERTIFICATE_TEMPLATE_NAMES[unit.environment] }).toBER(false);
  const extensions = new Extensions([
    new Extension({ extnID: OID.certificateTemplateName, critical: false, extnValue: new OctetString(templateName) }),
    new Extension({ extnID: id_ce_subjectAltName, critical: false, extnValue: new OctetString(AsnConvert.serialize(new SubjectAlternativeName([new GeneralName({ directoryName: altName })]))) }),
  ]);
  const spkiDer = Buffer.from(publicKeyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const info = new CertificationRequestInfo({
    version: 0,
    subject,
    subjectPKInfo: AsnConvert.parse(spkiDer, SubjectPublicKeyInfo),
    attributes: new Attributes([new Attribute({ type: OID.extensionRequest, values: [AsnConvert.serialize(extensions)] })]),
  });
  const infoDer = Buffer.from(AsnConvert.serialize(info));
  const signature = sign('sha256', infoDer, privateKey);
  const request = new CertificationRequest({
    certificationRequestInfo: info,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: OID.ecdsaWithSha256 }),
    signature: new Uint8Array(signature).buffer,
  });
  const der = Buffer.from(AsnConvert.serialize(request));
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${body}\n-----END CERTIFICATE REQUEST-----\n`;
}

function openKey(deps: EgsUnitDeps, unit: EgsUnit, key: EgsKey): KeyObject {
  return createPrivateKey(deps.secrets.open(keyAad(unit.egsUnitId), key.privateKeySealed));
}

/** The CSR of the unit's pending key (the same CSR again when it has one). */
export async function createEgsCsr(deps: EgsUnitDeps, egsUnitId: string, ctx: CommandContext): Promise<{ keyId: number; csrPem: string; csrBase64: string }> {
  const unit = await mustLoad(deps.store, egsUnitId);
  const key = unit.pendingKeyId === null ? null : unit.keys.find((k) => k.keyId === unit.pendingKeyId)!;
  if (!key) throw new DomainError('conflict', ZatcaEgsErrorCodes.wrongStep, `the EGS unit ${egsUnitId} has no key being onboarded: generate a key first`, ['egsUnitId']);
  const csrPem = key.csrPem ?? buildCsr(unit, openKey(deps, unit, key), key.publicKeyPem);
  await execute(deps.store, egsUnitDecider, zatcaEgsUnitStream(egsUnitId), { type: 'RecordCsr', keyId: key.keyId, csrPem, now: ctx.now.toISOString() }, ctxFor(ctx, unit));
  return { keyId: key.keyId, csrPem, csrBase64: Buffer.from(csrPem, 'utf8').toString('base64') };
}

/**
 * The certificate of a binarySecurityToken: ZATCA's APIs answer the base64 of the certificate's
 * base64 DER; a plain base64 DER or a PEM is taken as well.
 */
export function certificateOfToken(token: string): CertificateFacts & { x509: X509Certificate } {
  const trimmed = token.trim();
  let base64Der = trimmed.replace(/-----[^-]+-----|\s/g, '');
  const decoded = Buffer.from(base64Der, 'base64').toString('latin1');
  if (/^MII[A-Za-z0-9+/=\s]+$/.test(decoded)) base64Der = decoded.replace(/\s/g, '');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(Buffer.from(base64Der, 'base64'));
  } catch {
    throw new DomainError('validation', ZatcaEgsErrorCodes.validation, 'the binarySecurityToken is not a certificate', ['binarySecurityToken']);
  }
  return {
    certificate: base64Der,
    publicKeyPem: x509.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    notAfter: new Date(x509.validTo).toISOString(),
    x509,
  };
}

function checkAnswer(answer: CsidAnswer): void {
  for (const field of ['binarySecurityToken', 'secret', 'requestId'] as const) {
    if (typeof answer[field] !== 'string' || answer[field] === '') throw new DomainError('validation', ZatcaEgsErrorCodes.validation, `${field} is required`, [field]);
  }
}

export async function recordComplianceCsid(deps: EgsUnitDeps, egsUnitId: string, answer: CsidAnswer, ctx: CommandContext): Promise<EgsUnit> {
  checkAnswer(answer);
  const unit = await mustLoad(deps.store, egsUnitId);
  const { x509: _x, ...cert } = certificateOfToken(answer.binarySecurityToken);
  const secretSealed = deps.secrets.seal(secretAad(egsUnitId, 'compliance'), answer.secret);
  const result = await execute(
    deps.store,
    egsUnitDecider,
    zatcaEgsUnitStream(egsUnitId),
    { type: 'RecordComplianceCsid', keyId: answer.keyId, cert, secretSealed, requestId: answer.requestId, now: ctx.now.toISOString() },
    ctxFor(ctx, unit),
  );
  return result.state.unit!;
}

export async function recordComplianceChecksPassed(deps: EgsUnitDeps, egsUnitId: string, keyId: number, ctx: CommandContext): Promise<EgsUnit> {
  const unit = await mustLoad(deps.store, egsUnitId);
  const result = await execute(deps.store, egsUnitDecider, zatcaEgsUnitStream(egsUnitId), { type: 'RecordComplianceChecksPassed', keyId, now: ctx.now.toISOString() }, ctxFor(ctx, unit));
  return result.state.unit!;
}

/**
 * The production CSID (onboarding) or a renewed one (a unit in production): its key signs from
 * now on, and the unit becomes the signer of its seller's invoices in its workspace and
 * environment. Recording the same answer again changes nothing, so a retry after a crash
 * between the two appends completes the second.
 */
export async function recordProductionCsid(deps: EgsUnitDeps, egsUnitId: string, answer: CsidAnswer, ctx: CommandContext): Promise<EgsUnit> {
  checkAnswer(answer);
  const unit = await mustLoad(deps.store, egsUnitId);
  const { x509: _x, ...cert } = certificateOfToken(answer.binarySecurityToken);
  const secretSealed = deps.secrets.seal(secretAad(egsUnitId, 'production'), answer.secret);
  const now = ctx.now.toISOString();
  const result = await execute(
    deps.store,
    egsUnitDecider,
    zatcaEgsUnitStream(egsUnitId),
    { type: 'RecordProductionCsid', keyId: answer.keyId, cert, secretSealed, requestId: answer.requestId, now },
    ctxFor(ctx, unit),
  );
  const u = result.state.unit!;
  await execute(
    deps.store,
    signerDecider,
    zatcaSellerSignerStream(u.workspaceId, u.environment, u.sellerVat),
    { type: 'SelectSigningUnit', egsUnitId, workspaceId: u.workspaceId, environment: u.environment, sellerVat: u.sellerVat, now },
    ctxFor(ctx, u),
  );
  return u;
}

export async function revokeEgsUnit(deps: EgsUnitDeps, egsUnitId: string, reason: string | null, ctx: CommandContext): Promise<EgsUnit> {
  const unit = await mustLoad(deps.store, egsUnitId);
  const result = await execute(deps.store, egsUnitDecider, zatcaEgsUnitStream(egsUnitId), { type: 'RevokeEgsUnit', reason, now: ctx.now.toISOString() }, ctxFor(ctx, unit));
  return result.state.unit!;
}

/** The key holding a CSID of that kind: the pending key's compliance CSID, or the active key's production one. */
function keyWith(unit: EgsUnit, kind: 'compliance' | 'production'): EgsKey | null {
  if (unit.revokedAt) return null;
  const keyId = kind === 'production' ? unit.activeKeyId : unit.pendingKeyId;
  const key = keyId === null ? null : unit.keys.find((k) => k.keyId === keyId)!;
  if (!key) return null;
  return (kind === 'production' ? key.productionCsid : key.complianceCsid) ? key : null;
}

/**
 * The basic-authentication credentials of the unit's compliance or production CSID (user name:
 * the binarySecurityToken as the API issued it, i.e. the base64 of the certificate's base64 DER;
 * password: the secret), or null when the unit holds none.
 */
export function csidCredentials(deps: Pick<EgsUnitDeps, 'secrets'>, unit: EgsUnit, kind: 'compliance' | 'production'): { username: string; password: string } | null {
  const key = keyWith(unit, kind);
  if (!key) return null;
  const csid = kind === 'production' ? key.productionCsid! : key.complianceCsid!;
  return { username: Buffer.from(csid.certificate, 'latin1').toString('base64'), password: deps.secrets.open(secretAad(unit.egsUnitId, kind), csid.secretSealed) };
}

/** The private key and certificate that stamp invoices: compliance (for the compliance checks) or production. */
export function signingMaterial(deps: Pick<EgsUnitDeps, 'secrets'>, unit: EgsUnit, kind: 'compliance' | 'production'): SigningMaterial | null {
  const key = keyWith(unit, kind);
  if (!key) return null;
  const certificate = (kind === 'production' ? key.productionCsid! : key.complianceCsid!).certificate;
  return { egsUnitId: unit.egsUnitId, keyId: key.keyId, privateKey: openKey(deps as EgsUnitDeps, unit, key), certificate, x509: new X509Certificate(Buffer.from(certificate, 'base64')) };
}

/** The production signing material of the unit that signs a seller's invoices, or null (no unit, or not in production). */
export async function sellerSigningMaterial(
  deps: EgsUnitDeps,
  seller: { workspaceId: string; environment: string; sellerVat: string },
): Promise<SigningMaterial | null> {
  const signer = await loadAggregate(deps.store, signerDecider, zatcaSellerSignerStream(seller.workspaceId, seller.environment, seller.sellerVat));
  if (!signer.state.egsUnitId) return null;
  const unit = await loadEgsUnit(deps.store, signer.state.egsUnitId);
  return unit ? signingMaterial(deps, unit, 'production') : null;
}

/** The ids of every registered EGS unit, in registration order (a read of the whole log: an admin query). */
export async function listEgsUnitIds(store: EventStore, pageSize = 5000): Promise<string[]> {
  const ids: string[] = [];
  let after = START;
  for (;;) {
    const page = await store.readAll(after, pageSize);
    if (page.length === 0) return ids;
    for (const e of page) if (e.type === ZatcaEgsUnitRegistered.type) ids.push((e.data as { egsUnitId: string }).egsUnitId);
    after = page[page.length - 1]!.position;
  }
}

export interface ExpiringCsid {
  egsUnitId: string;
  workspaceId: string;
  environment: string;
  sellerVat: string;
  keyId: number;
  requestId: string;
  notAfter: string;
  expired: boolean;
  daysLeft: number;
}

/**
 * The units (not revoked) whose active production CSID expires within `withinDays` of `now`, or
 * has expired: the ones to renew (`admin zatca renew`). Soonest first.
 */
export async function expiringProductionCsids(store: EventStore, now: Date, withinDays: number): Promise<ExpiringCsid[]> {
  const out: ExpiringCsid[] = [];
  for (const id of await listEgsUnitIds(store)) {
    const unit = await loadEgsUnit(store, id);
    const key = unit ? keyWith(unit, 'production') : null;
    if (!unit || !key) continue;
    const csid = key.productionCsid!;
    const due = csidRenewalDue(csid.notAfter, now, withinDays);
    if (!due) continue;
    out.push({ egsUnitId: unit.egsUnitId, workspaceId: unit.workspaceId, environment: unit.environment, sellerVat: unit.sellerVat, keyId: key.keyId, requestId: csid.requestId, notAfter: csid.notAfter, ...due });
  }
  return out.sort((a, b) => a.notAfter.localeCompare(b.notAfter));
}
