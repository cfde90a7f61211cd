/**
 * The service side of deploy/compose.yaml: two service processes (scripts/start.ts) against
 * one PostgreSQL. Requests spread over both are all answered; every projection and reactor
 * applies each event once (the read models count each document once, and each document is
 * delivered exactly once across both instances); each worker tick runs in one instance.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { createAspAuthorization } from '../../commands/connect/settings.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { createApiKey, createWorkspace } from '../../commands/workspaces.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { call } from '../support/http.js';
import { testDb } from '../support/db.js';

interface Instance {
  child: ChildProcess;
  url: string;
}

async function startInstance(name: string, databaseUrl: string): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DELIVERY_WORKER_INTERVAL_MS: '200' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${stderr}`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'service listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${stderr}`)));
  });
  return { child, url };
}

async function stop(instance: Instance): Promise<void> {
  if (instance.child.exitCode !== null) return;
  const exited = new Promise((r) => instance.child.once('exit', r));
  instance.child.kill('SIGTERM');
  await exited;
}

/** The sum of a counter's samples whose labels include `match`, from a /metrics text. */
function counter(text: string, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(match).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

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
    await Promise.all(instances.map(stop));
    await store?.close();
  });

  it('answers every request on both, applies every projection once and delivers each document exactly once', async () => {
    const ctx = () => ({ now: new Date(), actor: 'test' });
    const ws = await createWorkspace(store, 'Two instances', ctx());
    const key = await createApiKey(store, { workspaceId: ws.workspaceId, environment: 'sandbox', permission: 'read_write', role: 'owner', expiresAt: null }, ctx());
    const tin = String(Math.floor(1e9 + Math.random() * 8e9));
    await createAspAuthorization(store, { workspaceId: ws.workspaceId, environment: 'sandbox', tin, email: 'two@example.ae', legalName: 'Two LLC', legalNameArabic: null, vatTrn: null }, ctx());
    const auth = { authorization: `Bearer ${key.apiKey}` };
    const [a, b] = instances as [Instance, Instance];

    // The key becomes visible to both instances through their read models.
    for (const i of instances) {
      for (let n = 0; ; n++) {
        const r = await call(`${i.url}/readyz`, { headers: auth });
        if (r.status === 200 && r.json.workspaceId === ws.workspaceId) break;
        if (n > 100) throw new Error(`the key never reached ${i.url}: ${r.text}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    const company = await call(`${a.url}/v3/connect/companies`, {
      headers: auth,
      body: { sourceName: 'Two ERP', sourceVersion: 'v1', countryCode: 'AE', tin, contactPersonEmail: 'two@example.ae', branchName: 'Head office', platformEnvironment: 'sandbox' },
    });
    expect(company.status, company.text).to.equal(201);

    const documents = 16;
    const submitted = await Promise.all(
      Array.from({ length: documents }, (_, n) => {
        const payload = sampleDocument('AE', { lines: 2, documentNumber: `TWO-${process.pid}-${Date.now().toString(36)}-${n}` });
        return call(`${(n % 2 ? b : a).url}/api/v3/unify`, {
          headers: { ...auth, 'new-api': 'true' },
          body: { country: 'AE', environment: 'sandbox', purpose: 'invoicing', source: 'Two ERP:v1', documentType: { base: 'tax_invoice', modifiers: [] }, payload },
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
