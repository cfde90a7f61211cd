/**
 * The request rules of Connect (the Connect section of the OpenAPI document, docs/api/http.md): what a body or a query must hold, with
 * the precise field path of the first problem. Unknown fields are refused, and so are the
 * system-managed ids. Pure: every function takes the decoded JSON (or query) and either
 * returns typed input or throws a DomainError with CONNECT_VALIDATION_ERROR (or
 * CONNECT_UNSUPPORTED_COUNTRY for a country other than AE).
 */
import { DomainError } from '../errors.js';
import { memberNames } from '../schema/json-schema.js';
import {
  BranchBody,
  BranchBulkBody,
  CompanyCreationBody,
  CONNECT_INPUT_LIMITS,
  EMAIL_PATTERN,
  JobRow,
  MOBILE_PATTERN,
  OnboardingJobBody,
  SourcePatchBody,
  TIN_PATTERN,
} from './codecs.js';
import { checkMetadata, invalid, isPlainObject, printable, refuseUnknownFields, requireObject, refuseUnknownParams, single, type QueryValues } from './input-rules.js';

export { isPlainObject, type QueryValues } from './input-rules.js';
import {
  COMPANY_ID_PATTERN,
  CONNECT_COUNTRY,
  COUNT_COUNTRIES,
  ConnectErrorCodes,
  PLATFORM_ENVIRONMENTS,
  SOURCE_STATUSES,
  isStorableText,
  type PlatformEnvironment,
  type SourceStatus,
} from './values.js';

export const LIMITS = {
  listLimitDefault: 10,
  listLimitMax: 100,
  listPageMax: 1_000_000,
  branchesBulkMax: CONNECT_INPUT_LIMITS.branchesBulkMax,
  onboardingRowsMax: CONNECT_INPUT_LIMITS.onboardingRowsMax,
  textMax: CONNECT_INPUT_LIMITS.textMax,
  emailMax: CONNECT_INPUT_LIMITS.emailMax,
  searchMax: 200,
  metadataBytesMax: CONNECT_INPUT_LIMITS.metadataBytesMax,
  metadataDepthMax: CONNECT_INPUT_LIMITS.metadataDepthMax,
} as const;

const SYSTEM_MANAGED = ['companyId', 'sourceId', 'branchId', 'peppolParticipantId', 'workspaceId'] as const;

export const COMPANY_FIELDS = [
  'sourceName',
  'sourceVersion',
  'countryCode',
  'tin',
  'contactPersonEmail',
  'contactPersonName',
  'contactPersonMobile',
  'branchName',
  'platformEnvironment',
] as const;

export interface CompanyCreationInput {
  sourceName: string;
  sourceVersion: string;
  countryCode: typeof CONNECT_COUNTRY;
  tin: string;
  contactPersonEmail: string;
  contactPersonName: string | null;
  contactPersonMobile: string | null;
  branchName: string;
  platformEnvironment: PlatformEnvironment;
}

export interface BranchInput {
  branchName: string;
  sourceName: string;
  sourceVersion: string;
}

export interface SourcePatch {
  sourceVersion?: string;
  legalName?: string;
  legalIdentifier?: string | null;
  countryCode?: typeof CONNECT_COUNTRY;
  status?: SourceStatus;
  metadata?: Record<string, unknown>;
}

export interface OnboardingJobInput {
  countryCode: typeof CONNECT_COUNTRY;
  platformEnvironment: PlatformEnvironment;
  filename: string | null;
  rows: unknown[];
}

export interface CompanyListQuery {
  page: number;
  limit: number;
  countryCode: string | null;
  sourceVersion: string | null;
  status: SourceStatus | null;
  search: string | null;
}

export type CountsDocumentFilter = { direction: 'sales' | 'purchase' } | { base: string } | null;

export interface CountsQuery {
  environment: 'sandbox' | 'production';
  countryCode: string | null;
  companyId: string | null;
  documentType: string | null;
  documentFilter: CountsDocumentFilter;
  from: string | null;
  to: string | null;
}

