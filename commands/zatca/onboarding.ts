/**
 * Onboarding of a ZATCA EGS unit through ZATCA's API, step by step (each step is an admin CLI
 * command; see docs/operations/saudi-arabia.md):
 *
 *   1. register the unit, generate its key and CSR (commands/zatca/egs-units.ts);
 *   2. requestComplianceCsid: POST /compliance with the CSR and the OTP from ZATCA's portal;
 *   3. runComplianceChecks: the sample documents ZATCA requires for the unit's invoice types
 *      (standard and/or simplified invoice, credit note and debit note), each stamped with the
 *      compliance CSID's key and certificate, sent to POST /compliance/invoices;
 *   4. requestProductionCsid: POST /production/csids; from then on the unit stamps its seller's
 *      production invoices and its production CSID authenticates their clearance and reporting;
 *   5. renewProductionCsid (before the certificate expires, or to rotate the key): a new key and
 *      CSR, PATCH /production/csids under the current production CSID with a new OTP.
 *
 * Every answer of ZATCA is recorded on the unit's stream (secrets sealed) before the next step.
 */
import { randomUUID } from 'node:crypto';
import { generateInvoiceXml, ZATCA_INITIAL_PREVIOUS_INVOICE_HASH } from '../../domain/artifacts/index.js';
import type { CoreDocument } from '../../domain/artifacts/core-document.js';
import { DomainError } from '../../domain/errors.js';
import { stampInvoice } from '../../domain/zatca/stamp.js';
import type { CommandContext } from '../execute.js';
import type { ZatcaApiClient, ZatcaResult } from './api/client.js';
import type { CsidAnswer as ApiCsidAnswer, ValidationMessage, ZatcaCsid } from './api/contract.js';
import {
  createEgsCsr,
  csidCredentials,
  generateEgsKey,
  loadEgsUnit,
  recordComplianceChecksPassed,
  recordComplianceCsid,
  recordProductionCsid,
  sellerSigningMaterial,
  signingMaterial,
  type EgsUnit,
  type EgsUnitDeps,
} from './egs-units.js';

export interface OnboardingDeps extends EgsUnitDeps {
  client: ZatcaApiClient;
}

export const ZatcaOnboardingErrorCodes = {
  refused: 'ZATCA_API_REFUSED',
  unavailable: 'ZATCA_API_UNAVAILABLE',
  checksFailed: 'ZATCA_COMPLIANCE_CHECKS_FAILED',
  wrongStep: 'ZATCA_EGS_WRONG_STEP',
  notFound: 'ZATCA_EGS_NOT_FOUND',
} as const;

async function mustLoad(deps: OnboardingDeps, egsUnitId: string): Promise<EgsUnit> {
  const unit = await loadEgsUnit(deps.store, egsUnitId);
  if (!unit) throw new DomainError('not_found', ZatcaOnboardingErrorCodes.notFound, `no EGS unit ${egsUnitId}`, ['egsUnitId']);
  if (unit.revokedAt) throw new DomainError('conflict', ZatcaOnboardingErrorCodes.wrongStep, `the EGS unit ${egsUnitId} was revoked`, ['egsUnitId']);
  return unit;
}

const wrongStep = (message: string) => new DomainError('conflict', ZatcaOnboardingErrorCodes.wrongStep, message, ['egsUnitId']);

/** An API answer that is not a success, as one clear error. */
function apiFailure(step: string, r: Exclude<ZatcaResult<unknown>, { kind: 'answer' }> | { kind: 'answer'; status: number; body: unknown }): DomainError {
  if (r.kind === 'unavailable') return new DomainError('precondition', ZatcaOnboardingErrorCodes.unavailable, `${step}: ${r.message}${r.retryAfterMs !== null ? ` (retry after ${Math.ceil(r.retryAfterMs / 1000)} s)` : ''}`);
  if (r.kind === 'refused') return new DomainError('precondition', ZatcaOnboardingErrorCodes.refused, `${step}: ZATCA answered ${r.status} ${r.code}: ${r.message}`);
  if (r.kind === 'clearance_off') return new DomainError('precondition', ZatcaOnboardingErrorCodes.refused, `${step}: ZATCA answered 303: ${r.message}`);
  return new DomainError('precondition', ZatcaOnboardingErrorCodes.refused, `${step}: ZATCA answered ${r.status}`);
}

