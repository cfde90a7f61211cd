/**
 * The client of the MyInvois e-Invoice API (LHDNM MyInvois SDK, API v1.0): login as a taxpayer
 * system or as an intermediary system on behalf of a TIN (OAuth 2.0 client credentials, scope
 * InvoicingAPI, the `onbehalfof` header), submit documents, get submission, get document details,
 * get recent documents, cancel a document.
 *
 * - Access tokens are cached per client id and TIN until a minute before they expire (they live 60
 *   minutes); concurrent callers share one login; a 401 drops the token and logs in once more.
 * - The published rate limits are counted per client id and operation in PostgreSQL
 *   (rate-limiter-flexible), shared by every instance of the service: a call over the limit waits
 *   for its turn (at most `maxWaitMs`, else it fails as throttled without being sent).
 * - A 429 is honoured: its Retry-After is waited out (at most `maxWaitMs`) and the call sent again,
 *   up to three times; then it fails as throttled (not received: safe to send again).
 * - An exchange that takes longer than the time-out, or a connection lost after the request went
 *   out, is a failure with outcome unknown: the authority may have received it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type * as t from 'io-ts';
import {
  ApiErrorCodec,
  CancelAnswer,
  decodeAnswer,
  DocumentDetailsAnswer,
  MYINVOIS_LIMITS,
  MYINVOIS_RATE_LIMITS,
  RecentDocumentsAnswer,
  retryAfterMs,
  SubmissionAnswer,
  SubmitAnswer,
  TokenAnswer,
  type ApiError,
  type MyInvoisOperation,
} from '../../domain/myinvois/api.js';
import type { MyInvoisConfig } from '../../platform/config.js';

/** Who a call is made as: a client, for itself or on behalf of a taxpayer's TIN. */
export interface Login {
  clientId: string;
  clientSecret: string;
  onBehalfOf: string | null;
}

export type FailureKind = 'timeout' | 'unreachable' | 'throttled' | 'unavailable' | 'unauthorized' | 'forbidden' | 'refused' | 'protocol';

/** A call that did not get a usable answer. `outcomeUnknown`: the authority may have acted on it. */
export class MyInvoisError extends Error {
  override readonly name = 'MyInvoisError';
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly outcomeUnknown: boolean,
    readonly status: number | null = null,
    readonly apiError: ApiError | null = null,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

export interface MyInvoisClientOptions {
  config: Pick<MyInvoisConfig, 'apiBaseUrl' | 'identityBaseUrl' | 'requestTimeoutMs'>;
  /** The database of the shared rate-limit counters (table myinvois_rate_limits). */
  knex: Knex;
  /** Longest wait for a rate-limit turn or a Retry-After before a call fails as throttled. */
  maxWaitMs?: number;
  /** Requests per minute per client id (default: the published ones). */
  rateLimits?: Partial<Record<MyInvoisOperation, number>>;
}

interface Token {
  value: string;
  expiresAt: number;
}

const TOKEN_MARGIN_MS = 60_000;
const MAX_429_RETRIES = 3;

export class MyInvoisClient {
  private readonly tokens = new Map<string, Token>();
  private readonly logins = new Map<string, Promise<Token>>();
  private readonly limiters: Record<MyInvoisOperation, RateLimiterPostgres>;
  private readonly maxWaitMs: number;

  constructor(private readonly options: MyInvoisClientOptions) {
    this.maxWaitMs = options.maxWaitMs ?? 65_000;
    const limits = { ...MYINVOIS_RATE_LIMITS, ...options.rateLimits };
    this.limiters = Object.fromEntries(
      (Object.keys(MYINVOIS_RATE_LIMITS) as MyInvoisOperation[]).map((op) => [
        op,
        new RateLimiterPostgres({ storeClient: options.knex, storeType: 'knex', tableName: 'myinvois_rate_limits', tableCreated: true, clearExpiredByTimeout: false, keyPrefix: `myinvois:${op}`, points: limits[op], duration: 60 }),
      ]),
    ) as Record<MyInvoisOperation, RateLimiterPostgres>;
  }

  /** Waits for a turn of `op` for this client id (shared across instances). */
  private async turn(op: MyInvoisOperation, clientId: string): Promise<void> {
    const deadline = Date.now() + this.maxWaitMs;
    for (;;) {
      try {
        await this.limiters[op].consume(clientId);
        return;
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const wait = Math.max(10, err.msBeforeNext);
        if (Date.now() + wait > deadline) {
          throw new MyInvoisError('throttled', `the ${MYINVOIS_RATE_LIMITS[op]} requests a minute MyInvois allows for ${op} are used up; next turn in ${Math.ceil(wait / 1000)} s`, false, null, null, wait);
        }
        await sleep(wait);
      }
    }
  }

