/**
 * The request rules of credits (docs/api/credits.md, docs/api/http.md): bodies, precondition headers and
 * query strings, with the precise path of the first problem. Unknown fields and parameters are
 * refused, as everywhere in Connect. Pure: each function returns typed input or throws a
 * DomainError (CONNECT_VALIDATION_ERROR, 400; CONNECT_ALLOWANCE_PRECONDITION_REQUIRED, 428).
 */
import { createHash } from 'node:crypto';
import { COMPANY_ID_PATTERN, isStorableText } from '../connect/values.js';
import { DomainError } from '../errors.js';
import { checkMetadata, invalid, isPlainObject, printable, refuseUnknownFields, requireObject, refuseUnknownParams, single, type QueryValues } from '../connect/input-rules.js';

export { isPlainObject, type QueryValues } from '../connect/input-rules.js';
import { memberNames } from '../schema/json-schema.js';
import { AllowanceBody, BulkBody, BulkOperationRow, ReasonOptionalBody, ReasonRequiredBody } from './codecs.js';
import type { AllowanceInput, Precondition } from './credits.js';
import type { BulkRow, LedgerFilters } from './jobs.js';
import {
  ALLOWANCE_STATUSES,
  BLOCK_REASONS,
  BULK_OPERATIONS,
  CREDIT_LIMITS,
  CreditErrorCodes,
  LEDGER_EVENT_TYPES,
  PERIOD_TYPES,
  parseUtcTimestamp,
  type AllowanceStatus,
  type BlockReason,
  type BulkOperation,
  type PeriodType,
} from './values.js';

type Path = readonly (string | number)[];



const at = (path: Path, field: string | number): Path => [...path, field];




function text(value: unknown, path: Path, name: string, max: number = CREDIT_LIMITS.textMax, allowEmpty = false): string {
  if (typeof value !== 'string') invalid(path, `${name} must be a string`);
  if (!isStorableText(value)) invalid(path, `${name} contains characters that are not allowed`);
  if (!allowEmpty && value.trim() === '') invalid(path, `${name} must not be empty`);
  if (value.length > max) invalid(path, `${name} must be at most ${max} characters`);
  return value;
}

function requiredText(body: Record<string, unknown>, field: string, path: Path, max?: number): string {
  if (body[field] === undefined || body[field] === null) invalid(at(path, field), `${field} is required`);
  return text(body[field], at(path, field), field, max);
}

function optionalText(body: Record<string, unknown>, field: string, path: Path, max?: number): string | null {
  if (body[field] === undefined || body[field] === null) return null;
  return text(body[field], at(path, field), field, max);
}

function timestamp(body: Record<string, unknown>, field: string, path: Path): string {
  const value = body[field];
  if (value === undefined || value === null) invalid(at(path, field), `${field} is required`);
  if (typeof value !== 'string') invalid(at(path, field), `${field} must be a string`);
  const iso = parseUtcTimestamp(value);
  if (!iso) invalid(at(path, field), `${field} must be an ISO 8601 UTC timestamp ending in Z, e.g. 2026-01-01T00:00:00Z`);
  return iso;
}


function metadata(body: Record<string, unknown>, path: Path): Record<string, unknown> {
  const value = body.metadata;
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) invalid(at(path, 'metadata'), 'metadata must be a JSON object');
  checkMetadata(value, at(path, 'metadata'), CREDIT_LIMITS.metadataDepthMax);
  if (Buffer.byteLength(JSON.stringify(value)) > CREDIT_LIMITS.metadataBytesMax) {
    invalid(at(path, 'metadata'), `metadata must be at most ${CREDIT_LIMITS.metadataBytesMax} bytes of JSON`);
  }
  return value;
}

function limitOf(body: Record<string, unknown>, path: Path): number {
  const value = body.limit;
  if (value === undefined || value === null) invalid(at(path, 'limit'), 'limit is required');
  if (typeof value !== 'number' || !Number.isFinite(value)) invalid(at(path, 'limit'), 'limit must be a number');
  if (value < 0) invalid(at(path, 'limit'), 'limit must be 0 or more');
  if (!Number.isInteger(value)) invalid(at(path, 'limit'), 'limit must be a whole number of credits');
  if (value > CREDIT_LIMITS.amountMax) invalid(at(path, 'limit'), `limit must be at most ${CREDIT_LIMITS.amountMax}`);
  return value;
}

