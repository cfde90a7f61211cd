/**
 * `npm run bench:http-layer`: the server's CPU per submission request spent in the HTTP layer
 * alone. The service's Koa application (http/app.ts createHttpApp: request context and its log
 * line, JSON answers, metrics, the error middleware, authentication, the write limit, the JSON body)
 * serves a Unify family whose handler does the request side of a new-format submission (decode of
 * the envelope, the payload's limits, the document type, the command context, the unknown fields)
 * and answers as an accepted submission does (27 KB of XML as Base64XML), with no core, database,
 * read model or delivery: no append, the key and source lookups answered from memory. The server is
 * a separate process with the service's node flags; autocannon sends the `bench:submit` request
 * body (20 lines, a fresh document number each) on 64 connections. Prints requests/s, the server's
 * CPU per request and its collections; asserts nothing.
 *
 *   node --import tsx scripts/bench-http-layer.ts [--seconds 10] [--port 3922] [--wait-ms 0] [--hold-body]
 *
 * --wait-ms: the handler waits this long before it answers (as a submission waits for its append
 * and the read models); --hold-body: a suspended frame keeps the parsed body through that wait (as
 * the Unify handler's frames did before the submission took the body over).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import Router from '@koa/router';
import type { Context } from 'koa';
import autocannon from 'autocannon';
import { Command } from 'commander';
import { createHttpApp, type FamilyRoutes, type HttpDeps } from '../http/app.js';
import { requireWritePermission } from '../http/auth.js';
import { decode } from '../http/decode.js';
import { HttpProblem } from '../http/errors.js';
import { idempotent } from '../http/idempotency.js';
import { base64Json } from '../http/json-answer.js';
import { commandContext } from '../http/request-context.js';
import { NewSubmission } from '../http/unify/codecs.js';
import { payloadUnknownFields, unknownFieldWarnings } from '../http/unify/warnings.js';
import { payloadLimitProblem } from '../domain/validation/limits.js';
import type { UnknownField } from '../domain/validation/codec.js';
import { checkDocumentType, IDENTITY_TEMPLATE_ID } from '../domain/validation/index.js';
import { systemClock } from '../platform/clock.js';
import { loadConfig } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';
import { SERVICE_NODE_FLAGS, fmtInt, positiveInt, submissionBody } from './bench-support.js';

interface GcCounts {
  scavenges: number;
  full: number;
  pauseMs: number;
}

/** The request side of a new-format submission (its locals end with it: see commands/submit.ts). */
function requestSide(ctx: Context, d: HttpDeps): { requestId: string; unknown: UnknownField[] } {
  requireWritePermission(ctx);
  const decoded = decode(NewSubmission, ctx.request.body);
  if (!decoded.ok) throw new HttpProblem(400, decoded.problems[0]!.message, { path: decoded.problems[0]!.path ?? [] });
  const body = decoded.value;
  const limit = payloadLimitProblem(body.payload);
  if (limit) throw new HttpProblem(413, limit.message, { path: ['payload', ...limit.path] });
  const documentType = checkDocumentType(body.country, { base: body.documentType.base, modifiers: body.documentType.modifiers, variant: body.documentType.variant ?? null });
  if (!documentType.ok) throw new HttpProblem(400, documentType.error.message, { path: ['documentType'] });
  const cmdCtx = { ...commandContext(ctx, d.clock), environment: body.environment };
  return { requestId: cmdCtx.requestId ?? '', unknown: payloadUnknownFields(body.payload, IDENTITY_TEMPLATE_ID) };
}

