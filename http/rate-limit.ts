/**
 * Per-workspace request rate limit (token bucket) for Connect. Over the limit: 429 with
 * Retry-After, in the Connect envelope with retryable true.
 */
import type { Context, Next } from 'koa';
import { recordRateLimitRefusal } from '../platform/metrics.js';
import { HttpProblem } from './errors.js';

export interface RateLimitOptions {
  /** Sustained requests per second per workspace (0 disables the limit). */
  perSecond: number;
  burst: number;
  now?: () => number;
}

export function workspaceRateLimit(options: RateLimitOptions) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const now = options.now ?? Date.now;
  return async (ctx: Context, next: Next) => {
    const workspaceId: string | undefined = ctx.state.auth?.workspaceId;
    if (options.perSecond > 0 && workspaceId) {
      const t = now();
      const bucket = buckets.get(workspaceId) ?? { tokens: options.burst, at: t };
      bucket.tokens = Math.min(options.burst, bucket.tokens + ((t - bucket.at) / 1000) * options.perSecond);
      bucket.at = t;
      if (bucket.tokens < 1) {
        buckets.set(workspaceId, bucket);
        recordRateLimitRefusal(ctx.state.family ?? 'connect');
        const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / options.perSecond));
        throw new HttpProblem(429, 'This workspace has exceeded its request limit; retry after the Retry-After delay.', {
          retryable: true,
          headers: { 'Retry-After': String(retryAfter) },
        });
      }
      bucket.tokens -= 1;
      buckets.set(workspaceId, bucket);
    }
    await next();
  };
}
