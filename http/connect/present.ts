/** The response shapes of Connect (the Connect section of the OpenAPI document): company creation, branch results, list items, source details, jobs. */
import type { Context } from 'koa';
import type { CompanyRecord, CompanySource } from '../../domain/connect/company.js';
import { COMPANY_FIELDS, echoText } from '../../domain/connect/input.js';
import type { OnboardingJobRecord } from '../../domain/connect/onboarding-job.js';
import { isReadyForInvoicing, type MappingReadiness } from '../../domain/connect/values.js';
import type { RowFailure, RowOutcome } from '../../commands/connect/onboarding-jobs.js';
import type { CompanySourceRow } from '../../readmodels/connect.js';

export function meta(ctx: Context, extra: Record<string, unknown> = {}) {
  return { requestId: ctx.state.requestId, timestamp: new Date().toISOString(), workspaceId: ctx.state.auth?.workspaceId ?? null, ...extra };
}

export function ok(ctx: Context, status: number, data: unknown, extraMeta: Record<string, unknown> = {}): void {
  ctx.status = status;
  ctx.body = { success: true, data, meta: meta(ctx, extraMeta) };
}

const readiness = (m: MappingReadiness) => (m.status === 'READY' ? { status: m.status, templateId: m.templateId } : { status: m.status, code: m.code });

/** `data` of POST /v3/connect/companies (and of an onboarded job row). */
export function companyCreationData(company: CompanyRecord, source: CompanySource) {
  return {
    companyId: company.companyId,
    sourceId: source.sourceId,
    branchId: source.branchId,
    peppolParticipantId: company.peppolParticipantId,
    legalName: company.legalName,
    legalNameArabic: company.legalNameArabic,
    tin: company.tin,
    vatTrn: company.vatTrn,
    sourceName: source.sourceName,
    sourceVersion: source.sourceVersion,
    countryCode: company.countryCode,
    branchName: source.branchName,
    ...(company.contactPersonName !== null ? { contactPersonName: company.contactPersonName } : {}),
    contactPersonEmail: company.contactPersonEmail,
    ...(company.contactPersonMobile !== null ? { contactPersonMobile: company.contactPersonMobile } : {}),
    platformEnvironment: company.platformEnvironment,
    userGivenBranchId: source.userGivenBranchId,
    readyForInvoicing: isReadyForInvoicing(source.mappingReadiness),
    mappingReadiness: readiness(source.mappingReadiness),
    createdAt: source.createdAt,
    updatedAt: source.updatedAt,
  };
}

/** A branch result (single and bulk). */
export function branchResult(company: CompanyRecord, source: CompanySource) {
  return {
    companyId: company.companyId,
    branchId: source.branchId,
    branchName: source.branchName,
    userGivenBranchId: source.userGivenBranchId,
    sourceId: source.sourceId,
    sourceName: source.sourceName,
    sourceVersion: source.sourceVersion,
    platformEnvironment: source.platformEnvironment,
    readyForInvoicing: isReadyForInvoicing(source.mappingReadiness),
    mappingReadiness: readiness(source.mappingReadiness),
  };
}

/** One company source as both the write side (state) and the read side (row) describe it. */
interface SourceView {
  company: Omit<CompanyRecord, 'createdAt' | 'updatedAt'> & { onboardingStatus: string };
  source: Omit<CompanySource, 'archived' | 'createdAt' | 'updatedAt'>;
  createdAt: string;
  updatedAt: string;
}

export function viewFromState(company: CompanyRecord, source: CompanySource): SourceView {
  const { archived: _a, createdAt, updatedAt, ...rest } = source;
  // The company is touched by every change of its sources, so its updatedAt is the latest.
  return { company: { ...company, onboardingStatus: 'onboarded' }, source: rest, createdAt, updatedAt: company.updatedAt > updatedAt ? company.updatedAt : updatedAt };
}

