/**
 * The client of ZATCA's e-invoicing REST API (see contract.ts for the endpoints). HTTP through
 * Node's fetch (undici) with one time-out per call; transient answers (429, 500, 502, 503, 504,
 * a refused connection, and for invoice calls a time-out) are retried with a jittered exponential
 * back-off through p-retry, a 429's Retry-After honoured up to `maxRetryAfterMs` (a longer wait is
 * handed back to the caller, which schedules its own retry). Every answer is decoded with the
 * contract's codecs; one that does not decode is a protocol error.
 *
 * Invoice calls are safe to repeat: ZATCA recognises an invoice hash it already has (208 with the
 * cleared invoice on clearance, 409 "reported successfully earlier" on reporting). CSID calls
 * spend a one-time password or a compliance request, so a time-out there is not retried.
 */
import pRetry from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { PathReporter } from 'io-ts/lib/PathReporter.js';
import {
  CsidAnswerCodec,
  ErrorAnswerCodec,
  InvoiceAnswerCodec,
  type CsidAnswer,
  type InvoiceAnswer,
  type ZatcaCsid,
  type ZatcaInvoiceRequest,
} from './contract.js';

export interface ZatcaClientOptions {
  /** The environment's base URL, e.g. https://gw-fatoora.zatca.gov.sa/e-invoicing/core. */
  baseUrl: string;
  /** One HTTP call's time-out. */
  timeoutMs: number;
  /** Calls per request, the first included (1: no retry). */
  maxAttempts: number;
  /** First back-off between attempts; doubles each time, jittered. */
  retryBaseMs: number;
  /** The longest Retry-After waited for inside one request; longer ones end the request. */
  maxRetryAfterMs: number;
  /** Accept-Language of the answers' messages. */
  language?: 'en' | 'ar';
}

/** The answer of one API request, after retries. */
export type ZatcaResult<A> =
  /** A decoded answer: 200, 202 (with warnings), 208 (already cleared), 400 and 409 with validation results. */
  | { kind: 'answer'; status: number; body: A }
  /** 303: clearance is switched off; the invoice goes to reporting instead. */
  | { kind: 'clearance_off'; status: 303; message: string }
  /** Refused for good as sent (400 without validation results, 401, 403, 404, 406, 413, …). */
  | { kind: 'refused'; status: number; code: string; message: string }
  /** Not answered this time (429, 5xx, network, time-out) once the retries were spent. */
  | { kind: 'unavailable'; status: number | null; code: string; message: string; outcomeUnknown: boolean; retryAfterMs: number | null };

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

class Retryable extends Error {
  constructor(readonly result: Extract<ZatcaResult<never>, { kind: 'unavailable' }>) {
    super(result.message);
  }
}

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const s = header.trim();
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const at = Date.parse(s);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function decode<A>(codec: t.Type<A, unknown, unknown>, raw: unknown): { ok: true; value: A } | { ok: false; problems: string } {
  const r = codec.decode(raw);
  return isLeft(r) ? { ok: false, problems: PathReporter.report(r).slice(0, 3).join('; ') } : { ok: true, value: r.right };
}

function errorOf(status: number, raw: unknown, text: string): { code: string; message: string } {
  const e = decode(ErrorAnswerCodec, raw);
  if (e.ok) {
    if ('errors' in e.value) {
      const first = e.value.errors[0];
      const message = e.value.errors.map((x) => (typeof x === 'string' ? x : `${x.code}: ${x.message}`)).join('; ');
      return { code: typeof first === 'object' && first ? first.code : `HTTP_${status}`, message: message || `HTTP ${status}` };
    }
    return { code: e.value.code ?? `HTTP_${status}`, message: e.value.message };
  }
  return { code: `HTTP_${status}`, message: text.trim().slice(0, 300) || `HTTP ${status}` };
}