function periodTypeOf(body: Record<string, unknown>, path: Path): PeriodType {
  const value = body.periodType;
  if (value === undefined || value === null) invalid(at(path, 'periodType'), 'periodType is required');
  if (typeof value !== 'string' || !(PERIOD_TYPES as readonly string[]).includes(value)) {
    invalid(at(path, 'periodType'), `periodType must be one of ${PERIOD_TYPES.join(', ')}`);
  }
  return value as PeriodType;
}

/** The members of each body, from its codec (codecs.ts), the description the OpenAPI document shows. */
const ALLOWANCE_FIELDS = memberNames(AllowanceBody);
const BULK_FIELDS = memberNames(BulkBody);
const BULK_ROW_FIELDS = memberNames(BulkOperationRow);

function allowanceFields(b: Record<string, unknown>, path: Path): AllowanceInput {
  const limit = limitOf(b, path);
  const periodType = periodTypeOf(b, path);
  const startAt = timestamp(b, 'startAt', path);
  const endAt = timestamp(b, 'endAt', path);
  if (Date.parse(endAt) <= Date.parse(startAt)) invalid(at(path, 'endAt'), 'endAt must be later than startAt');
  return {
    limit,
    periodType,
    startAt,
    endAt,
    reason: requiredText(b, 'reason', path),
    planReference: optionalText(b, 'planReference', path),
    metadata: metadata(b, path),
  };
}

/** PUT /allowances/{companyId}/current and /scheduled. */
export function parseAllowanceBody(body: unknown): AllowanceInput {
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, ALLOWANCE_FIELDS, []);
  return allowanceFields(b, []);
}

/** POST …/pause (reason required), …/resume and DELETE …/scheduled (reason optional; the body may be absent). */
export function parseActionBody(body: unknown, reasonRequired: boolean): { reason: string | null } {
  if (body === undefined && !reasonRequired) return { reason: null };
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, memberNames(reasonRequired ? ReasonRequiredBody : ReasonOptionalBody), []);
  return { reason: reasonRequired ? requiredText(b, 'reason', []) : optionalText(b, 'reason', []) };
}

export function parseCompanyIdParam(raw: string): string {
  if (!COMPANY_ID_PATTERN.test(raw)) invalid(['path', 'companyId'], 'companyId must be 24 lowercase hexadecimal characters');
  return raw;
}

/**
 * The precondition headers of an allowance write. PUT takes exactly one of If-None-Match: *
 * (create) and If-Match: "<version>" (replace); pause, resume and cancel take If-Match.
 * Both at once is a 400; none is a 428 (precondition required).
 */
export function parsePrecondition(ifMatch: string, ifNoneMatch: string, allowCreate: boolean): Precondition {
  const match = ifMatch.trim();
  const noneMatch = ifNoneMatch.trim();
  if (match !== '' && noneMatch !== '') invalid(['headers'], 'send either If-None-Match: * or If-Match: "<version>", never both');
  if (noneMatch !== '') {
    if (!allowCreate) invalid(['headers', 'If-None-Match'], 'this operation takes If-Match: "<version>", not If-None-Match');
    if (noneMatch !== '*') invalid(['headers', 'If-None-Match'], 'If-None-Match must be * (create only when none exists)');
    return { kind: 'none' };
  }
  if (match !== '') {
    const m = /^(?:W\/)?"(\d{1,12})"$/.exec(match) ?? /^(\d{1,12})$/.exec(match);
    if (!m) invalid(['headers', 'If-Match'], 'If-Match must be the quoted version of the allowance, e.g. "3"');
    return { kind: 'version', version: Number(m[1]) };
  }
  throw new DomainError(
    'precondition',
    CreditErrorCodes.preconditionRequired,
    allowCreate
      ? 'send If-None-Match: * to create the allowance, or If-Match: "<version>" to replace it'
      : 'send If-Match: "<version>" with the latest version of the allowance',
    ['headers', 'If-Match'],
  );
}