export function viewFromRow(r: CompanySourceRow): SourceView {
  const updated = r.companyUpdatedAt > r.sourceUpdatedAt ? r.companyUpdatedAt : r.sourceUpdatedAt;
  return {
    company: {
      companyId: r.companyId,
      workspaceId: r.workspaceId,
      countryCode: r.countryCode,
      tin: r.tin,
      legalName: r.legalName,
      legalNameArabic: r.legalNameArabic,
      legalIdentifier: r.legalIdentifier,
      vatTrn: r.vatTrn,
      peppolParticipantId: r.peppolParticipantId,
      platformEnvironment: r.platformEnvironment as CompanyRecord['platformEnvironment'],
      contactPersonName: r.contactPersonName,
      contactPersonEmail: r.contactPersonEmail,
      contactPersonMobile: r.contactPersonMobile,
      onboardingStatus: r.onboardingStatus,
    },
    source: {
      sourceId: r.sourceId,
      sourceName: r.sourceName,
      sourceVersion: r.sourceVersion,
      status: r.status,
      metadata: r.metadata,
      branchId: r.branchId,
      branchName: r.branchName,
      userGivenBranchId: r.userGivenBranchId,
      platformEnvironment: r.platformEnvironment as CompanyRecord['platformEnvironment'],
      mappingReadiness: r.mappingReadiness,
    },
    createdAt: new Date(r.sourceCreatedAt).toISOString(),
    updatedAt: new Date(updated).toISOString(),
  };
}

/** A company list item: one per branch (source). */
export function listItem(v: SourceView) {
  return {
    companyId: v.company.companyId,
    sourceName: v.source.sourceName,
    sourceVersion: v.source.sourceVersion,
    legalName: v.company.legalName,
    legalIdentifier: v.company.legalIdentifier ?? null,
    countryCode: v.company.countryCode,
    status: v.source.status,
    onboardingStatus: v.company.onboardingStatus,
    peppolId: v.company.peppolParticipantId,
    sourceId: v.source.sourceId,
    branchId: v.source.branchId,
    branchName: v.source.branchName,
    tin: v.company.tin,
    vatTrn: v.company.vatTrn,
    mappingReadiness: readiness(v.source.mappingReadiness),
    readyForInvoicing: isReadyForInvoicing(v.source.mappingReadiness),
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  };
}

/** GET/PATCH of one source: the list item plus the company's registered and contact details and the source's metadata. */
export function sourceDetail(v: SourceView) {
  return {
    ...listItem(v),
    peppolParticipantId: v.company.peppolParticipantId,
    legalNameArabic: v.company.legalNameArabic,
    platformEnvironment: v.company.platformEnvironment,
    userGivenBranchId: v.source.userGivenBranchId,
    contactPersonName: v.company.contactPersonName,
    contactPersonEmail: v.company.contactPersonEmail,
    contactPersonMobile: v.company.contactPersonMobile,
    metadata: v.source.metadata,
  };
}

export const rowError = (e: RowFailure) => ({ code: e.code, message: e.message, retryable: e.retryable });

/** The submitted company fields of a failed row, as far as they are text. */
function submittedFields(row: unknown): Record<string, string> {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return {};
  const out: Record<string, string> = {};
  for (const field of COMPANY_FIELDS) {
    const v = echoText((row as Record<string, unknown>)[field]);
    if (v !== null) out[field] = v;
  }
  return out;
}

/** `data` of POST /v3/connect/companies/onboarding-jobs. */
export function onboardingJobData(job: OnboardingJobRecord, outcomes: readonly RowOutcome[], submitted: readonly unknown[]) {
  return {
    id: job.jobId,
    workspaceId: job.workspaceId,
    countryCode: job.countryCode,
    status: job.status,
    totalRows: job.totalRows,
    processedRows: job.rows.length,
    succeededRows: job.succeededRows,
    failedRows: job.failedRows,
    createdAt: job.createdAt,
    updatedAt: job.completedAt,
    completedAt: job.completedAt,
    rows: job.rows.map((row, i) => {
      const outcome = outcomes[i]!;
      return {
        id: row.rowId,
        jobId: job.jobId,
        rowIndex: row.rowIndex,
        status: row.status,
        sourceName: row.sourceName,
        sourceVersion: row.sourceVersion,
        countryCode: outcome.ok ? outcome.result.company.countryCode : (submittedFields(submitted[i]).countryCode ?? job.countryCode),
        nextAction: row.nextAction,
        data: outcome.ok ? companyCreationData(outcome.result.company, outcome.result.source) : submittedFields(submitted[i]),
        ...(outcome.ok ? {} : { errorCode: row.errorCode, errorMessage: row.errorMessage }),
      };
    }),
  };
}
