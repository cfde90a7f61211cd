/**
 * Connect companies and sources (the Connect section of the OpenAPI document): onboarding (single and jobs), listing and
 * reading sources, updating and archiving them, branches (single and bulk), document counts.
 * Handlers decode input with the domain's rules, call a command or a query, and shape the
 * response; writes wait for the companies projection so that a read right after sees them.
 */
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import {
  addBranch,
  addBranches,
  archiveSource,
  onboardCompany,
  updateSource,
  type ConnectCommandDeps,
} from '../../commands/connect/companies.js';
import { INTERNAL_ERROR, rowFailure, runOnboardingJob } from '../../commands/connect/onboarding-jobs.js';
import { SandboxParticipantProvisioning, type ParticipantProvisioning } from '../../commands/connect/provisioning.js';
import { loadConnectSettings } from '../../commands/connect/settings.js';
import { loadAggregate } from '../../commands/execute.js';
import type { Position } from '../../platform/eventstore/port.js';
import { checkBranchAllowed, companyDecider } from '../../domain/connect/company.js';
import {
  echoText,
  isPlainObject,
  parseBranch,
  parseBranchBulk,
  parseCompanyCreation,
  parseCompanyId,
  parseCompanyListQuery,
  parseCountsQuery,
  parseOnboardingJob,
  parseSourceAddress,
  parseSourcePatch,
} from '../../domain/connect/input.js';
import { ENVIRONMENT_MISMATCH, onboardingEnvironmentMismatch, rowEnvironmentMismatches, type EnvironmentMismatch } from '../../domain/connect/environment.js';
import { ConnectErrorCodes, companyStream } from '../../domain/connect/values.js';
import { DomainError } from '../../domain/errors.js';
import { companyExistsInWorkspace, countDocuments, findCompanySource, listCompanySources } from '../../readmodels/connect.js';
import type { FamilyRoutes, HttpDeps } from '../app.js';
import { assumeProductionEnvironment } from './write-guards.js';
import { requireWritePermission, type AuthContext } from '../auth.js';
import { HttpProblem } from '../errors.js';
import { idempotent } from '../idempotency.js';
import { commandContext } from '../request-context.js';
import { connectErrors } from './errors.js';
import {
  branchResult,
  companyCreationData,
  listItem,
  ok,
  onboardingJobData,
  rowError,
  sourceDetail,
  viewFromRow,
  viewFromState,
} from './present.js';

export const CONNECT_PREFIX = '/v3/connect';
/** The projections a Connect read depends on. */
const READ_MODELS = ['connect_companies'];

export interface ConnectRoutesOptions {
  /** The participant-provisioning adapter; the sandbox adapter by default. */
  provisioning?: ParticipantProvisioning;
  provisioningTimeoutMs?: number;
  /** Rows of an onboarding job processed at once. */
  onboardingConcurrency?: number;
}

const auth = (ctx: Context) => ctx.state.auth as AuthContext;

async function writeAccess(ctx: Context, next: Next): Promise<void> {
  requireWritePermission(ctx);
  await next();
}

/** A key onboards only into the environments it serves (docs/api/http.md). */
function refuseEnvironmentMismatch(mismatch: EnvironmentMismatch | null): void {
  if (mismatch) throw new HttpProblem(403, mismatch.message, { code: ENVIRONMENT_MISMATCH, path: mismatch.path, retryable: false });
}

function noBody(ctx: Context): void {
  const body = ctx.request.body;
  if (body !== undefined && !(isPlainObject(body) && Object.keys(body).length === 0)) {
    const field = isPlainObject(body) ? Object.keys(body)[0]! : null;
    throw new HttpProblem(400, field ? `unknown field "${field.slice(0, 40)}"` : 'this request takes no body', {
      code: ConnectErrorCodes.validation,
      path: field ? [field] : [],
      retryable: false,
    });
  }
}

