/**
 * The shape of every aggregate: decide(command, state) -> events, evolve(state, event) -> state.
 * Pure: no I/O and no clock (time arrives inside commands).
 */
import type { EventDefinition } from './events/envelope.js';

export interface DomainEvent<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
}

export interface Decider<C, S, E extends DomainEvent> {
  readonly category: string;
  readonly initialState: S;
  /** The codec of every event type this aggregate writes, with upcasters for old versions. */
  readonly events: Readonly<Record<E['type'], EventDefinition<any>>>;
  decide(command: C, state: S): E[];
  evolve(state: S, event: E): S;
}

/** The state after `events`, evolved from `from` (the aggregate's initial state by default). */
export function fold<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, events: readonly E[], from: S = decider.initialState): S {
  return events.reduce((s, e) => decider.evolve(s, e), from);
}
