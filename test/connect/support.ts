/** Helpers of the Connect tests: tenants with ASP authorizations, company bodies, and calls with a key. */
import { createAspAuthorization } from '../../commands/connect/settings.js';
import type { PlatformEnvironment } from '../../domain/connect/values.js';
import { call, type KeyOptions, type TestService } from '../support/http.js';

let tinCounter = 0;
/** A TIN (10 digits) no other test of this process uses. */
export function freshTin(): string {
  tinCounter++;
  return `${String(process.pid % 100000).padStart(5, '0')}${String(tinCounter).padStart(5, '0')}`;
}

let nameCounter = 0;
export const freshName = (prefix = 'Source') => `${prefix} ${++nameCounter}-${Math.random().toString(36).slice(2, 8)}`;

export interface Client {
  workspaceId: string;
  apiKey: string;
  keyId: string;
  get(path: string, headers?: Record<string, string>): ReturnType<typeof call>;
  post(path: string, body?: unknown, headers?: Record<string, string>): ReturnType<typeof call>;
  patch(path: string, body?: unknown): ReturnType<typeof call>;
  del(path: string, body?: unknown): ReturnType<typeof call>;
  /** Registers an ASP authorization for the tin and email (sandbox unless told otherwise). */
  authorize(tin: string, email: string, environment?: PlatformEnvironment, details?: { legalName?: string; vatTrn?: string }): Promise<void>;
  /** A valid creation body with a fresh tin (authorized) and fresh source name. */
  newCompanyBody(overrides?: Record<string, unknown>, options?: { authorize?: boolean }): Promise<Record<string, any>>;
  /** Onboards a company and returns the creation data. */
  onboard(overrides?: Record<string, unknown>): Promise<Record<string, any>>;
}

export function clientFor(t: TestService, tenant: { workspaceId: string; apiKey: string; keyId: string }): Client {
  const headers = (extra: Record<string, string> = {}) => ({ 'x-api-key': tenant.apiKey, ...extra });
  const client: Client = {
    ...tenant,
    get: (path, extra) => call(`${t.url}${path}`, { headers: headers(extra) }),
    post: (path, body, extra) => call(`${t.url}${path}`, { method: 'POST', headers: headers(extra), body }),
    patch: (path, body) => call(`${t.url}${path}`, { method: 'PATCH', headers: headers(), body }),
    del: (path, body) => call(`${t.url}${path}`, { method: 'DELETE', headers: headers(), body }),
    async authorize(tin, email, environment = 'sandbox', details = {}) {
      const r = await createAspAuthorization(
        t.service.runtime.store,
        { workspaceId: tenant.workspaceId, environment, tin, email, legalName: details.legalName ?? `Company ${tin} LLC`, vatTrn: details.vatTrn ?? `${tin}00003` },
        { now: new Date(), actor: 'test' },
      );
      if (r.position) await t.settle(r.position);
    },
    async newCompanyBody(overrides = {}, options = {}) {
      const tin = (overrides.tin as string | undefined) ?? freshTin();
      const body: Record<string, any> = {
        sourceName: freshName('ERP'),
        sourceVersion: 'v1',
        countryCode: 'AE',
        tin,
        contactPersonEmail: `finance+${tin}@example.ae`,
        contactPersonName: 'Aisha Khan',
        contactPersonMobile: '+971501234567',
        branchName: 'Head office',
        platformEnvironment: 'sandbox',
        ...overrides,
      };
      if (options.authorize !== false) await client.authorize(tin, String(body.contactPersonEmail), body.platformEnvironment);
      return body;
    },
    async onboard(overrides = {}) {
      const body = await client.newCompanyBody(overrides);
      const r = await client.post('/v3/connect/companies', body);
      if (r.status !== 201) throw new Error(`onboarding failed: ${r.status} ${r.text}`);
      return r.json.data;
    },
  };
  return client;
}

export async function newClient(t: TestService, options: KeyOptions = {}): Promise<Client> {
  return clientFor(t, await t.tenant(options));
}

/** Asserts the Connect error envelope and returns the error. */
export function connectError(r: { status: number; json: any; text: string }): { code: string; message: string; retryable?: boolean; path?: unknown[] } {
  if (!r.json || r.json.success !== false || typeof r.json.error?.code !== 'string' || typeof r.json.error?.message !== 'string') {
    throw new Error(`not a Connect error envelope: ${r.status} ${r.text.slice(0, 300)}`);
  }
  const m = r.json.meta;
  if (!m || typeof m.requestId !== 'string' || typeof m.timestamp !== 'string' || !('workspaceId' in m)) {
    throw new Error(`Connect error without meta: ${r.text.slice(0, 300)}`);
  }
  return r.json.error;
}

export const enc = encodeURIComponent;
export const sourcePath = (name: string, version: string) => `/v3/connect/companies/${enc(name)}?sourceVersion=${enc(version)}`;
