/**
 * The Koa application: request context, the one error middleware, the system routes, and one
 * router per API family behind that family's authentication.
 */
import Router from '@koa/router';
import Koa from 'koa';
import compose from 'koa-compose';
import type { Knex } from 'knex';
import type { EventStore } from '../platform/eventstore/port.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { ApiKeyCache } from '../readmodels/keys.js';
import type { CompanySourceLookups } from '../readmodels/connect.js';
import type { SearchIndex } from '../readmodels/search/port.js';
import { createAuthenticator, refuseWorkspaceHeaders, type Authenticator } from './auth.js';
import { jsonBody } from './body.js';
import { errorMiddleware } from './error-middleware.js';
import { HttpProblem, type Family } from './errors.js';
import type { ReadinessProbe } from './health.js';
import { workspaceRateLimit } from './rate-limit.js';
import { writeLimit, type WriteLimiter } from './write-limit.js';
import { requestContext } from './request-context.js';
import { jsonAnswers } from './json-answer.js';
import { documentationRoutes } from './openapi/routes.js';
import { recordHttpRequest } from '../platform/metrics.js';
import { AS4_PATH, as4Middleware, type As4Endpoint } from './as4/routes.js';
import type { ResponseTransport } from '../commands/purchases/respond.js';
import type { PeppolDiscovery } from '../commands/peppol/discovery/index.js';

export interface HttpDeps {
  config: Config;
  knex: Knex;
  store: EventStore;
  runner: ProjectionRunner;
  clock: Clock;
  logger: Logger;
  keys: ApiKeyCache;
  /** The source and company lookup of submissions (recent answers; Connect writes drop their workspace's). */
  sources: CompanySourceLookups;
  readiness: ReadinessProbe;
  /** Where the invoice query searches (fed by the search projection). */
  search: SearchIndex;
  /** The Peppol access point's AS4 endpoint (POST /as4), when the access point is configured. */
  as4?: As4Endpoint | null;
  /** Sends a buyer's answer to a purchase received over AS4 (the access point's), when configured. */
  peppolResponses?: ResponseTransport | null;
  /** The access point's SML/SMP discovery (participant lookup in production), when configured. */
  peppolDiscovery?: PeppolDiscovery | null;
}

/** What a family contributes: its routes, mounted under its prefix behind its authentication. */
export interface FamilyRoutes {
  family: Family;
  prefix: string;
  routes(deps: HttpDeps, auth: Authenticator): Router;
}

/** Longest wait of an unknown key for the key read model to reach the log's head. */
const KEY_CATCH_UP_MS = 2000;

const methodNotAllowed = () => new HttpProblem(405, 'method not allowed on this route');

/** A route as registered on the application's routers (for tools and tests that walk them). */
export interface RegisteredRoute {
  family: Family;
  /** The router's path pattern, e.g. `/v3/connect/companies/:companyId/branches`. */
  path: string;
  methods: string[];
}

const registered = new WeakMap<Koa, RegisteredRoute[]>();

function register(app: Koa, family: Family, router: Router): void {
  for (const layer of router.stack) {
    if (layer.methods.length > 0) registerRoute(app, { family, path: String(layer.path), methods: layer.methods.filter((m) => m !== 'HEAD') });
  }
}

/** A route served by a middleware of its own rather than a router (the AS4 endpoint). */
function registerRoute(app: Koa, route: RegisteredRoute): void {
  const list = registered.get(app) ?? [];
  list.push(route);
  registered.set(app, list);
}

/** Every route the application's routers registered, read from the routers themselves. */
export function registeredRoutes(app: Koa): RegisteredRoute[] {
  return [...(registered.get(app) ?? [])];
}

export function mountFamily(app: Koa, deps: HttpDeps, auth: Authenticator, family: FamilyRoutes, limiter?: WriteLimiter): void {
  const router = family.routes(deps, auth);
  register(app, family.family, router);
  const familyMiddleware: Koa.Middleware[] = [auth.middleware(family.family)];
  if (family.family === 'connect') familyMiddleware.push(workspaceRateLimit(deps.config.connectRateLimit));
  // The one bound on executing write requests, shared by every family (before the body is read).
  if (limiter) familyMiddleware.push(limiter);
  familyMiddleware.push(jsonBody(deps.config.http.bodyLimitBytes));
  const under = (path: string) => path === family.prefix || path.startsWith(`${family.prefix}/`);
  const chain = compose([
    ...familyMiddleware,
    router.routes() as Koa.Middleware,
    router.allowedMethods({ throw: true, methodNotAllowed, notImplemented: methodNotAllowed }) as Koa.Middleware,
  ]);
  app.use(async (ctx, next) => (under(ctx.path) ? chain(ctx) : next()));
}

/** The system routes: health, readiness, the OpenAPI document, its reference page, metrics. */
export function systemRouter(deps: HttpDeps, auth: Authenticator): Router {
  const system = new Router();
  system.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  // Optionally authenticated: with a key, the answer also names the key's workspace.
  system.get('/readyz', auth.middleware('system', { optional: true }), (ctx) => {
    const state = deps.readiness.state;
    ctx.status = state.ready ? 200 : 503;
    ctx.body = { status: state.ready ? 'ready' : 'not_ready', ...state, workspaceId: ctx.state.auth?.workspaceId };
  });
  documentationRoutes(system);
  return system;
}

/** Duration and count of every request by family, route template and status (platform/metrics.ts). */
async function httpMetrics(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const started = performance.now();
  try {
    await next();
  } finally {
    recordHttpRequest(
      { family: ctx.state.family ?? 'system', route: ctx._matchedRoute ?? 'unmatched', method: ctx.method, status: ctx.status },
      (performance.now() - started) / 1000,
    );
  }
}

export function createHttpApp(deps: HttpDeps, families: readonly FamilyRoutes[]): Koa {
  const app = new Koa({ proxy: false });
  const auth = createAuthenticator(deps.keys, deps.clock, async () => {
    await deps.runner.waitFor(await deps.store.committedHead(), { timeoutMs: KEY_CATCH_UP_MS, projections: ['workspaces'] });
  });
  app.use(requestContext(deps.logger));
  app.use(jsonAnswers);
  app.use(httpMetrics);
  app.use(errorMiddleware(deps.logger));
  // Other access points authenticate by signature, not by API key: before the families.
  if (deps.as4) {
    app.use(as4Middleware(deps.as4, deps.logger));
    registerRoute(app, { family: 'system', path: AS4_PATH, methods: ['POST'] });
  }
  app.use(async (ctx, next) => {
    refuseWorkspaceHeaders(ctx);
    await next();
  });

  const system = systemRouter(deps, auth);
  register(app, 'system', system);
  app.use(system.routes());
  app.use(system.allowedMethods({ throw: true, methodNotAllowed, notImplemented: methodNotAllowed }));

  const limiter = writeLimit(deps.config.writeLimit);
  for (const family of families) mountFamily(app, deps, auth, family, limiter);
  return app;
}
