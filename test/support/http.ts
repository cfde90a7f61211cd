/**
 * HTTP test harness: the real service (Koa on an ephemeral port) against the test database,
 * with an injectable clock, plus helpers to create workspaces and keys through the commands.
 */
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import type { Position } from '../../platform/eventstore/port.js';
import { createApiKey, createWorkspace, deleteWorkspace, revokeApiKey } from '../../commands/workspaces.js';
import type { FamilyRoutes } from '../../http/app.js';
import { startService, type Service, type ServiceOptions } from '../../http/service.js';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Database } from '../../platform/database.js';
import { createLogger } from '../../platform/logger.js';
import type { Runtime } from '../../commands/runtime.js';
import { testConfig, testDb } from './db.js';
import { checkResponseAgainstDocument } from './openapi-check.js';

export interface KeyOptions {
  environment?: 'sandbox' | 'production';
  permission?: 'read' | 'read_write';
  role?: 'owner' | 'admin' | 'partner' | 'member';
  expiresAt?: string | null;
}

export interface TestService {
  url: string;
  service: Service;
  clock: Clock;
  /** Waits until every projection has applied the event at `position`. */
  settle(position: Position): Promise<void>;
  /** Waits until every projection has applied everything committed so far. */
  settleAll(): Promise<void>;
  workspace(name?: string): Promise<string>;
  key(workspaceId: string, options?: KeyOptions): Promise<{ keyId: string; apiKey: string }>;
  /** A new workspace with one key (read_write owner in sandbox unless told otherwise). */
  tenant(options?: KeyOptions): Promise<{ workspaceId: string; keyId: string; apiKey: string }>;
  revoke(keyId: string): Promise<void>;
  deleteWorkspace(workspaceId: string): Promise<void>;
  close(): Promise<void>;
}

export async function startTestService(
  options: {
    clock?: Clock;
    extraFamilies?: FamilyRoutes[];
    config?: (c: Config) => Config;
    startWorkers?: boolean;
    /** Replace the service's reactors and workers (e.g. none, to keep documents where a test left them). */
    processes?: ServiceOptions['processes'];
    /** Another database than the test process's one (a test that needs a log of its own). */
    db?: Database;
  } = {},
): Promise<TestService> {
  const base = testConfig();
  const config: Config = (options.config ?? ((c) => c))({
    ...base,
    http: { ...base.http, port: 0 },
    connectRateLimit: { perSecond: 0, burst: 0 },
    // Suites that send many writes at once judge their own answers; the back-pressure has its own suite.
    writeLimit: { ...base.writeLimit, concurrency: 0 },
  });
  const db = options.db ?? testDb();
  const store = await PostgresEventStore.connect(db.url, { poolSize: 20 });
  const runtime: Runtime = { config, db, store, close: () => store.close() };
  const clock = options.clock ?? systemClock;
  const service = await startService({
    config,
    runtime,
    clock,
    port: 0,
    logger: createLogger('silent'),
    extraFamilies: options.extraFamilies ?? [],
    startWorkers: options.startWorkers ?? true,
    ...(options.processes ? { processes: options.processes } : {}),
  });
  const settle = async (position: Position) => {
    if (!(await service.runner.waitFor(position, { timeoutMs: 10000 }))) throw new Error('projections did not catch up');
  };
  const ctx = () => ({ now: clock.now(), actor: 'test' });
  const harness: TestService = {
    url: service.url,
    service,
    clock,
    settle,
    async settleAll() {
      await settle(await store.committedHead());
    },
    async workspace(name = 'Test workspace') {
      const { workspaceId, position } = await createWorkspace(store, name, ctx());
      await settle(position);
      return workspaceId;
    },
    async key(workspaceId, o = {}) {
      const created = await createApiKey(
        store,
        {
          workspaceId,
          environment: o.environment ?? 'sandbox',
          permission: o.permission ?? 'read_write',
          role: o.role ?? 'owner',
          expiresAt: o.expiresAt ?? null,
        },
        ctx(),
      );
      await settle(created.position);
      return { keyId: created.keyId, apiKey: created.apiKey };
    },
    async tenant(o = {}) {
      const workspaceId = await harness.workspace();
      return { workspaceId, ...(await harness.key(workspaceId, o)) };
    },
    async revoke(keyId) {
      const r = await revokeApiKey(store, db.knex, keyId, ctx());
      if (r.position) await settle(r.position);
    },
    async deleteWorkspace(workspaceId) {
      const r = await deleteWorkspace(store, workspaceId, ctx());
      await settle(r.position);
    },
    async close() {
      await service.close();
      await store.close();
    },
  };
  return harness;
}

/** fetch with a JSON body; returns status, headers, raw text and parsed JSON (when JSON). */
export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
) {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const method = init.method ?? (body !== undefined ? 'POST' : 'GET');
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let json: any = undefined;
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(text);
  const result = { status: res.status, headers: res.headers, text, json };
  // Every response a suite receives must be what the OpenAPI document promises.
  checkResponseAgainstDocument(method, url, result);
  return result;
}

/** No reactors and no workers: submitted documents stay submitted (tests of the submission itself). */
export const withoutProcesses: NonNullable<ServiceOptions['processes']> = () => ({
  reactors: [],
  workers: [],
  connectors: { connectorFor: () => null, missing: () => [] },
});
