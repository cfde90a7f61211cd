/**
 * Unify (`/api/v3/unify`): the new request format (`new-api: true`, docs/api/unify.md/2.4), the
 * earlier action-based format (2.3/2.5, in earlier-format.ts) and, beyond the spec, the dry run
 * of a new-format submission (docs/api/dry-run.md) and the field-requirement catalogue generated
 * from the validator's own rule sets.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { SubmissionInput, SubmissionOutcome } from '../../commands/submissions.js';
import { dryRunInvoice, submitInvoice } from '../../commands/submit.js';
import { environmentRefusal, purposeAllowed, submissionCountryAllowed } from '../../domain/document/submission-rules.js';
import { DomainError } from '../../domain/errors.js';
import { checkDocumentType, requirementsCatalogue, supportedCountries, type ValidationReport } from '../../domain/validation/index.js';
import type { FamilyRoutes, HttpDeps } from '../app.js';
import { requireWritePermission, type AuthContext } from '../auth.js';
import { decode } from '../decode.js';
import { NewBatch, NewSubmission } from './codecs.js';
import type { UnknownField } from '../../domain/validation/codec.js';
import { payloadLimitProblem } from '../../domain/validation/limits.js';
import { payloadUnknownFields, unknownFieldWarnings, withNearMiss } from './warnings.js';
import { HttpProblem, renderProblem, toProblem, type ErrorPath } from '../errors.js';
import { idempotent } from '../idempotency.js';
import { base64Json } from '../json-answer.js';
import { workspaceRateLimiter } from '../rate-limit.js';
import { commandContext } from '../request-context.js';
import { handleEarlierFormat } from './earlier-format.js';
import { resolveSource } from './source.js';
import { submitUseCaseDeps } from './submit-deps.js';

const at = (prefix: ErrorPath, ...rest: (string | number)[]) => [...prefix, ...rest];

/** `name:version`, split at the last colon (names may contain colons, versions do not). */
export function parseSourceReference(value: string): { name: string; version: string } | null {
  const i = value.lastIndexOf(':');
  if (i <= 0 || i === value.length - 1) return null;
  return { name: value.slice(0, i), version: value.slice(i + 1) };
}

function outcomeBody(outcome: SubmissionOutcome, unknown: readonly UnknownField[] = []) {
  if (outcome.accepted) {
    return {
      status: 200,
      body: {
        documentId: outcome.documentId,
        documentNumber: outcome.documentNumber,
        kind: 'document' as const,
        message: 'The document passed validation and is queued for delivery.',
        Base64XML: base64Json(outcome.xml),
        warnings: unknownFieldWarnings(unknown),
      },
    };
  }
  return {
    status: 422,
    body: {
      documentId: outcome.documentId,
      documentNumber: outcome.documentNumber,
      message: 'The document failed validation; it is stored as needing correction. Fix it and submit it again.',
      errors: reportErrors(outcome.report, unknown),
      warnings: reportWarnings(outcome.report, unknown),
    },
  };
}

/** The errors of a validation report as a 422 lists them. */
export function reportErrors(report: ValidationReport, unknown: readonly UnknownField[]) {
  return report.errors.map((e) => ({
    code: e.code,
    message: withNearMiss(e.message, e.payloadPath ?? null, unknown),
    field: e.corePath,
    payloadField: e.payloadPath ?? null,
    path: e.path,
    rule: { code: e.code, message: e.message, severity: e.severity, ruleSet: e.ruleSet },
  }));
}

/** The warnings of a validation report and the payload members the service does not read. */
export function reportWarnings(report: ValidationReport, unknown: readonly UnknownField[]) {
  return [...report.warnings.map((w) => ({ code: w.code, message: w.message, field: w.corePath, payloadField: w.payloadPath ?? null })), ...unknownFieldWarnings(unknown)];
}

/**
 * The submission a new-format request asks for (the same for a submit and its dry run);
 * request-level problems are thrown as HttpProblem (with `path` under `prefix`).
 */
