/** The credits decider (allowance writes) as given / when / then specifications (no I/O). */
import { expect } from 'chai';
import { creditsDecider, type CreditsCommand } from '../../domain/credits/credits.js';
import type { CreditEvent } from '../../domain/credits/events.js';
import { fold } from '../../domain/decider.js';
import { deciderSpecification } from '../support/decider-spec.js';

const given = deciderSpecification(creditsDecider);
const now = '2026-05-01T10:00:00.000Z';
const input = { limit: 10, periodType: 'monthly' as const, startAt: '2026-05-01T00:00:00.000Z', endAt: '2026-06-01T00:00:00.000Z', reason: 'plan', planReference: null, metadata: {} };
const put = (precondition: Extract<CreditsCommand, { type: 'PutAllowance' }>['precondition'], changes: Partial<typeof input> = {}, target: 'current' | 'scheduled' = 'current'): CreditsCommand => ({
  type: 'PutAllowance', companyId: 'co_1', target, precondition, input: { ...input, ...changes }, now, bulkJobId: null, environment: 'sandbox',
});

/** The events the decider itself records for these commands, one after another. */
function history(...commands: CreditsCommand[]): CreditEvent[] {
  const events: CreditEvent[] = [];
  for (const c of commands) events.push(...creditsDecider.decide(c, fold(creditsDecider, events)));
  return events;
}

describe('decider specification: credits allowances', () => {
  it('creates a current allowance at version 1 with If-None-Match', () => {
    given([]).when(put({ kind: 'none' })).then((events, state) => {
      expect(events.map((e) => e.type)).to.deep.equal(['AllowanceCreated']);
      expect((events[0]!.data as { allowance: object }).allowance).to.include({ version: 1, status: 'active' });
      expect(state.enforcement).to.equal(false);
    });
  });

  it('refuses If-None-Match over a live allowance, and If-Match of another version', () => {
    const created = history(put({ kind: 'none' }));
    given(created).when(put({ kind: 'none' })).thenThrows('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
    given(created).when(put({ kind: 'version', version: 7 })).thenThrows('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
  });

  it('replaces the current allowance with If-Match of its version, one version up, keeping its start', () => {
    given(history(put({ kind: 'none' })))
      .when(put({ kind: 'version', version: 1 }, { limit: 20, startAt: '2026-04-01T00:00:00.000Z' }))
      .then((events) => {
        expect(events.map((e) => e.type)).to.deep.equal(['AllowanceReplaced']);
        expect((events[0]!.data as { allowance: object }).allowance).to.include({ version: 2, limit: 20, startAt: input.startAt });
      });
  });

  it('schedules a future allowance, and refuses one that has already started', () => {
    const future = { startAt: '2026-06-01T00:00:00.000Z', endAt: '2026-07-01T00:00:00.000Z' };
    given([]).when(put({ kind: 'none' }, future, 'scheduled')).then((events) => {
      expect(events.map((e) => e.type)).to.deep.equal(['AllowanceScheduled']);
      expect((events[0]!.data as { allowance: object }).allowance).to.include({ version: 1, status: 'scheduled', allowancePeriodId: null });
    });
    given([]).when(put({ kind: 'none' }, {}, 'scheduled')).thenThrows('CONNECT_VALIDATION_ERROR');
  });

  it('refuses to pause an allowance the company does not have', () => {
    given([]).when({ type: 'PauseAllowance', companyId: 'co_1', expectedVersion: 1, reason: null, now, bulkJobId: null }).thenThrows((err) => {
      expect(err).to.be.instanceOf(Error);
    });
  });
});
