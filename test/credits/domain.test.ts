/** The credits aggregate without I/O: the docs/api/credits.md state machine, pool arithmetic, notifications, the audit fold, input rules. */
import { expect } from 'chai';
import { auditCompanyCredits } from '../../domain/credits/audit.js';
import {
  balanceOf,
  companyCreditView,
  companyOf,
  decideCredits,
  evolveCredits,
  initialCreditsState,
  poolTotals,
  type AllowanceInput,
  type CreditsCommand,
  type CreditsState,
} from '../../domain/credits/credits.js';
import type { CreditEvent } from '../../domain/credits/events.js';
import { parseAllowanceBody, parseBulkBody, parsePrecondition, parseLedgerQuery, encodeCursor } from '../../domain/credits/input.js';
import { emptyPMap, pdelete, pentries, pget, pset } from '../../domain/credits/pmap.js';
import { LEDGER_EVENT_TYPES, creditEnvironmentOf, reservationIdFor } from '../../domain/credits/values.js';
import { ledgerEventTypeOf, creditEventDefinitions } from '../../domain/credits/events.js';
import { DomainError } from '../../domain/errors.js';
import { csvLine } from '../../http/credits/csv.js';
import { parseCsv } from '../support/csv.js';

const T0 = Date.parse('2026-03-01T10:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const C1 = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const C2 = 'bbbbbbbbbbbbbbbbbbbbbbbb';

function run(state: CreditsState, command: CreditsCommand): { state: CreditsState; events: CreditEvent[] } {
  const events = decideCredits(command, state);
  return { state: events.reduce(evolveCredits, state), events };
}

function refused(state: CreditsState, command: CreditsCommand): DomainError {
  try {
    decideCredits(command, state);
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const input = (o: Partial<AllowanceInput> = {}): AllowanceInput => ({
  limit: 10,
  periodType: 'monthly',
  startAt: at(-HOUR),
  endAt: at(30 * DAY),
  reason: 'plan',
  planReference: null,
  metadata: {},
  ...o,
});

const put = (companyId: string, target: 'current' | 'scheduled', precondition: { kind: 'none' } | { kind: 'version'; version: number }, i: AllowanceInput, now = at(0)): CreditsCommand => ({
  type: 'PutAllowance',
  companyId,
  target,
  precondition,
  input: i,
  now,
  bulkJobId: null,
  environment: 'sandbox',
});

const issue = (amount: number, lotId = 'lot_a', expiresAt: string | null = null, now = at(0)): CreditsCommand => ({
  type: 'IssueCredits',
  lotId,
  amount,
  expiresAt,
  environment: 'sandbox',
  reason: null,
  now,
});

const reserve = (companyId: string, doc: string, now = at(0)): CreditsCommand => ({ type: 'Reserve', reservationId: reservationIdFor(doc), companyId, documentId: doc, amount: 1, now });

describe('credits domain', () => {
  it('a persistent map keeps old versions intact', () => {
    let m = emptyPMap<number>();
    for (let i = 0; i < 3000; i++) m = pset(m, `k${i}`, i);
    const before = m;
    m = pset(pdelete(m, 'k5'), 'k6', 60);
    expect(before.size).to.equal(3000);
    expect(pget(before, 'k5')).to.equal(5);
    expect(pget(m, 'k5')).to.equal(undefined);
    expect(pget(m, 'k6')).to.equal(60);
    expect(m.size).to.equal(2999);
    expect(pentries(m).length).to.equal(2999);
  });

  it('maps every ledger event to exactly one of the 17 ledger event types, and the rest to none', () => {
    const mapped = Object.keys(creditEventDefinitions).map(ledgerEventTypeOf).filter((x) => x !== null);
    expect([...new Set(mapped)].sort()).to.deep.equal([...LEDGER_EVENT_TYPES].sort());
    expect(ledgerEventTypeOf('PoolCreditsLow')).to.equal(null);
  });

  it('maps X-Environment values as docs/api/http.md says', () => {
    expect(['sandbox', 'test', 'development', 'SANDBOX'].map(creditEnvironmentOf)).to.deep.equal(['sandbox', 'sandbox', 'sandbox', 'sandbox']);
    expect(['production', 'prod', '', undefined].map(creditEnvironmentOf)).to.deep.equal(['production', 'production', 'production', 'production']);
    expect(['simulation', 'staging', 'mars'].map(creditEnvironmentOf)).to.deep.equal([null, null, null]);
  });

  describe('allowance state machine (docs/api/credits.md)', () => {
    it('(none) → active by PUT current with If-None-Match; replace keeps period, startAt and usage; version increases', () => {
      let s = run(initialCreditsState, issue(100)).state;
      const created = run(s, put(C1, 'current', { kind: 'none' }, input()));
      expect(created.events.map((e) => e.type)).to.deep.equal(['AllowanceCreated']);
      s = created.state;
      const cur = companyOf(s, C1).current!;
      expect(cur).to.include({ status: 'active', version: 1, limit: 10, finalizedUsage: 0, reserved: 0 });
      s = run(s, reserve(C1, 'd1')).state;
      s = run(s, reserve(C1, 'd2')).state;
      s = run(s, { type: 'Finalize', reservationId: reservationIdFor('d1'), reason: null, now: at(1) }).state;
      const replaced = run(s, put(C1, 'current', { kind: 'version', version: 1 }, input({ limit: 2, startAt: at(-2 * HOUR), endAt: at(40 * DAY) }), at(2)));
      expect(replaced.events.map((e) => e.type)).to.deep.equal(['AllowanceReplaced']);
      const after = companyOf(replaced.state, C1).current!;
      expect(after).to.include({ allowancePeriodId: cur.allowancePeriodId, startAt: cur.startAt, endAt: at(40 * DAY), limit: 2, version: 2, finalizedUsage: 1, reserved: 1 });
    });

    it('refuses a limit below finalized usage plus reservations, a stale version, both creation on an existing one and replacement of none', () => {
      let s = run(initialCreditsState, issue(100)).state;
      expect(refused(s, put(C1, 'current', { kind: 'version', version: 1 }, input())).code).to.equal('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
      s = run(s, put(C1, 'current', { kind: 'none' }, input())).state;
      s = run(s, reserve(C1, 'd1')).state;
      s = run(s, reserve(C1, 'd2')).state;
      expect(refused(s, put(C1, 'current', { kind: 'none' }, input())).code).to.equal('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
      expect(refused(s, put(C1, 'current', { kind: 'version', version: 7 }, input())).code).to.equal('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
      const low = refused(s, put(C1, 'current', { kind: 'version', version: 1 }, input({ limit: 1 })));
      expect(low.code).to.equal('CONNECT_ALLOWANCE_LIMIT_BELOW_USAGE');
      expect(low.path).to.deep.equal(['limit']);
      expect(run(s, put(C1, 'current', { kind: 'version', version: 1 }, input({ limit: 2 }))).events).to.have.length(1);
    });

    it('checks the period against now: current started and ends in the future; scheduled starts in the future', () => {
      const s = initialCreditsState;
      expect(refused(s, put(C1, 'current', { kind: 'none' }, input({ startAt: at(HOUR) }))).path).to.deep.equal(['startAt']);
      expect(refused(s, put(C1, 'current', { kind: 'none' }, input({ startAt: at(-2 * DAY), endAt: at(-DAY) }))).path).to.deep.equal(['endAt']);
      expect(refused(s, put(C1, 'scheduled', { kind: 'none' }, input())).path).to.deep.equal(['startAt']);
      expect(run(s, put(C1, 'scheduled', { kind: 'none' }, input({ startAt: at(DAY), endAt: at(2 * DAY) }))).events[0]!.type).to.equal('AllowanceScheduled');
    });

    it('pause and resume: only active → paused → active, with matching versions; a paused allowance blocks and cannot be replaced', () => {
      let s = run(run(initialCreditsState, issue(100)).state, put(C1, 'current', { kind: 'none' }, input())).state;
      expect(refused(s, { type: 'ResumeAllowance', companyId: C1, expectedVersion: 1, reason: null, now: at(1), bulkJobId: null }).code).to.equal(
        'CONNECT_ALLOWANCE_INVALID_TRANSITION',
      );
      expect(refused(s, { type: 'PauseAllowance', companyId: C1, expectedVersion: 2, reason: 'x', now: at(1), bulkJobId: null }).code).to.equal(
        'CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED',
      );
      s = run(s, { type: 'PauseAllowance', companyId: C1, expectedVersion: 1, reason: 'x', now: at(1), bulkJobId: null }).state;
      expect(companyOf(s, C1).current).to.include({ status: 'paused', version: 2 });
      expect(companyCreditView(s, C1, at(2)).blockReason).to.equal('ALLOWANCE_PAUSED');
      expect(run(s, reserve(C1, 'd1', at(2))).events.map((e) => e.type)).to.deep.equal(['ReservationRefused']);
      expect(refused(s, put(C1, 'current', { kind: 'version', version: 2 }, input())).code).to.equal('CONNECT_ALLOWANCE_INVALID_TRANSITION');
      s = run(s, { type: 'ResumeAllowance', companyId: C1, expectedVersion: 2, reason: null, now: at(3), bulkJobId: null }).state;
      expect(companyOf(s, C1).current).to.include({ status: 'active', version: 3 });
    });

    it('lifecycle: the scheduled allowance activates at startAt with a new period and supersedes the current; the current expires at endAt', () => {
      let s = run(initialCreditsState, issue(100)).state;
      s = run(s, put(C1, 'current', { kind: 'none' }, input())).state;
      s = run(s, put(C1, 'scheduled', { kind: 'none' }, input({ limit: 50, startAt: at(DAY), endAt: at(3 * DAY) }))).state;
      const oldPeriod = companyOf(s, C1).current!.allowancePeriodId;
      expect(run(s, { type: 'RunLifecycle', now: at(DAY - 1) }).events).to.deep.equal([]);
      const r = run(s, { type: 'RunLifecycle', now: at(DAY) });
      expect(r.events.map((e) => e.type)).to.deep.equal(['AllowanceSuperseded', 'AllowanceActivated']);
      const c = companyOf(r.state, C1);
      expect(c.scheduled).to.equal(null);
      expect(c.current).to.include({ status: 'active', limit: 50, version: 2, startAt: at(DAY) });
      expect(c.current!.allowancePeriodId).to.not.equal(oldPeriod);
      // Deciding again at the same instant does nothing: exactly once.
      expect(run(r.state, { type: 'RunLifecycle', now: at(DAY) }).events).to.deep.equal([]);
      const expired = run(r.state, { type: 'RunLifecycle', now: at(3 * DAY) });
      expect(expired.events.map((e) => e.type)).to.deep.equal(['AllowanceExpired']);
      expect(companyOf(expired.state, C1).current!.status).to.equal('expired');
      expect(companyCreditView(expired.state, C1, at(3 * DAY)).blockReason).to.equal('ALLOWANCE_INACTIVE');
      // An expired current may be followed by a new one (If-None-Match: *), continuing the versions.
      const next = run(expired.state, put(C1, 'current', { kind: 'none' }, input({ startAt: at(3 * DAY), endAt: at(10 * DAY) }), at(3 * DAY + 1)));
      expect(companyOf(next.state, C1).current).to.include({ status: 'active', version: 3 });
    });

    it('a worker that was down: expiry, then activation, in the order of their times; a scheduled period already over expires unactivated', () => {
      let s = run(initialCreditsState, issue(100)).state;
      s = run(s, put(C1, 'current', { kind: 'none' }, input({ endAt: at(DAY) }))).state;
      s = run(s, put(C1, 'scheduled', { kind: 'none' }, input({ startAt: at(2 * DAY), endAt: at(3 * DAY) }))).state;
      const late = run(s, { type: 'RunLifecycle', now: at(5 * DAY) });
      expect(late.events.map((e) => [e.type, (e.data as any).action])).to.deep.equal([
        ['AllowanceExpired', 'current.expired'],
        ['AllowanceExpired', 'scheduled.expired'],
      ]);
      const timely = run(s, { type: 'RunLifecycle', now: at(2 * DAY + 1) });
      expect(timely.events.map((e) => [e.type, (e.data as any).action])).to.deep.equal([
        ['AllowanceExpired', 'current.expired'],
        ['AllowanceActivated', 'scheduled.activated'],
      ]);
    });

    it('a reservation on a superseded period is still settled on that period, not on the new one', () => {
      let s = run(initialCreditsState, issue(100)).state;
      s = run(s, put(C1, 'current', { kind: 'none' }, input())).state;
      s = run(s, reserve(C1, 'd1')).state;
      s = run(s, put(C1, 'scheduled', { kind: 'none' }, input({ startAt: at(DAY), endAt: at(3 * DAY) }))).state;
      s = run(s, { type: 'RunLifecycle', now: at(DAY) }).state;
      expect(companyOf(s, C1).current).to.include({ reserved: 0, finalizedUsage: 0 });
      expect(Object.keys(companyOf(s, C1).closedPeriods)).to.have.length(1);
      s = run(s, { type: 'Finalize', reservationId: reservationIdFor('d1'), reason: null, now: at(DAY + 1) }).state;
      expect(companyOf(s, C1).current).to.include({ reserved: 0, finalizedUsage: 0 });
      expect(companyOf(s, C1).closedPeriods).to.deep.equal({});
      expect(poolTotals(s)).to.include({ consumed: 1, reserved: 0, available: 99 });
    });
  });

  describe('pool and metering', () => {
    it('reserves, finalizes and releases against the allowance and the pool; refuses with the block reason', () => {
      let s = run(initialCreditsState, issue(3)).state;
      expect(run(s, reserve(C1, 'x')).events[0]).to.deep.include({ type: 'ReservationRefused', data: { reservationId: 'res_x', companyId: C1, documentId: 'x', amount: 1, blockReason: 'NO_ACTIVE_ALLOWANCE' } });
      s = run(s, put(C1, 'current', { kind: 'none' }, input({ limit: 5 }))).state;
      s = run(s, reserve(C1, 'a')).state;
      s = run(s, reserve(C1, 'b')).state;
      s = run(s, reserve(C1, 'c')).state;
      expect(poolTotals(s)).to.include({ issued: 3, active: 3, reserved: 3, available: 0 });
      expect(run(s, reserve(C1, 'd')).events.map((e) => e.type === 'ReservationRefused' && e.data.blockReason)).to.deep.equal(['POOL_EXHAUSTED']);
      // The same document again is a no-op.
      expect(run(s, reserve(C1, 'a')).events).to.deep.equal([]);
      s = run(s, { type: 'Finalize', reservationId: 'res_a', reason: null, now: at(1) }).state;
      s = run(s, { type: 'Release', reservationId: 'res_b', reason: null, now: at(1) }).state;
      const marked = run(s, { type: 'MarkNeedsReconciliation', reservationId: 'res_c', reason: null, now: at(1) });
      expect(marked.events.map((e) => e.type)).to.deep.equal(['ReservationNeedsReconciliation']);
      s = marked.state;
      expect(run(s, { type: 'MarkNeedsReconciliation', reservationId: 'res_c', reason: null, now: at(1) }).events).to.deep.equal([]);
      expect(poolTotals(s)).to.include({ active: 2, reserved: 1, consumed: 1, available: 1 });
      expect(companyOf(s, C1).current).to.include({ finalizedUsage: 1, reserved: 1 });
      s = run(s, { type: 'Reconcile', reservationId: 'res_c', outcome: 'released', reason: 'checked', now: at(2) }).state;
      expect(poolTotals(s)).to.include({ active: 2, reserved: 0, consumed: 1, available: 2 });
      expect(refused(s, { type: 'Reconcile', reservationId: 'res_c', outcome: 'released', reason: 'again', now: at(2) }).code).to.equal('CREDIT_RESERVATION_NOT_FOUND');
      // Finalizing a settled reservation does nothing.
      expect(run(s, { type: 'Finalize', reservationId: 'res_a', reason: null, now: at(3) }).events).to.deep.equal([]);
    });

    it('records balances before and after on every ledger event, equal to the fold', () => {
      let s = run(initialCreditsState, issue(10)).state;
      s = run(s, put(C1, 'current', { kind: 'none' }, input({ limit: 4 }))).state;
      const r = run(s, reserve(C1, 'a'));
      const created = r.events.find((e) => e.type === 'ReservationCreated')!;
      expect((created.data as any).balanceBefore).to.deep.equal(balanceOf(s, C1));
      expect((created.data as any).balanceAfter).to.deep.equal(balanceOf(r.state, C1));
      expect((created.data as any).balanceAfter).to.include({ companyAvailable: 3, companyReserved: 1, poolAvailable: 9, poolReserved: 1 });
    });

    it('takes credits from the lot expiring first; an expiring lot gives up only what is neither consumed nor reserved', () => {
      let s = run(initialCreditsState, issue(2, 'lot_late', at(10 * DAY))).state;
      s = run(s, issue(2, 'lot_soon', at(DAY))).state;
      s = run(s, issue(2, 'lot_never', null)).state;
      s = run(s, put(C1, 'current', { kind: 'none' }, input({ limit: 100, endAt: at(60 * DAY) }))).state;
      const r1 = run(s, reserve(C1, 'a'));
      expect((r1.events[0]!.data as any).lots).to.deep.equal([{ lotId: 'lot_soon', amount: 1 }]);
      s = run(r1.state, reserve(C1, 'b')).state;
      s = run(s, { type: 'Finalize', reservationId: 'res_a', reason: null, now: at(1) }).state;
      expect((run(s, reserve(C1, 'c')).events[0]!.data as any).lots).to.deep.equal([{ lotId: 'lot_late', amount: 1 }]);
      const expiry = run(s, { type: 'RunLifecycle', now: at(DAY) });
      expect(expiry.events.map((e) => [e.type, (e.data as any).lotId, (e.data as any).amount])).to.deep.equal([['CreditExpired', 'lot_soon', 0]]);
      s = expiry.state;
      expect(s.lots.lot_soon).to.include({ status: 'expired', consumed: 1, reserved: 1, expired: 0 });
      // Released after expiry, the reserved credit expires.
      const released = run(s, { type: 'Release', reservationId: 'res_b', reason: null, now: at(DAY + 1) });
      expect((released.events[0]!.data as any).expiredAmount).to.equal(1);
      expect(poolTotals(released.state)).to.include({ issued: 6, consumed: 1, expired: 1, reserved: 0, active: 4, available: 4 });
    });

    it('notifies threshold (80%) and exhaustion of the company (exhaustion takes precedence), pool low at 20% and 10% and pool exhausted', () => {
      let s = run(initialCreditsState, issue(20)).state;
      s = run(s, put(C1, 'current', { kind: 'none' }, input({ limit: 5 }))).state;
      s = run(s, put(C2, 'current', { kind: 'none' }, input({ limit: 100 }))).state;
      const notices: string[] = [];
      const reserveOne = (companyId: string, doc: string) => {
        const r = run(s, reserve(companyId, doc));
        s = r.state;
        for (const e of r.events) {
          if (e.type === 'ReservationCreated') continue;
          const d = e.data as any;
          notices.push(`${doc}:${e.type}${d.thresholdPercent ? `:${d.thresholdPercent}` : ''}`);
        }
      };
      for (const doc of ['a', 'b', 'c', 'd', 'e']) reserveOne(C1, doc);
      // 4 of 5 is 80%: the threshold; the 5th exhausts the allowance (and only that is announced).
      expect(notices).to.deep.equal(['d:CompanyCreditThresholdReached:80', 'e:CompanyCreditsExhausted']);
      notices.length = 0;
      for (let i = 0; i < 15; i++) reserveOne(C2, `p${i}`);
      // Pool of 20: under 20% when 3 are left (p11), under 10% when 1 is left (p13), exhausted at 0 (p14).
      expect(notices).to.deep.equal(['p11:PoolCreditsLow:20', 'p13:PoolCreditsLow:10', 'p14:PoolCreditsExhausted']);
      const low = run(initialCreditsState, issue(20)).state;
      expect(companyCreditView(s, C2, at(1)).warnings).to.include('POOL_EXHAUSTED');
      expect(companyCreditView(s, C1, at(1))).to.include({ blockReason: 'ALLOWANCE_EXHAUSTED', effectiveAvailability: 0 });
      expect(companyCreditView(low, C1, at(1)).warnings).to.deep.equal([]);
    });

    it('warns of over-allocation and of availability limited by the pool', () => {
      let s = run(initialCreditsState, issue(10)).state;
      s = run(s, put(C1, 'current', { kind: 'none' }, input({ limit: 8 }))).state;
      expect(companyCreditView(s, C1, at(1)).warnings).to.deep.equal([]);
      s = run(s, put(C2, 'current', { kind: 'none' }, input({ limit: 8 }))).state;
      expect(companyCreditView(s, C1, at(1)).warnings).to.deep.equal(['OVER_ALLOCATION']);
      s = run(s, put(C2, 'current', { kind: 'version', version: 1 }, input({ limit: 20 }))).state;
      expect(companyCreditView(s, C2, at(1))).to.deep.include({ warnings: ['OVER_ALLOCATION', 'EFFECTIVE_AVAILABILITY_LIMITED_BY_POOL'], available: 20, effectiveAvailability: 10 });
    });

    it('the audit fold reconstructs balances as of an instant and finds no inconsistency', () => {
      let s = run(initialCreditsState, issue(10, 'lot_a', null, at(0))).state;
      const log: CreditEvent[][] = [];
      const step = (cmd: CreditsCommand) => {
        const r = run(s, cmd);
        log.push(r.events);
        s = r.state;
      };
      log.push(decideCredits(issue(10, 'lot_a', null, at(0)), initialCreditsState));
      step(put(C1, 'current', { kind: 'none' }, input({ limit: 6 }), at(1000)));
      step(reserve(C1, 'a', at(2000)));
      step(reserve(C1, 'b', at(3000)));
      step({ type: 'Finalize', reservationId: 'res_a', reason: null, now: at(4000) });
      const times = [0, 1000, 2000, 3000, 4000];
      const events = log.flatMap((evs, i) => evs.map((e) => ({ id: 'x', type: e.type, schemaVersion: 1, data: e.data, occurredAt: at(times[i]!), revision: BigInt(i) })));
      const mid = auditCompanyCredits(events, C1, new Date(at(3000)), new Date());
      expect(mid.inconsistencies).to.deep.equal([]);
      expect(mid.company).to.include({ usage: 0, reserved: 2, available: 4 });
      const end = auditCompanyCredits(events, C1, null, new Date());
      expect(end.company).to.include({ usage: 1, reserved: 1, available: 4 });
      expect(end.pool).to.include({ consumed: 1, reserved: 1, available: 8 });
      const tampered = events.map((e, i) => (i === 2 ? { ...e, data: { ...(e.data as object), balanceAfter: { ...(e.data as any).balanceAfter, poolAvailable: 42 } } } : e));
      expect(auditCompanyCredits(tampered, C1, null, new Date()).inconsistencies).to.have.length(1);
    });
  });

  describe('input rules', () => {
    const body = { limit: 5, periodType: 'monthly', startAt: '2026-01-01T00:00:00Z', endAt: '2026-02-01T00:00:00Z', reason: 'r' };
    const pathOf = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return [(err as DomainError).code, (err as DomainError).path];
      }
      return null;
    };
    it('refuses every malformed allowance field with its path', () => {
      expect(parseAllowanceBody(body)).to.include({ limit: 5, startAt: '2026-01-01T00:00:00.000Z' });
      const cases: [Record<string, unknown>, string][] = [
        [{ limit: -1 }, 'limit'],
        [{ limit: '5' }, 'limit'],
        [{ limit: 1.5 }, 'limit'],
        [{ limit: undefined }, 'limit'],
        [{ periodType: 'weekly' }, 'periodType'],
        [{ startAt: '2026-01-01T00:00:00+04:00' }, 'startAt'],
        [{ startAt: '2026-02-30T00:00:00Z' }, 'startAt'],
        [{ endAt: '2026-01-01T00:00:00Z' }, 'endAt'],
        [{ reason: '' }, 'reason'],
        [{ reason: 'x'.repeat(501) }, 'reason'],
        [{ planReference: 'x'.repeat(501) }, 'planReference'],
        [{ metadata: [] }, 'metadata'],
        [{ metadata: 'x' }, 'metadata'],
        [{ extra: 1 }, 'extra'],
      ];
      for (const [patch, field] of cases) {
        expect(pathOf(() => parseAllowanceBody({ ...body, ...patch })), JSON.stringify(patch)).to.deep.equal(['CONNECT_VALIDATION_ERROR', [field]]);
      }
      expect(parseAllowanceBody({ ...body, reason: 'x'.repeat(500), planReference: 'p'.repeat(500), metadata: { a: 1 } })).to.include({ planReference: 'p'.repeat(500) });
    });

    it('reads the precondition headers', () => {
      expect(parsePrecondition('', '*', true)).to.deep.equal({ kind: 'none' });
      expect(parsePrecondition('"3"', '', true)).to.deep.equal({ kind: 'version', version: 3 });
      expect(parsePrecondition('W/"3"', '', false)).to.deep.equal({ kind: 'version', version: 3 });
      expect(pathOf(() => parsePrecondition('"1"', '*', true))).to.deep.equal(['CONNECT_VALIDATION_ERROR', ['headers']]);
      expect(pathOf(() => parsePrecondition('', '"1"', true))).to.deep.equal(['CONNECT_VALIDATION_ERROR', ['headers', 'If-None-Match']]);
      expect(pathOf(() => parsePrecondition('abc', '', true))).to.deep.equal(['CONNECT_VALIDATION_ERROR', ['headers', 'If-Match']]);
      expect(pathOf(() => parsePrecondition('', '', true))?.[0]).to.equal('CONNECT_ALLOWANCE_PRECONDITION_REQUIRED');
      expect(pathOf(() => parsePrecondition('', '*', false))).to.deep.equal(['CONNECT_VALIDATION_ERROR', ['headers', 'If-None-Match']]);
    });

    it('checks bulk rows: counts, unique operation ids, one operation per company and target, versions, fields per kind', () => {
      const row = (o: Record<string, unknown> = {}) => ({ operationId: 'op1', companyId: C1, operation: 'pause', expectedVersion: 1, reason: 'r', ...o });
      expect(parseBulkBody({ operations: [row()] })).to.have.length(1);
      const cases: [unknown, unknown[]][] = [
        [{ operations: [] }, ['operations']],
        [{ operations: Array.from({ length: 501 }, (_, i) => row({ operationId: `o${i}`, companyId: i.toString(16).padStart(24, '0') })) }, ['operations']],
        [{ operations: [row(), row({ companyId: C2 })] }, ['operations', '1', 'operationId']],
        [{ operations: [row(), row({ operationId: 'op2', operation: 'resume' })] }, ['operations', '1', 'companyId']],
        [{ operations: [row({ expectedVersion: 0 })] }, ['operations', '0', 'expectedVersion']],
        [{ operations: [row({ operationId: 'x'.repeat(201) })] }, ['operations', '0', 'operationId']],
        [{ operations: [row({ limit: 5 })] }, ['operations', '0', 'limit']],
        [{ operations: [row({ operation: 'replace_current', expectedVersion: 0, limit: 5, periodType: 'monthly', startAt: '2026-01-01T00:00:00Z' })] }, ['operations', '0', 'endAt']],
        [{ operations: [row({ operation: 'explode' })] }, ['operations', '0', 'operation']],
        [{ operations: [row({ companyId: 'XYZ' })] }, ['operations', '0', 'companyId']],
      ];
      for (const [b, path] of cases) expect(pathOf(() => parseBulkBody(b))?.[1], JSON.stringify(path)).to.deep.equal(path);
      // current and scheduled of one company are two targets.
      expect(parseBulkBody({ operations: [row(), row({ operationId: 'op2', operation: 'cancel_scheduled' })] })).to.have.length(2);
    });

    it('refuses a ledger cursor used with other filters', () => {
      const filters = parseLedgerQuery({ companyId: C1 }).filters;
      const cursor = encodeCursor(['10', '20'], filters);
      expect(parseLedgerQuery({ companyId: C1, cursor }).after).to.deep.equal(['10', '20']);
      expect(pathOf(() => parseLedgerQuery({ companyId: C2, cursor }))).to.deep.equal(['CONNECT_VALIDATION_ERROR', ['query', 'cursor']]);
      expect(pathOf(() => parseLedgerQuery({ cursor: 'garbage' }))).to.deep.equal(['CONNECT_VALIDATION_ERROR', ['query', 'cursor']]);
    });

    it('writes CSV fields as RFC 4180 says, and reads them back', () => {
      const line = csvLine(['plain', 'with,comma', 'with "quotes"', 'multi\nline', null, 42]);
      expect(line).to.equal('plain,"with,comma","with ""quotes""","multi\nline",,42\r\n');
      expect(parseCsv(line)).to.deep.equal([['plain', 'with,comma', 'with "quotes"', 'multi\nline', '', '42']]);
    });
  });
});
