/**
 * Rebuild == live for every projection of the service: a mixed workload (documents submitted and
 * delivered to a final state with their credits reserved and consumed, Connect onboarding, branches,
 * source changes and archives, credits issued, allowances current and scheduled, an export, purchases
 * received, a webhook subscription, a key revoked and a workspace deleted), then every projection of
 * projections/index.ts is rebuilt from the log, with other batch boundaries (by events and by bytes)
 * than the live runner's, and a checksum of every read-model table (its rows, in order) must not change.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { allProjections } from '../../projections/index.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { clientFor, sourcePath } from '../connect/support.js';
import { allowanceBody, createCurrent, creditsClient, issue } from '../credits/support.js';
import { receiver, storePurchase } from '../purchases/support.js';
import { openOwnTestDatabase } from '../support/db.js';
import { call, startTestService, type TestService } from '../support/http.js';
import type { ManualClock } from '../../platform/clock.js';
import { startReceiver, subscribe, webhooksClient, webhookWorker } from '../webhooks/support.js';
import { freshNumber } from '../unify/support.js';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

describe('every projection rebuilds into read models with the same checksum as the live ones', function () {
  this.timeout(300_000);
  let t: TestService;
  // A database of its own: the whole log is this test's, so whole tables can be compared.
  let own: Awaited<ReturnType<typeof openOwnTestDatabase>>;

  before(async () => {
    own = await openOwnTestDatabase('checksum');
    t = await startTestService({
      db: own.db,
      startWorkers: false,
      config: (c) => ({ ...c, delivery: { ...c.delivery, sandboxFinalResultAfterMs: 0 }, webhooks: { ...c.webhooks, allowPrivateTargets: true } }),
    });
  });
  after(async () => {
    await t?.close();
    await own?.drop();
  });

  /** Per table: row count and the md5 of its rows as text, in order. */
  async function checksums(tables: readonly string[]): Promise<Record<string, { rows: number; md5: string }>> {
    const knex = own.db.knex;
    const out: Record<string, { rows: number; md5: string }> = {};
    for (const table of [...tables].sort()) {
      const { rows } = await knex.raw(
        `select count(*)::int as n, coalesce(md5(string_agg(r::text, chr(10) order by r::text)), '') as md5 from ${quote(table)} r`,
      );
      out[table] = { rows: rows[0].n, md5: rows[0].md5 };
    }
    return out;
  }

  async function quiet(): Promise<void> {
    // Reactions append events of their own: wait until the log stops growing and everything is applied.
    const store = t.service.runtime.store;
    for (let previous = ''; ; ) {
      await t.settleAll();
      await new Promise((r) => setTimeout(r, 300));
      const head = await store.committedHead();
      const now = `${head.commit}/${head.prepare}`;
      if (now === previous) return;
      previous = now;
    }
  }

  it('documents, connect, credits, purchases, webhooks, workspaces and search', async () => {
    // A tenant with a company, credits and a current allowance, submitting documents.
    const tenant = await t.tenant();
    const credits = creditsClient(t, tenant);
    const company = await credits.client.onboard();
    const c = { ...credits, companyId: company.companyId as string };
    await issue(t, tenant.workspaceId, 50);
    await issue(t, tenant.workspaceId, 10, new Date(Date.now() + 86_400_000).toISOString());
    await createCurrent(c, t.clock.now(), { limit: 40 });
    const second = await credits.client.onboard({ sourceName: `Checksum second ${randomUUID().slice(0, 8)}` });
    const scheduled = await c.write('PUT', `/allowances/${second.companyId}/scheduled`, allowanceBody(t.clock.now(), { limit: 12 }, 'scheduled'), { 'if-none-match': '*' });
    expect(scheduled.status, scheduled.text).to.equal(201);

    const source = `${company.sourceName}:${company.sourceVersion}`;
    const submit = (country: 'AE' | 'SA' | 'MY', n: string) =>
      call(`${t.url}/api/v3/unify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'new-api': 'true' },
        body: {
          country,
          environment: 'sandbox',
          purpose: 'invoicing',
          source,
          documentType: { base: 'tax_invoice', modifiers: [] },
          payload: sampleDocument(country, { lines: 2, documentNumber: n }),
        },
      });
    const documentIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await submit(i % 4 === 3 ? 'SA' : 'AE', freshNumber('CHK'));
      expect(r.status, r.text).to.equal(200);
      documentIds.push(r.json.documentId);
    }
    // Every document reaches a final state (delivery and metering run as reactors).
    const deadline = Date.now() + 60_000;
    for (const id of documentIds) {
      for (;;) {
        const r = await call(`${t.url}/api/v3/documents/${id}/status`, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
        if (String(r.json?.data?.state).startsWith('final_')) break;
        if (Date.now() > deadline) throw new Error(`document ${id} did not reach a final state: ${r.text.slice(0, 200)}`);
        await new Promise((res) => setTimeout(res, 50));
      }
    }

    // Connect: a branch, a source change with a new legal name, an archived source, an ASP authorization.
    const connect = clientFor(t, tenant);
    const branch = await connect.post(`/v3/connect/companies/${company.companyId}/branches`, { branchName: 'Checksum branch', sourceName: `Checksum branch ${randomUUID().slice(0, 8)}`, sourceVersion: '2' });
    expect(branch.status, branch.text).to.equal(201);
    const patched = await connect.patch(sourcePath(company.sourceName, company.sourceVersion), { legalName: 'Checksum Renamed LLC', metadata: { erp: ['x', 1] } });
    expect(patched.status, patched.text).to.equal(200);
    const archived = await connect.del(sourcePath(second.sourceName, second.sourceVersion));
    expect(archived.status, archived.text).to.be.oneOf([200, 204]);
    await connect.authorize(`1${String(Date.now()).slice(-9)}`, 'checksum@example.com');

    // An export of the ledger, a webhook subscription.
    expect((await c.write('POST', '/exports', { format: 'csv' })).status).to.equal(202);
    await subscribe(webhooksClient(t, tenant.apiKey), { webhookUrl: 'https://hooks.example.com/checksum', events: ['isv.credits.pool.low', 'purchase.invoice.stored'] });

    // Webhook attempts: a delivery answered 500 (its retry scheduled) and a test ping delivered.
    const hooks = await startReceiver(t.clock as ManualClock);
    try {
      const w = webhooksClient(t, tenant.apiKey);
      const failing = await subscribe(w, { webhookUrl: hooks.route([500]).url, events: ['isv.credits.allowance.changed'] });
      const third = await credits.client.onboard({ sourceName: `Checksum third ${randomUUID().slice(0, 8)}` });
      await createCurrent({ ...c, companyId: third.companyId as string }, t.clock.now(), { limit: 20 });
      await t.settleAll();
      const worker = webhookWorker(t);
      await worker.tick(t.clock.now());
      await worker.idle();
      const pinged = await subscribe(w, { webhookUrl: hooks.route([200]).url, events: ['isv.credits.allowance.changed'] });
      expect((await w.test(pinged)).json.data.outcome).to.equal('delivered');
      expect((await w.get(failing, '/deliveries')).json.data.items[0]).to.include({ outcome: 'pending', attempts: 1 });
    } finally {
      await hooks.close();
    }

    // Purchases received by another tenant.
    const r = await receiver(t);
    for (let i = 0; i < 3; i++) await storePurchase(t, r, { number: freshNumber('PUR'), storedAt: new Date(Date.now() + i) });

    // A revoked key and a deleted workspace.
    const other = await t.tenant();
    await t.revoke(other.keyId);
    await t.deleteWorkspace(other.workspaceId);

    await quiet();
    const projections = allProjections(t.service.deps.search);
    const live = t.service.runner.projections.filter((p) => p.tables.length > 0 || p.beginRebuild).map((p) => p.name);
    // Every projection of projections/index.ts, and every projection the service runs with tables.
    expect(projections.map((p) => p.name)).to.include.members(live);
    const tables = projections.flatMap((p) => [...p.tables]);
    const before = await checksums(tables);
    for (const table of ['workspaces', 'api_keys', 'connect_companies', 'connect_sources', 'asp_authorizations', 'credit_transactions', 'credit_companies', 'credit_lots', 'purchase_invoices', 'webhook_subscriptions', 'webhook_deliveries', 'webhook_attempts', 'webhook_delivery_state', 'sales_documents']) {
      expect(before[table]?.rows ?? 0, table).to.be.greaterThan(0);
    }

    const knex = own.db.knex;
    for (const projection of projections) {
      // Small batches by count and by bytes: other boundaries than the live runner's.
      await rebuildProjection(knex, t.service.runtime.store, projection, { batchSize: 7, batchBytes: 16 * 1024 });
    }
    await quiet();
    expect(await checksums(tables)).to.deep.equal(before);

    // And once more with large batches.
    for (const projection of projections) await rebuildProjection(knex, t.service.runtime.store, projection, { batchSize: 5000 });
    await quiet();
    expect(await checksums(tables)).to.deep.equal(before);
  });
});
