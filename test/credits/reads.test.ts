/** Credit reads (docs/api/credits.md, docs/api/http.md): the pool, one company's state, the list with cursor paging and filters. */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { reserveForDocument } from '../../commands/credits/metering.js';
import { ManualClock } from '../../platform/clock.js';
import { startTestService, type TestService } from '../support/http.js';
import { DAY, HOUR, allowanceBody, connectError, createCurrent, creditsClient, creditsTenant, engineOf, iso, issue } from './support.js';

describe('credits: reads', function () {
  this.timeout(120000);
  let t: TestService;
  const clock = new ManualClock('2026-04-01T08:00:00Z');
  before(async () => {
    t = await startTestService({ clock, startWorkers: false });
  });
  after(async () => t.close());
  const now = () => clock.now();

  it('GET /pool: totals, lots, asOf and the POOL_LOW / POOL_CRITICAL / POOL_EXHAUSTED warnings', async () => {
    const c = await creditsTenant(t);
    const empty = await c.get('/pool');
    expect(empty.status).to.equal(200);
    expect(empty.json.data).to.deep.equal({ active: 0, reserved: 0, consumed: 0, expired: 0, available: 0, issued: 0, lots: [], asOf: now().toISOString(), warnings: ['POOL_EXHAUSTED'] });
    await issue(t, c.workspaceId, 10, iso(now().getTime() + 30 * DAY));
    await createCurrent(c, now(), { limit: 50 });
    const reserve = async (n: number) => {
      let position = null;
      for (let i = 0; i < n; i++) {
        const r = await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: now() });
        position = r.result.position;
      }
      if (position) await t.settle(position);
      return (await c.get('/pool')).json.data;
    };
    let pool = await reserve(8);
    expect(pool).to.include({ active: 10, reserved: 8, available: 2, issued: 10 });
    expect(pool.warnings).to.deep.equal([]);
    pool = await reserve(1);
    expect(pool.warnings).to.deep.equal(['POOL_LOW']);
    pool = await reserve(0);
    const lot = pool.lots[0];
    expect(lot).to.include({ amount: 10, reserved: 9, available: 1, status: 'active', environment: 'sandbox', expiresAt: iso(now().getTime() + 30 * DAY) });
    expect(lot.lotId).to.match(/^lot_/);
    await issue(t, c.workspaceId, 10);
    pool = (await c.get('/pool')).json.data;
    // 11 of 20 left: fine; then down to 1 of 20 (5%): critical; 0: exhausted.
    expect(pool.warnings).to.deep.equal([]);
    pool = await reserve(9);
    expect(pool).to.include({ available: 2 });
    expect(pool.warnings).to.deep.equal(['POOL_LOW']);
    pool = await reserve(1);
    expect(pool.warnings).to.deep.equal(['POOL_CRITICAL']);
    pool = await reserve(1);
    expect(pool.warnings).to.deep.equal(['POOL_EXHAUSTED']);
    const state = (await c.get(`/allowances/${c.companyId}`)).json.data;
    expect(state).to.include({ blockReason: 'POOL_EXHAUSTED', effectiveAvailability: 0 });
    expect(state.warnings).to.include('POOL_EXHAUSTED');
  });

  it('GET /allowances/{companyId}: ETag "0" without allowance, recentActivity at most 10 newest first, scheduledEtag, asOf and lastChangedAt', async () => {
    const c = await creditsTenant(t);
    const none = await c.get(`/allowances/${c.companyId}`);
    expect(none.status).to.equal(200);
    expect(none.headers.get('etag')).to.equal('"0"');
    expect(none.json.data).to.deep.equal({
      companyId: c.companyId,
      current: null,
      scheduled: null,
      usage: 0,
      reserved: 0,
      available: 0,
      effectiveAvailability: 0,
      blockReason: 'NO_ACTIVE_ALLOWANCE',
      warnings: ['POOL_EXHAUSTED'],
      asOf: now().toISOString(),
      lastChangedAt: null,
      recentActivity: [],
      scheduledEtag: null,
    });
    await issue(t, c.workspaceId, 100);
    await createCurrent(c, now(), { limit: 20 });
    for (let i = 0; i < 12; i++) {
      const r = await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: now() });
      if (i === 11) await t.settle(r.result.position!);
    }
    await c.write('PUT', `/allowances/${c.companyId}/scheduled`, allowanceBody(now(), {}, 'scheduled'), { 'if-none-match': '*' });
    const read = await c.get(`/allowances/${c.companyId}`);
    expect(read.headers.get('etag')).to.equal('"1"');
    const d = read.json.data;
    expect(d.recentActivity).to.have.length(10);
    expect(d.recentActivity[0].eventType).to.equal('allowance.scheduled');
    expect(d.recentActivity.slice(1).every((x: any) => x.eventType === 'reservation.created')).to.equal(true);
    expect(d).to.include({ scheduledEtag: '"1"', usage: 0, reserved: 12, available: 8, lastChangedAt: now().toISOString() });
    expect(d.warnings).to.deep.equal([]);
    // 80% of 20 is 16.
    for (let i = 0; i < 4; i++) {
      const r = await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: now() });
      if (i === 3) await t.settle(r.result.position!);
    }
    expect((await c.get(`/allowances/${c.companyId}`)).json.data.warnings).to.deep.equal(['COMPANY_THRESHOLD_REACHED']);
    const unknownParam = await c.get(`/allowances/${c.companyId}?x=1`);
    expect(unknownParam.status).to.equal(400);
  });

  it('GET /allowances: active companies only, by cursor (limit 1..100, default 25), every filter, and a cursor bound to its filters', async () => {
    const c = await creditsTenant(t);
    await issue(t, c.workspaceId, 1000);
    const ids = [c.companyId];
    for (let i = 0; i < 5; i++) ids.push((await c.client.onboard()).companyId);
    ids.sort();
    const k = (id: string) => ({ ...c, companyId: id });
    // ids[0]: current active; ids[1]: current paused; ids[2]: scheduled only; ids[3]: exhausted (limit 0); ids[4], ids[5]: nothing.
    await createCurrent(k(ids[0]!), now(), { limit: 10 });
    await createCurrent(k(ids[1]!), now(), { limit: 10 });
    expect((await c.write('POST', `/allowances/${ids[1]}/pause`, { reason: 'x' }, { 'if-match': '"1"' })).status).to.equal(200);
    const n = now().getTime();
    await c.write('PUT', `/allowances/${ids[2]}/scheduled`, allowanceBody(now(), { startAt: iso(n + 10 * DAY), endAt: iso(n + 20 * DAY) }, 'scheduled'), { 'if-none-match': '*' });
    await createCurrent(k(ids[3]!), now(), { limit: 0 });

    const all = await c.get('/allowances');
    expect(all.status).to.equal(200);
    expect(all.json.data.items.map((i: any) => i.companyId)).to.deep.equal(ids);
    expect(all.json.data.nextCursor).to.equal(null);
    expect(all.json.data.asOf).to.equal(now().toISOString());
    expect(all.json.data.items.map((i: any) => i.blockReason)).to.deep.equal([null, 'ALLOWANCE_PAUSED', 'NO_ACTIVE_ALLOWANCE', 'ALLOWANCE_EXHAUSTED', 'NO_ACTIVE_ALLOWANCE', 'NO_ACTIVE_ALLOWANCE']);

    // Paging two at a time walks every company once, in order.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await c.get(`/allowances?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status, r.text).to.equal(200);
      expect(r.json.data.items.length).to.be.at.most(2);
      seen.push(...r.json.data.items.map((i: any) => i.companyId));
      cursor = r.json.data.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).to.deep.equal(ids);
    expect(pages).to.equal(3);

    const q = async (query: string) => (await c.get(`/allowances?${query}`)).json.data.items.map((i: any) => i.companyId);
    expect(await q('status=active')).to.deep.equal([ids[0], ids[3]]);
    expect(await q('status=paused')).to.deep.equal([ids[1]]);
    expect(await q('status=scheduled')).to.deep.equal([ids[2]]);
    expect(await q('blockReason=NO_ACTIVE_ALLOWANCE')).to.deep.equal([ids[2], ids[4], ids[5]]);
    expect(await q('blockReason=ALLOWANCE_EXHAUSTED')).to.deep.equal([ids[3]]);
    expect(await q(`companyId=${ids[4]}`)).to.deep.equal([ids[4]]);
    expect(await q('countryCode=AE')).to.deep.equal(ids);
    expect(await q('countryCode=sa')).to.deep.equal([]);
    expect(await q(`effectiveFrom=${iso(n + 11 * DAY)}`)).to.deep.equal([ids[0], ids[1], ids[2], ids[3]]);
    expect(await q(`effectiveFrom=${iso(n + 31 * DAY)}`)).to.deep.equal([]);
    expect(await q(`effectiveFrom=${iso(n + 5 * DAY)}&effectiveTo=${iso(n + 9 * DAY)}`)).to.deep.equal([ids[0], ids[1], ids[3]]);
    expect(await q(`effectiveTo=${iso(n - 2 * HOUR)}`)).to.deep.equal([]);

    const bad: [string, string[]][] = [
      ['limit=0', ['query', 'limit']],
      ['limit=101', ['query', 'limit']],
      ['limit=abc', ['query', 'limit']],
      ['status=cancelled', ['query', 'status']],
      ['blockReason=NONE', ['query', 'blockReason']],
      ['companyId=xyz', ['query', 'companyId']],
      ['countryCode=ARE', ['query', 'countryCode']],
      ['effectiveFrom=yesterday', ['query', 'effectiveFrom']],
      [`effectiveFrom=${iso(n)}&effectiveTo=${iso(n)}`, ['query', 'effectiveTo']],
      ['sort=name', ['query', 'sort']],
      ['cursor=bm90IGEgY3Vyc29y', ['query', 'cursor']],
    ];
    for (const [query, path] of bad) {
      const r = await c.get(`/allowances?${query}`);
      expect(r.status, query).to.equal(400);
      expect(connectError(r), query).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path });
    }
    const first = await c.get('/allowances?limit=1&status=active');
    const reused = await c.get(`/allowances?limit=1&status=paused&cursor=${encodeURIComponent(first.json.data.nextCursor)}`);
    expect(reused.status).to.equal(400);
    expect(connectError(reused).path).to.deep.equal(['query', 'cursor']);
    // Another workspace sees none of these companies.
    const other = creditsClient(t, await t.tenant());
    expect((await other.get('/allowances')).json.data.items).to.deep.equal([]);
    expect((await other.get(`/allowances?companyId=${ids[0]}`)).json.data.items).to.deep.equal([]);
  });
});
