/**
 * Credits (docs/api/credits.md), under /v3/connect/credits with Connect's authentication, rate limit and
 * error envelope. Writes need a read-and-write key of an owner, admin or partner, an
 * Idempotency-Key, and a valid X-Environment (its data environment labels the events); they
 * answer from the aggregate and wait for the read models so a read right after sees them.
 * Reads are not filtered by environment. Exports are reads: any key of the workspace may ask
 * for one (with an Idempotency-Key) and download it from GET /exports/{exportId}/download.
 */
import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { cancelScheduled, pauseOrResume, putAllowance, type AllowanceWriteResult, type CreditsDeps } from '../../commands/credits/allowances.js';
import { submitBulkJob } from '../../commands/credits/bulk.js';
import { requestExport } from '../../commands/credits/exports.js';
import { creditsEngine } from '../../commands/credits/snapshots.js';
import type { Position } from '../../platform/eventstore/port.js';
import {
  parseActionBody,
  parseAllowanceBody,
  parseAllowanceListQuery,
  parseBulkBody,
  parseCompanyIdParam,
  parseExportBody,
  parseLedgerQuery,
  parsePrecondition,
  encodeCursor,
  isPlainObject,
} from '../../domain/credits/input.js';
import { CreditErrorCodes, type AllowanceTarget } from '../../domain/credits/values.js';
import { DomainError } from '../../domain/errors.js';
import {
  isOverAllocated,
  ledgerBefore,
  listCompanyCredits,
  listLedger,
  listLots,
  readBulkJob,
  readCompanyCredits,
  readExport,
  readPool,
  recentActivity,
} from '../../readmodels/credits.js';
import type { FamilyRoutes, HttpDeps } from '../app.js';
import type { AuthContext } from '../auth.js';
import { HttpProblem } from '../errors.js';
import { writeEnvironment, writerRoles } from '../connect/write-guards.js';
import { idempotent } from '../idempotency.js';
import { commandContext } from '../request-context.js';
import { ok } from '../connect/present.js';
import { CSV_COLUMNS, csvLine, csvRow } from './csv.js';
import { allowanceJson, bulkJobJson, companyStateFromFacts, exportJson, poolJson, quoted, transactionJson } from './present.js';

const writeAccess = writerRoles('credits');

export const CREDITS_PREFIX = '/v3/connect/credits';
/** The read models a credit write waits for. */
const BALANCES = ['credits'];
const JOBS = ['credits'];

const STATUS_BY_CODE: Record<string, number> = {
  [CreditErrorCodes.validation]: 400,
  [CreditErrorCodes.invalidEnvironment]: 400,
  [CreditErrorCodes.companyNotFound]: 404,
  [CreditErrorCodes.preconditionFailed]: 412,
  [CreditErrorCodes.preconditionRequired]: 428,
  [CreditErrorCodes.invalidTransition]: 409,
  [CreditErrorCodes.limitBelowUsage]: 409,
  [CreditErrorCodes.bulkJobNotFound]: 404,
  [CreditErrorCodes.exportNotFound]: 404,
  [CreditErrorCodes.exportNotReady]: 409,
  [CreditErrorCodes.exportExpired]: 410,
};
const STATUS_BY_KIND: Record<DomainError['kind'], number> = { validation: 400, not_found: 404, conflict: 409, precondition: 412, forbidden: 403 };

/** Route middleware: domain refusals leave as Connect problems with their status (docs/api/http.md). */
async function creditErrors(_ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } catch (err) {
    if (err instanceof DomainError) {
      throw new HttpProblem(STATUS_BY_CODE[err.code] ?? STATUS_BY_KIND[err.kind], err.message, {
        code: err.code,
        retryable: false,
        ...(err.path.length > 0 ? { path: err.path } : {}),
      });
    }
    throw err;
  }
}



/**
 * Every credit write needs an Idempotency-Key: a write moves credits, and a client retrying
 * after a time-out must get the first answer back instead of moving them twice.
 */
async function requireIdempotencyKey(ctx: Context, next: Next): Promise<void> {
  if (!ctx.get('idempotency-key')) {
    throw new HttpProblem(
      400,
      'the Idempotency-Key header is required on credit writes (and export requests), so that a retried write never moves credits twice: send a unique key (1 to 255 visible ASCII characters) per operation and reuse it only to retry that operation',
      { code: CreditErrorCodes.validation, path: ['headers', 'Idempotency-Key'], retryable: false },
    );
  }
  await next();
}

const auth = (ctx: Context) => ctx.state.auth as AuthContext;