// ---------------------------------------------------------------------------------------------
// Bulk jobs

const ACTION_FIELDS = ['operationId', 'companyId', 'operation', 'expectedVersion', 'reason'] as const;

export function bulkTarget(operation: BulkOperation): 'current' | 'scheduled' {
  return operation === 'replace_scheduled' || operation === 'cancel_scheduled' ? 'scheduled' : 'current';
}

/** POST /allowances/bulk: 1 to 500 operations, each checked here; the state-dependent rules are checked per row when the job runs. */
export function parseBulkBody(body: unknown): BulkRow[] {
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, BULK_FIELDS, []);
  const ops = b.operations;
  if (ops === undefined || ops === null) invalid(['operations'], 'operations is required');
  if (!Array.isArray(ops)) invalid(['operations'], 'operations must be an array');
  if (ops.length < 1 || ops.length > CREDIT_LIMITS.bulkOperationsMax) {
    invalid(['operations'], `operations must hold 1 to ${CREDIT_LIMITS.bulkOperationsMax} items, got ${ops.length}`);
  }
  const operationIds = new Set<string>();
  const targets = new Set<string>();
  return ops.map((raw, i): BulkRow => {
    const path: Path = ['operations', i];
    const row = requireObject(raw, path, 'an operation');
    const operationValue = row.operation;
    if (operationValue === undefined || operationValue === null) invalid(at(path, 'operation'), 'operation is required');
    if (typeof operationValue !== 'string' || !(BULK_OPERATIONS as readonly string[]).includes(operationValue)) {
      invalid(at(path, 'operation'), `operation must be one of ${BULK_OPERATIONS.join(', ')}`);
    }
    const operation = operationValue as BulkOperation;
    const replacement = operation === 'replace_current' || operation === 'replace_scheduled';
    refuseUnknownFields(row, replacement ? BULK_ROW_FIELDS : ACTION_FIELDS, path);
    const operationId = requiredText(row, 'operationId', path, CREDIT_LIMITS.operationIdMax);
    if (operationIds.has(operationId)) invalid(at(path, 'operationId'), `operationId "${printable(operationId)}" is used twice in this job`);
    operationIds.add(operationId);
    const companyId = row.companyId;
    if (companyId === undefined || companyId === null) invalid(at(path, 'companyId'), 'companyId is required');
    if (typeof companyId !== 'string' || !COMPANY_ID_PATTERN.test(companyId)) invalid(at(path, 'companyId'), 'companyId must be 24 lowercase hexadecimal characters');
    const target = bulkTarget(operation);
    if (targets.has(`${companyId}/${target}`)) {
      invalid(at(path, 'companyId'), `only one operation per company per target is allowed in a job: company ${companyId} has two on its ${target} allowance`);
    }
    targets.add(`${companyId}/${target}`);
    const version = row.expectedVersion;
    if (version === undefined || version === null) invalid(at(path, 'expectedVersion'), 'expectedVersion is required');
    const minVersion = replacement ? 0 : 1;
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < minVersion) {
      invalid(at(path, 'expectedVersion'), replacement ? 'expectedVersion must be 0 (create) or the latest version' : 'expectedVersion must be the latest version (1 or more)');
    }
    const reasonRequired = replacement || operation === 'pause';
    const reason = reasonRequired ? requiredText(row, 'reason', path) : optionalText(row, 'reason', path);
    const allowance = replacement ? allowanceFields({ ...row, reason: reason ?? '' }, path) : null;
    return {
      operationId,
      companyId,
      operation,
      expectedVersion: version as number,
      reason,
      allowance: allowance
        ? { limit: allowance.limit, periodType: allowance.periodType, startAt: allowance.startAt, endAt: allowance.endAt, planReference: allowance.planReference, metadata: allowance.metadata }
        : null,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Query strings and cursors




function limitParam(query: QueryValues, fallback: number, max: number): number {
  const raw = single(query, 'limit');
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) invalid(['query', 'limit'], `limit must be an integer from 1 to ${max}`);
  return Number(raw);
}

function oneOfParam<V extends string>(query: QueryValues, name: string, values: readonly V[]): V | null {
  const raw = single(query, name);
  if (raw === undefined) return null;
  if (!(values as readonly string[]).includes(raw)) invalid(['query', name], `${name} must be one of ${values.join(', ')}`);
  return raw as V;
}

function timestampParam(query: QueryValues, name: string): string | null {
  const raw = single(query, name);
  if (raw === undefined) return null;
  const iso = parseUtcTimestamp(raw);
  if (!iso) invalid(['query', name], `${name} must be an ISO 8601 UTC timestamp ending in Z`);
  return iso;
}

function textParam(query: QueryValues, name: string, max = 255): string | null {
  const raw = single(query, name);
  if (raw === undefined) return null;
  if (raw.trim() === '') invalid(['query', name], `${name} must not be empty`);
  if (raw.length > max) invalid(['query', name], `${name} must be at most ${max} characters`);
  return raw;
}

function companyIdParam(query: QueryValues): string | null {
  const raw = single(query, 'companyId');
  if (raw === undefined) return null;
  if (!COMPANY_ID_PATTERN.test(raw)) invalid(['query', 'companyId'], 'companyId must be 24 lowercase hexadecimal characters');
  return raw;
}

function fingerprint(filters: unknown): string {
  return createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
}

/** An opaque cursor: the position after which the next page starts, bound to the filters it was issued for. */
export function encodeCursor(key: readonly (string | number)[], filters: unknown): string {
  return Buffer.from(JSON.stringify({ v: 1, k: key, f: fingerprint(filters) })).toString('base64url');
}

function decodeCursor(raw: string | null, filters: unknown, shape: (key: unknown[]) => boolean): unknown[] | null {
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    invalid(['query', 'cursor'], 'cursor is not a cursor this service issued');
  }
  const c = parsed as { v?: unknown; k?: unknown; f?: unknown };
  if (!isPlainObject(parsed) || c.v !== 1 || !Array.isArray(c.k) || typeof c.f !== 'string' || !shape(c.k)) {
    invalid(['query', 'cursor'], 'cursor is not a cursor this service issued');
  }
  if (c.f !== fingerprint(filters)) {
    invalid(['query', 'cursor'], 'this cursor was issued for other filters: keep the filters unchanged while paging, or start again without a cursor');
  }
  return c.k as unknown[];
}

