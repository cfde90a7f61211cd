/**
 * Given / when / then specifications of a decider, without I/O:
 *
 *   const given = deciderSpecification(purchaseDecider);
 *   given([earlierEvents]).when(command).then([expectedEvents]);
 *   given([]).when(command).thenThrows('SOME_CODE');
 *
 * `given` folds the events into the state, `when` decides the command on it, `then` compares
 * the new events, `thenThrows` the domain error's code (or checks the error with a function).
 */
import { expect } from 'chai';
import { fold, type Decider, type DomainEvent } from '../../domain/decider.js';
import { DomainError } from '../../domain/errors.js';

export interface DeciderThen<S, E> {
  /** The decision is exactly these events (deep equality). */
  then(expected: readonly E[] | ((events: readonly E[], state: S) => void)): void;
  /** The decision produces no event. */
  thenNothingHappened(): void;
  /** The decision is refused: with a DomainError of this code, or an error `check` accepts. */
  thenThrows(expected: string | ((err: unknown) => void)): void;
}

export function deciderSpecification<C, S, E extends DomainEvent>(decider: Decider<C, S, E>) {
  return (given: readonly E[] = []) => ({
    when(command: C): DeciderThen<S, E> {
      const state = fold(decider, given);
      const decide = () => decider.decide(command, state);
      return {
        then(expected) {
          const events = decide();
          if (typeof expected === 'function') expected(events, fold(decider, events, state));
          else expect(events).to.deep.equal(expected);
        },
        thenNothingHappened() {
          expect(decide()).to.deep.equal([]);
        },
        thenThrows(expected) {
          let thrown: unknown = null;
          try {
            decide();
          } catch (err) {
            thrown = err;
          }
          expect(thrown, 'the decision was expected to be refused').to.not.equal(null);
          if (typeof expected === 'function') expected(thrown);
          else {
            expect(thrown).to.be.instanceOf(DomainError);
            expect((thrown as DomainError).code).to.equal(expected);
          }
        },
      };
    },
  });
}
