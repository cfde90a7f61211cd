/**
 * Issue 13: the outcome of an idempotent request is recorded with its effects. A request whose
 * effect committed but whose answer was never recorded (it died, hung or failed after the effect)
 * is answered from the effect on the retry — the same id, once — and never executed twice,
 * including when a retry takes over the key while the first request still runs.
 */
import Router from '@koa/router';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { appendWithEffect, takeSlot } from '../../commands/idempotent-unit.js';
import type { FamilyRoutes } from '../../http/app.js';
import { idempotent } from '../../http/idempotency.js';
import { newEvent } from '../eventstore/contract.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { loadAggregate } from '../../commands/execute.js';
import { numberClaimDecider } from '../../domain/document/number-claim.js';
import { numberClaimStream } from '../../commands/submissions.js';

const LEASE_MS = 300;
/** Requests parked by `x-test-hold` until the test releases them. */
const held = new Map<string, () => void>();
const effects: string[] = [];

/** A route whose one effect (an event on its own stream) is recorded with the key. */
function effectFamily(): FamilyRoutes {
  const prefix = '/v3/connect/effect-test';
  return {
    family: 'connect',
    prefix,
    routes(deps) {
      const r = new Router({ prefix });
      const idem = idempotent({ store: deps.store, clock: deps.clock, atomicEffects: true, staleAfterMs: LEASE_MS, waitMs: 10_000 });
      const hold = async (ctx: { get(name: string): string }, when: string) => {
        if (ctx.get('x-test-hold') !== when) return;
        await new Promise<void>((resolve) => held.set(`${ctx.get('idempotency-key')}/${when}`, resolve));
      };
      r.post('/things', idem, async (ctx) => {
        await hold(ctx, 'before-effect');
        const slot = takeSlot<{ id: string }>();
        let id: string;
        if (slot?.recorded) id = slot.recorded.id;
        else {
          id = randomUUID();
          await appendWithEffect(deps.store, [{ streamId: `effecttest-${id}`, events: [newEvent('ThingMade', { id })], expected: 'no_stream' }], slot ? { slot, record: { id }, ctx: { now: new Date() } } : null);
          effects.push(id);
        }
        await hold(ctx, 'after-effect');
        if (ctx.get('x-test-fail') === 'after-effect') throw new Error('died after its effect');
        ctx.status = 201;
        ctx.body = { success: true, data: { id, replayed: false } };
      });
      return r;
    },
  };
}

describe('Idempotency: answers recorded with their effects (issue 13)', () => {
  let t: TestService;
  let apiKey: string;
  const post = (key: string, headers: Record<string, string> = {}, body: unknown = { size: 1 }) =>
    call(`${t.url}/v3/connect/effect-test/things`, { method: 'POST', headers: { 'x-api-key': apiKey, 'idempotency-key': key, ...headers }, body });
  const waitHeld = async (name: string) => {
    for (let i = 0; i < 200 && !held.has(name); i++) await new Promise((r) => setTimeout(r, 10));
    expect(held.has(name), `request ${name} parked`).to.equal(true);
  };

  before(async () => {
    t = await startTestService({ extraFamilies: [effectFamily()] });
    ({ apiKey } = await t.tenant());
  });
  after(async () => t.close());

  it('answers a retry from the effect of a request that failed after committing it: the same id, one effect', async () => {
    const key = `fail-${randomUUID()}`;
    const first = await post(key, { 'x-test-fail': 'after-effect' });
    expect(first.status).to.equal(500);
    const before = effects.length;
    const retry = await post(key);
    expect(retry.status).to.equal(201);
    expect(effects.length).to.equal(before);
    expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    const again = await post(key);
    expect(again.json.data.id).to.equal(retry.json.data.id);
  });

  it('lets a retry take over a request that hangs after its effect once the lease ran out, answering from the effect', async () => {
    const key = `hang-${randomUUID()}`;
    const first = post(key, { 'x-test-hold': 'after-effect' });
    await waitHeld(`${key}/after-effect`);
    const made = effects[effects.length - 1];
    const startedAt = Date.now();
    const retry = await post(key);
    expect(Date.now() - startedAt).to.be.lessThan(LEASE_MS + 2000);
    expect(retry.status).to.equal(201);
    expect(retry.json.data.id).to.equal(made);
    held.get(`${key}/after-effect`)!();
    const original = await first;
    expect(original.status).to.equal(201);
    expect(original.json.data.id).to.equal(made);
    expect(effects.filter((id) => id === made)).to.have.length(1);
  });

  it('makes a taken-over request that had not acted yet write nothing and answer with the new owner\'s result', async () => {
    const key = `slow-${randomUUID()}`;
    const first = post(key, { 'x-test-hold': 'before-effect' });
    await waitHeld(`${key}/before-effect`);
    await new Promise((r) => setTimeout(r, LEASE_MS + 50));
    const before = effects.length;
    const retry = await post(key);
    expect(retry.status).to.equal(201);
    held.get(`${key}/before-effect`)!();
    const original = await first;
    expect(original.status).to.equal(201);
    expect(original.json.data.id).to.equal(retry.json.data.id);
    // The original's append failed on the key's revision: one effect in all.
    expect(effects.length).to.equal(before + 1);
  });

  it('still refuses the same key with another payload, and makes a concurrent duplicate wait for the first answer', async () => {
    const key = `dup-${randomUUID()}`;
    const [a, b] = await Promise.all([post(key), post(key)]);
    expect(a.json.data.id).to.equal(b.json.data.id);
    const other = await post(key, {}, { size: 2 });
    expect(other.status).to.equal(409);
  });
});

