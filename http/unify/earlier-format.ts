/**
 * The earlier Unify request format (no `new-api` header; docs/api/unify.md): `action`
 * `submit` (1 to 10 invoices with shared `defaults`) and `list` (Malaysia). Errors use the
 * earlier envelope: status "error", code, message, requestId, timestamp, data null, errors[].
 */
import * as t from 'io-ts';
import type { Context } from 'koa';
import { recordMappingSample } from '../../commands/mapping-samples.js';
import { submitInvoice } from '../../commands/submit.js';
import { environmentRefusal, normalizeEnvironment, purposeAllowed, submissionCountryAllowed } from '../../domain/document/submission-rules.js';
import { derivedFlags, resolveLogicalDocumentType, supportedCountries } from '../../domain/validation/index.js';
import { listMalaysianDocuments } from '../../readmodels/sales-documents.js';
import type { HttpDeps } from '../app.js';
import type { AuthContext } from '../auth.js';
import { payloadLimitProblem } from '../../domain/validation/limits.js';
import { decode } from '../decode.js';
import { HttpProblem, toProblem, type ProblemDetail } from '../errors.js';
import { commandContext } from '../request-context.js';
import { EARLIER_ENVIRONMENTS, ListRequest, SubmitRequest } from './codecs.js';
import { resolveSource } from './source.js';
import { submitUseCaseDeps } from './submit-deps.js';
import { payloadUnknownFields, unknownFieldWarnings, withNearMiss } from './warnings.js';

const ENVIRONMENTS = EARLIER_ENVIRONMENTS;

function invalid(message: string, path: (string | number)[], details?: ProblemDetail[]): HttpProblem {
  return new HttpProblem(400, message, { path, details: details ?? [{ code: 'REQ_INVALID_INPUT', message, path }] });
}

function decodeOrThrow<A>(codec: t.Decoder<unknown, A>, body: unknown): A {
  const result = decode(codec, body);
  if (result.ok) return result.value;
  const details = result.problems.map((p) => ({ code: 'REQ_INVALID_INPUT', message: p.message, path: p.path ?? [] }));
  throw invalid('The request is not valid.', details[0]!.path as (string | number)[], details);
}

/** The key's environment must serve the requested one: sandbox keys serve sandbox and simulation. */
function checkEnvironment(auth: AuthContext, env: (typeof ENVIRONMENTS)[number]): 'sandbox' | 'simulation' | 'production' {
  const environment = normalizeEnvironment(env);
  if (environmentRefusal('earlier', auth.environment, environment)) {
    const message = `this ${auth.environment} API key cannot be used for env ${env}`;
    throw new HttpProblem(403, message, { code: 'AUTH_INVALID_API_KEY', path: ['env'], details: [{ code: 'AUTH_INVALID_API_KEY', message, path: ['env'] }] });
  }
  return environment;
}

function findMetaConfig(body: Record<string, unknown>): (string | number)[] | null {
  const defaults = body.defaults as Record<string, unknown> | undefined;
  if (defaults && typeof defaults === 'object' && 'metaConfig' in defaults) return ['defaults', 'metaConfig'];
  if (Array.isArray(body.invoices)) {
    for (const [i, item] of body.invoices.entries()) {
      if (item && typeof item === 'object' && 'metaConfig' in item) return ['invoices', i, 'metaConfig'];
    }
  }
  return 'metaConfig' in body ? ['metaConfig'] : null;
}

function envelope(ctx: Context, message: string, data: unknown) {
  return { status: 'success', code: 'OK', message, requestId: ctx.state.requestId, timestamp: new Date().toISOString(), data, errors: [] };
}

const NO_FLAGS = derivedFlags({ modifiers: [], variant: null });