export interface AllowanceListQuery {
  limit: number;
  /** The last company of the previous page. */
  after: string | null;
  filters: {
    companyId: string | null;
    status: AllowanceStatus | null;
    countryCode: string | null;
    blockReason: BlockReason | null;
    effectiveFrom: string | null;
    effectiveTo: string | null;
  };
}

/** GET /allowances. */
export function parseAllowanceListQuery(query: QueryValues): AllowanceListQuery {
  refuseUnknownParams(query, ['cursor', 'limit', 'companyId', 'status', 'countryCode', 'blockReason', 'effectiveFrom', 'effectiveTo']);
  const limit = limitParam(query, CREDIT_LIMITS.listLimitDefault, CREDIT_LIMITS.listLimitMax);
  const countryCode = single(query, 'countryCode');
  if (countryCode !== undefined && !/^[A-Za-z]{2}$/.test(countryCode)) invalid(['query', 'countryCode'], 'countryCode must be a two-letter country code');
  const filters = {
    companyId: companyIdParam(query),
    status: oneOfParam(query, 'status', ALLOWANCE_STATUSES),
    countryCode: countryCode?.toUpperCase() ?? null,
    blockReason: oneOfParam(query, 'blockReason', BLOCK_REASONS),
    effectiveFrom: timestampParam(query, 'effectiveFrom'),
    effectiveTo: timestampParam(query, 'effectiveTo'),
  };
  if (filters.effectiveFrom && filters.effectiveTo && Date.parse(filters.effectiveTo) <= Date.parse(filters.effectiveFrom)) {
    invalid(['query', 'effectiveTo'], 'effectiveTo must be later than effectiveFrom');
  }
  const key = decodeCursor(textParam(query, 'cursor', 1000), filters, (k) => k.length === 1 && typeof k[0] === 'string' && COMPANY_ID_PATTERN.test(k[0]));
  return { limit, after: key ? (key[0] as string) : null, filters };
}

