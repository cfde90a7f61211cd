/**
 * Metering of submissions (issue 7 §5): reservation on submission, finalization, release and
 * reconciliation on the final result, enforcement on the submission path (both Unify formats),
 * idempotent reactions, and the 200-against-100 concurrency rule.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { CreditsEngine } from '../../commands/credits/engine.js';
import { reserveForDocument } from '../../commands/credits/metering.js';
import { reconcileReservation } from '../../commands/credits/pool.js';
import { knexSnapshotStore } from '../../commands/credits/snapshots.js';
import { execute } from '../../commands/execute.js';
import { companyOf, poolTotals } from '../../domain/credits/credits.js';
import { creditsStream, reservationIdFor } from '../../domain/credits/values.js';
import { documentDecider, documentStream, type DocumentErrorItem } from '../../domain/document/document.js';
import { ManualClock } from '../../platform/clock.js';
import { creditProcesses, meteringReactor } from '../../projections/reactors/credits-processes.js';
import { call, startTestService, type TestService } from '../support/http.js';
import { freshNumber, uaeInvoice } from '../unify/support.js';
import { createCurrent, creditsTenant, engineOf, enforce, issue } from './support.js';

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function meteredTenant(t: TestService, environment: 'sandbox' | 'production' = 'sandbox') {
  const c = await creditsTenant(t, { environment });
  const source = `${c.company.sourceName}:${c.company.sourceVersion}`;
  const auth = { authorization: `Bearer ${c.apiKey}` };
  const request = (documentNumber = freshNumber()) => ({
    country: 'AE',
    environment,
    purpose: 'invoicing',
    source,
    documentType: { base: 'tax_invoice', modifiers: [] },
    payload: uaeInvoice({ documentNumber }),
  });
  return {
    ...c,
    request,
    submit: (body: unknown = request()) => call(`${t.url}/api/v3/unify`, { method: 'POST', headers: { ...auth, 'new-api': 'true' }, body }),
    legacy: (body: unknown) => call(`${t.url}/api/v3/unify`, { method: 'POST', headers: auth, body }),
    ledger: async (query = '') => (await c.get(`/transactions?companyId=${c.companyId}${query}`)).json.data.items as any[],
    /** The company's credit state once every read model has applied everything written so far. */
    state: async () => {
      await t.settleAll();
      return (await c.get(`/allowances/${c.companyId}`)).json.data;
    },
  };
}

