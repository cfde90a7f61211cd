/**
 * Sends one webhook request, safely: the URL is checked, its host resolved once and every
 * address checked, and the connection made to the checked address (so a second resolution
 * cannot point it elsewhere); redirects are not followed; the answer is read up to a small cap;
 * the whole attempt (resolution, connection, request, answer) has one time-out.
 */
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { SendResult } from '../../domain/webhooks/delivery.js';
import { addressesProblem, urlProblem, type TargetPolicy } from '../../domain/webhooks/targets.js';
import { WEBHOOK_LIMITS } from '../../domain/webhooks/values.js';

export interface SenderOptions {
  timeoutMs?: number;
  responseBodyCap?: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS (honoured for sandbox subscriptions only). */
  allowPrivateTargets: boolean;
}

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 }),
};

type Resolved = { address: string; family: number };

export async function sendWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  environment: 'sandbox' | 'production',
  options: SenderOptions,
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  const policy: TargetPolicy = { environment, allowPrivateTargets: options.allowPrivateTargets };
  const timeoutMs = options.timeoutMs ?? WEBHOOK_LIMITS.attemptTimeoutMs;
  const cap = options.responseBodyCap ?? WEBHOOK_LIMITS.responseBodyCap;
  const urlRefusal = urlProblem(url, policy);
  if (urlRefusal) return { kind: 'refused', durationMs: elapsed(), error: urlRefusal };
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    let addresses: Resolved[];
    if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
    else {
      const resolved = await Promise.race([lookup(host, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => err), deadline]);
      if (resolved === 'timeout') return { kind: 'timeout', durationMs: elapsed() };
      if (resolved instanceof Error) return { kind: 'network', durationMs: elapsed(), error: `cannot resolve ${host}: ${resolved.code ?? resolved.message}` };
      addresses = resolved;
    }
    const refusal = addressesProblem(
      addresses.map((a) => a.address),
      policy,
    );
    if (refusal) return { kind: 'refused', durationMs: elapsed(), error: refusal };
    const chosen = addresses[0]!;

    let request: http.ClientRequest | undefined;
    const exchange = new Promise<SendResult>((resolve) => {
      const isHttps = u.protocol === 'https:';
      const req = (isHttps ? https : http).request({
        method: 'POST',
        protocol: u.protocol,
        hostname: host,
        port: u.port === '' ? undefined : Number(u.port),
        path: `${u.pathname}${u.search}`,
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)), 'User-Agent': 'einvoicing-webhooks/1.0' },
        agent: isHttps ? agents.https : agents.http,
        ...(isHttps && isIP(host) === 0 ? { servername: host } : {}),
        // Connect to the address checked above, never to a second resolution of the name.
        lookup: ((_hostname: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          if (opts?.all) callback(null, [chosen]);
          else callback(null, chosen.address, chosen.family);
        }) as never,
      });
      request = req;
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'network', durationMs: elapsed(), error: err.code ?? err.message }));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          resolve({ kind: 'answered', statusCode: res.statusCode ?? 0, durationMs: elapsed(), responseBody: kept > 0 ? Buffer.concat(chunks).toString('utf8') : null });
        };
        res.on('data', (chunk: Buffer) => {
          if (kept < cap) {
            const part = chunk.subarray(0, cap - kept);
            chunks.push(part);
            kept += part.length;
          }
          if (kept >= cap && chunk.length > 0) {
            // Enough: the rest of the answer is not read.
            finish();
            res.destroy();
          }
        });
        res.on('end', finish);
        res.on('error', finish);
        res.on('close', finish);
      });
      req.end(body);
    });
    const outcome = await Promise.race([exchange, deadline]);
    if (outcome === 'timeout') {
      request?.destroy();
      return { kind: 'timeout', durationMs: elapsed() };
    }
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves a URL's host and checks its addresses (subscription writes refuse private targets early). */
export async function targetProblem(url: string, environment: 'sandbox' | 'production', allowPrivateTargets: boolean): Promise<string | null> {
  const policy: TargetPolicy = { environment, allowPrivateTargets };
  const refusal = urlProblem(url, policy);
  if (refusal) return refusal;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return null;
  try {
    const addresses = await lookup(host, { all: true, verbatim: true });
    return addressesProblem(
      addresses.map((a) => a.address),
      policy,
    );
  } catch {
    // A name that does not resolve yet may later; every attempt checks again.
    return null;
  }
}
