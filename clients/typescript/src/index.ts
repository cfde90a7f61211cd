/**
 * The e-invoicing ledger service's TypeScript client: `createClient` gives the generated, fully
 * typed client (openapi-fetch over the types of `schema.ts`, generated from the service's OpenAPI
 * document) plus the few things a generator does not do:
 *
 * - `submit`: a new-format submission with an Idempotency-Key (one is made when none is given),
 *   so a retry after a lost answer cannot submit twice;
 * - `waitForFinalState`: polls a document's status with exponential back-off until it is terminal;
 * - `purchases`: iterates over every received purchase invoice of a date range, page by page;
 * - `verifyWebhookSignature`: checks `X-Webhook-Signature` on a delivery's raw body.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths, webhooks } from './schema.js';
export type Schemas = components['schemas'];
export type CoreDocument = Schemas['CoreDocument'];
export type UnifySubmission = Schemas['UnifySubmission'];
export type DocumentStatus = Schemas['DocumentStatus'];
export type PurchaseListItem = Schemas['PurchaseListItem'];

export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** The API key: sent as `Authorization: Bearer` (every family accepts it). */
  apiKey: string;
  /** A fetch implementation (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/** A non-2xx answer the helpers do not handle: its status, body and request id. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly requestId: string | null,
  ) {
    super(`the service answered ${status}${requestId ? ` (request ${requestId})` : ''}: ${JSON.stringify(body).slice(0, 500)}`);
  }
}

export type SubmitResult =
  | { status: 200; replayed: boolean; body: Schemas['UnifyAccepted'] }
  | { status: 422; replayed: boolean; body: Schemas['UnifyValidationFailure'] };

export interface PollOptions {
  /** First wait, doubled after every non-terminal answer up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Give up (throw) after this long. */
  timeoutMs?: number;
  /** Called with every status read (progress display, logging). */
  onStatus?: (status: DocumentStatus) => void;
}

export interface EInvoicingClient {
  /** The generated client: every operation of the document, typed (`api.GET('/api/v3/documents/{documentId}/status', …)`). */
  api: Client<paths>;
  submit(submission: UnifySubmission, options?: { idempotencyKey?: string }): Promise<SubmitResult>;
  waitForFinalState(documentId: string, options?: PollOptions): Promise<DocumentStatus>;
  purchases(range: { from: string; to?: string; limit?: number }): AsyncGenerator<PurchaseListItem, void, undefined>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createClient(options: ClientOptions): EInvoicingClient {
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function submit(submission: UnifySubmission, opts: { idempotencyKey?: string } = {}): Promise<SubmitResult> {
    const idempotencyKey = opts.idempotencyKey ?? randomUUID();
    const { data, error, response } = await api.POST('/api/v3/unify', {
      params: { header: { 'new-api': 'true', 'Idempotency-Key': idempotencyKey } },
      body: submission,
    });
    const replayed = response.headers.get('idempotent-replayed') === 'true';
    if (response.status === 200 && data && 'kind' in data && data.kind === 'document') return { status: 200, replayed, body: data };
    if (response.status === 422) return { status: 422, replayed, body: error as Schemas['UnifyValidationFailure'] };
    throw new ServiceError(response.status, error ?? data, response.headers.get('x-request-id'));
  }

  async function waitForFinalState(documentId: string, opts: PollOptions = {}): Promise<DocumentStatus> {
    const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
    let delay = opts.initialDelayMs ?? 250;
    for (;;) {
      const { data, error, response } = await api.GET('/api/v3/documents/{documentId}', { params: { path: { documentId }, query: { type: 'sales' } } });
      if (!data) throw new ServiceError(response.status, error, response.headers.get('x-request-id'));
      const status = data.data as DocumentStatus;
      opts.onStatus?.(status);
      if (status.isTerminal) return status;
      if (Date.now() + delay > deadline) throw new Error(`document ${documentId} is still ${status.state} after ${opts.timeoutMs ?? 120_000} ms`);
      await sleep(delay);
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 5_000);
    }
  }

  async function* purchases(range: { from: string; to?: string; limit?: number }): AsyncGenerator<PurchaseListItem, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const { data, error, response } = await api.GET('/api/v3/documents', {
        params: { query: { type: 'purchases', from: range.from, ...(range.to ? { to: range.to } : {}), ...(range.limit ? { limit: range.limit } : {}), ...(cursor ? { cursor } : {}) } },
      });
      if (!data) throw new ServiceError(response.status, error, response.headers.get('x-request-id'));
      yield* data.data.items;
      if (!data.data.hasMore || !data.data.nextCursor) return;
      cursor = data.data.nextCursor;
    }
  }

  return { api, submit, waitForFinalState, purchases };
}

/**
 * Whether a webhook delivery is genuine: the hex HMAC of the raw body (the bytes received, before
 * any JSON parsing) with the subscription's secret equals `X-Webhook-Signature`. Constant-time.
 */
export function verifyWebhookSignature(rawBody: string | Uint8Array, signature: string | null | undefined, secret: string, algorithm: 'sha256' | 'sha512' = 'sha256'): boolean {
  if (!signature || !/^[0-9a-f]+$/i.test(signature)) return false;
  const expected = createHmac(algorithm, secret).update(rawBody).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