export class ZatcaApiClient {
  private readonly baseUrl: string;
  constructor(private readonly options: ZatcaClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** POST /compliance: a compliance CSID for a CSR (PEM text), with the OTP from ZATCA's portal. */
  complianceCsid(csrPem: string, otp: string): Promise<ZatcaResult<CsidAnswer>> {
    return this.call('POST', '/compliance', { headers: { OTP: otp }, body: { csr: Buffer.from(csrPem, 'utf8').toString('base64') }, codec: CsidAnswerCodec, repeatable: false });
  }

  /** POST /compliance/invoices: one sample invoice checked under the compliance CSID. */
  complianceCheck(csid: ZatcaCsid, invoice: ZatcaInvoiceRequest): Promise<ZatcaResult<InvoiceAnswer>> {
    return this.call('POST', '/compliance/invoices', { csid, body: invoice, codec: InvoiceAnswerCodec, repeatable: true });
  }

  /** POST /production/csids: the production CSID, once the compliance checks passed. */
  productionCsid(complianceCsid: ZatcaCsid, complianceRequestId: string): Promise<ZatcaResult<CsidAnswer>> {
    return this.call('POST', '/production/csids', { csid: complianceCsid, body: { compliance_request_id: complianceRequestId }, codec: CsidAnswerCodec, repeatable: false });
  }

  /** PATCH /production/csids: a renewed production CSID for a new CSR, under the current one, with a new OTP. */
  renewProductionCsid(productionCsid: ZatcaCsid, csrPem: string, otp: string): Promise<ZatcaResult<CsidAnswer>> {
    return this.call('PATCH', '/production/csids', {
      csid: productionCsid,
      headers: { OTP: otp },
      body: { csr: Buffer.from(csrPem, 'utf8').toString('base64') },
      codec: CsidAnswerCodec,
      repeatable: false,
    });
  }

  /** POST /invoices/clearance/single: a standard (B2B) invoice. */
  clearance(productionCsid: ZatcaCsid, invoice: ZatcaInvoiceRequest): Promise<ZatcaResult<InvoiceAnswer>> {
    return this.call('POST', '/invoices/clearance/single', { csid: productionCsid, headers: { 'Clearance-Status': '1' }, body: invoice, codec: InvoiceAnswerCodec, repeatable: true });
  }

  /** POST /invoices/reporting/single: a simplified (B2C) invoice. */
  reporting(productionCsid: ZatcaCsid, invoice: ZatcaInvoiceRequest): Promise<ZatcaResult<InvoiceAnswer>> {
    return this.call('POST', '/invoices/reporting/single', { csid: productionCsid, headers: { 'Clearance-Status': '0' }, body: invoice, codec: InvoiceAnswerCodec, repeatable: true });
  }

  private async call<A>(
    method: 'POST' | 'PATCH',
    path: string,
    req: { csid?: ZatcaCsid; headers?: Record<string, string>; body: unknown; codec: t.Type<A, unknown, unknown>; repeatable: boolean },
  ): Promise<ZatcaResult<A>> {
    const o = this.options;
    try {
      return await pRetry(() => this.once(method, path, req), {
        retries: Math.max(0, o.maxAttempts - 1),
        minTimeout: o.retryBaseMs,
        maxTimeout: o.retryBaseMs * 16,
        factor: 2,
        randomize: true,
        shouldRetry: ({ error }) => {
          if (!(error instanceof Retryable)) return false;
          const r = error.result;
          if (r.outcomeUnknown && !req.repeatable) return false;
          return r.retryAfterMs === null || r.retryAfterMs <= o.maxRetryAfterMs;
        },
        onFailedAttempt: async ({ error, retriesLeft }) => {
          // A 429's or 503's Retry-After is waited for on top of the back-off.
          if (error instanceof Retryable && retriesLeft > 0 && error.result.retryAfterMs !== null && error.result.retryAfterMs <= o.maxRetryAfterMs) {
            await sleep(error.result.retryAfterMs);
          }
        },
      });
    } catch (err) {
      if (err instanceof Retryable) return err.result;
      throw err;
    }
  }

  private async once<A>(
    method: 'POST' | 'PATCH',
    path: string,
    req: { csid?: ZatcaCsid; headers?: Record<string, string>; body: unknown; codec: t.Type<A, unknown, unknown> },
  ): Promise<ZatcaResult<A>> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'Accept-Version': 'V2',
      'Accept-Language': this.options.language ?? 'en',
      ...req.headers,
    };
    if (req.csid) headers.Authorization = `Basic ${Buffer.from(`${req.csid.binarySecurityToken}:${req.csid.secret}`, 'utf8').toString('base64')}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: JSON.stringify(req.body),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      text = await readCapped(res);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      if (e.name === 'TimeoutError' || e.name === 'AbortError') {
        throw new Retryable({ kind: 'unavailable', status: null, code: 'ZATCA_TIMEOUT', message: `ZATCA did not answer ${method} ${path} within ${this.options.timeoutMs} ms`, outcomeUnknown: true, retryAfterMs: null });
      }
      const code = e.cause?.code ?? e.name;
      // A connection never made cannot have delivered anything; one lost midway may have.
      const unknown = code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'EAI_AGAIN';
      throw new Retryable({ kind: 'unavailable', status: null, code: 'ZATCA_UNREACHABLE', message: `ZATCA could not be reached (${code}): ${e.message}`, outcomeUnknown: unknown, retryAfterMs: null });
    }
    let raw: unknown = null;
    try {
      raw = text === '' ? null : JSON.parse(text);
    } catch {
      raw = null;
    }
    const status = res.status;
    if (RETRYABLE_STATUS.has(status)) {
      const { code, message } = errorOf(status, raw, text);
      throw new Retryable({
        kind: 'unavailable',
        status,
        code: status === 429 ? 'ZATCA_THROTTLED' : 'ZATCA_UNAVAILABLE',
        message: `ZATCA answered ${status} to ${method} ${path}: ${code}: ${message}`,
        // A 5xx other than 503 may come after the invoice was processed.
        outcomeUnknown: status === 500 || status === 502 || status === 504,
        retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
      });
    }
    if (status === 303) {
      return { kind: 'clearance_off', status: 303, message: errorOf(status, raw, text).message };
    }
    if (status === 200 || status === 202 || status === 208 || ((status === 400 || status === 409) && isObjectWith(raw, 'validationResults'))) {
      const decoded = decode(req.codec, raw);
      if (!decoded.ok) {
        throw new Retryable({ kind: 'unavailable', status, code: 'ZATCA_PROTOCOL_ERROR', message: `ZATCA's ${status} answer to ${method} ${path} does not match the published contract: ${decoded.problems}`, outcomeUnknown: true, retryAfterMs: null });
      }
      return { kind: 'answer', status, body: decoded.value };
    }
    const { code, message } = errorOf(status, raw, text);
    return { kind: 'refused', status, code, message };
  }
}

function isObjectWith(raw: unknown, key: string): boolean {
  return typeof raw === 'object' && raw !== null && key in raw;
}

async function readCapped(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw Object.assign(new Error(`answer of ${declared} bytes is larger than ${MAX_ANSWER_BYTES}`), { cause: { code: 'ANSWER_TOO_LARGE' } });
  }
  const buf = Buffer.from(await res.arrayBuffer());
  if (buf.length > MAX_ANSWER_BYTES) throw Object.assign(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`), { cause: { code: 'ANSWER_TOO_LARGE' } });
  return buf.toString('utf8');
}
