/**
 * The shared idempotency mechanism of write endpoints: `Idempotency-Key`, scoped by workspace
 * and route. The same key with the same request returns the original status and body (with
 * `replayed: true` where the body has that field); the same key with another request is a 409
 * conflict; concurrent duplicates execute once (the later ones wait for the first's answer).
 */
import { recordIdempotencyConflict, recordIdempotencyReplay } from '../platform/metrics.js';
import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import { execute } from '../commands/execute.js';
import type { EventStore } from '../commands/eventstore/port.js';
import { DomainError } from '../domain/errors.js';
import { IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS, idempotencyDecider, type RecordedResponse } from '../domain/idempotency.js';
import type { Clock } from '../platform/clock.js';
import { HttpProblem, renderProblem, toProblem } from './errors.js';
import { commandContext } from './request-context.js';

const RECORDED_HEADERS = ['etag', 'location'];

/** Canonical JSON: object keys sorted, so the same payload always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function markReplayed(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  if ('replayed' in copy) copy.replayed = true;
  const data = copy.data;
  if (data && typeof data === 'object' && !Array.isArray(data) && 'replayed' in data) copy.data = { ...data, replayed: true };
  return copy;
}

export interface IdempotencyOptions {
  store: EventStore;
  clock: Clock;
  /** A claim without an answer after this long may be taken over (its request died). */
  staleAfterMs?: number;
  /** How long a concurrent duplicate waits for the first request's answer. */
  waitMs?: number;
  /** Reject writes that come without a key. */
  required?: boolean;
}

export function idempotent(options: IdempotencyOptions) {
  const staleAfterMs = options.staleAfterMs ?? 60_000;
  const waitMs = options.waitMs ?? 15_000;
  return async (ctx: Context, next: Next) => {
    const key = ctx.get('idempotency-key');
    if (!key) {
      if (options.required) throw new HttpProblem(400, 'the Idempotency-Key header is required', { path: ['headers', 'Idempotency-Key'] });
      return next();
    }
    if (key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw new HttpProblem(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters', { path: ['headers', 'Idempotency-Key'] });
    }
    const workspaceId: string = ctx.state.auth.workspaceId;
    const scope = `${ctx.method} ${ctx.routerPath ?? ctx._matchedRoute ?? ctx.path}`;
    const requestHash = createHash('sha256')
      .update(canonical({ method: ctx.method, path: ctx.path, query: ctx.query, body: ctx.request.body ?? null, environment: ctx.get('x-environment') }))
      .digest('hex');
    const streamId = `idempotency-${createHash('sha256').update(`${workspaceId}\n${scope}\n${key}`).digest('hex')}`;
    const cmdCtx = { ...commandContext(ctx, options.clock), idempotencyKey: key };

    const deadline = Date.now() + waitMs;
    for (;;) {
      let started;
      try {
        started = await execute(
          options.store,
          idempotencyDecider,
          streamId,
          { type: 'Start', scope, key, requestHash, now: options.clock.now().toISOString(), staleAfterMs },
          cmdCtx,
        );
      } catch (err) {
        if (err instanceof DomainError && err.code === IDEMPOTENCY_CONFLICT) {
          recordIdempotencyConflict(ctx.state.family);
          throw new HttpProblem(409, err.message, { path: err.path });
        }
        if (err instanceof DomainError && err.code === IDEMPOTENCY_IN_PROGRESS) {
          if (Date.now() > deadline) throw new HttpProblem(409, err.message, { path: err.path, retryable: true });
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        throw err;
      }
      if (started.events.length === 0) {
        const response = started.state.response!;
        ctx.status = response.status;
        ctx.body = markReplayed(response.body);
        for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
        ctx.set('Idempotent-Replayed', 'true');
        recordIdempotencyReplay(ctx.state.family);
        return;
      }
      break;
    }

    const record = (command: { type: 'Complete'; response: RecordedResponse } | { type: 'Abandon'; reason: string }) =>
      execute(options.store, idempotencyDecider, streamId, command, cmdCtx);
    try {
      await next();
    } catch (err) {
      // A refusal is an answer too: record the client's 4xx as rendered; let a 5xx be retried.
      const problem = toProblem(err);
      if (problem && problem.status < 500) {
        const rendered = renderProblem(ctx.state.family, problem, ctx);
        await record({ type: 'Complete', response: { status: rendered.status, body: rendered.body, headers: problem.options.headers ?? {} } });
      } else {
        await record({ type: 'Abandon', reason: problem ? `status ${problem.status}` : 'unexpected error' }).catch(() => {});
      }
      throw err;
    }
    const headers: Record<string, string> = {};
    for (const name of RECORDED_HEADERS) {
      const value = ctx.response.get(name);
      if (value) headers[name] = value;
    }
    if (ctx.status >= 500) await record({ type: 'Abandon', reason: `status ${ctx.status}` });
    else await record({ type: 'Complete', response: { status: ctx.status, body: ctx.body ?? null, headers } });
  };
}

declare module 'koa' {
  interface ExtendableContext {
    routerPath?: string;
    _matchedRoute?: string;
  }
}
