/**
 * A ZATCA EGS unit (the e-invoice generation solution unit of a Saudi seller, one per company or
 * branch) as an aggregate in its own stream `zatcaegs-<egsUnitId>`: registered with the subject
 * of its certificate signing request, then its key pair, its CSR, the compliance CSID, the
 * compliance checks, the production CSID; renewed (a new key, CSR and CSID while the current one
 * keeps signing; earlier keys and certificates stay in the stream for verification) and revoked.
 *
 * Private keys and CSID secrets are sealed before they reach a command (AES-256-GCM, as webhook
 * signing secrets are): the log holds only sealed values. Certificates are base64 DER. Pure: key
 * generation, CSR signing and certificate parsing happen in commands/zatca/egs-units.ts, which
 * hands the decider the facts (the certificate's public key, its expiry) to check.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { oneOf } from '../connect/values.js';

export const ZATCA_EGS_ENVIRONMENTS = ['sandbox', 'simulation', 'production'] as const;
export type ZatcaEgsEnvironment = (typeof ZATCA_EGS_ENVIRONMENTS)[number];

/**
 * The certificate template name a CSR asks for (extension 1.3.6.1.4.1.311.20.2): ZATCA's
 * developer portal, its simulation and its production (core) environment.
 */
export const CERTIFICATE_TEMPLATE_NAMES: Readonly<Record<ZatcaEgsEnvironment, string>> = {
  sandbox: 'TSTZATCA-Code-Signing',
  simulation: 'PREZATCA-Code-Signing',
  production: 'ZATCA-Code-Signing',
};

export const ZatcaEgsErrorCodes = {
  validation: 'ZATCA_EGS_VALIDATION',
  notFound: 'ZATCA_EGS_NOT_FOUND',
  exists: 'ZATCA_EGS_EXISTS',
  wrongStep: 'ZATCA_EGS_WRONG_STEP',
  keyMismatch: 'ZATCA_EGS_CERTIFICATE_KEY_MISMATCH',
  revoked: 'ZATCA_EGS_REVOKED',
} as const;

export const zatcaEgsUnitStream = (egsUnitId: string) => `zatcaegs-${egsUnitId}`;

/** The stream that names the unit signing a seller's invoices in a workspace and environment. */
export const zatcaSellerSignerStream = (workspaceId: string, environment: string, sellerVat: string) =>
  `zatcasigner-${createHash('sha256').update(`${workspaceId}\n${environment}\n${sellerVat}`).digest('hex')}`;

/** The subject of the unit's CSR, as ZATCA's onboarding asks for it. */
const CsrSubject = t.type({
  /** CN: the unit's common name (e.g. `TST-886431145-399999999900003`). */
  commonName: t.string,
  /** SN of the SAN directory name: `1-<solution name>|2-<model or version>|3-<serial, a UUID>`. */
  serialNumber: t.string,
  /** OU: the branch name, or for a VAT group the member's 10-digit TIN. */
  organizationUnit: t.string,
  /** O: the taxpayer's name. */
  organizationName: t.string,
  /** C: always SA. */
  country: t.literal('SA'),
  /** title: four digits `TSCZ`: standard (1000), simplified (0100), the other two reserved. */
  invoiceType: t.string,
  /** registeredAddress: the branch's address. */
  location: t.string,
  /** businessCategory: the industry or sector. */
  industry: t.string,
});
export type CsrSubject = t.TypeOf<typeof CsrSubject>;

const nullableString = t.union([t.string, t.null]);

export const ZatcaEgsUnitRegistered = defineEvent({
  type: 'ZatcaEgsUnitRegistered',
  version: 1,
  codec: t.type({
    egsUnitId: t.string,
    workspaceId: t.string,
    environment: oneOf(ZATCA_EGS_ENVIRONMENTS, 'ZatcaEgsEnvironment'),
    /** The seller's VAT registration number (15 digits, the CSR's UID). */
    sellerVat: t.string,
    subject: CsrSubject,
    registeredAt: t.string,
  }),
});

/** A key pair on secp256k1; `keyId` numbers the unit's keys from 1. */
export const ZatcaEgsKeyGenerated = defineEvent({
  type: 'ZatcaEgsKeyGenerated',
  version: 1,
  codec: t.type({ egsUnitId: t.string, keyId: t.number, publicKeyPem: t.string, privateKeySealed: t.string, generatedAt: t.string }),
});

export const ZatcaEgsCsrCreated = defineEvent({
  type: 'ZatcaEgsCsrCreated',
  version: 1,
  codec: t.type({ egsUnitId: t.string, keyId: t.number, csrPem: t.string, createdAt: t.string }),
});

