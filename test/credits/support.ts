/** Helpers of the credits tests: a tenant with an onboarded company, credit calls with headers, pool issuance. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { CreditsEngine } from '../../commands/credits/engine.js';
import { issueCredits, setCreditEnforcement } from '../../commands/credits/pool.js';
import { creditsEngine } from '../../commands/credits/snapshots.js';
import type { Position } from '../../platform/eventstore/port.js';
import { clientFor, type Client } from '../connect/support.js';
import { call, type KeyOptions, type TestService } from '../support/http.js';

export const CREDITS = '/v3/connect/credits';
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export const iso = (ms: number) => new Date(ms).toISOString();

export interface CreditsClient {
  workspaceId: string;
  apiKey: string;
  client: Client;
  get(path: string, headers?: Record<string, string>): ReturnType<typeof call>;
  /** A credit write: Idempotency-Key is added (fresh) unless given; X-Environment sandbox unless given. */
  write(method: 'PUT' | 'POST' | 'DELETE', path: string, body: unknown, headers?: Record<string, string | undefined>): ReturnType<typeof call>;
  raw(method: string, path: string, init?: { body?: unknown; headers?: Record<string, string> }): ReturnType<typeof call>;
}

export function creditsClient(t: TestService, tenant: { workspaceId: string; apiKey: string; keyId: string }): CreditsClient {
  const base = { 'x-api-key': tenant.apiKey };
  return {
    workspaceId: tenant.workspaceId,
    apiKey: tenant.apiKey,
    client: clientFor(t, tenant),
    get: (path, headers = {}) => call(`${t.url}${CREDITS}${path}`, { headers: { ...base, ...headers } }),
    write(method, path, body, headers = {}) {
      const h: Record<string, string> = { ...base, 'idempotency-key': randomUUID(), 'x-environment': 'sandbox' };
      for (const [k, v] of Object.entries(headers)) {
        if (v === undefined) delete h[k];
        else h[k] = v;
      }
      return call(`${t.url}${CREDITS}${path}`, { method, headers: h, ...(body === undefined ? {} : { body }) });
    },
    raw: (method, path, init = {}) => call(`${t.url}${CREDITS}${path}`, { method, headers: { ...base, ...(init.headers ?? {}) }, ...(init.body === undefined ? {} : { body: init.body }) }),
  };
}

export function engineOf(t: TestService): CreditsEngine {
  return creditsEngine({ store: t.service.runtime.store, knex: t.service.deps.knex });
}

/** A tenant (owner, read_write, sandbox unless told otherwise) with one onboarded active company. */
export async function creditsTenant(t: TestService, key: KeyOptions = {}) {
  const tenant = await t.tenant(key);
  const c = creditsClient(t, tenant);
  const company = await c.client.onboard();
  return { ...c, companyId: company.companyId as string, company };
}

export async function issue(t: TestService, workspaceId: string, amount: number, expiresAt: string | null = null) {
  const r = await issueCredits(engineOf(t), { workspaceId, environment: 'sandbox', amount, expiresAt }, { now: t.clock.now(), actor: 'test' });
  await t.settle(r.outcome.position!);
  return r;
}

export async function enforce(t: TestService, workspaceId: string, on: boolean) {
  const r = await setCreditEnforcement(engineOf(t), workspaceId, on, { now: t.clock.now(), actor: 'test' });
  if (r.outcome.position) await t.settle(r.outcome.position);
}

/** An allowance body whose period contains `now` (current) or starts after it (scheduled). */
export function allowanceBody(now: Date, overrides: Record<string, unknown> = {}, kind: 'current' | 'scheduled' = 'current') {
  const t = now.getTime();
  return {
    limit: 100,
    periodType: 'monthly',
    startAt: kind === 'current' ? iso(t - HOUR) : iso(t + DAY),
    endAt: kind === 'current' ? iso(t + 30 * DAY) : iso(t + 31 * DAY),
    reason: 'plan change',
    ...overrides,
  };
}

export async function createCurrent(c: CreditsClient & { companyId: string }, now: Date, overrides: Record<string, unknown> = {}) {
  const r = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(now, overrides), { 'if-none-match': '*' });
  expect(r.status, r.text).to.equal(201);
  return r;
}

export function connectError(r: { status: number; json: any; text: string }) {
  expect(r.json?.success, r.text).to.equal(false);
  expect(r.json.meta).to.have.all.keys('requestId', 'timestamp', 'workspaceId');
  return r.json.error as { code: string; message: string; path?: unknown[]; retryable?: boolean };
}

export async function settleAt(t: TestService, position: Position | null | undefined) {
  if (position) await t.settle(position);
}