export function creditsFamily(): FamilyRoutes {
  return {
    family: 'connect',
    prefix: CREDITS_PREFIX,
    routes(deps: HttpDeps) {
      const router = new Router({ prefix: CREDITS_PREFIX });
      const engine = creditsEngine(deps);
      const credits: CreditsDeps = { store: deps.store, engine };
      // Every credit write records its effect with the key (commands/idempotent-unit.ts).
      const idem = idempotent({ store: deps.store, clock: deps.clock, required: true, atomicEffects: true });
      const write = [writeAccess, writeEnvironment, requireIdempotencyKey, idem, creditErrors] as const;
      const read = creditErrors;
      const settle = async (position: Position | null, projections: string[]) => {
        if (position) await deps.runner.waitFor(position, { timeoutMs: deps.config.projections.waitTimeoutMs, projections });
      };
      const cmdCtx = (ctx: Context) => commandContext(ctx, deps.clock);
      const nowIso = () => deps.clock.now().toISOString();

      const answerWrite = async (ctx: Context, result: AllowanceWriteResult, data: Record<string, unknown>, status: number = result.status) => {
        await settle(result.outcome.position, BALANCES);
        ctx.set('ETag', quoted(result.version));
        ok(ctx, status, { companyId: result.view.companyId, ...data, warnings: result.warnings, replayed: false });
      };

      router.get('/pool', read, async (ctx) => {
        noQuery(ctx);
        const workspaceId = auth(ctx).workspaceId;
        const [pool, lots] = await Promise.all([readPool(deps.knex, workspaceId), listLots(deps.knex, workspaceId)]);
        ok(ctx, 200, poolJson(pool, lots, nowIso()));
      });

      router.get('/allowances', read, async (ctx) => {
        const query = parseAllowanceListQuery(ctx.query);
        const workspaceId = auth(ctx).workspaceId;
        const now = deps.clock.now();
        const pool = await readPool(deps.knex, workspaceId);
        const [page, overAllocated] = await Promise.all([
          listCompanyCredits(deps.knex, workspaceId, query, { now, poolAvailable: pool.available }),
          isOverAllocated(deps.knex, workspaceId, pool.available),
        ]);
        const asOf = now.toISOString();
        const last = page.items[page.items.length - 1];
        ok(ctx, 200, {
          items: page.items.map((f) => companyStateFromFacts(f, pool, overAllocated, asOf)),
          nextCursor: page.hasMore && last ? encodeCursor([last.companyId], query.filters) : null,
          asOf,
        });
      });

      router.get('/allowances/bulk/:jobId', read, async (ctx) => {
        noQuery(ctx);
        const jobId = ctx.params.jobId!;
        const job = /^cbj_[0-9a-f]{24}$/.test(jobId) ? await readBulkJob(deps.knex, auth(ctx).workspaceId, jobId) : null;
        if (!job) throw new DomainError('not_found', CreditErrorCodes.bulkJobNotFound, 'no bulk allowance job with that id in the workspace', ['path', 'jobId']);
        ok(ctx, 200, bulkJobJson(job));
      });

      router.get('/allowances/:companyId', read, async (ctx) => {
        noQuery(ctx);
        const companyId = parseCompanyIdParam(ctx.params.companyId!);
        const workspaceId = auth(ctx).workspaceId;
        const facts = await readCompanyCredits(deps.knex, workspaceId, companyId);
        if (!facts) throw new DomainError('not_found', CreditErrorCodes.companyNotFound, 'no company with that id in the workspace', ['path', 'companyId']);
        const pool = await readPool(deps.knex, workspaceId);
        const [overAllocated, activity] = await Promise.all([isOverAllocated(deps.knex, workspaceId, pool.available), recentActivity(deps.knex, workspaceId, companyId)]);
        const state = companyStateFromFacts(facts, pool, overAllocated, nowIso());
        ctx.set('ETag', quoted(facts.current?.version ?? 0));
        ok(ctx, 200, {
          ...state,
          recentActivity: activity.map(transactionJson),
          scheduledEtag: facts.scheduled ? quoted(facts.scheduled.version) : null,
        });
      });

      for (const target of ['current', 'scheduled'] as const satisfies readonly AllowanceTarget[]) {
        router.put(`/allowances/:companyId/${target}`, ...write, async (ctx) => {
          const companyId = parseCompanyIdParam(ctx.params.companyId!);
          const precondition = parsePrecondition(ctx.get('if-match'), ctx.get('if-none-match'), true);
          const input = parseAllowanceBody(ctx.request.body);
          const result = await putAllowance(credits, auth(ctx).workspaceId, companyId, target, precondition, input, cmdCtx(ctx));
          await answerWrite(ctx, result, { [target]: allowanceJson(result.allowance) });
        });
      }

      router.delete('/allowances/:companyId/scheduled', ...write, async (ctx) => {
        const companyId = parseCompanyIdParam(ctx.params.companyId!);
        const precondition = parsePrecondition(ctx.get('if-match'), ctx.get('if-none-match'), false);
        const { reason } = parseActionBody(emptyAsAbsent(ctx.request.body), false);
        const version = precondition.kind === 'version' ? precondition.version : 0;
        const result = await cancelScheduled(credits, auth(ctx).workspaceId, companyId, version, reason, cmdCtx(ctx));
        const cancelled = result.outcome.events.find((e) => e.type === 'AllowanceCancelled');
        await answerWrite(
          ctx,
          result,
          { scheduled: null, cancelled: cancelled && cancelled.type === 'AllowanceCancelled' ? allowanceJson(cancelled.data.allowance) : null },
          200,
        );
      });

      for (const action of ['pause', 'resume'] as const) {
        router.post(`/allowances/:companyId/${action}`, ...write, async (ctx) => {
          const companyId = parseCompanyIdParam(ctx.params.companyId!);
          const precondition = parsePrecondition(ctx.get('if-match'), ctx.get('if-none-match'), false);
          const { reason } = parseActionBody(action === 'pause' ? ctx.request.body : emptyAsAbsent(ctx.request.body), action === 'pause');
          const version = precondition.kind === 'version' ? precondition.version : 0;
          const result = await pauseOrResume(credits, auth(ctx).workspaceId, companyId, action, version, reason, cmdCtx(ctx));
          await answerWrite(ctx, result, { current: allowanceJson(result.allowance) }, 200);
        });
      }

      router.post('/allowances/bulk', ...write, async (ctx) => {
        const operations = parseBulkBody(ctx.request.body);
        const workspaceId = auth(ctx).workspaceId;
        const environment = ctx.state.environment as 'sandbox' | 'production';
        const { jobId, position } = await submitBulkJob(deps.store, { workspaceId, environment, operations }, cmdCtx(ctx));
        await settle(position, JOBS);
        ok(ctx, 202, {
          jobId,
          status: 'accepted',
          environment,
          totals: { total: operations.length, processed: 0, succeeded: 0, failed: 0 },
          statusUrl: `${CREDITS_PREFIX}/allowances/bulk/${jobId}`,
          replayed: false,
        });
      });

      router.get('/transactions', read, async (ctx) => {
        const query = parseLedgerQuery(ctx.query);
        const page = await listLedger(deps.knex, auth(ctx).workspaceId, query);
        const last = page.items[page.items.length - 1];
        ok(ctx, 200, {
          items: page.items.map(transactionJson),
          nextCursor: page.hasMore && last ? encodeCursor([last.logCommit, last.logPrepare], query.filters) : null,
        });
      });

      router.post('/exports', requireIdempotencyKey, idem, read, async (ctx) => {
        const { filters } = parseExportBody(ctx.request.body);
        const workspaceId = auth(ctx).workspaceId;
        // X-Correlation-Id is ignored on exports (docs/api/credits.md): the request id correlates.
        const c = cmdCtx(ctx);
        const { exportId, position } = await requestExport(deps.store, { workspaceId, filters }, { ...c, correlationId: c.requestId ?? null });
        await settle(position, JOBS);
        ok(ctx, 202, { exportId, status: 'accepted', format: 'csv', filters, statusUrl: `${CREDITS_PREFIX}/exports/${exportId}`, replayed: false });
      });

      const findExport = async (ctx: Context) => {
        const exportId = ctx.params.exportId!;
        const row = /^cex_[0-9a-f]{24}$/.test(exportId) ? await readExport(deps.knex, auth(ctx).workspaceId, exportId) : null;
        if (!row) throw new DomainError('not_found', CreditErrorCodes.exportNotFound, 'no export with that id in the workspace', ['path', 'exportId']);
        return row;
      };

      router.get('/exports/:exportId', read, async (ctx) => {
        noQuery(ctx);
        const row = await findExport(ctx);
        ok(ctx, 200, exportJson(row, deps.clock.now(), `${CREDITS_PREFIX}/exports/${row.exportId}/download`));
      });

      router.get('/exports/:exportId/download', read, async (ctx) => {
        noQuery(ctx);
        const row = await findExport(ctx);
        const shown = exportJson(row, deps.clock.now(), '');
        if (shown.status === 'expired') throw new DomainError('not_found', CreditErrorCodes.exportExpired, 'the export has expired: request a new one');
        if (shown.status !== 'completed') throw new DomainError('conflict', CreditErrorCodes.exportNotReady, `the export is ${shown.status}; download it once it is completed`);
        const workspaceId = auth(ctx).workspaceId;
        async function* lines() {
          yield csvLine(CSV_COLUMNS);
          for await (const r of ledgerBefore(deps.knex, workspaceId, row.filters, row.requestPosition)) yield csvRow(r);
        }
        ctx.status = 200;
        ctx.type = 'text/csv; charset=utf-8';
        ctx.set('Content-Disposition', `attachment; filename="credit-ledger-${row.exportId}.csv"`);
        ctx.body = Readable.from(lines());
      });

      return router;
    },
  };
}

/** A DELETE or resume may come without a body, or with an empty JSON object. */
function emptyAsAbsent(body: unknown): unknown {
  return isPlainObject(body) && Object.keys(body).length === 0 ? undefined : body;
}

function noQuery(ctx: Context): void {
  const key = Object.keys(ctx.query)[0];
  if (key !== undefined) {
    throw new HttpProblem(400, `unknown query parameter "${key.slice(0, 40)}"`, { code: CreditErrorCodes.validation, path: ['query', key], retryable: false });
  }
}