type Path = readonly string[];


function unsupportedCountry(path: Path, value: string): never {
  throw new DomainError(
    'validation',
    ConnectErrorCodes.unsupportedCountry,
    `countryCode "${printable(value)}" is not supported: Connect onboards UAE (AE) companies only`,
    path,
  );
}


const at = (path: Path, field: string | number): Path => [...path, String(field)];




interface TextRule {
  max?: number;
  pattern?: RegExp;
  patternMessage?: string;
}

function text(value: unknown, path: Path, name: string, rule: TextRule = {}): string {
  if (typeof value !== 'string') invalid(path, `${name} must be a string`);
  if (!isStorableText(value)) invalid(path, `${name} contains characters that are not allowed`);
  if (value.trim() === '') invalid(path, `${name} must not be empty`);
  const max = rule.max ?? LIMITS.textMax;
  if (value.length > max) invalid(path, `${name} must be at most ${max} characters`);
  if (rule.pattern && !rule.pattern.test(value)) invalid(path, rule.patternMessage ?? `${name} is malformed`);
  return value;
}

function requiredText(body: Record<string, unknown>, field: string, path: Path, rule?: TextRule): string {
  if (body[field] === undefined || body[field] === null) invalid(at(path, field), `${field} is required`);
  return text(body[field], at(path, field), field, rule);
}

function optionalText(body: Record<string, unknown>, field: string, path: Path, rule?: TextRule): string | null {
  if (body[field] === undefined || body[field] === null) return null;
  return text(body[field], at(path, field), field, rule);
}

const TIN_RULE: TextRule = { pattern: TIN_PATTERN, patternMessage: 'tin must be exactly 10 digits' };
const EMAIL_RULE: TextRule = {
  max: LIMITS.emailMax,
  pattern: EMAIL_PATTERN,
  patternMessage: 'contactPersonEmail must be an email address',
};
const MOBILE_RULE: TextRule = {
  max: CONNECT_INPUT_LIMITS.mobileMax,
  pattern: MOBILE_PATTERN,
  patternMessage: 'contactPersonMobile must be digits with an optional leading "+", without spaces',
};

function country(value: unknown, path: Path): typeof CONNECT_COUNTRY {
  if (value === undefined || value === null) invalid(path, 'countryCode is required');
  if (typeof value !== 'string') invalid(path, 'countryCode must be a string');
  if (value !== CONNECT_COUNTRY) unsupportedCountry(path, value);
  return CONNECT_COUNTRY;
}

function environment(value: unknown, path: Path): PlatformEnvironment {
  if (value === undefined || value === null) invalid(path, 'platformEnvironment is required');
  if (typeof value !== 'string' || !(PLATFORM_ENVIRONMENTS as readonly string[]).includes(value)) {
    invalid(path, `platformEnvironment must be one of ${PLATFORM_ENVIRONMENTS.join(', ')}`);
  }
  return value as PlatformEnvironment;
}

function companyFields(
  body: Record<string, unknown>,
  path: Path,
  countryCode: typeof CONNECT_COUNTRY,
  platformEnvironment: PlatformEnvironment,
): CompanyCreationInput {
  return {
    sourceName: requiredText(body, 'sourceName', path),
    sourceVersion: requiredText(body, 'sourceVersion', path),
    countryCode,
    tin: requiredText(body, 'tin', path, TIN_RULE),
    contactPersonEmail: requiredText(body, 'contactPersonEmail', path, EMAIL_RULE),
    contactPersonName: optionalText(body, 'contactPersonName', path),
    contactPersonMobile: optionalText(body, 'contactPersonMobile', path, MOBILE_RULE),
    branchName: requiredText(body, 'branchName', path),
    platformEnvironment,
  };
}