const CsidFields = t.type({
  egsUnitId: t.string,
  keyId: t.number,
  /** The certificate (the API's binarySecurityToken), base64 DER. */
  certificate: t.string,
  /** The CSID's secret (the API's basic-authentication password), sealed. */
  secretSealed: t.string,
  requestId: t.string,
  notAfter: t.string,
  recordedAt: t.string,
});
export type CsidRecord = t.TypeOf<typeof CsidFields>;

export const ZatcaEgsComplianceCsidRecorded = defineEvent({ type: 'ZatcaEgsComplianceCsidRecorded', version: 1, codec: CsidFields });

export const ZatcaEgsComplianceChecksPassed = defineEvent({
  type: 'ZatcaEgsComplianceChecksPassed',
  version: 1,
  codec: t.type({ egsUnitId: t.string, keyId: t.number, passedAt: t.string }),
});

export const ZatcaEgsProductionCsidRecorded = defineEvent({ type: 'ZatcaEgsProductionCsidRecorded', version: 1, codec: CsidFields });

/** A renewal's new production CSID: its key signs from now on; the earlier key stays for verification. */
export const ZatcaEgsCsidRenewed = defineEvent({
  type: 'ZatcaEgsCsidRenewed',
  version: 1,
  codec: t.intersection([CsidFields, t.type({ previousKeyId: t.number })]),
});

export const ZatcaEgsUnitRevoked = defineEvent({
  type: 'ZatcaEgsUnitRevoked',
  version: 1,
  codec: t.type({ egsUnitId: t.string, reason: nullableString, revokedAt: t.string }),
});

type Data<D> = D extends { codec: t.Type<infer A, unknown, unknown> } ? A : never;

export type EgsUnitEvent =
  | DomainEvent<'ZatcaEgsUnitRegistered', Data<typeof ZatcaEgsUnitRegistered>>
  | DomainEvent<'ZatcaEgsKeyGenerated', Data<typeof ZatcaEgsKeyGenerated>>
  | DomainEvent<'ZatcaEgsCsrCreated', Data<typeof ZatcaEgsCsrCreated>>
  | DomainEvent<'ZatcaEgsComplianceCsidRecorded', Data<typeof ZatcaEgsComplianceCsidRecorded>>
  | DomainEvent<'ZatcaEgsComplianceChecksPassed', Data<typeof ZatcaEgsComplianceChecksPassed>>
  | DomainEvent<'ZatcaEgsProductionCsidRecorded', Data<typeof ZatcaEgsProductionCsidRecorded>>
  | DomainEvent<'ZatcaEgsCsidRenewed', Data<typeof ZatcaEgsCsidRenewed>>
  | DomainEvent<'ZatcaEgsUnitRevoked', Data<typeof ZatcaEgsUnitRevoked>>;

/** One key of the unit and what it has been given. */
export interface EgsKey {
  keyId: number;
  publicKeyPem: string;
  privateKeySealed: string;
  generatedAt: string;
  csrPem: string | null;
  complianceCsid: CsidRecord | null;
  complianceChecksPassedAt: string | null;
  productionCsid: CsidRecord | null;
}

export interface EgsUnit {
  egsUnitId: string;
  workspaceId: string;
  environment: ZatcaEgsEnvironment;
  sellerVat: string;
  subject: CsrSubject;
  registeredAt: string;
  /** Every key, oldest first (earlier keys stay for verifying what they signed). */
  keys: EgsKey[];
  /** The key whose production CSID signs invoices; null before onboarding ends. */
  activeKeyId: number | null;
  /** The key being onboarded or renewed (not yet holding a production CSID). */
  pendingKeyId: number | null;
  revokedAt: string | null;
}

export interface EgsUnitState {
  unit: EgsUnit | null;
}

/** What a certificate says, read by the command layer (domain code parses no DER). */
export interface CertificateFacts {
  /** The certificate, base64 DER. */
  certificate: string;
  /** The certificate's subject public key, SPKI PEM. */
  publicKeyPem: string;
  notAfter: string;
}

