/**
 * The whole service in one process: runtime (database, event store), projections, readiness
 * probe and the HTTP server. Used by `npm start` and by the HTTP test harness.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { systemClock, type Clock } from '../platform/clock.js';
import { loadConfig, type Config } from '../platform/config.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { openPeppolAccessPoint } from '../platform/peppol-pki.js';
import { openRuntime, type Runtime } from '../commands/runtime.js';
import { allProjections } from '../projections/index.js';
import { serviceProcesses, type ProcessDeps, type Processes } from '../projections/reactors/processes.js';
import { reactorProjection } from '../projections/reactors/reactor.js';
import { ProjectionRunner } from '../projections/runner.js';
import { ApiKeyCache } from '../readmodels/keys.js';
import { CompanySourceLookups } from '../readmodels/connect.js';
import { createSearchIndex } from '../readmodels/search/index.js';
import { withWorkerLease } from '../readmodels/worker-lease.js';
import { recordWorkerTick, setProjectionLagSource } from '../platform/metrics.js';
import { projectionLagSource } from '../projections/lag.js';
import type { Knex } from 'knex';
import { createHttpApp, type FamilyRoutes, type HttpDeps } from './app.js';
import { apiFamilies } from './families.js';
import { ReadinessProbe } from './health.js';

export interface Service {
  readonly url: string;
  /** The Koa application (its routes: registeredRoutes(app)). */
  readonly app: Koa;
  readonly processes: Processes;
  readonly runtime: Runtime;
  readonly runner: ProjectionRunner;
  readonly deps: HttpDeps;
  /** Stops accepting connections, finishes in-flight requests, stops workers, closes pools. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  config?: Config;
  clock?: Clock;
  logger?: Logger;
  /** Reuse an open runtime (tests); it is then not closed with the service. */
  runtime?: Runtime;
  /** Extra families (tests mount test routes this way). */
  extraFamilies?: FamilyRoutes[];
  /** Port to listen on (0 = ephemeral); defaults to config.http.port. */
  port?: number;
  /** The reactors and workers to run (tests may pass their own). */
  processes?: (deps: ProcessDeps) => Processes;
  /** False: workers are not ticked by timers (tests tick them with a manual clock). */
  startWorkers?: boolean;
  /**
   * False: the search projection does not run, so the search index is not fed (a benchmark
   * measures what the service costs without it; the invoice query then answers from a stale index).
   */
  searchProjection?: boolean;
}

/**
 * Ticks each worker on its interval; a tick never overlaps the previous one of the same worker,
 * and across instances sharing the database a worker's tick runs in one of them (worker lease).
 */
function startWorkers(workers: Processes['workers'], clock: Clock, logger: Logger, knex: Knex) {
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  for (const { worker, intervalMs } of workers) {
    const tick = () => {
      if (stopped) return;
      const run = withWorkerLease(knex, worker.name, () => worker.tick(clock.now()))
        .then((r) => recordWorkerTick(worker.name, r.ran ? 'ran' : 'elsewhere'))
        .catch((err) => {
          recordWorkerTick(worker.name, 'failed');
          logger.error({ err, worker: worker.name }, 'worker tick failed');
        })
        .finally(() => {
          running.delete(run);
          if (!stopped) timers.push(setTimeout(tick, intervalMs));
        });
      running.add(run);
    };
    worker.start?.();
    timers.push(setTimeout(tick, intervalMs));
  }
  return {
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await Promise.all(running);
    },
  };
}

