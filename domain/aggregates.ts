/**
 * The aggregates of the domain, by stream category (the part of a stream id before the
 * first "-"). Each aggregate is a decider: `evolve` folds its events into state. Tools that
 * reconstruct history (the audit CLI) find the fold for any stream here.
 */
import type { Decider, DomainEvent } from './decider.js';
import { decodeEventData, type EventDefinition } from './events/envelope.js';

export interface AggregateFold<S = unknown> {
  readonly category: string;
  readonly initialState: S;
  /** Folds one event (type and decoded-or-raw data) into the state. Pure. */
  evolve(state: S, event: { type: string; schemaVersion: number; data: unknown; occurredAt: string }): S;
}

const folds = new Map<string, AggregateFold<any>>();

export function registerAggregate<S>(fold: AggregateFold<S>): AggregateFold<S> {
  if (folds.has(fold.category)) throw new Error(`aggregate category registered twice: ${fold.category}`);
  folds.set(fold.category, fold);
  return fold;
}

/** Registers a decider's fold, decoding (and upcasting) each event with the decider's codecs. */
export function registerDecider<C, S, E extends DomainEvent>(decider: Decider<C, S, E>): void {
  registerAggregate<S>({
    category: decider.category,
    initialState: decider.initialState,
    evolve(state, event) {
      const definition = (decider.events as Record<string, EventDefinition<unknown>>)[event.type];
      if (!definition) return state; // an event type this version of the code does not know
      const data = decodeEventData(definition, event.schemaVersion, event.data);
      return decider.evolve(state, { type: event.type, data } as E);
    },
  });
}

export function streamCategory(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash === -1 ? streamId : streamId.slice(0, dash);
}

export function aggregateFor(streamId: string): AggregateFold<unknown> | null {
  return folds.get(streamCategory(streamId)) ?? null;
}

export function registeredCategories(): string[] {
  return [...folds.keys()].sort();
}