export async function newFormatSubmission(ctx: Context, deps: HttpDeps, raw: unknown, prefix: ErrorPath) {
  const auth = ctx.state.auth as AuthContext;
  const decoded = decode(NewSubmission, raw);
  if (!decoded.ok) {
    const [first] = decoded.problems;
    throw new HttpProblem(400, first!.message, { path: at(prefix, ...(first!.path ?? [])), details: decoded.problems.map((p) => ({ ...p, path: at(prefix, ...(p.path ?? [])) })) });
  }
  const body = decoded.value;
  const limit = payloadLimitProblem(body.payload);
  if (limit) throw new HttpProblem(413, limit.message, { path: at(prefix, 'payload', ...limit.path) });
  if (!purposeAllowed('new', body.purpose)) throw new HttpProblem(400, 'purpose must be "invoicing"', { path: at(prefix, 'purpose') });
  const refusal = environmentRefusal('new', auth.environment, body.environment);
  if (refusal === 'not_offered') {
    throw new HttpProblem(400, 'environment must be "sandbox" or "production" (the new format does not accept simulation)', { path: at(prefix, 'environment') });
  }
  if (refusal === 'key_environment') {
    throw new HttpProblem(403, `this is a ${auth.environment} key; it cannot submit to ${body.environment}`, { code: 'permission_denied', path: at(prefix, 'environment') });
  }
  if (!submissionCountryAllowed(body.country)) {
    throw new HttpProblem(400, `country ${body.country} is not supported; supported: ${supportedCountries.join(', ')}`, { path: at(prefix, 'country') });
  }
  const documentType = checkDocumentType(body.country, { base: body.documentType.base, modifiers: body.documentType.modifiers, variant: body.documentType.variant ?? null });
  if (!documentType.ok) {
    throw new HttpProblem(400, documentType.error.message, { path: at(prefix, 'documentType', ...documentType.error.segments.filter((s) => s !== 'documentType')) });
  }
  const reference = parseSourceReference(body.source);
  if (!reference) throw new HttpProblem(400, 'source must be "name:version" of one of the workspace\'s sources', { path: at(prefix, 'source') });
  const source = await resolveSource(deps, auth.workspaceId, reference.name, reference.version, at(prefix, 'source'), {
    requested: body.environment,
    deniedCode: 'permission_denied',
  });
  const input: SubmissionInput = {
    workspaceId: auth.workspaceId,
    environment: body.environment,
    country: body.country,
    documentType: { base: documentType.value.base, modifiers: [...documentType.value.modifiers], variant: documentType.value.variant },
    source,
    payload: body.payload,
    format: 'new',
    externalId: null,
    destinations: ['TAX_AUTHORITY'],
  };
  return { input, payload: body.payload, cmdCtx: { ...commandContext(ctx, deps.clock), environment: body.environment } };
}

/** The credit refusal of a submission (or its dry run) of a blocked company. */
export const creditsBlocked = (result: { message: string; blockReason: string }, prefix: ErrorPath) =>
  new HttpProblem(403, result.message, { code: 'credits_blocked', path: at(prefix, 'source'), extra: { blockReason: result.blockReason } });

/**
 * One new-format submission; request-level problems are thrown as HttpProblem (with `path` under
 * `prefix`). Not an async function: the payload is a local of the callback alone, which returns
 * once the submission has started, so no suspended frame holds it while the answer waits for the
 * append and the read models (see submitInvoice).
 */
function submitNewFormat(ctx: Context, deps: HttpDeps, raw: unknown, prefix: ErrorPath) {
  return newFormatSubmission(ctx, deps, raw, prefix).then(({ input, payload, cmdCtx }) => {
    const unknown = payloadUnknownFields(payload, input.source.templateId);
    // A blocked company (credit enforcement) is refused before anything is recorded.
    return submitInvoice(submitUseCaseDeps(deps), input, cmdCtx).then((result) => {
      if (result.kind === 'credits_blocked') throw creditsBlocked(result, prefix);
      return outcomeBody(result.outcome, unknown);
    });
  });
}

async function handleNewFormat(ctx: Context, deps: HttpDeps) {
  requireWritePermission(ctx);
  let body = ctx.request.body;
  if (body === undefined) throw new HttpProblem(400, 'the request body is required', { path: [] });
  if (body && typeof body === 'object' && !Array.isArray(body) && 'invoices' in body) {
    const invoices = (body as { invoices: unknown }).invoices;
    if (!Array.isArray(invoices) || invoices.length === 0) throw new HttpProblem(400, 'invoices must be a non-empty array', { path: ['invoices'] });
    const envelope = decode(NewBatch, body);
    if (!envelope.ok) throw new HttpProblem(400, envelope.problems[0]!.message, { path: envelope.problems[0]!.path ?? [], details: envelope.problems });
    const results = [];
    for (const [index, item] of invoices.entries()) {
      try {
        const { status, body: itemBody } = await submitNewFormat(ctx, deps, item, ['invoices', index]);
        results.push({ index, status, ...itemBody });
      } catch (err) {
        const problem = toProblem(err);
        if (!problem) throw err;
        results.push({ index, status: problem.status, ...(renderProblem('unify', problem, ctx).body as object) });
      }
    }
    const succeeded = results.filter((r) => r.status === 200).length;
    ctx.body = { kind: 'batch', summary: { total: results.length, success: succeeded, failed: results.length - succeeded }, results };
    return;
  }
  // The submission takes the parsed body over: neither the request nor this suspended function
  // holds it (some 16 KB of objects for a 20-line invoice) while the answer waits for the append
  // and the read models, so it dies young instead of being copied by the scavenger and promoted to
  // the old generation. Nothing reads it after the handler (an idempotency key's request hash is
  // taken before).
  ctx.request.body = undefined;
  const submitted = submitNewFormat(ctx, deps, body, []);
  body = undefined;
  const { status, body: responseBody } = await submitted;
  ctx.status = status;
  ctx.body = responseBody;
}

