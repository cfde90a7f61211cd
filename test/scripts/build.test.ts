/**
 * `npm start` compiles the service to JavaScript first (scripts/build.mjs) and runs the compiled
 * entry: the build writes one module per source file and the files the code reads beside itself,
 * builds nothing when it is up to date, and the compiled service takes a submission to
 * final_valid (migrations, the HTTP API, the read models and the delivery all run from it).
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sampleDocument } from '../../domain/validation/index.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { SERVICE_NODE_FLAGS } from '../../scripts/bench-support.js';
import { testDb } from '../support/db.js';
import { call } from '../support/http.js';
import { companyOn, startInstance, stopInstance, type Instance } from '../support/instances.js';

describe('scripts/build.mjs: the compiled service npm start runs', function () {
  this.timeout(180_000);
  const outdir = path.join('var', `test-build-${process.pid}`);
  const build = (...args: string[]) =>
    spawnSync(process.execPath, ['scripts/build.mjs', ...args], { env: { ...process.env, BUILD_OUTDIR: outdir }, encoding: 'utf8' });
  let instance: Instance | undefined;
  let store: PostgresEventStore | undefined;

  after(async () => {
    if (instance) await stopInstance(instance);
    await store?.close();
    fs.rmSync(outdir, { recursive: true, force: true });
  });

  it('writes every source module as JavaScript and the files read beside the code, and builds nothing when up to date', () => {
    const first = build();
    expect(first.status, first.stderr).to.equal(0);
    expect(first.stderr).to.match(/build: \d+ modules and \d+ files to /);
    for (const file of ['scripts/start.js', 'scripts/rebuild.js', 'commands/peppol/as4/receive-worker.js', 'http/openapi/examples.json', 'commands/purchases/ubl-2.1-xsd', 'examples']) {
      expect(fs.existsSync(path.join(outdir, file)), file).to.equal(true);
    }
    expect(fs.readFileSync(path.join(outdir, 'scripts/start.js'), 'utf8')).to.not.match(/: Promise<|import type /);
    const stamp = fs.statSync(path.join(outdir, '.build-stamp')).mtimeMs;

    const again = build();
    expect(again.status, again.stderr).to.equal(0);
    expect(again.stderr).to.contain('up to date');
    expect(fs.statSync(path.join(outdir, '.build-stamp')).mtimeMs).to.equal(stamp);
  });

  it('runs the service: a submission through the compiled entry reaches final_valid', async () => {
    const db = testDb();
    store = await PostgresEventStore.connect(db.url, { poolSize: 2 });
    instance = await startInstance('compiled', db.url, {}, [...SERVICE_NODE_FLAGS, path.join(outdir, 'scripts/start.js')]);
    const company = await companyOn(store, [instance], instance.url, 'Compiled', 'sandbox');
    const auth = { authorization: `Bearer ${company.apiKey}` };
    const payload = sampleDocument('AE', { lines: 2, documentNumber: `BUILD-${process.pid}-${Date.now().toString(36)}` });
    const submitted = await call(`${instance.url}/api/v3/unify`, {
      headers: { ...auth, 'new-api': 'true' },
      body: { country: 'AE', environment: 'sandbox', purpose: 'invoicing', source: company.source, documentType: { base: 'tax_invoice', modifiers: [] }, payload },
    });
    expect(submitted.status, submitted.text).to.equal(200);
    const id = submitted.json.documentId as string;
    for (let tries = 0; ; tries++) {
      const r = await call(`${instance.url}/api/v3/documents/${id}?type=sales`, { headers: auth });
      expect(r.status, r.text).to.equal(200);
      if (r.json.data.state === 'final_valid') break;
      if (tries > 300) throw new Error(`document ${id} stuck in ${r.json.data.state}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    // The OpenAPI document is built from the compiled tree too (it reads examples beside the code).
    const openapi = await call(`${instance.url}/openapi.json`);
    expect(openapi.status).to.equal(200);
  });
});
