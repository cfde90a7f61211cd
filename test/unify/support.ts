/** Helpers of the Unify tests: a tenant with an onboarded source, and valid UAE payloads. */
import { sampleDocument } from '../../domain/validation/index.js';
import { clientFor, type Client } from '../connect/support.js';
import { call, startTestService, withoutProcesses, type KeyOptions, type TestService } from '../support/http.js';

let counter = 0;
export const freshNumber = (prefix = 'INV') => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`;

export function uaeInvoice(overrides: { documentNumber?: string; lines?: number } = {}): Record<string, any> {
  return sampleDocument('AE', { lines: overrides.lines ?? 3, documentNumber: overrides.documentNumber ?? freshNumber() }) as Record<string, any>;
}

export interface UnifyTenant {
  client: Client;
  apiKey: string;
  workspaceId: string;
  source: string;
  submit(body: unknown, headers?: Record<string, string>): ReturnType<typeof call>;
  legacy(body: unknown, headers?: Record<string, string>): ReturnType<typeof call>;
  status(documentId: string, variant?: 'read' | 'status', type?: string): ReturnType<typeof call>;
  request(payload: Record<string, unknown>, extra?: Record<string, unknown>): Record<string, unknown>;
}

export async function unifyTenant(t: TestService, key: KeyOptions = {}): Promise<UnifyTenant> {
  const tenant = await t.tenant(key);
  const client = clientFor(t, tenant);
  // The company is onboarded in the key's environment (the Connect section of the OpenAPI document, docs/api/http.md).
  const company = await client.onboard(key.environment === 'production' ? { platformEnvironment: 'production' } : {});
  const source = `${company.sourceName}:${company.sourceVersion}`;
  const auth = { authorization: `Bearer ${tenant.apiKey}` };
  return {
    client,
    apiKey: tenant.apiKey,
    workspaceId: tenant.workspaceId,
    source,
    submit: (body, headers = {}) => call(`${t.url}/api/v3/unify`, { method: 'POST', headers: { ...auth, 'new-api': 'true', ...headers }, body }),
    legacy: (body, headers = {}) => call(`${t.url}/api/v3/unify`, { method: 'POST', headers: { ...auth, ...headers }, body }),
    status: (documentId, variant = 'read', type = 'sales') =>
      call(`${t.url}/api/v3/documents/${encodeURIComponent(documentId)}${variant === 'status' ? '/status' : `?type=${type}`}`, { headers: auth }),
    request: (payload, extra = {}) => ({
      country: 'AE',
      environment: key.environment ?? 'sandbox',
      purpose: 'invoicing',
      source,
      documentType: { base: 'tax_invoice', modifiers: [] },
      payload,
      ...extra,
    }),
  };
}

/**
 * Registers the suite's hooks: a test service without background processes and a tenant on it,
 * started before the suite's tests (and handed to `use`) and closed after them.
 */
export function withUnifyService(use: (t: TestService, u: UnifyTenant) => void): void {
  let t: TestService | undefined;
  before(async () => {
    t = await startTestService({ processes: withoutProcesses });
    use(t, await unifyTenant(t));
  });
  after(async () => t?.close());
}