/**
 * Requests Node's HTTP parser refuses (control bytes in a header, raw non-ASCII bytes in the
 * path, headers over 16 KB, …) never reach Koa, so no API family can be known: they are
 * answered here in the generic error shape `{code, message, requestId}` with `X-Request-Id`.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const requestId = `req_${randomUUID()}`;
  const body = JSON.stringify({
    code: tooLarge ? 'request_header_fields_too_large' : status === 408 ? 'request_timeout' : 'bad_request',
    message: tooLarge
      ? 'the request headers are larger than the server accepts (16 KB)'
      : status === 408
        ? 'the request was not received in time'
        : 'the request is not valid HTTP/1.1 (control characters or raw non-ASCII bytes in the request line or a header?)',
    requestId,
  });
  const reason = tooLarge ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function startService(options: ServiceOptions = {}): Promise<Service> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  // Before anything is opened: a keystore or trust store that is set but unloadable stops the start (ConfigError).
  const peppol = openPeppolAccessPoint(config.peppol, clock.now());
  if (peppol.accessPoint) {
    const { identity, config: p } = peppol.accessPoint;
    logger.info({ commonName: identity.commonName, smlZone: p.smlZone, endpointUrl: p.endpointUrl, revocationCheck: p.revocationCheck }, 'Peppol access point configured');
  } else if (peppol.missing.length < 4) {
    logger.warn({ missing: peppol.missing }, 'Peppol access point partly configured: production Peppol documents wait in delivery_failed until these are set');
  }
  const ownsRuntime = !options.runtime;
  const runtime = options.runtime ?? (await openRuntime(config, { log: (msg) => logger.info(msg) }));
  const { knex } = runtime.db;
  const processes = (options.processes ?? serviceProcesses)({
    config,
    knex,
    store: runtime.store,
    clock,
    log: (msg, fields) => logger.info(fields ?? {}, msg),
    peppol: peppol.accessPoint,
  });
  const search = createSearchIndex(config, knex);
  const projections = allProjections(options.searchProjection === false ? undefined : search);
  const runner = new ProjectionRunner(knex, runtime.store, [...projections, ...processes.reactors.map(reactorProjection)], {
    batchSize: config.projections.batchSize,
    batchBytes: config.projections.batchBytes,
    ownership: config.projections.ownership,
    log: (msg, fields) => logger.warn(fields ?? {}, msg),
  });
  await runner.init();
  runner.start();
  const workers = options.startWorkers === false ? null : startWorkers(processes.workers, clock, logger, knex);
  setProjectionLagSource(projectionLagSource(knex, runtime.store, runner.projections.map((p) => p.name)));
  const readiness = new ReadinessProbe(knex, runtime.store, runner, config.projections.stalledAfterMs, processes.connectors, peppol.missing);
  await readiness.check();
  readiness.start();

  const accessPoint = processes.accessPoint ?? null;
  // The AS4 endpoint's CPU-bound steps on worker threads when PEPPOL_RECEIVE_THREADS says so; by
  // default on the main thread: measured on 2 cores, the pool cost more CPU per message than it
  // spread (docs/benchmarks.md).
  const receiveThreads = config.peppol.receiveThreads ?? 0;
  // Loaded only then: the pool's library costs start-up time an instance without it need not spend.
  const as4Pool =
    accessPoint && receiveThreads > 0
      ? (await import('../commands/peppol/as4/receive-pool.js')).createAs4ReceivePool({
          identity: accessPoint.identity,
          maxPayloadBytes: accessPoint.receive.maxPayloadBytes,
          maxXmlBytes: config.purchases.maxXmlBytes,
          threads: receiveThreads,
        })
      : null;
  const as4 = accessPoint ? { receive: { ...accessPoint.receive, offload: as4Pool }, maxBodyBytes: accessPoint.maxBodyBytes } : null;
  const deps: HttpDeps = {
    config,
    knex,
    store: runtime.store,
    runner,
    clock,
    logger,
    keys: new ApiKeyCache(knex),
    sources: new CompanySourceLookups(knex),
    readiness,
    search,
    as4,
    peppolDiscovery: accessPoint?.discovery ?? null,
    peppolResponses: accessPoint?.responses ?? null,
  };
  const app = createHttpApp(deps, [...(options.extraFamilies ?? []), ...apiFamilies()]);
  const server = http.createServer(app.callback());
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? config.http.port, config.http.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${config.http.host}:${address.port}`;
  logger.info({ url, eventStore: runtime.store.engine }, 'service listening');
  if (!config.webhooks.secretEncryptionKey) {
    logger.warn('WEBHOOK_SECRET_ENCRYPTION_KEY is unset: webhook signing secrets are sealed with the public development key; set a key of your own outside development');
  }

  let closing: Promise<void> | null = null;
  return {
    url,
    app,
    processes,
    runtime,
    runner,
    deps,
    close() {
      closing ??= (async () => {
        readiness.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await as4Pool?.close();
        await workers?.stop();
        await Promise.all(processes.workers.map(({ worker }) => worker.stop?.()));
        await runner.stop();
        await search.close();
        if (ownsRuntime) await runtime.close();
      })();
      return closing;
    },
  };
}
