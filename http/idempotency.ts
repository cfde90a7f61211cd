/**
 * The shared idempotency mechanism of write endpoints: `Idempotency-Key`, scoped by workspace
 * and route. The same key with the same request returns the original status and body (with
 * `replayed: true` where the body has that field); the same key with another request is a 409
 * conflict; concurrent duplicates execute once (the later ones wait for the first's answer).
 * The request runs inside an idempotent unit (commands/idempotent-unit.ts): commands that act
 * record their effect with the key in the same append, so a retry after a crash is answered
 * from what the earlier attempt committed instead of running again.
 */
import { recordIdempotencyConflict, recordIdempotencyReplay } from '../platform/metrics.js';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, Next } from 'koa';
import { execute, type CommandContext } from '../commands/execute.js';
import { IdempotencyKeyTakenOver, runInUnit, type IdempotentUnit } from '../commands/idempotent-unit.js';
import type { EventStore } from '../platform/eventstore/port.js';
import { canonicalJson } from '../domain/canonical-json.js';
import { DomainError } from '../domain/errors.js';
import { IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS, idempotencyDecider, type RecordedResponse } from '../domain/idempotency.js';
import type { Clock } from '../platform/clock.js';
import { HttpProblem, renderProblem, toProblem } from './errors.js';
import { commandContext } from './request-context.js';

const RECORDED_HEADERS = ['etag', 'location'];

/** The lease of a claim on a route with atomic effects (see IdempotencyOptions.staleAfterMs). */
export const ATOMIC_LEASE_MS = 3_000;

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
  /**
   * A claim without an answer after this long may be taken over (its request died). Routes whose
   * every effect is recorded with the key (`atomicEffects`) use a short lease: a takeover of a
   * request still running is harmless there (its effect append then fails as a whole and it
   * waits for the new owner's answer), so a retry after a crash waits at most this long.
   */
  staleAfterMs?: number;
  /** Every command of the route records its effect with the key (see commands/idempotent-unit.ts). */
  atomicEffects?: boolean;
  /** How long a concurrent duplicate waits for the first request's answer. */
  waitMs?: number;
  /** Reject writes that come without a key. */
  required?: boolean;
}

export function idempotent(options: IdempotencyOptions) {
  const staleAfterMs = options.staleAfterMs ?? (options.atomicEffects ? ATOMIC_LEASE_MS : 60_000);
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
      .update(canonicalJson({ method: ctx.method, path: ctx.path, query: ctx.query, body: ctx.request.body ?? null, environment: ctx.get('x-environment') }))
      .digest('hex');
    const streamId = `idempotency-${createHash('sha256').update(`${workspaceId}\n${scope}\n${key}`).digest('hex')}`;
    const cmdCtx = { ...commandContext(ctx, options.clock), idempotencyKey: key };

    let deadline = Date.now() + waitMs;
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
          await sleep(50);
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
      // The effects of earlier attempts come with the claim: the commands answer from them.
      const unit: IdempotentUnit = { streamId, revision: started.appended!.nextExpectedRevision, effects: started.state.effects, nextSlot: 0, recovered: false };
      if (await run(ctx, next, unit, streamId, cmdCtx)) return;
      // A retry took the key over while this request ran (its lease had run out): nothing of this
      // attempt was written; wait for the new owner's answer like a concurrent duplicate.
      deadline = Date.now() + waitMs;
    }
  };

  /** Runs the request in its unit and records its answer; false when the key was taken over. */
  async function run(ctx: Context, next: Next, unit: IdempotentUnit, streamId: string, cmdCtx: CommandContext): Promise<boolean> {
    const record = (command: { type: 'Complete'; response: RecordedResponse } | { type: 'Abandon'; reason: string }) =>
      execute(options.store, idempotencyDecider, streamId, command, cmdCtx);
    try {
      await runInUnit(unit, () => next());
    } catch (err) {
      if (err instanceof IdempotencyKeyTakenOver) return false;
      // A refusal is an answer too: record the client's 4xx as rendered; let a 5xx be retried.
      const problem = toProblem(err);
      if (problem && problem.status < 500 && !(problem.status === 409 && problem.options.retryable)) {
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
    if (unit.recovered && ctx.status < 500) {
      // Answered from what an earlier attempt committed: the effect is not new.
      ctx.body = markReplayed(ctx.body);
      ctx.set('Idempotent-Replayed', 'true');
    }
    return true;
  }
}

declare module 'koa' {
  interface ExtendableContext {
    routerPath?: string;
    _matchedRoute?: string;
  }
}