async function submit(ctx: Context, deps: HttpDeps, raw: Record<string, unknown>) {
  const auth = ctx.state.auth as AuthContext;
  if (auth.permission !== 'read_write') {
    const message = 'This API key is read-only; submitting needs a read-and-write key.';
    throw new HttpProblem(403, message, { code: 'INSUFFICIENT_PERMISSIONS', details: [{ code: 'INSUFFICIENT_PERMISSIONS', message, path: [] }] });
  }
  const metaConfig = findMetaConfig(raw);
  if (metaConfig) throw invalid('metaConfig is managed by the system and must not be sent', metaConfig);
  if (Array.isArray(raw.invoices) && (raw.invoices.length < 1 || raw.invoices.length > 10)) {
    throw invalid(`invoices must hold 1 to 10 items, got ${raw.invoices.length}`, ['invoices']);
  }
  const request = decodeOrThrow(SubmitRequest, raw);
  for (const [index, item] of request.invoices.entries()) {
    const limit = payloadLimitProblem(item.payload);
    if (limit) {
      const path = ['invoices', index, 'payload', ...limit.path];
      throw new HttpProblem(413, limit.message, { path, details: [{ code: 'REQ_PAYLOAD_TOO_LARGE', message: limit.message, path }] });
    }
  }
  const environment = checkEnvironment(auth, request.env);
  const options = request.options ?? {};
  if (!purposeAllowed('earlier', request.purpose, options.submitToGovernment)) {
    throw invalid('submitToGovernment cannot be false when purpose is invoicing', ['options', 'submitToGovernment']);
  }
  const country = request.defaults.country;
  if (!submissionCountryAllowed(country)) {
    throw invalid(`country ${country} is not supported for submission yet; supported: ${supportedCountries.join(', ')}`, ['defaults', 'country']);
  }
  const source = await resolveSource(deps, auth.workspaceId, request.defaults.source.name, request.defaults.source.version, ['defaults', 'source'], {
    requested: environment,
    deniedCode: 'PERMISSION_DENIED',
  });
  const destinations = ['TAX_AUTHORITY', ...(request.defaults.destinations ?? []).map((d) => d.type).filter((d) => d !== 'TAX_AUTHORITY')];
  const continueOnError = options.continueOnError ?? true;
  const ctxBase = { ...commandContext(ctx, deps.clock), environment };

  const results: Record<string, unknown>[] = [];
  let aborted = false;
  for (const [index, item] of request.invoices.entries()) {
    const inputType = item.logicalDocumentType ?? request.defaults.logicalDocumentType;
    const base = { index, externalId: item.externalId ?? null, country, inputLogicalDocumentType: inputType };
    if (aborted) {
      results.push({
        ...base, status: 'not_processed', resolvedDocumentType: null, derivedFlags: NO_FLAGS, payloadId: null, documentId: null,
        validation: { success: false, errors: [] }, submission: { success: false, errors: [], governmentResponse: null, submittedAt: null },
        errors: [{ code: 'NOT_PROCESSED', message: 'not processed: an earlier invoice failed and continueOnError is false', path: ['invoices', index] }],
        warnings: [],
      });
      continue;
    }
    const resolved = resolveLogicalDocumentType(country, inputType);
    if (!resolved.ok) {
      const path = item.logicalDocumentType !== undefined ? ['invoices', index, 'logicalDocumentType'] : ['defaults', 'logicalDocumentType'];
      const error = { code: 'REQ_INVALID_INPUT', message: resolved.error.message, path };
      results.push({
        ...base, status: 'failed', resolvedDocumentType: null, derivedFlags: NO_FLAGS, payloadId: null, documentId: null,
        validation: { success: false, errors: [error] }, submission: { success: false, errors: [], governmentResponse: null, submittedAt: null }, errors: [error], warnings: [],
      });
      aborted = !continueOnError;
      continue;
    }
    const documentType = { base: resolved.value.base, modifiers: [...resolved.value.modifiers], variant: resolved.value.variant };
    const common = { ...base, resolvedDocumentType: documentType, derivedFlags: derivedFlags(documentType) };
    if (request.purpose === 'MAPPING') {
      const sample = await recordMappingSample(deps.store, { workspaceId: auth.workspaceId, source, payload: item.payload, externalId: item.externalId ?? null, documentType }, ctxBase);
      results.push({
        ...common, status: 'stored', payloadId: sample.payloadId, documentId: null,
        validation: { success: true, errors: [] }, submission: { success: false, errors: [], governmentResponse: null, submittedAt: null }, errors: [], warnings: [],
      });
      continue;
    }
    // A blocked company's invoice (credit enforcement) fails on its own, nothing is recorded.
    const result = await submitInvoice(
      submitUseCaseDeps(deps),
      { workspaceId: auth.workspaceId, environment, country, documentType, source, payload: item.payload, format: 'earlier', externalId: item.externalId ?? null, destinations },
      ctxBase,
    );
    if (result.kind === 'credits_blocked') {
      const error = { code: 'CREDITS_BLOCKED', message: result.message, path: ['invoices', index], blockReason: result.blockReason };
      results.push({
        ...common, status: 'failed', payloadId: null, documentId: null,
        validation: { success: true, errors: [] }, submission: { success: false, errors: [error], governmentResponse: null, submittedAt: null }, errors: [error], warnings: [],
      });
      aborted = !continueOnError;
      continue;
    }
    const outcome = result.outcome;
    // Payload members the service does not read: the same UNKNOWN_FIELD warnings (and near misses
    // in the messages of missing fields) as the new format gives.
    const unknown = payloadUnknownFields(item.payload, source.templateId);
    const validationErrors = outcome.report.errors.map((e) => ({
      code: e.code,
      message: withNearMiss(e.message, e.payloadPath ?? null, unknown),
      path: ['invoices', index, 'payload', ...e.path],
      field: e.corePath,
    }));
    const validationWarnings = outcome.accepted
      ? []
      : outcome.report.warnings.map((w) => ({ code: w.code, message: w.message, field: w.corePath, payloadField: w.payloadPath ?? null }));
    results.push({
      ...common,
      status: outcome.accepted ? 'success' : 'failed',
      payloadId: outcome.documentId,
      documentId: outcome.documentId,
      validation: { success: outcome.accepted, errors: validationErrors },
      submission: {
        success: outcome.accepted,
        errors: [],
        governmentResponse: null,
        submittedAt: outcome.accepted ? ctxBase.now.toISOString() : null,
      },
      errors: validationErrors,
      warnings: [...validationWarnings, ...unknownFieldWarnings(unknown)],
    });
    if (!outcome.accepted && !continueOnError) aborted = true;
  }
  const success = results.filter((r) => r.status === 'success' || r.status === 'stored').length;
  ctx.body = envelope(ctx, request.purpose === 'MAPPING' ? 'Sample payloads stored for field mapping.' : 'Invoices processed.', {
    summary: { total: results.length, success, failed: results.length - success },
    results,
  });
}