const asCsid = (c: { username: string; password: string }): ZatcaCsid => ({ binarySecurityToken: c.username, secret: c.password });

function csidAnswer(r: ZatcaResult<ApiCsidAnswer>, step: string, keyId: number) {
  if (r.kind !== 'answer' || r.status !== 200) throw apiFailure(step, r);
  return { keyId, binarySecurityToken: r.body.binarySecurityToken, secret: r.body.secret, requestId: String(r.body.requestID) };
}

/** The pending key (being onboarded or renewed) of a unit, with its CSR. */
function pendingKey(unit: EgsUnit) {
  const key = unit.pendingKeyId === null ? null : unit.keys.find((k) => k.keyId === unit.pendingKeyId) ?? null;
  return key;
}

/** Step 2: the compliance CSID for the unit's pending key (its CSR created first when missing). */
export async function requestComplianceCsid(deps: OnboardingDeps, egsUnitId: string, otp: string, ctx: CommandContext): Promise<EgsUnit> {
  if (!/^\d{6}$/.test(otp)) throw new DomainError('validation', 'ZATCA_OTP_INVALID', 'the OTP is the 6-digit code from ZATCA\'s portal', ['otp']);
  let unit = await mustLoad(deps, egsUnitId);
  if (unit.activeKeyId !== null) throw wrongStep(`the EGS unit ${egsUnitId} is in production: renew its production CSID instead`);
  let key = pendingKey(unit);
  if (!key) {
    await generateEgsKey(deps, egsUnitId, ctx);
    unit = await mustLoad(deps, egsUnitId);
    key = pendingKey(unit)!;
  }
  if (key.complianceCsid) return unit;
  const csrPem = key.csrPem ?? (await createEgsCsr(deps, egsUnitId, ctx)).csrPem;
  const answer = csidAnswer(await deps.client.complianceCsid(csrPem, otp), 'compliance CSID', key.keyId);
  return recordComplianceCsid(deps, egsUnitId, answer, ctx);
}

export type SampleKind = 'standard' | 'simplified';
export type SampleBase = 'tax_invoice' | 'credit_note' | 'debit_note';

/** The document kinds ZATCA's compliance checks require for a CSR's invoice type (`title`: TSCZ, T standard, S simplified). */
export function requiredSamples(invoiceType: string): { kind: SampleKind; base: SampleBase }[] {
  const kinds: SampleKind[] = [];
  if (invoiceType[0] === '1') kinds.push('standard');
  if (invoiceType[1] === '1') kinds.push('simplified');
  return kinds.flatMap((kind) => (['tax_invoice', 'credit_note', 'debit_note'] as const).map((base) => ({ kind, base })));
}

/** A sample document of the unit's seller, for a compliance check. */
function sampleDocument(unit: EgsUnit, kind: SampleKind, base: SampleBase, number: string, issued: Date): CoreDocument {
  const date = issued.toISOString().slice(0, 10);
  const time = issued.toISOString().slice(11, 19);
  return {
    header: {
      documentNumber: number,
      issueDate: date,
      issueTime: time,
      currency: 'SAR',
      ...(base !== 'tax_invoice' ? { precedingInvoiceReference: { id: `${number}-ORIGINAL` }, creditNoteReason: { description: 'Compliance check sample: goods returned' } } : {}),
    },
    parties: {
      seller: {
        name: unit.subject.organizationName,
        address: { streetName: 'Compliance sample street', buildingNumber: '1234', additionalNumber: '5678', district: 'Sample district', city: 'Riyadh', postalCode: '12211', country: 'SA' },
        taxIds: [{ type: 'VAT', value: unit.sellerVat }],
        registrationNumbers: [{ type: 'CRN', value: '1010010000' }],
      },
      ...(kind === 'standard'
        ? {
            buyer: {
              name: 'Compliance sample buyer',
              address: { streetName: 'Sample buyer street', buildingNumber: '4321', district: 'Sample district', city: 'Jeddah', postalCode: '23326', country: 'SA' },
              taxIds: [{ type: 'VAT', value: '399999999800003' }],
            },
          }
        : {}),
    },
    lineItems: [{ id: '1', name: 'Compliance sample item', quantity: 1, unitCode: 'PCE', price: { amount: 100 }, lineTaxableValue: 100, taxAmount: 15, taxCategory: 'S', taxRate: 15 }],
    payment: { paymentMeans: [{ paymentMeansCode: '10' }] },
    totals: { totalLineTaxableAmount: 100, totalAmountExcludingTax: 100, totalTaxAmount: 15, totalAmountIncludingTax: 115, amountDue: 115 },
  } as CoreDocument;
}