export function connectFamily(options: ConnectRoutesOptions = {}): FamilyRoutes {
  return {
    family: 'connect',
    prefix: CONNECT_PREFIX,
    routes(deps: HttpDeps) {
      const router = new Router({ prefix: CONNECT_PREFIX });
      const commands: ConnectCommandDeps = {
        store: deps.store,
        clock: deps.clock,
        provisioning: options.provisioning ?? new SandboxParticipantProvisioning(deps.store),
        provisioningTimeoutMs: options.provisioningTimeoutMs ?? 10_000,
      };
      const idem = idempotent({ store: deps.store, clock: deps.clock });
      const write = [writeAccess, idem, connectErrors] as const;
      const read = connectErrors;
      // Once the read model holds the write, this instance's submissions see it at once.
      const settle = async (position: Position | null, ctx: Context) => {
        if (position) await deps.runner.waitFor(position, { timeoutMs: deps.config.projections.waitTimeoutMs, projections: READ_MODELS });
        deps.sources.forgetWorkspace(auth(ctx).workspaceId);
      };
      const cmdCtx = (ctx: Context) => commandContext(ctx, deps.clock);

      router.post('/companies', ...write, async (ctx) => {
        const input = parseCompanyCreation(ctx.request.body);
        refuseEnvironmentMismatch(onboardingEnvironmentMismatch(auth(ctx).environment, input.platformEnvironment));
        const result = await onboardCompany(commands, auth(ctx).workspaceId, input, cmdCtx(ctx));
        await settle(result.position, ctx);
        ok(ctx, 201, companyCreationData(result.company, result.source));
      });

      router.get('/companies', read, async (ctx) => {
        const query = parseCompanyListQuery(ctx.query);
        const { total, rows } = await listCompanySources(deps.knex, auth(ctx).workspaceId, query);
        const totalPages = Math.ceil(total / query.limit);
        ok(
          ctx,
          200,
          rows.map((r) => listItem(viewFromRow(r))),
          {
            pagination: { page: query.page, limit: query.limit, total, totalPages, hasMore: query.page < totalPages },
            filters: { countryCode: query.countryCode, sourceVersion: query.sourceVersion, status: query.status, search: query.search },
            sort: { field: 'updatedAt', order: 'desc' },
          },
        );
      });

      router.post('/companies/onboarding-jobs', ...write, async (ctx) => {
        const job = parseOnboardingJob(ctx.request.body);
        refuseEnvironmentMismatch(onboardingEnvironmentMismatch(auth(ctx).environment, job.platformEnvironment));
        const refusedRows = new Map(
          [...rowEnvironmentMismatches(auth(ctx).environment, job.rows)].map(([i, m]) => [i, { code: ENVIRONMENT_MISMATCH, message: m.message, retryable: false }]),
        );
        const result = await runOnboardingJob(commands, auth(ctx).workspaceId, job, cmdCtx(ctx), {
          concurrency: options.onboardingConcurrency ?? 8,
          refusedRows,
          onUnexpectedError: (rowIndex, err) =>
            deps.logger.error({ requestId: ctx.state.requestId, rowIndex, err }, 'onboarding-job row failed unexpectedly'),
        });
        await settle(result.position, ctx);
        ok(ctx, 200, onboardingJobData(result.job, result.outcomes, job.rows));
      });

      router.post('/companies/:companyId/branches', ...write, async (ctx) => {
        const companyId = parseCompanyId(ctx.params.companyId!);
        const input = parseBranch(ctx.request.body);
        const result = await addBranch(commands, auth(ctx).workspaceId, companyId, input, cmdCtx(ctx));
        await settle(result.position, ctx);
        ok(ctx, 201, branchResult(result.company, result.source));
      });

      router.post('/companies/:companyId/branches/bulk', ...write, async (ctx) => {
        const companyId = parseCompanyId(ctx.params.companyId!);
        const items = parseBranchBulk(ctx.request.body);
        const workspaceId = auth(ctx).workspaceId;
        const settings = await loadConnectSettings(deps.store, workspaceId);
        const heads = items.map((item) => {
          const echo = (field: string) => (isPlainObject(item) ? echoText(item[field]) : null);
          return { branchName: echo('branchName'), sourceName: echo('sourceName'), sourceVersion: echo('sourceVersion') };
        });
        const parsed = items.map((item) => {
          try {
            return { ok: true as const, input: parseBranch(item, 'the branch') };
          } catch (err) {
            return { ok: false as const, error: err };
          }
        });
        const valid = parsed.flatMap((p) => (p.ok ? [p.input] : []));
        // Branches are added side by side where they can be (commands/connect/companies.ts addBranches).
        const added = await addBranches(commands, workspaceId, companyId, valid, { ...cmdCtx(ctx), now: deps.clock.now() }, { settings });
        const results = [];
        let last: Position | null = null;
        let next = 0;
        for (const [i, p] of parsed.entries()) {
          const outcome = p.ok ? added[next++]! : { ok: false as const, error: p.error };
          if (outcome.ok) {
            last = outcome.result.position ?? last;
            results.push({ ...heads[i]!, success: true, data: branchResult(outcome.result.company, outcome.result.source) });
            continue;
          }
          const failure = rowFailure(outcome.error);
          if (failure.code === INTERNAL_ERROR) {
            deps.logger.error({ requestId: ctx.state.requestId, err: outcome.error }, 'branch of a bulk request failed unexpectedly');
          }
          results.push({ ...heads[i]!, success: false, error: rowError(failure) });
        }
        await settle(last, ctx);
        const succeeded = results.filter((r) => r.success).length;
        ok(ctx, 200, { companyId, processed: results.length, succeeded, failed: results.length - succeeded, results });
      });

      router.get('/companies/:sourceName', read, async (ctx) => {
        const address = parseSourceAddress(ctx.params.sourceName!, ctx.query);
        const row = await findCompanySource(deps.knex, auth(ctx).workspaceId, address.sourceName, address.sourceVersion);
        if (!row) {
          throw new DomainError('not_found', ConnectErrorCodes.companyNotFound, 'no company source with that name and version in the workspace');
        }
        ok(ctx, 200, sourceDetail(viewFromRow(row)));
      });

      router.patch('/companies/:sourceName', ...write, async (ctx) => {
        const address = parseSourceAddress(ctx.params.sourceName!, ctx.query);
        const patch = parseSourcePatch(ctx.request.body);
        const result = await updateSource(commands, auth(ctx).workspaceId, address, patch, cmdCtx(ctx));
        await settle(result.position, ctx);
        ok(ctx, 200, sourceDetail(viewFromState(result.company, result.source)));
      });

      router.delete('/companies/:sourceName', ...write, async (ctx) => {
        const address = parseSourceAddress(ctx.params.sourceName!, ctx.query);
        noBody(ctx);
        const result = await archiveSource(commands, auth(ctx).workspaceId, address, cmdCtx(ctx));
        await settle(result.position, ctx);
        ok(ctx, 200, { archived: true, companyId: result.company.companyId, sourceName: result.source.sourceName });
      });

      router.get('/invoices/counts', read, async (ctx) => {
        if (ctx.get('x-environment').trim() === '') assumeProductionEnvironment(ctx);
        const query = parseCountsQuery(ctx.query, ctx.get('x-environment'));
        const workspaceId = auth(ctx).workspaceId;
        if (query.companyId !== null && !(await companyExistsInWorkspace(deps.knex, workspaceId, query.companyId))) {
          throw new DomainError('not_found', ConnectErrorCodes.companyNotFound, 'no company with that id in the workspace', ['query', 'companyId']);
        }
        const counts = await countDocuments(deps.knex, workspaceId, query);
        ok(ctx, 200, counts, {
          filters: {
            countryCode: query.countryCode,
            environment: query.environment,
            companyId: query.companyId,
            documentType: query.documentType,
            from: query.from,
            to: query.to,
          },
        });
      });

      return router;
    },
  };
}