const TRANSACTION_ID = /^txn_[0-9a-f]{32}$/;
const LEDGER_FILTER_NAMES = ['companyId', 'eventType', 'occurredFrom', 'occurredTo', 'correlationId', 'idempotencyKey', 'requestId', 'transactionId', 'bulkJobId'] as const;

function ledgerFilters(query: QueryValues): LedgerFilters {
  const filters: LedgerFilters = {
    companyId: companyIdParam(query),
    eventType: oneOfParam(query, 'eventType', LEDGER_EVENT_TYPES),
    occurredFrom: timestampParam(query, 'occurredFrom'),
    occurredTo: timestampParam(query, 'occurredTo'),
    correlationId: textParam(query, 'correlationId'),
    idempotencyKey: textParam(query, 'idempotencyKey'),
    requestId: textParam(query, 'requestId'),
    transactionId: textParam(query, 'transactionId'),
    bulkJobId: textParam(query, 'bulkJobId'),
  };
  if (filters.transactionId !== null && !TRANSACTION_ID.test(filters.transactionId)) {
    invalid(['query', 'transactionId'], 'transactionId must be "txn_" followed by 32 hexadecimal characters');
  }
  if (filters.occurredFrom && filters.occurredTo && Date.parse(filters.occurredTo) <= Date.parse(filters.occurredFrom)) {
    invalid(['query', 'occurredTo'], 'occurredTo must be later than occurredFrom');
  }
  return filters;
}

export interface LedgerQuery {
  limit: number;
  /** The ledger key of the last transaction of the previous page: [commit, prepare]. */
  after: [string, string] | null;
  filters: LedgerFilters;
}

/** GET /transactions: newest first; `occurredFrom` inclusive, `occurredTo` exclusive. */
export function parseLedgerQuery(query: QueryValues): LedgerQuery {
  refuseUnknownParams(query, ['cursor', 'limit', ...LEDGER_FILTER_NAMES]);
  const limit = limitParam(query, CREDIT_LIMITS.ledgerLimitDefault, CREDIT_LIMITS.ledgerLimitMax);
  const filters = ledgerFilters(query);
  const key = decodeCursor(textParam(query, 'cursor', 1000), filters, (k) => k.length === 2 && k.every((x) => typeof x === 'string' && /^\d{1,20}$/.test(x)));
  return { limit, after: key ? [key[0] as string, key[1] as string] : null, filters };
}

/** POST /exports: format csv and the ledger filters (no cursor, no limit). */
export function parseExportBody(body: unknown): { format: 'csv'; filters: LedgerFilters } {
  const b = requireObject(body, [], 'the request body');
  refuseUnknownFields(b, ['format', 'filters'], []);
  if (b.format === undefined || b.format === null) invalid(['format'], 'format is required');
  if (b.format !== 'csv') invalid(['format'], 'format must be csv');
  if (b.filters === undefined || b.filters === null) return { format: 'csv', filters: ledgerFilters({}) };
  const f = requireObject(b.filters, ['filters'], 'filters');
  refuseUnknownFields(f, LEDGER_FILTER_NAMES, ['filters']);
  const query: QueryValues = {};
  for (const [k, v] of Object.entries(f)) {
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string') invalid(['filters', k], `${k} must be a string`);
    query[k] = v;
  }
  try {
    return { format: 'csv', filters: ledgerFilters(query) };
  } catch (err) {
    // Report the field under filters, not under the query string.
    if (err instanceof DomainError && err.path[0] === 'query') throw new DomainError(err.kind, err.code, err.message, ['filters', ...err.path.slice(1)]);
    throw err;
  }
}