/** POST /v3/connect/companies. */
export function parseCompanyCreation(body: unknown): CompanyCreationInput {
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, memberNames(CompanyCreationBody), [], SYSTEM_MANAGED);
  const countryCode = country(b.countryCode, ['countryCode']);
  return companyFields(b, [], countryCode, environment(b.platformEnvironment, ['platformEnvironment']));
}

/** POST /v3/connect/companies/onboarding-jobs: the job level; rows are checked one by one with parseJobRow. */
export function parseOnboardingJob(body: unknown): OnboardingJobInput {
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, memberNames(OnboardingJobBody), [], SYSTEM_MANAGED);
  const countryCode = country(b.countryCode, ['countryCode']);
  const platformEnvironment = environment(b.platformEnvironment, ['platformEnvironment']);
  const filename = optionalText(b, 'filename', []);
  const rows = b.rows;
  if (rows === undefined || rows === null) invalid(['rows'], 'rows is required');
  if (!Array.isArray(rows)) invalid(['rows'], 'rows must be an array');
  if (rows.length < 1 || rows.length > LIMITS.onboardingRowsMax) {
    invalid(['rows'], `rows must hold 1 to ${LIMITS.onboardingRowsMax} items, got ${rows.length}`);
  }
  return { countryCode, platformEnvironment, filename, rows };
}

/** One row of an onboarding job: the company-creation fields; countryCode and platformEnvironment may be left to the job. */
export function parseJobRow(row: unknown, job: Pick<OnboardingJobInput, 'countryCode' | 'platformEnvironment'>): CompanyCreationInput {
  const b = requireObject(row, [], 'the row');
  refuseUnknownFields(b, memberNames(JobRow), [], SYSTEM_MANAGED);
  const countryCode = b.countryCode === undefined || b.countryCode === null ? job.countryCode : country(b.countryCode, ['countryCode']);
  let platformEnvironment = job.platformEnvironment;
  if (b.platformEnvironment !== undefined && b.platformEnvironment !== null) {
    platformEnvironment = environment(b.platformEnvironment, ['platformEnvironment']);
    if (platformEnvironment !== job.platformEnvironment) {
      invalid(
        ['platformEnvironment'],
        `the row's platformEnvironment "${platformEnvironment}" disagrees with the job's "${job.platformEnvironment}"`,
      );
    }
  }
  return companyFields(b, [], countryCode, platformEnvironment);
}

/** The echo of a row or branch field in a result: the value when it is storable text, else null. */
export function echoText(value: unknown): string | null {
  return typeof value === 'string' && isStorableText(value) && value.length <= LIMITS.textMax ? value : null;
}

/** POST /v3/connect/companies/{companyId}/branches, and each item of the bulk form. */
export function parseBranch(body: unknown, what = 'the request body'): BranchInput {
  const b = requireObject(body, [], what);
  refuseUnknownFields(b, memberNames(BranchBody), [], SYSTEM_MANAGED);
  return {
    branchName: requiredText(b, 'branchName', []),
    sourceName: requiredText(b, 'sourceName', []),
    sourceVersion: requiredText(b, 'sourceVersion', []),
  };
}

/** POST …/branches/bulk: the array; each item is checked on its own with parseBranch. */
export function parseBranchBulk(body: unknown): unknown[] {
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, memberNames(BranchBulkBody), [], SYSTEM_MANAGED);
  if (b.branches === undefined || b.branches === null) invalid(['branches'], 'branches is required');
  if (!Array.isArray(b.branches)) invalid(['branches'], 'branches must be an array');
  if (b.branches.length < 1 || b.branches.length > LIMITS.branchesBulkMax) {
    invalid(['branches'], `branches must hold 1 to ${LIMITS.branchesBulkMax} items, got ${b.branches.length}`);
  }
  return b.branches;
}