export interface ComplianceCheckResult {
  kind: SampleKind;
  base: SampleBase;
  uuid: string;
  status: number | null;
  passed: boolean;
  warnings: ValidationMessage[];
  errors: ValidationMessage[];
}

/** Step 3: the sample documents stamped with the compliance CSID and checked by ZATCA; recorded as passed when every one passes. */
export async function runComplianceChecks(deps: OnboardingDeps, egsUnitId: string, ctx: CommandContext): Promise<{ unit: EgsUnit; results: ComplianceCheckResult[] }> {
  const unit = await mustLoad(deps, egsUnitId);
  const key = pendingKey(unit);
  if (!key?.complianceCsid) throw wrongStep(`the EGS unit ${egsUnitId} has no compliance CSID: request one first`);
  if (key.complianceChecksPassedAt) return { unit, results: [] };
  const material = signingMaterial(deps, unit, 'compliance')!;
  const credentials = asCsid(csidCredentials(deps, unit, 'compliance')!);
  const results: ComplianceCheckResult[] = [];
  let previousInvoiceHash = ZATCA_INITIAL_PREVIOUS_INVOICE_HASH;
  const samples = requiredSamples(unit.subject.invoiceType);
  if (samples.length === 0) throw new DomainError('validation', 'ZATCA_EGS_VALIDATION', `the unit's invoice type ${unit.subject.invoiceType} names neither standard nor simplified invoices`, ['invoiceType']);
  for (const [i, { kind, base }] of samples.entries()) {
    const uuid = randomUUID();
    const generated = generateInvoiceXml({
      country: 'SA',
      documentType: { base, modifiers: [], ...(kind === 'simplified' ? { variant: 'simplified' } : {}) },
      document: sampleDocument(unit, kind, base, `COMPLIANCE-${key.keyId}-${i + 1}`, ctx.now),
      uuid,
      issueTimestamp: ctx.now.toISOString(),
      invoiceCounter: i + 1,
      previousInvoiceHash,
    });
    const stamped = stampInvoice(generated.xml, { privateKey: material.privateKey, certificate: material.certificate }, ctx.now);
    previousInvoiceHash = stamped.invoiceHash;
    const r = await deps.client.complianceCheck(credentials, { invoiceHash: stamped.invoiceHash, uuid, invoice: stamped.bytes.toString('base64') });
    if (r.kind !== 'answer') throw apiFailure(`compliance check of a ${kind} ${base.replace('_', ' ')}`, r);
    const vr = r.body.validationResults;
    const status = kind === 'standard' ? r.body.clearanceStatus : r.body.reportingStatus;
    const passed = r.status === 200 && (vr.errorMessages ?? []).length === 0 && (status === 'CLEARED' || status === 'REPORTED');
    results.push({ kind, base, uuid, status: r.status, passed, warnings: vr.warningMessages ?? [], errors: vr.errorMessages ?? [] });
  }
  if (results.every((r) => r.passed)) {
    return { unit: await recordComplianceChecksPassed(deps, egsUnitId, key.keyId, ctx), results };
  }
  const failed = results.filter((r) => !r.passed);
  const detail = failed.map((f) => `${f.kind} ${f.base}: ${f.errors.map((e) => `${e.code} ${e.message}`).join('; ') || `HTTP ${f.status}`}`).join(' | ');
  throw new DomainError('precondition', ZatcaOnboardingErrorCodes.checksFailed, `ZATCA's compliance checks failed: ${detail}`);
}