  private tokenKey = (login: Login) => `${login.clientId}\n${login.onBehalfOf ?? ''}`;

  /** A valid access token for `login` (cached until shortly before it expires). */
  async token(login: Login): Promise<string> {
    const key = this.tokenKey(login);
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.value;
    let pending = this.logins.get(key);
    if (!pending) {
      pending = this.login(login).finally(() => this.logins.delete(key));
      this.logins.set(key, pending);
    }
    const token = await pending;
    this.tokens.set(key, token);
    return token.value;
  }

  private async login(login: Login): Promise<Token> {
    const body = new URLSearchParams({ client_id: login.clientId, client_secret: login.clientSecret, grant_type: 'client_credentials', scope: 'InvoicingAPI' });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (login.onBehalfOf) headers.onbehalfof = login.onBehalfOf;
    const answer = await this.exchange('login', login.clientId, `${this.options.config.identityBaseUrl}/connect/token`, { method: 'POST', headers, body: body.toString() });
    if (answer.status === 400 || answer.status === 401) {
      const reason = typeof (answer.json as { error?: unknown })?.error === 'string' ? String((answer.json as { error: string }).error) : `HTTP ${answer.status}`;
      throw new MyInvoisError('unauthorized', `MyInvois refused the login of client ${login.clientId}${login.onBehalfOf ? ` on behalf of ${login.onBehalfOf}` : ''}: ${reason}`, false, answer.status);
    }
    this.failOnStatus(answer, 'login');
    const decoded = decodeAnswer(TokenAnswer, answer.json, 'login');
    if (!decoded.ok) throw new MyInvoisError('protocol', decoded.reason, false, answer.status);
    const lifetimeMs = Math.min(decoded.value.expires_in, MYINVOIS_LIMITS.tokenLifetimeSeconds) * 1000;
    return { value: decoded.value.access_token, expiresAt: Date.now() + Math.max(1000, lifetimeMs - TOKEN_MARGIN_MS) };
  }