/** PATCH /v3/connect/companies/{sourceName}: only the fields sent change. */
export function parseSourcePatch(body: unknown): SourcePatch {
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, memberNames(SourcePatchBody), [], SYSTEM_MANAGED);
  const patch: SourcePatch = {};
  if (b.sourceVersion !== undefined) patch.sourceVersion = text(b.sourceVersion, ['sourceVersion'], 'sourceVersion');
  if (b.legalName !== undefined) patch.legalName = text(b.legalName, ['legalName'], 'legalName');
  if (b.legalIdentifier !== undefined) {
    patch.legalIdentifier = b.legalIdentifier === null ? null : text(b.legalIdentifier, ['legalIdentifier'], 'legalIdentifier');
  }
  if (b.countryCode !== undefined) patch.countryCode = country(b.countryCode, ['countryCode']);
  if (b.status !== undefined) {
    if (typeof b.status !== 'string' || !(SOURCE_STATUSES as readonly string[]).includes(b.status)) {
      invalid(['status'], `status must be one of ${SOURCE_STATUSES.join(', ')}`);
    }
    patch.status = b.status as SourceStatus;
  }
  if (b.metadata !== undefined) {
    if (!isPlainObject(b.metadata)) invalid(['metadata'], 'metadata must be a JSON object');
    checkMetadata(b.metadata, ['metadata'], LIMITS.metadataDepthMax);
    if (Buffer.byteLength(JSON.stringify(b.metadata)) > LIMITS.metadataBytesMax) {
      invalid(['metadata'], `metadata must be at most ${LIMITS.metadataBytesMax} bytes of JSON`);
    }
    patch.metadata = b.metadata;
  }
  if (Object.keys(patch).length === 0) {
    invalid([], 'send at least one of sourceVersion, legalName, legalIdentifier, countryCode, status, metadata');
  }
  return patch;
}

// ------------------------------------------------------------------------------------------
// Query strings




function integer(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) invalid(['query', name], `${name} must be an integer from ${min} to ${max}`);
  const n = Number(raw);
  if (n < min || n > max) invalid(['query', name], `${name} must be an integer from ${min} to ${max}`);
  return n;
}

function nonEmpty(raw: string | undefined, name: string, max: number = LIMITS.textMax): string | null {
  if (raw === undefined) return null;
  if (raw.trim() === '') invalid(['query', name], `${name} must not be empty`);
  if (raw.length > max) invalid(['query', name], `${name} must be at most ${max} characters`);
  return raw;
}

/** GET /v3/connect/companies. */
export function parseCompanyListQuery(query: QueryValues): CompanyListQuery {
  refuseUnknownParams(query, ['page', 'limit', 'countryCode', 'sourceVersion', 'status', 'search']);
  const page = integer(single(query, 'page'), 'page', 1, 1, LIMITS.listPageMax);
  const limit = integer(single(query, 'limit'), 'limit', LIMITS.listLimitDefault, 1, LIMITS.listLimitMax);
  const countryRaw = single(query, 'countryCode');
  if (countryRaw !== undefined && !/^[A-Za-z]{2}$/.test(countryRaw)) invalid(['query', 'countryCode'], 'countryCode must be a two-letter country code');
  const statusRaw = single(query, 'status');
  if (statusRaw !== undefined && !(SOURCE_STATUSES as readonly string[]).includes(statusRaw)) {
    invalid(['query', 'status'], `status must be one of ${SOURCE_STATUSES.join(', ')}`);
  }
  return {
    page,
    limit,
    countryCode: countryRaw?.toUpperCase() ?? null,
    sourceVersion: nonEmpty(single(query, 'sourceVersion'), 'sourceVersion'),
    status: (statusRaw as SourceStatus | undefined) ?? null,
    search: nonEmpty(single(query, 'search'), 'search', LIMITS.searchMax),
  };
}