/** Step 4: the production CSID, once the compliance checks passed. */
export async function requestProductionCsid(deps: OnboardingDeps, egsUnitId: string, ctx: CommandContext): Promise<EgsUnit> {
  const unit = await mustLoad(deps, egsUnitId);
  if (unit.activeKeyId !== null && unit.pendingKeyId === null) return unit;
  const key = pendingKey(unit);
  if (!key?.complianceCsid) throw wrongStep(`the EGS unit ${egsUnitId} has no compliance CSID: request one first`);
  if (!key.complianceChecksPassedAt) throw wrongStep(`the EGS unit ${egsUnitId} has not passed the compliance checks: run them first`);
  const credentials = asCsid(csidCredentials(deps, unit, 'compliance')!);
  const answer = csidAnswer(await deps.client.productionCsid(credentials, key.complianceCsid.requestId), 'production CSID', key.keyId);
  return recordProductionCsid(deps, egsUnitId, answer, ctx);
}

/** Step 5: a renewed production CSID for a new key, under the current production CSID. */
export async function renewProductionCsid(deps: OnboardingDeps, egsUnitId: string, otp: string, ctx: CommandContext): Promise<EgsUnit> {
  if (!/^\d{6}$/.test(otp)) throw new DomainError('validation', 'ZATCA_OTP_INVALID', 'the OTP is the 6-digit code from ZATCA\'s portal', ['otp']);
  let unit = await mustLoad(deps, egsUnitId);
  const current = csidCredentials(deps, unit, 'production');
  if (!current) throw wrongStep(`the EGS unit ${egsUnitId} has no production CSID to renew: onboard it first`);
  if (!pendingKey(unit)) {
    await generateEgsKey(deps, egsUnitId, ctx);
    unit = await mustLoad(deps, egsUnitId);
  }
  const key = pendingKey(unit)!;
  const csrPem = key.csrPem ?? (await createEgsCsr(deps, egsUnitId, ctx)).csrPem;
  const answer = csidAnswer(await deps.client.renewProductionCsid(asCsid(current), csrPem, otp), 'production CSID renewal', key.keyId);
  return recordProductionCsid(deps, egsUnitId, answer, ctx);
}

/** Where a unit stands in onboarding, without any secret. */
export function onboardingStatus(unit: EgsUnit) {
  const active = unit.activeKeyId === null ? null : unit.keys.find((k) => k.keyId === unit.activeKeyId) ?? null;
  const pending = pendingKey(unit);
  const step = unit.revokedAt
    ? 'revoked'
    : active && !pending
      ? 'production'
      : !pending
        ? 'registered'
        : !pending.csrPem
          ? 'key_generated'
          : !pending.complianceCsid
            ? 'csr_created'
            : !pending.complianceChecksPassedAt
              ? 'compliance_csid_issued'
              : 'compliance_checks_passed';
  return {
    egsUnitId: unit.egsUnitId,
    workspaceId: unit.workspaceId,
    environment: unit.environment,
    sellerVat: unit.sellerVat,
    commonName: unit.subject.commonName,
    invoiceType: unit.subject.invoiceType,
    step: active && pending ? `production (renewal: ${step})` : step,
    production: active?.productionCsid ? { keyId: active.keyId, requestId: active.productionCsid.requestId, notAfter: active.productionCsid.notAfter, recordedAt: active.productionCsid.recordedAt } : null,
    pending: pending
      ? {
          keyId: pending.keyId,
          csrCreated: pending.csrPem !== null,
          complianceCsid: pending.complianceCsid ? { requestId: pending.complianceCsid.requestId, notAfter: pending.complianceCsid.notAfter } : null,
          complianceChecksPassedAt: pending.complianceChecksPassedAt,
        }
      : null,
    revokedAt: unit.revokedAt,
  };
}

/** The production CSID of the unit that stamps a seller's invoices in a ZATCA environment, or null. */
export async function sellerProductionCsid(deps: EgsUnitDeps, seller: { workspaceId: string; environment: string; sellerVat: string }): Promise<ZatcaCsid | null> {
  const material = await sellerSigningMaterial(deps, seller);
  if (!material) return null;
  const unit = await loadEgsUnit(deps.store, material.egsUnitId);
  const credentials = unit ? csidCredentials(deps, unit, 'production') : null;
  return credentials ? asCsid(credentials) : null;
}

/** The production CSID of a unit (the one that stamped a document), or null when it holds none or was revoked. */
export async function unitProductionCsid(deps: EgsUnitDeps, egsUnitId: string): Promise<ZatcaCsid | null> {
  const unit = await loadEgsUnit(deps.store, egsUnitId);
  const credentials = unit ? csidCredentials(deps, unit, 'production') : null;
  return credentials ? asCsid(credentials) : null;
}