async function list(ctx: Context, deps: HttpDeps, raw: Record<string, unknown>) {
  const auth = ctx.state.auth as AuthContext;
  const filters = raw.filters as Record<string, unknown> | undefined;
  if (filters && typeof filters === 'object' && 'tinNumber' in filters) {
    throw invalid('tinNumber is resolved automatically and must not be sent', ['filters', 'tinNumber']);
  }
  if (filters && typeof filters === 'object' && filters.country !== undefined && filters.country !== 'MY') {
    throw invalid('listing is available for Malaysia only (filters.country MY)', ['filters', 'country']);
  }
  const request = decodeOrThrow(ListRequest, raw);
  const environment = checkEnvironment(auth, request.env);
  const page = request.page ?? 1;
  const limit = request.limit ?? 10;
  if (!Number.isInteger(page) || page < 1) throw invalid('page must be a whole number from 1', ['page']);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('limit must be a whole number from 1 to 100', ['limit']);
  const sort = request.sort ?? 'createdAt:desc';
  if (!/^createdAt:(asc|desc)$/.test(sort)) throw invalid('sort must be createdAt:desc or createdAt:asc', ['sort']);
  const found = await listMalaysianDocuments(deps.knex, {
    workspaceId: auth.workspaceId,
    environment,
    uuid: request.filters.uuid,
    documentId: request.filters.documentId,
    page,
    limit,
    order: sort.endsWith('asc') ? 'asc' : 'desc',
  });
  ctx.body = envelope(ctx, 'Documents listed.', {
    summary: { total: found.total, returned: found.rows.length, page, limit },
    results: found.rows.map((row, i) => ({
      index: (page - 1) * limit + i,
      documentId: row.documentId,
      uuid: row.uuid,
      country: row.country,
      environment: row.environment,
      documentDetails: row.details,
    })),
  });
}

export async function handleEarlierFormat(ctx: Context, deps: HttpDeps) {
  const body = ctx.request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('the request body must be a JSON object', []);
  const raw = body as Record<string, unknown>;
  try {
    if (raw.action === 'submit') return await submit(ctx, deps, raw);
    if (raw.action === 'list') return await list(ctx, deps, raw);
  } catch (err) {
    // Problems from shared helpers (source lookup) carry no earlier-format item list: add one.
    const problem = toProblem(err);
    if (problem && !problem.options.details) {
      throw new HttpProblem(problem.status, problem.message, { ...problem.options, code: problem.status === 404 ? 'SOURCE_NOT_FOUND' : undefined, details: [{ code: problem.status === 404 ? 'SOURCE_NOT_FOUND' : 'REQ_INVALID_INPUT', message: problem.message, path: problem.options.path ?? [] }] });
    }
    throw err;
  }
  // A new-format body sent without its header: say which header selects the new format.
  const looksNew = raw.action === undefined && ['payload', 'documentType', 'environment', 'invoices'].some((k) => k in raw);
  throw invalid(looksNew ? 'action must be "submit" or "list"; this body looks like the new request format: send the header new-api: true with it' : 'action must be "submit" or "list"', ['action']);
}
