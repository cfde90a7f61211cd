/**
 * A Saudi seller with an EGS unit, end to end through the real server: a standard and a
 * simplified invoice submitted over HTTP reach final_valid, stamped with the unit's key (the
 * artifact verifies, and xmlsec1 agrees on the invoice reference) and chained per unit.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEgsCsr,
  egsSecretBox,
  generateEgsKey,
  recordComplianceChecksPassed,
  recordComplianceCsid,
  recordProductionCsid,
  registerEgsUnit,
  type EgsUnitDeps,
} from '../../commands/zatca/egs-units.js';
import { ZatcaInvoiceChained, zatcaUnitChainStream, type ZatcaLink } from '../../domain/delivery/zatca-chain.js';
import { documentStream } from '../../domain/document/document.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { verifyStamp } from '../../domain/zatca/stamp.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { testConfig, testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { freshNumber, unifyTenant, type UnifyTenant } from '../unify/support.js';
import { binarySecurityToken, openTestCa } from './test-ca.js';

describe('ZATCA end to end: submit over HTTP, stamped and chained per EGS unit, final_valid', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;
  let store: PostgresEventStore;
  let egsUnitId: string;
  let certificate: string;
  let dir: string;

  before(async () => {
    t = await startTestService();
    u = await unifyTenant(t);
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 4 });
    dir = mkdtempSync(join(tmpdir(), 'zatca-e2e-'));
    // The unit, onboarded through the commands with the service's own key box.
    const deps: EgsUnitDeps = { store, secrets: egsSecretBox(testConfig()) };
    const ctx = { now: new Date(), actor: 'test' };
    const ca = openTestCa();
    egsUnitId = randomUUID();
    await registerEgsUnit(deps, {
      egsUnitId,
      workspaceId: u.workspaceId,
      environment: 'sandbox',
      sellerVat: '300000000000003',
      subject: { commonName: 'TST-e2e', serialNumber: `1-Ledger|2-1.0|3-${egsUnitId}`, organizationUnit: 'Riyadh', organizationName: 'Najd Supplies Co.', country: 'SA', invoiceType: '1100', location: 'Riyadh', industry: 'Retail' },
    }, ctx);
    const { keyId } = await generateEgsKey(deps, egsUnitId, ctx);
    const { csrPem } = await createEgsCsr(deps, egsUnitId, ctx);
    await recordComplianceCsid(deps, egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem)), secret: 'c', requestId: 'c1' }, ctx);
    await recordComplianceChecksPassed(deps, egsUnitId, keyId, ctx);
    certificate = ca.issue(csrPem);
    await recordProductionCsid(deps, egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(certificate), secret: 'p', requestId: 'p1' }, ctx);
    ca.close();
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await store.close();
    await t.close();
  });

  async function finalState(documentId: string) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await u.status(documentId, 'status');
      const state = r.json.data.state as string;
      if (state.startsWith('final_') || Date.now() > deadline) return r.json.data;
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  it('standard (cleared) and simplified (reported) invoices reach final_valid with a stamp that verifies', async () => {
    const ids: string[] = [];
    for (const variant of [undefined, 'simplified']) {
      const payload = sampleDocument('SA', { lines: 2, documentNumber: freshNumber('SA') }) as Record<string, unknown>;
      const r = await u.submit(u.request(payload, { country: 'SA', documentType: { base: 'tax_invoice', modifiers: [], ...(variant ? { variant } : {}) } }));
      expect(r.status, r.text).to.equal(200);
      ids.push(r.json.documentId as string);
    }
    const [standard, simplified] = await Promise.all(ids.map(finalState));
    expect(standard.state).to.equal('final_valid');
    expect(standard.government).to.include({ authority: 'ZATCA', result: 'CLEARED' });
    expect(simplified.state).to.equal('final_valid');
    expect(simplified.government).to.include({ authority: 'ZATCA', result: 'REPORTED' });

    const chain = (await store.readStream(zatcaUnitChainStream(egsUnitId))).map((e) => decodeEventData(ZatcaInvoiceChained, e.schemaVersion, e.data) as ZatcaLink);
    expect(chain.map((l) => l.documentId).sort()).to.deep.equal([...ids].sort());
    expect(chain.map((l) => l.counter)).to.deep.equal([1, 2]);
    const pem = `-----BEGIN CERTIFICATE-----\n${certificate.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
    writeFileSync(join(dir, 'cert.pem'), pem);
    for (const id of ids) {
      const delivered = (await store.readStream(documentStream(id))).find((e) => e.type === 'DocumentDelivered')!;
      const sha = (delivered.data as { xml: { sha256: string } }).xml.sha256;
      const xml = (await store.readArtifacts([sha])).get(sha)!.toString('utf8');
      expect(verifyStamp(xml)).to.deep.equal([]);
      // xmlsec1 on the invoice reference (see test/zatca/stamp.test.ts for why the XPath is restated).
      const copy = xml.replaceAll('not(//ancestor-or-self::', 'not(ancestor-or-self::').replace(/<ds:Reference Type="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#SignatureProperties".*?<\/ds:Reference>/, '');
      writeFileSync(join(dir, `${id}.xml`), copy);
      const run = spawnSync('xmlsec1', ['--verify', '--pubkey-cert-pem', join(dir, 'cert.pem'), '--enabled-reference-uris', 'empty', '--print-debug', join(dir, `${id}.xml`)], { encoding: 'utf8' });
      expect(/SignedInfo References \(ok\/all\): (\d+\/\d+)/.exec(run.stdout + run.stderr)?.[1]).to.equal('1/1');
    }
  });
});
