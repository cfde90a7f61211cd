/**
 * `admin zatca expiring [--within-days N]`, run as a process against the test database: lists the
 * units whose active production CSID expires within the window (real certificates from the test
 * CA, OpenSSL), soonest first; revoked units and units not in production are not listed.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { secretBox } from '../../commands/webhooks/secrets.js';
import {
  createEgsCsr,
  generateEgsKey,
  recordComplianceChecksPassed,
  recordComplianceCsid,
  recordProductionCsid,
  registerEgsUnit,
  revokeEgsUnit,
  type EgsUnitDeps,
} from '../../commands/zatca/egs-units.js';
import { csidRenewalDue } from '../../domain/zatca/stamp.js';
import { PostgresEventStore } from '../../platform/eventstore/postgres.js';
import { admin } from '../support/cli.js';
import { testDb } from '../support/db.js';
import { binarySecurityToken, openTestCa, type TestCa } from './test-ca.js';

const SELLER_VAT = '300000000000003';

describe('admin zatca expiring: units whose production CSID is due for renewal (CLI process, real PostgreSQL)', function () {
  this.timeout(120_000);
  let store: PostgresEventStore;
  let ca: TestCa;
  const egs = (): EgsUnitDeps => ({ store, secrets: secretBox(Buffer.alloc(32, 4)) });
  const ctx = () => ({ now: new Date(), actor: 'test' });
  const tag = randomUUID().slice(0, 8);

  before(async () => {
    store = await PostgresEventStore.connect(testDb().url, { poolSize: 5 });
    ca = openTestCa();
  });
  after(async () => {
    ca.close();
    await store?.close();
  });

  /** A unit with a production CSID valid for `days` (null: registered, never in production). */
  async function unit(name: string, days: number | null): Promise<string> {
    const egsUnitId = `egs-${tag}-${name}`;
    await registerEgsUnit(egs(), {
      egsUnitId, workspaceId: `ws_${tag}`, environment: 'simulation', sellerVat: SELLER_VAT,
      subject: { commonName: name, serialNumber: `1-Ledger|2-1.0|3-${egsUnitId}`, organizationUnit: 'Riyadh', organizationName: 'Najd Supplies Co.', country: 'SA', invoiceType: '1100', location: 'Riyadh', industry: 'Retail' },
    }, ctx());
    if (days === null) return egsUnitId;
    const { keyId } = await generateEgsKey(egs(), egsUnitId, ctx());
    const { csrPem } = await createEgsCsr(egs(), egsUnitId, ctx());
    await recordComplianceCsid(egs(), egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem, 30)), secret: 's1', requestId: `c-${name}` }, ctx());
    await recordComplianceChecksPassed(egs(), egsUnitId, keyId, ctx());
    await recordProductionCsid(egs(), egsUnitId, { keyId, binarySecurityToken: binarySecurityToken(ca.issue(csrPem, days)), secret: 's2', requestId: `p-${name}` }, ctx());
    return egsUnitId;
  }

  const run = async (args: string[]) => {
    const r = await admin(['zatca', 'expiring', ...args]);
    return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as { now: string; withinDays: number; units: { egsUnitId: string; daysLeft: number; expired: boolean; notAfter: string; keyId: number; requestId: string }[] }) : null };
  };
  const mine = <U extends { egsUnitId: string }>(units: U[]) => units.filter((u) => u.egsUnitId.startsWith(`egs-${tag}-`));

  it('the renewal rule: due within the window, expired past notAfter, whole days left', () => {
    const at = new Date('2026-06-01T00:00:00Z');
    expect(csidRenewalDue('2026-07-15T00:00:00Z', at, 30)).to.equal(null);
    expect(csidRenewalDue('2026-06-20T12:00:00Z', at, 30)).to.deep.equal({ expired: false, daysLeft: 19 });
    expect(csidRenewalDue('2026-05-30T00:00:00Z', at, 30)).to.deep.equal({ expired: true, daysLeft: -2 });
  });

  it('lists the units expiring within the window, soonest first; not the later, revoked or unonboarded ones', async () => {
    const soon = await unit('soon', 10);
    const sooner = await unit('sooner', 3);
    const later = await unit('later', 100);
    const revoked = await unit('revoked', 5);
    await revokeEgsUnit(egs(), revoked, 'decommissioned', ctx());
    await unit('registered', null);

    const dflt = await run([]);
    expect(dflt.code, dflt.stderr).to.equal(0);
    expect(dflt.json!.withinDays).to.equal(30);
    const listed = mine(dflt.json!.units);
    expect(listed.map((u) => u.egsUnitId)).to.deep.equal([sooner, soon]);
    expect(listed[1]).to.include({ keyId: 1, requestId: 'p-soon', expired: false });
    expect(listed[1]!.daysLeft).to.be.within(9, 10);
    expect(Date.parse(listed[1]!.notAfter)).to.be.greaterThan(Date.now() + 9 * 86_400_000);

    const wide = await run(['--within-days', '200']);
    expect(wide.code, wide.stderr).to.equal(0);
    expect(mine(wide.json!.units).map((u) => u.egsUnitId)).to.deep.equal([sooner, soon, later]);

    const narrow = await run(['--within-days', '1']);
    expect(mine(narrow.json!.units)).to.deep.equal([]);

    const bad = await run(['--within-days', 'soon']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('whole number of days');
  });
});