  /**
   * One HTTP exchange of `op` (rate-limited; 429 honoured), its status, headers and JSON body.
   * Never throws for an HTTP status other than 429: the caller reads the status.
   */
  private async exchange(op: MyInvoisOperation, clientId: string, url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; headers: Headers; json: unknown }> {
    // Only a submission or a cancellation changes anything at the authority (a login does not).
    const acts = init.method !== 'GET' && op !== 'login';
    for (let attempt = 0; ; attempt++) {
      await this.turn(op, clientId);
      let res: Response;
      try {
        res = await fetch(url, { ...init, signal: AbortSignal.timeout(this.options.config.requestTimeoutMs) });
      } catch (err) {
        const e = err as Error & { cause?: { code?: string } };
        if (e.name === 'TimeoutError' || e.name === 'AbortError') {
          throw new MyInvoisError('timeout', `MyInvois did not answer ${op} within ${this.options.config.requestTimeoutMs} ms`, acts);
        }
        const code = e.cause?.code ?? '';
        // Refused or unresolvable: the request never left. Anything else may have been received.
        const neverSent = code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
        throw new MyInvoisError('unreachable', `MyInvois could not be reached for ${op}: ${code || e.message}`, !neverSent && acts);
      }
      let json: unknown = null;
      let text = '';
      try {
        text = await res.text();
        json = text === '' ? null : JSON.parse(text);
      } catch (err) {
        if ((err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError') {
          throw new MyInvoisError('timeout', `MyInvois did not finish answering ${op} within ${this.options.config.requestTimeoutMs} ms`, acts);
        }
        json = null;
      }
      if (res.status === 429) {
        const wait = retryAfterMs(res.headers.get('retry-after'), new Date()) ?? 1000;
        if (attempt >= MAX_429_RETRIES || wait > this.maxWaitMs) {
          throw new MyInvoisError('throttled', `MyInvois answered ${op} with 429 Too Many Requests (retry after ${Math.ceil(wait / 1000)} s)`, false, 429, null, wait);
        }
        await sleep(wait);
        continue;
      }
      return { status: res.status, headers: res.headers, json };
    }
  }

  /** An authenticated call; a 401 drops the token and logs in once more. */
  private async call(op: MyInvoisOperation, login: Login, path: string, init: { method: string; body?: unknown; query?: Record<string, string | number | undefined> } = { method: 'GET' }) {
    const url = new URL(`${this.options.config.apiBaseUrl}${path}`);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json', 'accept-language': 'en', authorization: `Bearer ${await this.token(login)}` };
      if (init.body !== undefined) headers['content-type'] = 'application/json';
      const answer = await this.exchange(op, login.clientId, url.toString(), { method: init.method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
      if (answer.status === 401 && attempt === 0) {
        this.tokens.delete(this.tokenKey(login));
        continue;
      }
      return answer;
    }
  }

  private failOnStatus(answer: { status: number; json: unknown }, op: string, outcomeUnknownOn5xx = false): void {
    if (answer.status >= 200 && answer.status < 300) return;
    const apiError = decodeAnswer(ApiErrorCodec, (answer.json as { error?: unknown })?.error ?? {}, op);
    const error = apiError.ok ? apiError.value : null;
    const detail = error?.message ? `: ${error.code ? `${error.code} ` : ''}${error.message}` : '';
    if (answer.status === 401) throw new MyInvoisError('unauthorized', `MyInvois refused the access token for ${op} (401)${detail}`, false, 401, error);
    if (answer.status === 403) throw new MyInvoisError('forbidden', `MyInvois forbade ${op} (403)${detail}`, false, 403, error);
    if (answer.status >= 500) throw new MyInvoisError('unavailable', `MyInvois answered ${op} with ${answer.status}${detail}`, outcomeUnknownOn5xx, answer.status, error);
    throw new MyInvoisError('refused', `MyInvois refused ${op} (${answer.status})${detail}`, false, answer.status, error);
  }

  private decode<A>(codec: t.Type<A, unknown>, json: unknown, op: string, status: number): A {
    const decoded = decodeAnswer(codec, json, op);
    if (!decoded.ok) throw new MyInvoisError('protocol', decoded.reason, false, status);
    return decoded.value;
  }

  /**
   * Submit Documents. A 422 (the same submission again within the authority's duplicate window)
   * is answered as `duplicate` with its Retry-After; a 400 (the submission's structure or size) as
   * `refused` with the standard error.
   */
  async submit(
    login: Login,
    documents: { format: 'XML'; documentHash: string; codeNumber: string; document: string }[],
  ): Promise<{ kind: 'answer'; answer: SubmitAnswer } | { kind: 'duplicate'; retryAfterMs: number | null; error: ApiError | null } | { kind: 'refused'; status: number; error: ApiError | null }> {
    const answer = await this.call('submit', login, '/api/v1.0/documentsubmissions/', { method: 'POST', body: { documents } });
    const error = () => {
      const e = decodeAnswer(ApiErrorCodec, (answer.json as { error?: unknown })?.error ?? {}, 'submit');
      return e.ok ? e.value : null;
    };
    if (answer.status === 422) return { kind: 'duplicate', retryAfterMs: retryAfterMs(answer.headers.get('retry-after'), new Date()), error: error() };
    if (answer.status === 400) return { kind: 'refused', status: 400, error: error() };
    this.failOnStatus(answer, 'submit', true);
    return { kind: 'answer', answer: this.decode(SubmitAnswer, answer.json, 'submit', answer.status) };
  }

  async getSubmission(login: Login, submissionUid: string) {
    const answer = await this.call('getSubmission', login, `/api/v1.0/documentsubmissions/${encodeURIComponent(submissionUid)}`, { method: 'GET', query: { pageNo: 1, pageSize: MYINVOIS_LIMITS.documentsPerSubmission } });
    this.failOnStatus(answer, 'get submission');
    return this.decode(SubmissionAnswer, answer.json, 'get submission', answer.status);
  }

  async getDocumentDetails(login: Login, uuid: string) {
    const answer = await this.call('getDocumentDetails', login, `/api/v1.0/documents/${encodeURIComponent(uuid)}/details`);
    this.failOnStatus(answer, 'get document details');
    return this.decode(DocumentDetailsAnswer, answer.json, 'get document details', answer.status);
  }

  /** Get Recent Documents sent by `issuerTin` and submitted between `from` and `to`. */
  async recentDocuments(login: Login, query: { issuerTin: string; from: Date; to: Date }) {
    const answer = await this.call('recentDocuments', login, '/api/v1.0/documents/recent', {
      method: 'GET',
      query: { pageNo: 1, pageSize: 100, InvoiceDirection: 'Sent', issuerTin: query.issuerTin, submissionDateFrom: query.from.toISOString().replace(/\.\d{3}Z$/, 'Z'), submissionDateTo: query.to.toISOString().replace(/\.\d{3}Z$/, 'Z') },
    });
    this.failOnStatus(answer, 'get recent documents');
    return this.decode(RecentDocumentsAnswer, answer.json, 'get recent documents', answer.status).result;
  }

  /** Cancel Document: `{ uuid, status }` on success; the authority's refusal (e.g. past its window) as a `refused` MyInvoisError. */
  async cancel(login: Login, uuid: string, reason: string) {
    const answer = await this.call('cancel', login, `/api/v1.0/documents/state/${encodeURIComponent(uuid)}/state`, { method: 'PUT', body: { status: 'cancelled', reason } });
    this.failOnStatus(answer, 'cancel document', true);
    return this.decode(CancelAnswer, answer.json, 'cancel document', answer.status);
  }
}
