/**
 * Back-pressure: one bound on the write requests the service executes at once, shared by every
 * API family. A write request (POST, PUT, PATCH, DELETE; the invoice query's POST is a read and
 * not counted) runs at once while fewer than `concurrency` run; otherwise it waits in a FIFO
 * queue of at most `queueLength` requests for at most `queueTimeoutMs`. A request that finds the
 * queue full, or waits too long, is refused before its handler runs — nothing is written — with
 * the family's 503 (`retryable: true` where the envelope has that field) and `Retry-After`: the
 * seconds the queue ahead would take to drain at the recent pace (at least 1). So under overload
 * latency stays bounded by the queue instead of growing without limit.
 */
import type { Context, Next } from 'koa';
import { HttpProblem } from './errors.js';

export interface WriteLimitOptions {
  /** Write requests executing at once (0 disables the limit). */
  concurrency: number;
  /** Write requests waiting for a slot at most. */
  queueLength: number;
  /** Longest wait in the queue before a 503. */
  queueTimeoutMs: number;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface WriteLimiter {
  (ctx: Context, next: Next): Promise<void>;
  /** Executing and waiting requests (for tests and metrics). */
  readonly load: { active: number; queued: number };
}

export function writeLimit(options: WriteLimitOptions): WriteLimiter {
  let active = 0;
  const queue: { grant: () => void }[] = [];
  // Mean time one request holds a slot (exponentially weighted), for Retry-After.
  let meanHoldMs = 50;

  const release = () => {
    const waiter = queue.shift();
    if (waiter) waiter.grant();
    else active--;
  };

  const refuse = (reason: string): never => {
    const drainMs = ((queue.length + active) * meanHoldMs) / Math.max(1, options.concurrency);
    const retryAfter = Math.max(1, Math.ceil(drainMs / 1000));
    throw new HttpProblem(503, `The service is at its limit of concurrent write requests (${reason}); retry after the Retry-After delay.`, {
      retryable: true,
      headers: { 'Retry-After': String(retryAfter) },
    });
  };

  /** A slot, at once or after waiting in the queue; throws the 503 when the queue is full or the wait too long. */
  const acquire = async (): Promise<void> => {
    if (active < options.concurrency) {
      active++;
      return;
    }
    if (queue.length >= options.queueLength) refuse(`${options.queueLength} waiting already`);
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(); // the slot passes from the releasing request to this one: `active` is unchanged
        },
      };
      const timer = setTimeout(() => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        try {
          refuse(`waited ${options.queueTimeoutMs} ms for a slot`);
        } catch (err) {
          reject(err);
        }
      }, options.queueTimeoutMs);
      queue.push(waiter);
    });
  };

  const middleware = (async (ctx: Context, next: Next) => {
    if (options.concurrency <= 0 || !WRITE_METHODS.has(ctx.method) || ctx.state.family === 'invoice_query') return next();
    await acquire();
    const started = performance.now();
    try {
      await next();
    } finally {
      meanHoldMs = 0.9 * meanHoldMs + 0.1 * (performance.now() - started);
      release();
    }
  }) as WriteLimiter;
  Object.defineProperty(middleware, 'load', { get: () => ({ active, queued: queue.length }) });
  return middleware;
}
