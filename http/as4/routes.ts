/**
 * The AS4 endpoint of the service's Peppol access point: `POST /as4` (other access points post
 * here; TLS may be terminated by a proxy in front). Not an API family: no API key — the sender is
 * authenticated by its signature and Peppol certificate. The raw body is read with a size bound;
 * anything that is not a well-formed AS4 message gets a signed ebMS error with HTTP 200 (an
 * oversized body: 413 before anything is parsed), never a 500 for bad input. When the worker
 * threads' queue is full the message is not read: 503 with Retry-After (a sender retries).
 */
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { receiveAs4, type ReceiveDeps } from '../../commands/peppol/as4/receive.js';
import type { Logger } from '../../platform/logger.js';

export const AS4_PATH = '/as4';

export interface As4Endpoint {
  receive: ReceiveDeps;
  /** Largest HTTP body accepted (the encrypted, compressed message with its envelope). */
  maxBodyBytes: number;
}

export function as4Middleware(endpoint: As4Endpoint, logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== AS4_PATH) return next();
    ctx.state.family = 'system';
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      ctx.body = { code: 'method_not_allowed', message: `${AS4_PATH} takes POST (AS4 messages)` };
      return;
    }
    let body: Buffer;
    try {
      body = await getRawBody(ctx.req, { limit: endpoint.maxBodyBytes, length: ctx.get('content-length') || undefined });
    } catch (err) {
      const e = err as { type?: string; status?: number };
      ctx.status = e.type === 'entity.too.large' ? 413 : 400;
      ctx.body = { code: e.type === 'entity.too.large' ? 'payload_too_large' : 'bad_request', message: e.type === 'entity.too.large' ? `the AS4 message is larger than ${endpoint.maxBodyBytes} bytes` : 'the request body could not be read' };
      return;
    }
    const answer = await receiveAs4(endpoint.receive, ctx.get('content-type') || undefined, body);
    if (answer.outcome === 'refused') logger.info({ messageId: answer.messageId, ebmsError: answer.error?.code, reason: answer.error?.description }, 'AS4 message refused');
    if (answer.outcome === 'busy') {
      logger.warn({ reason: answer.body }, 'AS4 message not read: the worker threads are busy');
      ctx.set('Retry-After', '1');
    }
    ctx.status = answer.status;
    ctx.type = answer.contentType;
    ctx.body = answer.body;
  };
}