/**
 * The dry run of one new-format submission (POST /api/v3/unify/dry-run): the same request checks,
 * credit check, validation and number check as a submit, answered with the same 422, or a 200
 * with the e-invoice XML and the warnings; nothing is recorded (no event, no number claimed, no
 * credit reserved, no artifact stored). Rate limited per workspace on its own.
 */
async function handleDryRun(ctx: Context, deps: HttpDeps, limit: (ctx: Context) => Promise<void>) {
  requireWritePermission(ctx);
  await limit(ctx);
  const body = ctx.request.body;
  if (body === undefined) throw new HttpProblem(400, 'the request body is required', { path: [] });
  const { input, payload, cmdCtx } = await newFormatSubmission(ctx, deps, body, []);
  const result = await dryRunInvoice({ store: deps.store, knex: deps.knex }, input, cmdCtx);
  if (result.kind === 'credits_blocked') throw creditsBlocked(result, []);
  const { outcome } = result;
  const unknown = payloadUnknownFields(payload, input.source.templateId);
  if (!outcome.accepted) {
    ctx.status = 422;
    ctx.body = {
      documentId: null,
      documentNumber: outcome.documentNumber,
      dryRun: true,
      message: 'The document failed validation. Dry run: nothing was stored.',
      errors: reportErrors(outcome.report, unknown),
      warnings: reportWarnings(outcome.report, unknown),
    };
    return;
  }
  ctx.status = 200;
  ctx.body = {
    kind: 'dry_run',
    dryRun: true,
    documentNumber: outcome.documentNumber,
    message: 'The document passed validation. Dry run: nothing was stored, no number claimed, no credit reserved.',
    Base64XML: base64Json(outcome.xml),
    warnings: reportWarnings(outcome.report, unknown),
  };
}

function csv(value: unknown): string[] {
  return typeof value === 'string' && value !== '' ? value.split(',').map((s) => s.trim()).filter(Boolean) : [];
}

export function unifyRoutes(): FamilyRoutes {
  const prefix = '/api/v3/unify';
  return {
    family: 'unify',
    prefix,
    routes(deps) {
      const router = new Router({ prefix });
      // Each submission records its effect with the key (commands/submissions.ts).
      const idem = idempotent({ store: deps.store, clock: deps.clock, atomicEffects: true });
      router.post('/', async (ctx) => {
        if (ctx.get('new-api').toLowerCase() !== 'true') return handleEarlierFormat(ctx, deps);
        return idem(ctx, () => handleNewFormat(ctx, deps));
      });
      const perMinute = deps.config.dryRunRateLimit.perMinute;
      const dryRunLimit = workspaceRateLimiter({ perSecond: perMinute / 60, burst: perMinute });
      router.post('/dry-run', (ctx) => handleDryRun(ctx, deps, dryRunLimit));
      router.get('/requirements', (ctx) => {
        const { country, base, variant } = ctx.query;
        for (const [name, value] of Object.entries({ country, base })) {
          if (typeof value !== 'string' || value === '') throw new HttpProblem(400, `query parameter ${name} is required`, { path: ['query', name] });
        }
        const result = requirementsCatalogue({
          country: country as string,
          base: base as string,
          modifiers: csv(ctx.query.modifiers),
          variant: typeof variant === 'string' && variant !== '' ? variant : null,
        });
        if (!result.ok) {
          const e = result.error as DomainError & { segments: readonly (string | number)[] };
          throw new HttpProblem(400, e.message, { path: ['query', ...e.segments.slice(0, 1)] });
        }
        ctx.body = result.value;
      });
      return router;
    },
  };
}