/** The `sourceVersion` query parameter of GET/PATCH/DELETE /v3/connect/companies/{sourceName}. */
export function parseSourceAddress(sourceName: string, query: QueryValues): { sourceName: string; sourceVersion: string } {
  refuseUnknownParams(query, ['sourceVersion']);
  if (!isStorableText(sourceName) || sourceName.trim() === '') invalid(['path', 'sourceName'], 'the source name in the path is malformed');
  if (sourceName.length > LIMITS.textMax) invalid(['path', 'sourceName'], `the source name must be at most ${LIMITS.textMax} characters`);
  const sourceVersion = nonEmpty(single(query, 'sourceVersion'), 'sourceVersion');
  if (sourceVersion === null) invalid(['query', 'sourceVersion'], 'sourceVersion is required');
  return { sourceName, sourceVersion };
}

export function parseCompanyId(raw: string): string {
  if (!COMPANY_ID_PATTERN.test(raw)) invalid(['path', 'companyId'], 'companyId must be 24 lowercase hexadecimal characters');
  return raw;
}

function isoDate(raw: string | undefined, name: string): string | null {
  if (raw === undefined) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
  const ok = m && (() => {
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
  })();
  if (!ok) invalid(['query', name], `${name} must be a date YYYY-MM-DD`);
  return raw;
}

const SALES_TYPES = ['sales'];
const PURCHASE_TYPES = ['purchase', 'purchases'];
const DOCUMENT_BASES = ['tax_invoice', 'credit_note', 'debit_note'];

/** GET /v3/connect/invoices/counts (query plus the X-Environment header, '' when absent). */
export function parseCountsQuery(query: QueryValues, environmentHeader: string): CountsQuery {
  refuseUnknownParams(query, ['countryCode', 'companyId', 'documentType', 'from', 'to']);
  const env = environmentHeader.trim().toLowerCase();
  if (env !== '' && env !== 'sandbox' && env !== 'production') {
    throw new DomainError(
      'validation',
      ConnectErrorCodes.invalidEnvironment,
      'X-Environment must be sandbox or production',
      ['headers', 'X-Environment'],
    );
  }
  const countryRaw = single(query, 'countryCode');
  let countryCode: string | null = null;
  if (countryRaw !== undefined) {
    if (!/^[A-Za-z]{2}$/.test(countryRaw)) invalid(['query', 'countryCode'], 'countryCode must be a two-letter country code');
    countryCode = countryRaw.toUpperCase();
    if (!(COUNT_COUNTRIES as readonly string[]).includes(countryCode)) {
      throw new DomainError(
        'validation',
        ConnectErrorCodes.unsupportedCountry,
        `countryCode must be one of ${COUNT_COUNTRIES.join(', ')}`,
        ['query', 'countryCode'],
      );
    }
  }
  const companyRaw = single(query, 'companyId');
  if (companyRaw !== undefined && !COMPANY_ID_PATTERN.test(companyRaw)) {
    invalid(['query', 'companyId'], 'companyId must be 24 lowercase hexadecimal characters');
  }
  const typeRaw = single(query, 'documentType');
  let documentFilter: CountsDocumentFilter = null;
  if (typeRaw !== undefined) {
    if (SALES_TYPES.includes(typeRaw)) documentFilter = { direction: 'sales' };
    else if (PURCHASE_TYPES.includes(typeRaw)) documentFilter = { direction: 'purchase' };
    else if (DOCUMENT_BASES.includes(typeRaw)) documentFilter = { base: typeRaw };
    else invalid(['query', 'documentType'], `documentType must be one of ${[...SALES_TYPES, ...PURCHASE_TYPES, ...DOCUMENT_BASES].join(', ')}`);
  }
  const from = isoDate(single(query, 'from'), 'from');
  const to = isoDate(single(query, 'to'), 'to');
  if (from && to && from > to) invalid(['query', 'from'], 'from must not be later than to');
  return {
    environment: (env || 'production') as 'sandbox' | 'production',
    countryCode,
    companyId: companyRaw ?? null,
    documentType: typeRaw ?? null,
    documentFilter,
    from,
    to,
  };
}