function serve(port: number, waitMs: number, holdBody: boolean): void {
  const gc: GcCounts = { scavenges: 0, full: 0, pauseMs: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === 1) gc.scavenges++;
      else if (kind === 4) gc.full++;
      gc.pauseMs += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
  const key = { keyId: 'key_bench', keyPrefix: 'bench', workspaceId: 'ws_bench', environment: 'sandbox', permission: 'read_write', role: 'owner', expiresAt: null, revokedAt: null, createdAt: new Date(), workspaceActive: true };
  // Only what this family's middleware and handler use; the rest of HttpDeps is never reached.
  const deps = { config, clock: systemClock, logger: createLogger(config.logLevel), keys: { lookup: async () => key }, store: {} } as unknown as HttpDeps;
  const xml = Buffer.alloc(27_000, 'x');
  let sequence = 0;
  const unify: FamilyRoutes = {
    family: 'unify',
    prefix: '/api/v3/unify',
    routes(d) {
      const router = new Router({ prefix: '/api/v3/unify' });
      const idem = idempotent({ store: d.store, clock: d.clock, atomicEffects: true });
      router.post('/', (ctx) =>
        idem(ctx, async () => {
          const { requestId, unknown } = requestSide(ctx, d);
          // The parsed body through the wait: held by this suspended function, or by nothing.
          const held = holdBody ? ctx.request.body : undefined;
          ctx.request.body = undefined;
          if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
          if (held !== undefined && typeof held !== 'object') throw new Error('the held body is not an object');
          ctx.status = 200;
          ctx.body = {
            documentId: `doc_${++sequence}`,
            documentNumber: requestId,
            kind: 'document',
            message: 'The document passed validation and is queued for delivery.',
            Base64XML: base64Json(xml),
            warnings: unknownFieldWarnings(unknown),
          };
        }),
      );
      return router;
    },
  };
  const server = http.createServer(createHttpApp(deps, [unify]).callback());
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1', () => process.send?.('ready'));
  process.on('message', (m) => {
    if (m === 'figures') process.send?.({ cpu: process.cpuUsage(), gc: { ...gc } });
    if (m === 'exit') process.exit(0);
  });
}

async function run(options: { seconds: number; port: number; waitMs: number; holdBody: boolean }): Promise<void> {
  const extra = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const args = [...SERVICE_NODE_FLAGS, ...extra, '--import', 'tsx', 'scripts/bench-http-layer.ts', '--serve', '--port', String(options.port), '--wait-ms', String(options.waitMs), ...(options.holdBody ? ['--hold-body'] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
  const figures = () =>
    new Promise<{ cpu: NodeJS.CpuUsage; gc: GcCounts }>((resolve) => {
      child.once('message', (m) => resolve(m as { cpu: NodeJS.CpuUsage; gc: GcCounts }));
      child.send('figures');
    });
  const body = submissionBody('bench ERP:v1');
  let n = 0;
  const load = (seconds: number) =>
    autocannon({
      url: `http://127.0.0.1:${options.port}/api/v3/unify`,
      connections: 64,
      duration: seconds,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'new-api': 'true', authorization: 'Bearer bench' },
      requests: [{ setupRequest: (req) => ({ ...req, body: body(`HTTP-LAYER-${++n}`) }) }],
    });
  try {
    await load(2); // warm-up
    const before = await figures();
    const result = await load(options.seconds);
    const after = await figures();
    const requests = result.requests.total;
    const per = (us: number) => (us / requests).toFixed(1);
    const gc = { scavenges: after.gc.scavenges - before.gc.scavenges, full: after.gc.full - before.gc.full, pauseMs: after.gc.pauseMs - before.gc.pauseMs };
    console.log(`HTTP layer alone, 64 connections, ${options.seconds} s, wait ${options.waitMs} ms, parsed body ${options.holdBody ? 'held' : 'handed over'} through the wait:`);
    console.log(`  ${fmtInt(requests)} requests (${result.non2xx} not 2xx), ${fmtInt(requests / options.seconds)}/s, p50 ${result.latency.p50} ms`);
    console.log(`  server CPU per request ${per(after.cpu.user - before.cpu.user + after.cpu.system - before.cpu.system)} µs (user ${per(after.cpu.user - before.cpu.user)}, system ${per(after.cpu.system - before.cpu.system)})`);
    console.log(`  collections per 1,000 requests: ${((gc.scavenges * 1000) / requests).toFixed(1)} scavenges, ${((gc.full * 1000) / requests).toFixed(2)} full; main-thread pauses ${((gc.pauseMs * 1000) / requests).toFixed(1)} µs per request`);
  } finally {
    child.send('exit');
  }
}

const program = new Command('bench-http-layer')
  .option('--seconds <n>', 'duration of the measured run', positiveInt(3600), 10)
  .option('--port <n>', 'server port', positiveInt(65535), 3922)
  .option('--wait-ms <n>', 'how long the handler waits before it answers', (v) => Number(v), 0)
  .option('--hold-body', 'keep the parsed body through the wait', false)
  .option('--serve', '(internal) run as the server', false)
  .parse();
const opts = program.opts<{ seconds: number; port: number; waitMs: number; holdBody: boolean; serve: boolean }>();
if (opts.serve) serve(opts.port, opts.waitMs, opts.holdBody);
else await run(opts);
