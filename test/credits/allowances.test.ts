/** Allowance writes over HTTP (docs/api/credits.md, docs/api/http.md): preconditions, body rules, environments, idempotency, access, and the state machine. */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { reserveForDocument } from '../../commands/credits/metering.js';
import { ManualClock } from '../../platform/clock.js';
import { sourcePath } from '../connect/support.js';
import { startTestService, type TestService } from '../support/http.js';
import {
  DAY,
  HOUR,
  allowanceBody,
  connectError,
  createCurrent,
  creditsClient,
  creditsTenant,
  engineOf,
  iso,
  issue,
} from './support.js';

describe('credits: allowance writes', function () {
  this.timeout(60000);
  let t: TestService;
  const clock = new ManualClock('2026-03-01T10:00:00Z');

  before(async () => {
    t = await startTestService({ clock, startWorkers: false });
  });
  after(async () => t.close());

  const now = () => clock.now();

  describe('PUT /allowances/{companyId}/current', () => {
    it('creates with If-None-Match: * (201, ETag "1"), replaces with If-Match (200, ETag "2") keeping the period, startAt and usage', async () => {
      const c = await creditsTenant(t);
      await issue(t, c.workspaceId, 1000);
      const created = await createCurrent(c, now(), { limit: 10, planReference: 'plan-A', metadata: { tier: 'gold' } });
      expect(created.headers.get('etag')).to.equal('"1"');
      const current = created.json.data.current;
      expect(created.json.data).to.include({ companyId: c.companyId, replayed: false });
      expect(created.json.data.warnings).to.deep.equal([]);
      expect(current).to.deep.include({ limit: 10, periodType: 'monthly', planReference: 'plan-A', metadata: { tier: 'gold' }, status: 'active', version: 1, finalizedUsage: 0, reserved: 0 });
      expect(current.allowancePeriodId).to.match(/^ap_[0-9a-f]{24}$/);
      expect(Object.keys(current).sort()).to.deep.equal(
        ['allowancePeriodId', 'endAt', 'finalizedUsage', 'limit', 'metadata', 'periodType', 'planReference', 'reserved', 'startAt', 'status', 'updatedAt', 'version'].sort(),
      );

      await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: now() });
      const replaced = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(now(), { limit: 20, startAt: iso(now().getTime() - 5 * HOUR), endAt: iso(now().getTime() + 60 * DAY) }), {
        'if-match': '"1"',
      });
      expect(replaced.status, replaced.text).to.equal(200);
      expect(replaced.headers.get('etag')).to.equal('"2"');
      expect(replaced.json.data.current).to.include({
        allowancePeriodId: current.allowancePeriodId,
        startAt: current.startAt,
        endAt: iso(now().getTime() + 60 * DAY),
        limit: 20,
        version: 2,
        reserved: 1,
        status: 'active',
      });
      const read = await c.get(`/allowances/${c.companyId}`);
      expect(read.headers.get('etag')).to.equal('"2"');
      expect(read.json.data).to.include({ usage: 0, reserved: 1, available: 19, effectiveAvailability: 19, blockReason: null });
    });

    it('refuses both precondition headers (400), none (428), a stale or unknown version (412), a creation over an existing allowance (412), a malformed If-Match (400)', async () => {
      const c = await creditsTenant(t);
      const path = `/allowances/${c.companyId}/current`;
      const body = allowanceBody(now());
      const none = await c.write('PUT', path, body, { 'if-match': '"1"' });
      expect(none.status).to.equal(412);
      expect(connectError(none).code).to.equal('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
      await createCurrent(c, now());

      const both = await c.write('PUT', path, body, { 'if-match': '"1"', 'if-none-match': '*' });
      expect(both.status).to.equal(400);
      expect(connectError(both)).to.include({ code: 'CONNECT_VALIDATION_ERROR' });
      const neither = await c.write('PUT', path, body);
      expect(neither.status).to.equal(428);
      expect(connectError(neither).code).to.equal('CONNECT_ALLOWANCE_PRECONDITION_REQUIRED');
      const stale = await c.write('PUT', path, body, { 'if-match': '"7"' });
      expect(stale.status).to.equal(412);
      expect(connectError(stale)).to.include({ code: 'CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED', retryable: false });
      const again = await c.write('PUT', path, body, { 'if-none-match': '*' });
      expect(again.status).to.equal(412);
      expect(connectError(again).code).to.equal('CONNECT_ALLOWANCE_WRITE_PRECONDITION_FAILED');
      for (const bad of ['one', '"x"', '""']) {
        const r = await c.write('PUT', path, body, { 'if-match': bad });
        expect(r.status, bad).to.equal(400);
        expect(connectError(r).path).to.deep.equal(['headers', 'If-Match']);
      }
      const star = await c.write('PUT', path, body, { 'if-none-match': '"1"' });
      expect(star.status).to.equal(400);
      // Nothing was changed by the refused writes.
      expect((await c.get(`/allowances/${c.companyId}`)).headers.get('etag')).to.equal('"1"');
    });

    it('checks every body rule with the path of the field', async () => {
      const c = await creditsTenant(t);
      const path = `/allowances/${c.companyId}/current`;
      const n = now().getTime();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ limit: -1 }, ['limit']],
        [{ limit: 'ten' }, ['limit']],
        [{ limit: null }, ['limit']],
        [{ periodType: 'weekly' }, ['periodType']],
        [{ periodType: undefined }, ['periodType']],
        [{ startAt: '2026-03-01 09:00:00' }, ['startAt']],
        [{ startAt: '2026-03-01T09:00:00+01:00' }, ['startAt']],
        [{ endAt: iso(n - 2 * HOUR) }, ['endAt']],
        [{ reason: undefined }, ['reason']],
        [{ reason: '   ' }, ['reason']],
        [{ reason: 'r'.repeat(501) }, ['reason']],
        [{ planReference: 'p'.repeat(501) }, ['planReference']],
        [{ planReference: 5 }, ['planReference']],
        [{ metadata: ['a'] }, ['metadata']],
        [{ metadata: 'a' }, ['metadata']],
        [{ companyId: c.companyId }, ['companyId']],
        // A current allowance must have started and end in the future.
        [{ startAt: iso(n + HOUR), endAt: iso(n + DAY) }, ['startAt']],
        [{ startAt: iso(n - 2 * DAY), endAt: iso(n - DAY) }, ['endAt']],
      ];
      for (const [patch, expected] of cases) {
        const body = { ...allowanceBody(now()), ...patch };
        for (const [k, v] of Object.entries(patch)) if (v === undefined) delete (body as Record<string, unknown>)[k];
        const r = await c.write('PUT', path, body, { 'if-none-match': '*' });
        expect(r.status, `${JSON.stringify(patch)}: ${r.text}`).to.equal(400);
        expect(connectError(r), JSON.stringify(patch)).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path: expected });
      }
      for (const raw of ['[]', '"x"', 'null']) {
        const r = await c.raw('PUT', path, { headers: { 'content-type': 'application/json', 'if-none-match': '*', 'idempotency-key': randomUUID() }, body: JSON.parse(raw) });
        expect(r.status, raw).to.equal(400);
      }
      const limits = await c.write('PUT', path, { ...allowanceBody(now()), limit: 0, reason: 'r'.repeat(500), planReference: 'p'.repeat(500) }, { 'if-none-match': '*' });
      expect(limits.status, limits.text).to.equal(201);
      expect(limits.json.data.current.limit).to.equal(0);
    });

    it('refuses a replacement limit below finalized usage plus reservations (409)', async () => {
      const c = await creditsTenant(t);
      await issue(t, c.workspaceId, 100);
      await createCurrent(c, now(), { limit: 5 });
      for (let i = 0; i < 3; i++) await reserveForDocument(engineOf(t), { workspaceId: c.workspaceId, companyId: c.companyId, documentId: randomUUID() }, { now: now() });
      const r = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(now(), { limit: 2 }), { 'if-match': '"1"' });
      expect(r.status).to.equal(409);
      expect(connectError(r)).to.deep.include({ code: 'CONNECT_ALLOWANCE_LIMIT_BELOW_USAGE', path: ['limit'] });
      const ok = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(now(), { limit: 3 }), { 'if-match': '"1"' });
      expect(ok.status).to.equal(200);
      expect(ok.json.data.current).to.include({ limit: 3, reserved: 3 });
    });

    it('warns OVER_ALLOCATION when allowances exceed the available pool, and still writes', async () => {
      const c = await creditsTenant(t);
      await issue(t, c.workspaceId, 10);
      const r = await createCurrent(c, now(), { limit: 50 });
      expect(r.json.data.warnings).to.deep.equal(['OVER_ALLOCATION']);
      const read = await c.get(`/allowances/${c.companyId}`);
      expect(read.json.data.warnings).to.deep.equal(['OVER_ALLOCATION', 'EFFECTIVE_AVAILABILITY_LIMITED_BY_POOL']);
      expect(read.json.data).to.include({ available: 50, effectiveAvailability: 10 });
    });
  });

  describe('X-Environment', () => {
    it('maps sandbox|test|development to sandbox and production|prod|absent to production, labels the events, refuses anything else', async () => {
      const c = await creditsTenant(t);
      const path = `/allowances/${c.companyId}/scheduled`;
      const n = now().getTime();
      const envs: [string | undefined, string][] = [
        ['test', 'sandbox'],
        ['development', 'sandbox'],
        ['sandbox', 'sandbox'],
        ['prod', 'production'],
        ['production', 'production'],
        [undefined, 'production'],
      ];
      let version = 0;
      for (const [header, label] of envs) {
        const r = await c.write('PUT', path, allowanceBody(now(), { startAt: iso(n + DAY), endAt: iso(n + 2 * DAY) }, 'scheduled'), {
          'x-environment': header,
          ...(version === 0 ? { 'if-none-match': '*' } : { 'if-match': `"${version}"` }),
        });
        expect(r.status, `${header}: ${r.text}`).to.be.oneOf([200, 201]);
        version++;
        const tx = await c.get(`/transactions?companyId=${c.companyId}&limit=1`);
        expect(tx.json.data.items[0].environment, String(header)).to.equal(label);
      }
      for (const bad of ['simulation', 'mars', 'SANDBOXX']) {
        const r = await c.write('PUT', path, allowanceBody(now(), {}, 'scheduled'), { 'x-environment': bad, 'if-match': `"${version}"` });
        expect(r.status, bad).to.equal(400);
        expect(connectError(r)).to.deep.include({ code: 'CONNECT_INVALID_ENVIRONMENT', path: ['headers', 'X-Environment'] });
      }
    });
  });

  describe('Idempotency-Key', () => {
    it('is required on writes; a retry with the same key and payload replays the original answer; another payload under the key is a conflict', async () => {
      const c = await creditsTenant(t);
      const path = `/allowances/${c.companyId}/current`;
      const body = allowanceBody(now());
      const missing = await c.write('PUT', path, body, { 'idempotency-key': undefined, 'if-none-match': '*' });
      expect(missing.status).to.equal(400);
      expect(connectError(missing).path).to.deep.equal(['headers', 'Idempotency-Key']);

      const key = randomUUID();
      const first = await c.write('PUT', path, body, { 'idempotency-key': key, 'if-none-match': '*' });
      expect(first.status).to.equal(201);
      const retry = await c.write('PUT', path, body, { 'idempotency-key': key, 'if-none-match': '*' });
      expect(retry.status).to.equal(201);
      expect(retry.headers.get('etag')).to.equal('"1"');
      expect(retry.headers.get('idempotent-replayed')).to.equal('true');
      expect(retry.json.data).to.deep.equal({ ...first.json.data, replayed: true });
      const conflict = await c.write('PUT', path, { ...body, limit: 7 }, { 'idempotency-key': key, 'if-none-match': '*' });
      expect(conflict.status).to.equal(409);
      expect(connectError(conflict).code).to.be.a('string');
      // One allowance.created in the ledger, whatever the retries.
      const tx = await c.get(`/transactions?companyId=${c.companyId}&eventType=allowance.created`);
      expect(tx.json.data.items).to.have.length(1);
      expect(tx.json.data.items[0].idempotencyKey).to.equal(key);
    });
  });

  describe('access', () => {
    it('answers 404 CONNECT_COMPANY_NOT_FOUND for an unknown company and for another workspace\'s company, 400 for a malformed id', async () => {
      const c = await creditsTenant(t);
      const other = await creditsTenant(t);
      for (const companyId of ['0123456789abcdef01234567', other.companyId]) {
        const put = await c.write('PUT', `/allowances/${companyId}/current`, allowanceBody(now()), { 'if-none-match': '*' });
        expect(put.status).to.equal(404);
        expect(connectError(put).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
        const get = await c.get(`/allowances/${companyId}`);
        expect(get.status).to.equal(404);
        expect(connectError(get).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
        const pause = await c.write('POST', `/allowances/${companyId}/pause`, { reason: 'x' }, { 'if-match': '"1"' });
        expect(pause.status).to.equal(404);
      }
      const bad = await c.write('PUT', '/allowances/NOT-A-COMPANY/current', allowanceBody(now()), { 'if-none-match': '*' });
      expect(bad.status).to.equal(400);
      expect(connectError(bad).path).to.deep.equal(['path', 'companyId']);
    });

    it('lets owners, admins and partners write; read-only and member keys get 403 but may read', async () => {
      const c = await creditsTenant(t);
      for (const role of ['admin', 'partner'] as const) {
        const key = await t.key(c.workspaceId, { role });
        const k = creditsClient(t, { workspaceId: c.workspaceId, apiKey: key.apiKey, keyId: key.keyId });
        const r = await k.write('PUT', `/allowances/${c.companyId}/scheduled`, allowanceBody(now(), {}, 'scheduled'), role === 'admin' ? { 'if-none-match': '*' } : { 'if-match': '"1"' });
        expect(r.status, `${role}: ${r.text}`).to.be.oneOf([200, 201]);
      }
      for (const options of [{ role: 'member' as const }, { permission: 'read' as const }, { permission: 'read' as const, role: 'owner' as const }]) {
        const key = await t.key(c.workspaceId, options);
        const k = creditsClient(t, { workspaceId: c.workspaceId, apiKey: key.apiKey, keyId: key.keyId });
        const r = await k.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(now()), { 'if-none-match': '*' });
        expect(r.status, JSON.stringify(options)).to.equal(403);
        expect(connectError(r).code).to.equal('CONNECT_INSUFFICIENT_PERMISSION');
        const bulk = await k.write('POST', '/allowances/bulk', { operations: [] });
        expect(bulk.status).to.equal(403);
        expect((await k.get(`/allowances/${c.companyId}`)).status).to.equal(200);
        expect((await k.get('/pool')).status).to.equal(200);
      }
    });

    it('needs an active company to write; an inactive one is still readable, and archiving its source cancels its scheduled allowance', async () => {
      const c = await creditsTenant(t);
      const scheduled = await c.write('PUT', `/allowances/${c.companyId}/scheduled`, allowanceBody(now(), {}, 'scheduled'), { 'if-none-match': '*' });
      expect(scheduled.status).to.equal(201);
      const archived = await c.client.del(sourcePath(c.company.sourceName, c.company.sourceVersion));
      expect(archived.status, archived.text).to.equal(200);
      // The reactor cancels the scheduled allowance (allowance.cancelled in the ledger).
      const deadline = Date.now() + 10_000;
      let read;
      for (;;) {
        read = await c.get(`/allowances/${c.companyId}`);
        if (read.json.data.scheduled === null || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(read.status).to.equal(200);
      expect(read.json.data.scheduled).to.equal(null);
      expect(read.json.data.scheduledEtag).to.equal(null);
      const tx = await c.get(`/transactions?companyId=${c.companyId}&eventType=allowance.cancelled`);
      expect(tx.json.data.items).to.have.length(1);
      expect(tx.json.data.items[0].reason).to.contain('archived');
      const write = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(now()), { 'if-none-match': '*' });
      expect(write.status).to.equal(404);
      expect(connectError(write).code).to.equal('CONNECT_COMPANY_NOT_FOUND');
      // Not listed (active managed companies only).
      expect((await c.get('/allowances')).json.data.items).to.deep.equal([]);
    });
  });

  describe('scheduled allowance, cancel, pause and resume', () => {
    it('creates (201) and replaces (200) the scheduled allowance, shows scheduledEtag, cancels it with DELETE and If-Match', async () => {
      const c = await creditsTenant(t);
      const path = `/allowances/${c.companyId}/scheduled`;
      const n = now().getTime();
      const past = await c.write('PUT', path, allowanceBody(now(), { startAt: iso(n - HOUR) }, 'scheduled'), { 'if-none-match': '*' });
      expect(past.status).to.equal(400);
      expect(connectError(past).path).to.deep.equal(['startAt']);
      const created = await c.write('PUT', path, allowanceBody(now(), { limit: 5 }, 'scheduled'), { 'if-none-match': '*' });
      expect(created.status).to.equal(201);
      expect(created.headers.get('etag')).to.equal('"1"');
      expect(created.json.data.scheduled).to.include({ status: 'scheduled', version: 1, limit: 5, allowancePeriodId: null });
      const replaced = await c.write('PUT', path, allowanceBody(now(), { limit: 6 }, 'scheduled'), { 'if-match': '"1"' });
      expect(replaced.status).to.equal(200);
      expect(replaced.headers.get('etag')).to.equal('"2"');
      const read = await c.get(`/allowances/${c.companyId}`);
      expect(read.headers.get('etag')).to.equal('"0"');
      expect(read.json.data).to.include({ scheduledEtag: '"2"', blockReason: 'NO_ACTIVE_ALLOWANCE' });
      expect(read.json.data.scheduled).to.include({ limit: 6, version: 2 });

      const noPrecondition = await c.write('DELETE', path, undefined);
      expect(noPrecondition.status).to.equal(428);
      const stale = await c.write('DELETE', path, undefined, { 'if-match': '"1"' });
      expect(stale.status).to.equal(412);
      const cancelled = await c.write('DELETE', path, { reason: 'customer downgraded' }, { 'if-match': '"2"' });
      expect(cancelled.status, cancelled.text).to.equal(200);
      expect(cancelled.headers.get('etag')).to.equal('"3"');
      expect(cancelled.json.data).to.include({ companyId: c.companyId, scheduled: null, replayed: false });
      expect(cancelled.json.data.cancelled).to.include({ limit: 6, version: 3 });
      const again = await c.write('DELETE', path, undefined, { 'if-match': '"3"' });
      expect(again.status).to.equal(412);
      // A new scheduled allowance continues the versions.
      const next = await c.write('PUT', path, allowanceBody(now(), {}, 'scheduled'), { 'if-none-match': '*' });
      expect(next.headers.get('etag')).to.equal('"4"');
      const tx = await c.get(`/transactions?companyId=${c.companyId}`);
      expect(tx.json.data.items.map((i: any) => i.eventType)).to.deep.equal(['allowance.scheduled', 'allowance.cancelled', 'allowance.replaced', 'allowance.scheduled']);
    });

    it('pauses (reason required) and resumes with If-Match, answering {companyId, current, replayed}', async () => {
      const c = await creditsTenant(t);
      await issue(t, c.workspaceId, 100);
      await createCurrent(c, now());
      const noReason = await c.write('POST', `/allowances/${c.companyId}/pause`, {}, { 'if-match': '"1"' });
      expect(noReason.status).to.equal(400);
      expect(connectError(noReason).path).to.deep.equal(['reason']);
      const longReason = await c.write('POST', `/allowances/${c.companyId}/pause`, { reason: 'r'.repeat(501) }, { 'if-match': '"1"' });
      expect(longReason.status).to.equal(400);
      const noMatch = await c.write('POST', `/allowances/${c.companyId}/pause`, { reason: 'audit' });
      expect(noMatch.status).to.equal(428);
      const stale = await c.write('POST', `/allowances/${c.companyId}/pause`, { reason: 'audit' }, { 'if-match': '"5"' });
      expect(stale.status).to.equal(412);

      const key = randomUUID();
      const paused = await c.write('POST', `/allowances/${c.companyId}/pause`, { reason: 'audit' }, { 'if-match': '"1"', 'idempotency-key': key });
      expect(paused.status, paused.text).to.equal(200);
      expect(paused.headers.get('etag')).to.equal('"2"');
      expect(Object.keys(paused.json.data)).to.include.members(['companyId', 'current', 'replayed']);
      expect(paused.json.data).to.include({ companyId: c.companyId, replayed: false });
      expect(paused.json.data.current).to.include({ status: 'paused', version: 2 });
      const replay = await c.write('POST', `/allowances/${c.companyId}/pause`, { reason: 'audit' }, { 'if-match': '"1"', 'idempotency-key': key });
      expect(replay.status).to.equal(200);
      expect(replay.json.data.replayed).to.equal(true);
      expect(replay.json.data.current).to.deep.equal(paused.json.data.current);

      const read = await c.get(`/allowances/${c.companyId}`);
      expect(read.json.data).to.include({ blockReason: 'ALLOWANCE_PAUSED', effectiveAvailability: 0 });
      const pauseAgain = await c.write('POST', `/allowances/${c.companyId}/pause`, { reason: 'again' }, { 'if-match': '"2"' });
      expect(pauseAgain.status).to.equal(409);
      expect(connectError(pauseAgain).code).to.equal('CONNECT_ALLOWANCE_INVALID_TRANSITION');
      const replacePaused = await c.write('PUT', `/allowances/${c.companyId}/current`, allowanceBody(now()), { 'if-match': '"2"' });
      expect(replacePaused.status).to.equal(409);

      const resumed = await c.write('POST', `/allowances/${c.companyId}/resume`, undefined, { 'if-match': '"2"' });
      expect(resumed.status, resumed.text).to.equal(200);
      expect(resumed.json.data).to.include({ companyId: c.companyId, replayed: false });
      expect(resumed.json.data.current).to.include({ status: 'active', version: 3 });
      const resumeAgain = await c.write('POST', `/allowances/${c.companyId}/resume`, { reason: 'x' }, { 'if-match': '"3"' });
      expect(resumeAgain.status).to.equal(409);
      const unknownField = await c.write('POST', `/allowances/${c.companyId}/resume`, { why: 'x' }, { 'if-match': '"3"' });
      expect(unknownField.status).to.equal(400);
      const tx = await c.get(`/transactions?companyId=${c.companyId}`);
      expect(tx.json.data.items.map((i: any) => i.eventType)).to.deep.equal(['allowance.resumed', 'allowance.paused', 'allowance.created']);
      expect(tx.json.data.items[1]).to.include({ reason: 'audit', version: 2 });
    });
  });
});
