/**
 * Idempotent requests (stream `idempotency-<hash of workspace, scope and key>`): the first
 * request with a key claims it and records its response; a retry with the same payload gets
 * that response back; a different payload under the same key is a conflict. A claim whose
 * request died without an answer can be taken over after `staleAfterMs`.
 *
 * Effects (issue 13): a command that acts for an idempotent request appends, in the same
 * multi-stream append as its own events, an `IdempotentEffectRecorded` event here: the request's
 * n-th effect ("slot" n) and what the command needs to answer it again (a document id, the
 * result of an allowance write). The effects survive a takeover and an abandon, so a request
 * that committed its effects but died before its answer was recorded is answered from them on
 * the retry, never executed again.
 */
import * as t from 'io-ts';
import { registerDecider } from './aggregates.js';
import type { Decider, DomainEvent } from './decider.js';
import { DomainError } from './errors.js';
import { defineEvent } from './events/envelope.js';

export const IdempotentRequestStarted = defineEvent({
  type: 'IdempotentRequestStarted',
  version: 1,
  codec: t.type({ scope: t.string, key: t.string, requestHash: t.string, startedAt: t.string }),
});
export const IdempotentRequestCompleted = defineEvent({
  type: 'IdempotentRequestCompleted',
  version: 1,
  codec: t.type({ status: t.number, body: t.unknown, headers: t.record(t.string, t.string) }),
});
export const IdempotentEffectRecorded = defineEvent({
  type: 'IdempotentEffectRecorded',
  version: 1,
  codec: t.type({ slot: t.number, record: t.unknown }),
});
export const IdempotentRequestAbandoned = defineEvent({
  type: 'IdempotentRequestAbandoned',
  version: 1,
  codec: t.type({ reason: t.string }),
});

export interface RecordedResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export type IdempotencyEvent =
  | DomainEvent<'IdempotentRequestStarted', t.TypeOf<typeof IdempotentRequestStarted.codec>>
  | DomainEvent<'IdempotentRequestCompleted', RecordedResponse>
  | DomainEvent<'IdempotentEffectRecorded', { slot: number; record: unknown }>
  | DomainEvent<'IdempotentRequestAbandoned', { reason: string }>;

export type IdempotencyCommand =
  | { type: 'Start'; scope: string; key: string; requestHash: string; now: string; staleAfterMs: number }
  | { type: 'Complete'; response: RecordedResponse }
  | { type: 'Abandon'; reason: string };

export interface IdempotencyState {
  status: 'none' | 'in_progress' | 'completed' | 'abandoned';
  requestHash: string | null;
  startedAt: string | null;
  response: RecordedResponse | null;
  /** Effects committed for this key (slot → record), kept across takeovers and abandons. */
  effects: Readonly<Record<string, unknown>>;
}

export const IDEMPOTENCY_CONFLICT = 'IDEMPOTENCY_KEY_REUSED';
export const IDEMPOTENCY_IN_PROGRESS = 'IDEMPOTENCY_REQUEST_IN_PROGRESS';

export const idempotencyDecider: Decider<IdempotencyCommand, IdempotencyState, IdempotencyEvent> = {
  category: 'idempotency',
  initialState: { status: 'none', requestHash: null, startedAt: null, response: null, effects: {} },
  events: { IdempotentRequestStarted, IdempotentRequestCompleted, IdempotentRequestAbandoned, IdempotentEffectRecorded },
  decide(command, state) {
    switch (command.type) {
      case 'Start': {
        const started = [{ type: 'IdempotentRequestStarted' as const, data: { scope: command.scope, key: command.key, requestHash: command.requestHash, startedAt: command.now } }];
        if (state.status === 'none') return started;
        // An abandoned request that committed nothing may be retried with any payload; one with
        // effects is that payload's for good.
        if (state.status === 'abandoned' && (Object.keys(state.effects).length === 0 || state.requestHash === command.requestHash)) return started;
        if (state.requestHash !== command.requestHash) {
          throw new DomainError('conflict', IDEMPOTENCY_CONFLICT, 'this Idempotency-Key was already used with a different request', ['headers', 'Idempotency-Key']);
        }
        if (state.status === 'completed') return [];
        if (Date.parse(state.startedAt!) + command.staleAfterMs <= Date.parse(command.now)) return started;
        throw new DomainError('conflict', IDEMPOTENCY_IN_PROGRESS, 'a request with this Idempotency-Key is still in progress', ['headers', 'Idempotency-Key']);
      }
      case 'Complete':
        if (state.status !== 'in_progress') return [];
        return [{ type: 'IdempotentRequestCompleted', data: command.response }];
      case 'Abandon':
        if (state.status !== 'in_progress') return [];
        return [{ type: 'IdempotentRequestAbandoned', data: { reason: command.reason } }];
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'IdempotentRequestStarted': {
        const effects = state.requestHash === event.data.requestHash ? state.effects : {};
        return { status: 'in_progress', requestHash: event.data.requestHash, startedAt: event.data.startedAt, response: null, effects };
      }
      case 'IdempotentEffectRecorded':
        return { ...state, effects: { ...state.effects, [String(event.data.slot)]: event.data.record } };
      case 'IdempotentRequestCompleted':
        return { ...state, status: 'completed', response: event.data };
      case 'IdempotentRequestAbandoned':
        return { ...state, status: 'abandoned' };
    }
  },
};

registerDecider(idempotencyDecider);
