import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { positionToString, type RecordedEvent } from '../../platform/eventstore/port.js';
import type { AggregateFold } from '../../domain/aggregates.js';
import { auditStream, parseAsOf, renderTable, summarizeData } from '../../scripts/audit.js';
import { newEvent } from '../eventstore/contract.js';
import { testDb } from '../support/db.js';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function runAudit(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/audit.ts', ...args],
      { env: { ...process.env, DATABASE_URL: testDb().url, EVENTSTORE_URL: '', ...env }, timeout: 60000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const jsonLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Events of one day each, from 2024-03-01 on, with distinct request metadata. */
function datedEvents(n: number) {
  return Array.from({ length: n }, (_, i) => {
    const e = newEvent(i % 2 === 0 ? 'AuditTest.Added' : 'AuditTest.Noted', { n: i + 1, note: `event ${i}`, items: [1, 2] });
    return {
      ...e,
      metadata: {
        ...e.metadata,
        occurredAt: new Date(Date.UTC(2024, 2, 1 + i, 12)).toISOString(),
        requestId: `req-${i}`,
        idempotencyKey: i === 0 ? 'idem-0' : null,
      },
    };
  });
}

/** A small fold for the pure tests: sums n, counts events, remembers the last type. */
const sumFold: AggregateFold<{ total: number; count: number; last: string | null }> = {
  category: 'audit_sum',
  initialState: { total: 0, count: 0, last: null },
  evolve(state, event) {
    const { n } = event.data as { n: number };
    return { total: state.total + n, count: state.count + 1, last: event.type };
  },
};

function recorded(streamId: string, n: number): RecordedEvent[] {
  return datedEvents(n).map((e, i) => ({
    ...e,
    streamId,
    revision: BigInt(i),
    position: { commit: 100n + BigInt(i), prepare: BigInt(i) },
    recordedAt: new Date(Date.UTC(2024, 5, 1, 0, 0, i)),
  }));
}

describe('audit CLI', function () {
  this.timeout(60000);
  let store: PostgresEventStore;
  const streamId = `audit_test-${randomUUID()}`;
  const written = datedEvents(4);

  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 2 });
    await store.append(streamId, written, 'no_stream');
  });
  after(async () => store.close());

  it('prints every event as a JSON line in revision order, then the summary with a note when no aggregate is registered', async () => {
    const { code, stdout, stderr } = await runAudit(['stream', streamId]);
    expect(stderr).to.equal('');
    expect(code).to.equal(0);
    const lines = jsonLines(stdout);
    expect(lines).to.have.length(5);
    const stored = await store.readStream(streamId);
    lines.slice(0, 4).forEach((line, i) => {
      expect(line).to.deep.equal({
        streamId,
        revision: String(i),
        position: positionToString(stored[i]!.position),
        type: written[i]!.type,
        schemaVersion: 1,
        occurredAt: written[i]!.metadata.occurredAt,
        recordedAt: stored[i]!.recordedAt.toISOString(),
        metadata: written[i]!.metadata,
        data: written[i]!.data,
      });
    });
    expect(lines[4]).to.deep.equal({
      streamId,
      asOf: null,
      events: 4,
      revision: '3',
      state: null,
      note: 'no aggregate registered for category audit_test',
    });
  });

  it('keeps only the events that occurred at or before --as-of', async () => {
    // Exactly the occurredAt of the second event: inclusive.
    const { code, stdout } = await runAudit(['stream', streamId, '--as-of', '2024-03-02T12:00:00Z']);
    expect(code).to.equal(0);
    const lines = jsonLines(stdout);
    expect(lines.map((l) => l.revision)).to.deep.equal(['0', '1', '1']);
    expect(lines[2]).to.include({ asOf: '2024-03-02T12:00:00.000Z', events: 2, revision: '1' });

    // An offset is honoured; before the first event nothing is left, but the stream exists.
    const before = await runAudit(['stream', streamId, '--as-of', '2024-03-01T12:59:59+01:00']);
    expect(before.code).to.equal(0);
    expect(jsonLines(before.stdout)).to.deep.equal([
      {
        streamId,
        asOf: '2024-03-01T11:59:59.000Z',
        events: 0,
        revision: null,
        state: null,
        note: 'no aggregate registered for category audit_test',
      },
    ]);
  });

  it('prints a table with the event types, key metadata and the state', async () => {
    const { code, stdout } = await runAudit(['stream', streamId, '--format', 'table']);
    expect(code).to.equal(0);
    expect(stdout).to.contain('AuditTest.Added');
    expect(stdout).to.contain('AuditTest.Noted');
    expect(stdout).to.contain('requestId: req-2');
    expect(stdout).to.contain('idempotencyKey: idem-0');
    expect(stdout).to.contain('2024-03-04T12:00:00.000Z');
    expect(stdout).to.contain('no aggregate registered for category audit_test');
    expect(stdout).not.to.match(/^\{/m);
  });

  it('exits 1 with a clear message for an unknown stream', async () => {
    const missing = `audit_test-${randomUUID()}`;
    const { code, stdout, stderr } = await runAudit(['stream', missing]);
    expect(code).to.equal(1);
    expect(stdout).to.equal('');
    expect(stderr.trim().split('\n')).to.have.length(1);
    expect(stderr).to.contain(`stream not found: ${missing}`);
  });

  it('exits 2 with a one-line error for an unparseable --as-of, and non-zero for bad arguments', async () => {
    const [garbage, noZone, badFormat, missing] = await Promise.all([
      runAudit(['stream', streamId, '--as-of', 'last tuesday']),
      runAudit(['stream', streamId, '--as-of', '2024-03-02T12:00:00']),
      runAudit(['stream', streamId, '--format', 'xml']),
      runAudit(['stream']),
    ]);
    for (const r of [garbage, noZone]) {
      expect(r.code).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr).to.contain('--as-of');
      expect(r.stderr).to.contain('ISO 8601');
    }
    expect(badFormat.code).to.equal(2);
    expect(badFormat.stderr).to.contain('json, table');
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain("missing required argument 'streamId'");
  });

  it('exits 1 with one line, no stack trace, when the database cannot be reached', async () => {
    const { code, stdout, stderr } = await runAudit(['stream', streamId], { DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:1/nowhere' });
    expect(code).to.equal(1);
    expect(stdout).to.equal('');
    expect(stderr.trim().split('\n')).to.have.length(1);
    expect(stderr).to.contain('cannot connect to PostgreSQL at 127.0.0.1:1/nowhere');
    expect(stderr).not.to.contain('    at ');
  });
});