describe('Submissions: the number claim and the document in one step (issue 13)', () => {
  let t: TestService;
  let u: UnifyTenant;
  before(async () => {
    t = await startTestService();
    u = await unifyTenant(t);
  });
  after(async () => t.close());

  it('writes the claim, the document and the key record in one transaction: every claim names a live document', async () => {
    const number = freshNumber('ATOMIC');
    const r = await u.submit(u.request(uaeInvoice({ documentNumber: number })), { 'idempotency-key': `k-${randomUUID()}` });
    expect(r.status).to.equal(200);
    const events = await t.service.runtime.store.readStream(`document-${r.json.documentId}`);
    const claimEvent = (await t.service.runtime.store.readAll({ commit: 0n, prepare: 0n }, 1_000_000)).find(
      (e) => e.type === 'DocumentNumberClaimed' && (e.data as { documentId: string }).documentId === r.json.documentId,
    );
    expect(claimEvent, 'claim event').to.not.equal(undefined);
    expect(claimEvent!.position.commit).to.equal(events[0]!.position.commit);
  });

  it('releases at once a claim whose document never appeared (left by a request that died between two appends)', async () => {
    const number = freshNumber('ORPHAN');
    const body = u.request(uaeInvoice({ documentNumber: number }));
    const first = await u.submit(body);
    expect(first.status).to.equal(200);
    // The orphan: a claim on a number of this source for a document that does not exist.
    const other = freshNumber('ORPHAN2');
    const workspaceId = (await t.service.runtime.store.readStream(`document-${first.json.documentId}`))[0]!.metadata.workspaceId!;
    const data = (await t.service.runtime.store.readStream(`document-${first.json.documentId}`))[0]!.data as { source: { name: string; companyId: string | null } };
    const stream = numberClaimStream({ workspaceId, environment: 'sandbox', source: { name: data.source.name, companyId: data.source.companyId } }, other);
    await t.service.runtime.store.append(stream, [newEvent('DocumentNumberClaimed', { documentNumber: other, documentId: randomUUID(), claimedAt: new Date().toISOString() })], 'no_stream');
    const second = await u.submit(u.request(uaeInvoice({ documentNumber: other })));
    expect(second.status, JSON.stringify(second.json)).to.equal(200);
    const claim = await loadAggregate(t.service.runtime.store, numberClaimDecider, stream);
    expect(claim.state.holder).to.equal(second.json.documentId);
  });

  it('counts documents, not requests: a rejected document counts once, retries and replays add none', async () => {
    const counts = async () => {
      const r = await call(`${t.url}/v3/connect/invoices/counts?countryCode=AE`, { headers: { 'x-api-key': u.apiKey, 'x-environment': 'sandbox' } });
      expect(r.status, r.text).to.equal(200);
      return r.json.data.salesCount as number;
    };
    const before = await counts();
    const invalid = uaeInvoice();
    delete invalid.header.issueDate;
    for (const [body, status] of [[u.request(uaeInvoice()), 200], [u.request(invalid), 422]] as const) {
      const key = `count-${randomUUID()}`;
      for (let i = 0; i < 3; i++) expect((await u.submit(body, { 'idempotency-key': key })).status).to.equal(status);
    }
    expect((await counts()) - before).to.equal(2);
  });

  it('answers a batch of invoices retried with the same key with the same documents', async () => {
    const body = { invoices: [u.request(uaeInvoice()), u.request(uaeInvoice()), u.request(uaeInvoice({ documentNumber: '' }))] };
    const key = `batch-${randomUUID()}`;
    const first = await u.submit(body, { 'idempotency-key': key });
    const retry = await u.submit(body, { 'idempotency-key': key });
    expect(first.status).to.equal(200);
    expect(retry.json.results.map((x: { documentId: string }) => x.documentId)).to.deep.equal(first.json.results.map((x: { documentId: string }) => x.documentId));
  });
});
