/**
 * Per-workspace request rate limit for Connect, over `rate-limiter-flexible`: up to `burst`
 * requests in each window of burst/perSecond seconds, so `perSecond` sustained. Its in-memory
 * counters expire with their window, so memory holds only the workspaces seen lately, not
 * every workspace ever seen. Over the limit: 429 with
 * Retry-After, in the Connect envelope with retryable true.
 */
import type { Context, Next } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { recordRateLimitRefusal } from '../platform/metrics.js';
import { HttpProblem } from './errors.js';

export interface RateLimitOptions {
  /** Sustained requests per second per workspace (0 disables the limit). */
  perSecond: number;
  burst: number;
}

/** The check of `workspaceRateLimit`, for a handler that counts only the requests it accepts. */
export function workspaceRateLimiter(options: RateLimitOptions): (ctx: Context) => Promise<void> {
  // `burst` requests per window of burst/perSecond seconds: `perSecond` sustained, `burst` at once.
  const limiter =
    options.perSecond > 0 ? new RateLimiterMemory({ keyPrefix: 'workspace', points: Math.max(1, options.burst), duration: Math.max(1, options.burst) / options.perSecond }) : null;
  return async (ctx: Context) => {
    const workspaceId: string | undefined = ctx.state.auth?.workspaceId;
    if (!limiter || !workspaceId) return;
    try {
      await limiter.consume(workspaceId);
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      recordRateLimitRefusal(ctx.state.family ?? 'connect');
      const retryAfter = Math.max(1, Math.ceil(refused.msBeforeNext / 1000));
      throw new HttpProblem(429, 'This workspace has exceeded its request limit; retry after the Retry-After delay.', {
        retryable: true,
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
  };
}

export function workspaceRateLimit(options: RateLimitOptions) {
  const check = workspaceRateLimiter(options);
  return async (ctx: Context, next: Next) => {
    await check(ctx);
    await next();
  };
}