describe('credits: metering of submissions', function () {
  this.timeout(90000);

  describe('with the credit processes only (documents finalized by the test)', () => {
    let t: TestService;
    const clock = new ManualClock(new Date());

    before(async () => {
      t = await startTestService({
        clock,
        startWorkers: false,
        processes: (deps) => ({ ...creditProcesses(deps), connectors: { connectorFor: () => null, missing: () => [] } }),
      });
    });
    after(async () => t.close());

    const ctx = () => ({ now: clock.now(), actor: 'test' });
    /** Finalizes by hand; `scope` puts the workspace and environment in the events' metadata, as the delivery does. */
    async function finalize(documentId: string, outcome: 'valid' | 'invalid', errors: DocumentErrorItem[] = [], scope: { workspaceId: string; environment: string } | null = null) {
      const stream = documentStream(documentId);
      const c = () => ({ ...ctx(), ...scope });
      await execute(t.service.runtime.store, documentDecider, stream, { type: 'StartDelivery', destination: 'PEPPOL' }, c());
      if (outcome === 'valid') {
        await execute(t.service.runtime.store, documentDecider, stream, { type: 'RecordDelivered', government: null, final: { outcome, government: null, errors } }, c());
      } else {
        const error = errors[0] ?? { code: 'REJECTED', message: 'refused', path: [], source: 'government' as const };
        await execute(t.service.runtime.store, documentDecider, stream, { type: 'RecordDeliveryFailed', error, retryable: false, government: null, final: { government: null, errors } }, c());
      }
    }

    it('settles from the workspace and environment the final event carries, without reading the submission', async () => {
      const m = await meteredTenant(t);
      await issue(t, m.workspaceId, 10);
      await createCurrent(m, clock.now(), { limit: 5 });
      const r = await m.submit();
      expect(r.status, r.text).to.equal(200);
      const documentId: string = r.json.documentId;
      await waitFor(() => m.ledger('&eventType=reservation.created'), (items) => items.length === 1, 'the reservation');
      // Every read of the document's first event (how the reactor found the submission before).
      const store = t.service.runtime.store;
      const readStream = store.readStream.bind(store);
      const firstEventReads: string[] = [];
      store.readStream = (streamId, options) => {
        if (streamId === documentStream(documentId) && options?.maxCount === 1) firstEventReads.push(streamId);
        return readStream(streamId, options);
      };
      try {
        await finalize(documentId, 'valid', [], { workspaceId: m.workspaceId, environment: 'sandbox' });
        const settled = await waitFor(() => m.ledger('&eventType=consumption.finalized'), (items) => items.length === 1, 'the consumption');
        expect(settled[0]).to.include({ documentId, environment: 'sandbox' });
      } finally {
        store.readStream = readStream;
      }
      expect(firstEventReads).to.deep.equal([]);
      expect(await m.state()).to.include({ usage: 1, reserved: 0, available: 4 });
    });

    it('reserves on submission, finalizes on a valid result, releases on an invalid one, marks an unknown outcome for reconciliation', async () => {
      const m = await meteredTenant(t);
      await issue(t, m.workspaceId, 100);
      await createCurrent(m, clock.now(), { limit: 10 });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await m.submit();
        expect(r.status, r.text).to.equal(200);
        ids.push(r.json.documentId);
      }
      await waitFor(() => m.ledger('&eventType=reservation.created'), (items) => items.length === 4, 'four reservations');
      const reservation = (await m.ledger('&eventType=reservation.created')).find((x) => x.documentId === ids[0]);
      expect(reservation).to.include({ reservationId: reservationIdFor(ids[0]!), amount: 1, environment: 'sandbox', version: 1 });
      expect(reservation.balanceAfter).to.include({ companyReserved: 1, companyAvailable: 9, poolReserved: 1, poolAvailable: 99 });
      expect(await m.state()).to.include({ usage: 0, reserved: 4, available: 6 });

      await finalize(ids[0]!, 'valid');
      await finalize(ids[1]!, 'invalid', [{ code: 'PEPPOL-REJECTED', message: 'rejected by the buyer access point', path: [], source: 'government' }]);
      await finalize(ids[2]!, 'invalid', [
        { code: 'DELIVERY_OUTCOME_UNKNOWN', message: 'no answer', path: [], source: 'delivery' },
        { code: 'TIMEOUT', message: 'timed out', path: [], source: 'delivery' },
      ]);
      const settled = await waitFor(() => m.ledger(), (items) => items.length === 1 + 4 + 3, 'the settlements');
      expect(settled.slice(0, 3).map((x) => [x.eventType, x.documentId]).sort()).to.deep.equal(
        [
          ['consumption.finalized', ids[0]],
          ['reservation.released', ids[1]],
          ['reservation.needs_reconciliation', ids[2]],
        ].sort(),
      );
      const state = await m.state();
      expect(state).to.include({ usage: 1, reserved: 2, available: 7 });
      const pool = (await m.get('/pool')).json.data;
      expect(pool).to.include({ active: 99, consumed: 1, reserved: 2, available: 97 });
      expect(pool.lots[0]).to.include({ consumed: 1, reserved: 2 });

      // A reservation marked for reconciliation is settled by hand (admin CLI command).
      const reconciled = await reconcileReservation(engineOf(t), { workspaceId: m.workspaceId, reservationId: reservationIdFor(ids[2]!), outcome: 'consumed', reason: 'the authority has it' }, ctx());
      await t.settle(reconciled.position!);
      expect(await m.state()).to.include({ usage: 2, reserved: 1, available: 7 });
    });

    it('does not meter a rejected document, and records (outside the ledger) why a document of a blocked company was not metered', async () => {
      const m = await meteredTenant(t);
      await issue(t, m.workspaceId, 100);
      const bad = m.request();
      delete (bad.payload as any).header.currency;
      expect((await m.submit(bad)).status).to.equal(422);
      const r = await m.submit();
      expect(r.status).to.equal(200);
      const stream = creditsStream(m.workspaceId);
      const refused = await waitFor(
        async () => (await t.service.runtime.store.readStream(stream)).filter((e) => e.type === 'ReservationRefused'),
        (events) => events.length === 1,
        'the refusal',
      );
      expect(refused[0]!.data).to.deep.include({ documentId: r.json.documentId, blockReason: 'NO_ACTIVE_ALLOWANCE' });
      expect(await m.ledger()).to.deep.equal([]);
    });

    it('a replayed reaction (a crash before the checkpoint) does not reserve, finalize or release twice', async () => {
      const m = await meteredTenant(t);
      await issue(t, m.workspaceId, 100);
      await createCurrent(m, clock.now(), { limit: 10 });
      const r = await m.submit();
      const documentId = r.json.documentId as string;
      await waitFor(() => m.ledger('&eventType=reservation.created'), (items) => items.length === 1, 'the reservation');
      await finalize(documentId, 'valid');
      await waitFor(() => m.ledger('&eventType=consumption.finalized'), (items) => items.length === 1, 'the finalization');
      const reactor = meteringReactor({ knex: t.service.deps.knex, store: t.service.runtime.store, clock, engine: engineOf(t) });
      const documentEvents = await t.service.runtime.store.readStream(documentStream(documentId));
      // Every reaction again, in order: the reservation was settled meanwhile, yet nothing is written twice.
      for (const event of documentEvents) if (reactor.eventTypes.has(event.type)) await reactor.react(event, { replaying: true });
      const fresh = new CreditsEngine(t.service.runtime.store);
      for (const event of documentEvents) {
        if (!reactor.eventTypes.has(event.type)) continue;
        await meteringReactor({ knex: t.service.deps.knex, store: t.service.runtime.store, clock, engine: fresh }).react(event, { replaying: true });
      }
      const events = (await t.service.runtime.store.readStream(creditsStream(m.workspaceId))).map((e) => e.type);
      expect(events.filter((x) => x === 'ReservationCreated')).to.have.length(1);
      expect(events.filter((x) => x === 'ConsumptionFinalized')).to.have.length(1);
      expect(await m.state()).to.include({ usage: 1, reserved: 0, available: 9 });
    });

    describe('enforcement (off by default)', () => {
      it('new format: a blocked company is refused with 403 credits_blocked naming the block reason, and nothing is recorded', async () => {
        const m = await meteredTenant(t);
        await issue(t, m.workspaceId, 100);
        // Off: accepted although there is no allowance.
        expect((await m.submit()).status).to.equal(200);
        await enforce(t, m.workspaceId, true);
        const number = freshNumber();
        const refused = await m.submit(m.request(number));
        expect(refused.status).to.equal(403);
        expect(refused.json).to.include({ code: 'credits_blocked', blockReason: 'NO_ACTIVE_ALLOWANCE' });
        expect(refused.json.message).to.contain('NO_ACTIVE_ALLOWANCE');
        expect(refused.json.path).to.deep.equal(['source']);
        await createCurrent(m, clock.now(), { limit: 1 });
        // The refused number was never claimed: it can be used now.
        const accepted = await m.submit(m.request(number));
        expect(accepted.status, accepted.text).to.equal(200);
        await waitFor(() => m.ledger('&eventType=reservation.created'), (items) => items.length === 1, 'the reservation');
        const exhausted = await m.submit();
        expect(exhausted.status).to.equal(403);
        expect(exhausted.json.blockReason).to.equal('ALLOWANCE_EXHAUSTED');
        const paused = await m.write('POST', `/allowances/${m.companyId}/pause`, { reason: 'x' }, { 'if-match': '"1"' });
        expect(paused.status).to.equal(200);
        expect((await m.submit()).json.blockReason).to.equal('ALLOWANCE_PAUSED');
        await enforce(t, m.workspaceId, false);
        expect((await m.submit()).status).to.equal(200);
      });

      it('earlier format: each invoice of a blocked company fails on its own with CREDITS_BLOCKED', async () => {
        const m = await meteredTenant(t);
        await enforce(t, m.workspaceId, true);
        await createCurrent(m, clock.now(), { limit: 5 });
        // No pool credits: POOL_EXHAUSTED.
        const body = {
          action: 'submit',
          purpose: 'invoicing',
          env: 'sandbox',
          defaults: { country: 'AE', logicalDocumentType: 'TAX_INVOICE', source: { name: m.company.sourceName, version: m.company.sourceVersion } },
          invoices: [{ payload: uaeInvoice(), externalId: 'a' }, { payload: uaeInvoice(), externalId: 'b' }],
          options: { continueOnError: true },
        };
        const r = await m.legacy(body);
        expect(r.status, r.text).to.equal(200);
        expect(r.json.data.summary).to.deep.equal({ total: 2, success: 0, failed: 2 });
        for (const [i, item] of r.json.data.results.entries()) {
          expect(item).to.include({ status: 'failed', documentId: null });
          expect(item.errors).to.deep.equal([{ code: 'CREDITS_BLOCKED', message: item.errors[0].message, path: ['invoices', i], blockReason: 'POOL_EXHAUSTED' }]);
          expect(item.errors[0].message).to.contain('POOL_EXHAUSTED');
        }
        await issue(t, m.workspaceId, 10);
        const ok = await m.legacy({ ...body, invoices: [{ payload: uaeInvoice(), externalId: 'c' }] });
        expect(ok.json.data.summary).to.deep.equal({ total: 1, success: 1, failed: 0 });
      });
    });

    it('200 parallel reservations against an allowance of 100, from two service instances: exactly 100 succeed, never over-consumed', async () => {
      const m = await meteredTenant(t);
      await issue(t, m.workspaceId, 1000);
      await createCurrent(m, clock.now(), { limit: 100 });
      const store = t.service.runtime.store;
      const engines = [new CreditsEngine(store, { snapshots: knexSnapshotStore(t.service.deps.knex) }), new CreditsEngine(store)];
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          reserveForDocument(engines[i % 2]!, { workspaceId: m.workspaceId, companyId: m.companyId, documentId: randomUUID() }, { now: clock.now(), actor: 'test' }),
        ),
      );
      expect(results.filter((r) => r.outcome === 'reserved')).to.have.length(100);
      const refused = results.filter((r) => r.outcome === 'refused');
      expect(refused).to.have.length(100);
      expect(refused.every((r) => r.outcome === 'refused' && r.blockReason === 'ALLOWANCE_EXHAUSTED')).to.equal(true);
      const state = await new CreditsEngine(store).read(m.workspaceId);
      expect(companyOf(state, m.companyId).current).to.include({ reserved: 100, finalizedUsage: 0, limit: 100 });
      expect(poolTotals(state)).to.include({ reserved: 100, available: 900 });
      const last = results.map((r) => r.result.position).filter((p) => p !== null).sort((a, b) => (a!.commit === b!.commit ? Number(a!.prepare - b!.prepare) : Number(a!.commit - b!.commit))).pop();
      await t.settle(last!);
      expect(await m.state()).to.include({ reserved: 100, available: 0, blockReason: 'ALLOWANCE_EXHAUSTED' });
      expect((await m.ledger('&eventType=reservation.created&limit=100')).length).to.equal(100);
    });
  });

  describe('with the delivery pipeline (sandbox destinations)', () => {
    let t: TestService;
    before(async () => {
      t = await startTestService({ startWorkers: false, config: (c) => ({ ...c, delivery: { ...c.delivery, maxAttempts: 1, sandboxFinalResultAfterMs: 0 } }) });
    });
    after(async () => t.close());

    it('a delivered and accepted document consumes its credit; a refused one gives it back; an unanswered one awaits reconciliation', async () => {
      const m = await meteredTenant(t);
      await issue(t, m.workspaceId, 50);
      await createCurrent(m, new Date(), { limit: 10 });
      const accepted = await m.submit(m.request(freshNumber()));
      const refused = await m.submit(m.request(freshNumber('SBX-REJECT')));
      const unanswered = await m.submit(m.request(freshNumber('SBX-TIMEOUT')));
      for (const r of [accepted, refused, unanswered]) expect(r.status, r.text).to.equal(200);
      const items = await waitFor(() => m.ledger(), (x) => x.filter((i) => i.eventType !== 'reservation.created' && i.eventType !== 'allowance.created').length === 3, 'three settlements');
      const byDocument = Object.fromEntries(items.filter((i) => i.eventType !== 'reservation.created' && i.documentId).map((i) => [i.documentId, i.eventType]));
      expect(byDocument).to.deep.equal({
        [accepted.json.documentId]: 'consumption.finalized',
        [refused.json.documentId]: 'reservation.released',
        [unanswered.json.documentId]: 'reservation.needs_reconciliation',
      });
      expect(await m.state()).to.include({ usage: 1, reserved: 1, available: 8 });
    });
  });
});