describe('auditStream', () => {
  const streamId = 'audit_sum-1';

  it('folds every event with the aggregate from its initial state', () => {
    const events = recorded(streamId, 4);
    const result = auditStream(events, null, sumFold);
    expect(result.events.map((e) => e.revision)).to.deep.equal(['0', '1', '2', '3']);
    expect(result.events[2]).to.deep.include({ position: '102/2', occurredAt: '2024-03-03T12:00:00.000Z', recordedAt: '2024-06-01T00:00:02.000Z' });
    expect(result.summary).to.deep.equal({
      streamId,
      asOf: null,
      events: 4,
      revision: '3',
      state: { total: 10, count: 4, last: 'AuditTest.Noted' },
    });
  });

  it('folds only the events up to as-of, inclusive', () => {
    const events = recorded(streamId, 4);
    const { events: kept, summary } = auditStream(events, parseAsOf('2024-03-03T12:00:00Z'), sumFold);
    expect(kept).to.have.length(3);
    expect(summary).to.deep.equal({
      streamId,
      asOf: '2024-03-03T12:00:00.000Z',
      events: 3,
      revision: '2',
      state: { total: 6, count: 3, last: 'AuditTest.Added' },
    });
    const none = auditStream(events, parseAsOf('2024-01-01T00:00:00Z'), sumFold);
    expect(none.summary).to.deep.include({ events: 0, revision: null, state: sumFold.initialState });
  });

  it('notes a missing aggregate and reports a failing fold without hiding the events', () => {
    const events = recorded(streamId, 3);
    expect(auditStream(events, null, null).summary).to.deep.include({ state: null, note: 'no aggregate registered for category audit_sum' });

    const failing: AggregateFold<number> = {
      category: 'audit_sum',
      initialState: 0,
      evolve(state, event) {
        if ((event.data as { n: number }).n === 2) throw new Error('cannot decode');
        return state + 1;
      },
    };
    const result = auditStream(events, null, failing as AggregateFold<unknown>);
    expect(result.events).to.have.length(3);
    expect(result.summary.state).to.equal(null);
    expect(result.summary.error).to.equal('fold failed at revision 1 (AuditTest.Noted v1): cannot decode');
  });

  it('renders the table with the folded state and compact data', () => {
    const table = renderTable(auditStream(recorded(streamId, 2), null, sumFold));
    expect(table).to.contain('AuditTest.Added v1');
    expect(table).to.contain('n=1, note=event 0, items=[2]');
    expect(table).to.contain('"total": 3');
    expect(summarizeData({ text: 'x'.repeat(100) }, 20)).to.have.length(20);
  });

  it('accepts only ISO 8601 times with a time zone', () => {
    expect(parseAsOf('2024-03-02T12:00:00.5+02:00').toISOString()).to.equal('2024-03-02T10:00:00.500Z');
    for (const bad of ['yesterday', '2024-03-02', '2024-03-02T12:00:00', '2024-13-02T12:00:00Z', '']) {
      expect(() => parseAsOf(bad), bad).to.throw('ISO 8601');
    }
  });
});
