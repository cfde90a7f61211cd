/**
 * Service processes for the deployment tests: `scripts/start.ts` started as a child process (the
 * same entry point as `npm start`), its URL read from its "service listening" log line, stopped
 * with SIGTERM; the samples of a counter in a `/metrics` text; a workspace, its key and an
 * onboarded company made visible on every instance. Several instances against one PostgreSQL are the topology of deploy/compose.yaml.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createAspAuthorization } from '../../commands/connect/settings.js';
import { createApiKey, createWorkspace } from '../../commands/workspaces.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import { freshTin } from '../connect/support.js';
import { call } from './http.js';

export interface Instance {
  name: string;
  child: ChildProcess;
  url: string;
  /** The instance's stderr so far (the last 64 KB). */
  stderr(): string;
  /** The log entries at level warn or above so far (pino levels 40+; the first 200). */
  warnings: Record<string, unknown>[];
}

/**
 * Starts `scripts/start.ts` against `databaseUrl` on 127.0.0.1 (an ephemeral port unless `env`
 * sets PORT) with the test process's environment plus `env`; `argv`: node's arguments instead
 * (e.g. the compiled entry `npm start` runs).
 */
export async function startInstance(name: string, databaseUrl: string, env: Record<string, string> = {}, argv: readonly string[] = ['--import', 'tsx', 'scripts/start.ts']): Promise<Instance> {
  const child = spawn(process.execPath, [...argv], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DELIVERY_WORKER_INTERVAL_MS: '200', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const warnings: Record<string, unknown>[] = [];
  child.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-65_536)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${stderr}`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string; level?: number };
        if ((entry.level ?? 0) >= 40 && warnings.length < 200) warnings.push(entry);
        if (entry.msg === 'service listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${stderr}`)));
  });
  return { name, child, url, stderr: () => stderr, warnings };
}

export async function stopInstance(instance: Instance): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  const exited = new Promise((r) => instance.child.once('exit', r));
  instance.child.kill('SIGTERM');
  await exited;
}

/** The sum of a counter's samples whose labels include `match`, from a /metrics text. */
export function counter(text: string, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(match).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** The sum of a counter over the `/metrics` of every instance. */
export async function counterAcross(instances: readonly Instance[], name: string, match: Record<string, string> = {}): Promise<number> {
  const texts = await Promise.all(instances.map(async (i) => (await call(`${i.url}/metrics`)).text));
  return texts.reduce((sum, text) => sum + counter(text, name, match), 0);
}

/** Waits until every instance authenticates `apiKey` (its read models hold the key). */
export async function waitForKey(instances: readonly Instance[], apiKey: string, workspaceId: string): Promise<void> {
  for (const i of instances) {
    for (let n = 0; ; n++) {
      const r = await call(`${i.url}/readyz`, { headers: { authorization: `Bearer ${apiKey}` } });
      if (r.status === 200 && r.json.workspaceId === workspaceId) break;
      if (n > 100) throw new Error(`the key never reached ${i.url}: ${r.text}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
}

/** A workspace with one owner key (read_write) in `environment`, known to every instance. */
export async function tenantOn(
  store: EventStore,
  instances: readonly Instance[],
  name: string,
  environment: 'sandbox' | 'production',
): Promise<{ workspaceId: string; apiKey: string }> {
  const ctx = () => ({ now: new Date(), actor: 'test' });
  const ws = await createWorkspace(store, name, ctx());
  const key = await createApiKey(store, { workspaceId: ws.workspaceId, environment, permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
  await waitForKey(instances, key.apiKey, ws.workspaceId);
  return { workspaceId: ws.workspaceId, apiKey: key.apiKey };
}

export interface InstanceCompany {
  workspaceId: string;
  apiKey: string;
  tin: string;
  companyId: string;
  /** The company's source as a submission names it (`name:version`). */
  source: string;
}

/**
 * A workspace of its own (`tenantOn`) with an AE company onboarded in `environment` through `url`
 * (an instance or a balancer in front of several), after an ASP authorization for its TIN.
 */
export async function companyOn(
  store: EventStore,
  instances: readonly Instance[],
  url: string,
  name: string,
  environment: 'sandbox' | 'production',
): Promise<InstanceCompany> {
  const tenant = await tenantOn(store, instances, name, environment);
  const tin = freshTin();
  const email = `finance+${tin}@example.ae`;
  await createAspAuthorization(store, { workspaceId: tenant.workspaceId, environment, tin, email, legalName: `${name} LLC`, legalNameArabic: null, vatTrn: `${tin}00003` }, { now: new Date(), actor: 'test' });
  const body = { sourceName: `${name} ERP`, sourceVersion: 'v1', countryCode: 'AE', tin, contactPersonEmail: email, contactPersonName: 'Aisha Khan', contactPersonMobile: '+971501234567', branchName: 'Head office', platformEnvironment: environment };
  for (let tries = 0; ; tries++) {
    const r = await call(`${url}/v3/connect/companies`, { headers: { 'x-api-key': tenant.apiKey }, body });
    if (r.status === 201) return { ...tenant, tin, companyId: r.json.data.companyId as string, source: `${name} ERP:v1` };
    // The authorization reaches the read models a moment after it is appended.
    if (tries > 50) throw new Error(`onboarding ${name} failed: ${r.status} ${r.text}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
