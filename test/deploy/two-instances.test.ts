/**
 * The service side of deploy/compose.yaml: two service processes (scripts/start.ts) against
 * one PostgreSQL. Requests spread over both are all answered; every projection and reactor
 * applies each event once (the read models count each document once, and each document is
 * delivered exactly once across both instances); each worker tick runs in one instance.
 */
import { expect } from 'chai';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { call } from '../support/http.js';
import { testDb } from '../support/db.js';
import { companyOn, counter, startInstance, stopInstance, type Instance } from '../support/instances.js';

describe('two service instances against one PostgreSQL (deploy/compose.yaml)', function () {
  this.timeout(240_000);
  const instances: Instance[] = [];
  let store: PostgresEventStore;

  before(async () => {
    const db = testDb();
    store = await PostgresEventStore.connect(db.url, { poolSize: 4 });
    instances.push(...(await Promise.all([startInstance('one', db.url), startInstance('two', db.url)])));
  });
  after(async () => {
    await Promise.all(instances.map(stopInstance));
    await store?.close();
  });

  it('answers every request on both, applies every projection once and delivers each document exactly once', async () => {
    const [a, b] = instances as [Instance, Instance];
    // Onboarded through one instance, known to both.
    const company = await companyOn(store, instances, a.url, 'Two', 'sandbox');
    const auth = { authorization: `Bearer ${company.apiKey}` };

    const documents = 16;
    const submitted = await Promise.all(
      Array.from({ length: documents }, (_, n) => {
        const payload = sampleDocument('AE', { lines: 2, documentNumber: `TWO-${process.pid}-${Date.now().toString(36)}-${n}` });
        return call(`${(n % 2 ? b : a).url}/api/v3/unify`, {
          headers: { ...auth, 'new-api': 'true' },
          body: { country: 'AE', environment: 'sandbox', purpose: 'invoicing', source: company.source, documentType: { base: 'tax_invoice', modifiers: [] }, payload },
        });
      }),
    );
    for (const r of submitted) expect(r.status, r.text).to.equal(200);
    const ids = submitted.map((r) => r.json.documentId as string);

    // Each document reaches final_valid, read through the other instance than the one that took it.
    for (const [n, id] of ids.entries()) {
      const other = n % 2 ? a : b;
      for (let tries = 0; ; tries++) {
        const r = await call(`${other.url}/api/v3/documents/${id}?type=sales`, { headers: auth });
        expect(r.status, r.text).to.equal(200);
        if (r.json.data.state === 'final_valid') break;
        if (tries > 300) throw new Error(`document ${id} stuck in ${r.json.data.state}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    }

    // The read models count each document once, whichever instance applied it.
    for (const i of instances) {
      const counts = await call(`${i.url}/v3/connect/invoices/counts?countryCode=AE`, { headers: { ...auth, 'x-environment': 'sandbox' } });
      expect(counts.status, counts.text).to.equal(200);
      expect(counts.json.data.salesCount).to.equal(documents);
    }

    // Delivery (a reactor) ran exactly once per document across both instances.
    const metrics = await Promise.all(instances.map(async (i) => (await call(`${i.url}/metrics`)).text));
    const delivered = metrics.reduce((sum, m) => sum + counter(m, 'delivery_attempts_total', { outcome: 'delivered' }), 0);
    expect(delivered).to.equal(documents);
    // Both instances answered requests of several families.
    for (const m of metrics) expect(counter(m, 'http_requests_total')).to.be.greaterThan(0);
    // Worker ticks ran; a tick held by the other instance is skipped, never run twice at once.
    const ran = metrics.reduce((sum, m) => sum + counter(m, 'worker_ticks_total', { worker: 'delivery', outcome: 'ran' }), 0);
    expect(ran).to.be.greaterThan(0);
  });
});