export type EgsUnitCommand =
  | {
      type: 'RegisterEgsUnit';
      egsUnitId: string;
      workspaceId: string;
      environment: ZatcaEgsEnvironment;
      sellerVat: string;
      subject: CsrSubject;
      now: string;
    }
  | { type: 'AddKey'; publicKeyPem: string; privateKeySealed: string; now: string }
  | { type: 'RecordCsr'; keyId: number; csrPem: string; now: string }
  | { type: 'RecordComplianceCsid'; keyId: number; cert: CertificateFacts; secretSealed: string; requestId: string; now: string }
  | { type: 'RecordComplianceChecksPassed'; keyId: number; now: string }
  | { type: 'RecordProductionCsid'; keyId: number; cert: CertificateFacts; secretSealed: string; requestId: string; now: string }
  | { type: 'RevokeEgsUnit'; reason: string | null; now: string };

const fail = (kind: 'validation' | 'not_found' | 'conflict' | 'precondition', code: string, message: string, path: string[] = []): never => {
  throw new DomainError(kind, code, message, path);
};

const VAT = /^3\d{13}3$/;
const SERIAL = /^1-[^|]+\|2-[^|]+\|3-[^|]+$/;
const INVOICE_TYPE = /^[01]{4}$/;

/** The problems of a unit's registration, by field (empty when it is valid). */
export function registrationProblems(sellerVat: string, subject: CsrSubject): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  if (!VAT.test(sellerVat)) problems.push({ path: ['sellerVat'], message: 'a Saudi VAT registration number is 15 digits starting and ending with 3' });
  for (const [field, value] of Object.entries(subject)) {
    if (typeof value !== 'string' || value.trim() === '') problems.push({ path: ['subject', field], message: `${field} is required` });
    else if (value.length > 200) problems.push({ path: ['subject', field], message: `${field} is at most 200 characters` });
  }
  if (subject.country !== 'SA') problems.push({ path: ['subject', 'country'], message: 'the country of an EGS unit is SA' });
  if (!SERIAL.test(subject.serialNumber)) {
    problems.push({ path: ['subject', 'serialNumber'], message: 'the serial number reads 1-<solution name>|2-<model or version>|3-<serial number>' });
  }
  if (!INVOICE_TYPE.test(subject.invoiceType) || subject.invoiceType.slice(0, 2) === '00') {
    problems.push({ path: ['subject', 'invoiceType'], message: 'the invoice type is four digits 0 or 1 (standard, simplified, reserved, reserved), at least one of the first two 1' });
  }
  return problems;
}

function live(state: EgsUnitState): EgsUnit {
  const u = state.unit;
  if (!u) return fail('not_found', ZatcaEgsErrorCodes.notFound, 'no EGS unit with that id');
  if (u.revokedAt) return fail('conflict', ZatcaEgsErrorCodes.revoked, `the EGS unit ${u.egsUnitId} was revoked`);
  return u;
}

function pendingKey(u: EgsUnit, keyId: number): EgsKey {
  if (u.pendingKeyId !== keyId) {
    return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${keyId} is not the key being onboarded (${u.pendingKeyId === null ? 'none is' : `key ${u.pendingKeyId} is`})`, ['keyId']);
  }
  return u.keys.find((k) => k.keyId === keyId)!;
}

const samePem = (a: string, b: string) => a.replace(/\s+/g, '') === b.replace(/\s+/g, '');

function checkCertificate(key: EgsKey, cert: CertificateFacts): void {
  if (!samePem(key.publicKeyPem, cert.publicKeyPem)) {
    fail('validation', ZatcaEgsErrorCodes.keyMismatch, `the certificate does not hold the public key of key ${key.keyId}`, ['certificate']);
  }
}

export function decideEgsUnit(command: EgsUnitCommand, state: EgsUnitState): EgsUnitEvent[] {
  switch (command.type) {
    case 'RegisterEgsUnit': {
      const { type: _t, now, ...fields } = command;
      if (state.unit) {
        const u = state.unit;
        // The same registration again (a retried request) changes nothing.
        const same = u.workspaceId === fields.workspaceId && u.environment === fields.environment && u.sellerVat === fields.sellerVat && JSON.stringify(u.subject) === JSON.stringify(fields.subject);
        if (same) return [];
        return fail('conflict', ZatcaEgsErrorCodes.exists, `the EGS unit ${u.egsUnitId} is registered already, with other details`);
      }
      const problems = registrationProblems(fields.sellerVat, fields.subject);
      if (problems.length > 0) fail('validation', ZatcaEgsErrorCodes.validation, problems[0]!.message, problems[0]!.path);
      return [{ type: 'ZatcaEgsUnitRegistered', data: { ...fields, registeredAt: now } }];
    }
    case 'AddKey': {
      const u = live(state);
      const keyId = (u.keys[u.keys.length - 1]?.keyId ?? 0) + 1;
      return [{ type: 'ZatcaEgsKeyGenerated', data: { egsUnitId: u.egsUnitId, keyId, publicKeyPem: command.publicKeyPem, privateKeySealed: command.privateKeySealed, generatedAt: command.now } }];
    }
    case 'RecordCsr': {
      const u = live(state);
      const key = pendingKey(u, command.keyId);
      if (key.csrPem !== null) {
        if (samePem(key.csrPem, command.csrPem)) return [];
        return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${key.keyId} has a CSR already; generate a new key for another`, ['keyId']);
      }
      return [{ type: 'ZatcaEgsCsrCreated', data: { egsUnitId: u.egsUnitId, keyId: key.keyId, csrPem: command.csrPem, createdAt: command.now } }];
    }
    case 'RecordComplianceCsid': {
      const u = live(state);
      const key = pendingKey(u, command.keyId);
      if (key.csrPem === null) return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${key.keyId} has no CSR yet`, ['keyId']);
      if (key.complianceCsid) {
        if (key.complianceCsid.requestId === command.requestId && key.complianceCsid.certificate === command.cert.certificate) return [];
        return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${key.keyId} has a compliance CSID already`, ['keyId']);
      }
      if (u.activeKeyId !== null) return fail('conflict', ZatcaEgsErrorCodes.wrongStep, 'a unit in production renews its CSID without a compliance CSID', ['keyId']);
      checkCertificate(key, command.cert);
      return [
        {
          type: 'ZatcaEgsComplianceCsidRecorded',
          data: { egsUnitId: u.egsUnitId, keyId: key.keyId, certificate: command.cert.certificate, secretSealed: command.secretSealed, requestId: command.requestId, notAfter: command.cert.notAfter, recordedAt: command.now },
        },
      ];
    }
    case 'RecordComplianceChecksPassed': {
      const u = live(state);
      const key = pendingKey(u, command.keyId);
      if (!key.complianceCsid) return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${key.keyId} has no compliance CSID yet`, ['keyId']);
      if (key.complianceChecksPassedAt) return [];
      return [{ type: 'ZatcaEgsComplianceChecksPassed', data: { egsUnitId: u.egsUnitId, keyId: key.keyId, passedAt: command.now } }];
    }
    case 'RecordProductionCsid': {
      const u = live(state);
      const recorded = u.keys.find((k) => k.keyId === command.keyId)?.productionCsid;
      if (recorded) {
        if (recorded.requestId === command.requestId && recorded.certificate === command.cert.certificate) return [];
        return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${command.keyId} has a production CSID already`, ['keyId']);
      }
      const key = pendingKey(u, command.keyId);
      if (key.csrPem === null) return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${key.keyId} has no CSR yet`, ['keyId']);
      checkCertificate(key, command.cert);
      const fields = { egsUnitId: u.egsUnitId, keyId: key.keyId, certificate: command.cert.certificate, secretSealed: command.secretSealed, requestId: command.requestId, notAfter: command.cert.notAfter, recordedAt: command.now };
      if (u.activeKeyId === null) {
        if (!key.complianceChecksPassedAt) return fail('conflict', ZatcaEgsErrorCodes.wrongStep, `key ${key.keyId} has not passed the compliance checks`, ['keyId']);
        return [{ type: 'ZatcaEgsProductionCsidRecorded', data: fields }];
      }
      return [{ type: 'ZatcaEgsCsidRenewed', data: { ...fields, previousKeyId: u.activeKeyId } }];
    }
    case 'RevokeEgsUnit': {
      const u = state.unit;
      if (!u) return fail('not_found', ZatcaEgsErrorCodes.notFound, 'no EGS unit with that id');
      if (u.revokedAt) return [];
      return [{ type: 'ZatcaEgsUnitRevoked', data: { egsUnitId: u.egsUnitId, reason: command.reason, revokedAt: command.now } }];
    }
  }
}

const withKey = (u: EgsUnit, keyId: number, change: (k: EgsKey) => EgsKey): EgsUnit => ({ ...u, keys: u.keys.map((k) => (k.keyId === keyId ? change(k) : k)) });

export function evolveEgsUnit(state: EgsUnitState, event: EgsUnitEvent): EgsUnitState {
  const u = state.unit;
  if (event.type === 'ZatcaEgsUnitRegistered') {
    const { registeredAt, ...d } = event.data;
    return { unit: { ...d, registeredAt, keys: [], activeKeyId: null, pendingKeyId: null, revokedAt: null } };
  }
  if (!u) return state;
  switch (event.type) {
    case 'ZatcaEgsKeyGenerated': {
      const d = event.data;
      const key: EgsKey = { keyId: d.keyId, publicKeyPem: d.publicKeyPem, privateKeySealed: d.privateKeySealed, generatedAt: d.generatedAt, csrPem: null, complianceCsid: null, complianceChecksPassedAt: null, productionCsid: null };
      return { unit: { ...u, keys: [...u.keys, key], pendingKeyId: d.keyId } };
    }
    case 'ZatcaEgsCsrCreated':
      return { unit: withKey(u, event.data.keyId, (k) => ({ ...k, csrPem: event.data.csrPem })) };
    case 'ZatcaEgsComplianceCsidRecorded':
      return { unit: withKey(u, event.data.keyId, (k) => ({ ...k, complianceCsid: event.data })) };
    case 'ZatcaEgsComplianceChecksPassed':
      return { unit: withKey(u, event.data.keyId, (k) => ({ ...k, complianceChecksPassedAt: event.data.passedAt })) };
    case 'ZatcaEgsProductionCsidRecorded':
      return { unit: { ...withKey(u, event.data.keyId, (k) => ({ ...k, productionCsid: event.data })), activeKeyId: event.data.keyId, pendingKeyId: null } };
    case 'ZatcaEgsCsidRenewed': {
      const { previousKeyId: _p, ...csid } = event.data;
      return { unit: { ...withKey(u, csid.keyId, (k) => ({ ...k, productionCsid: csid })), activeKeyId: csid.keyId, pendingKeyId: null } };
    }
    case 'ZatcaEgsUnitRevoked':
      return { unit: { ...u, revokedAt: event.data.revokedAt } };
  }
}

/** Where the unit stands, for operators and the admin CLI. */
export function egsUnitStep(u: EgsUnit): 'revoked' | 'active' | 'registered' | 'key_generated' | 'csr_created' | 'compliance_csid' | 'compliance_checked' {
  if (u.revokedAt) return 'revoked';
  if (u.activeKeyId !== null) return 'active';
  const key = u.pendingKeyId === null ? null : u.keys.find((k) => k.keyId === u.pendingKeyId)!;
  if (!key) return 'registered';
  if (key.complianceChecksPassedAt) return 'compliance_checked';
  if (key.complianceCsid) return 'compliance_csid';
  if (key.csrPem) return 'csr_created';
  return 'key_generated';
}

export const egsUnitDecider: Decider<EgsUnitCommand, EgsUnitState, EgsUnitEvent> = {
  category: 'zatcaegs',
  initialState: { unit: null },
  events: {
    ZatcaEgsUnitRegistered,
    ZatcaEgsKeyGenerated,
    ZatcaEgsCsrCreated,
    ZatcaEgsComplianceCsidRecorded,
    ZatcaEgsComplianceChecksPassed,
    ZatcaEgsProductionCsidRecorded,
    ZatcaEgsCsidRenewed,
    ZatcaEgsUnitRevoked,
  },
  decide: decideEgsUnit,
  evolve: evolveEgsUnit,
};

registerDecider(egsUnitDecider);

/**
 * The seller's signing unit (stream `zatcasigner-…`): which EGS unit signs a seller's invoices
 * in a workspace and environment. Set when a unit's production CSID is recorded.
 */
export const ZatcaSigningUnitSelected = defineEvent({
  type: 'ZatcaSigningUnitSelected',
  version: 1,
  codec: t.type({ egsUnitId: t.string, workspaceId: t.string, environment: t.string, sellerVat: t.string, selectedAt: t.string }),
});
export type SignerEvent = DomainEvent<'ZatcaSigningUnitSelected', Data<typeof ZatcaSigningUnitSelected>>;
export interface SignerState {
  egsUnitId: string | null;
}
export type SignerCommand = { type: 'SelectSigningUnit'; egsUnitId: string; workspaceId: string; environment: string; sellerVat: string; now: string };

export const signerDecider: Decider<SignerCommand, SignerState, SignerEvent> = {
  category: 'zatcasigner',
  initialState: { egsUnitId: null },
  events: { ZatcaSigningUnitSelected },
  decide(command, state) {
    if (state.egsUnitId === command.egsUnitId) return [];
    const { type: _t, now, ...fields } = command;
    return [{ type: 'ZatcaSigningUnitSelected', data: { ...fields, selectedAt: now } }];
  },
  evolve: (_state, event) => ({ egsUnitId: event.data.egsUnitId }),
};

registerDecider(signerDecider);
