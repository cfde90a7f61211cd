import { expect } from 'chai';
import { onboardingJobStream } from '../../domain/connect/onboarding-job.js';
import { startTestService, type TestService } from '../support/http.js';
import { connectError, freshName, freshTin, newClient, type Client } from './support.js';

const JOBS = '/v3/connect/companies/onboarding-jobs';

describe('Connect: POST /v3/connect/companies/onboarding-jobs', function () {
  this.timeout(180000);
  let t: TestService;
  let c: Client;

  /** `n` authorized rows (without countryCode/platformEnvironment unless given). */
  async function rows(n: number, extra: Record<string, unknown> = {}): Promise<Record<string, any>[]> {
    const out: Record<string, any>[] = [];
    const batch = 25;
    for (let i = 0; i < n; i += batch) {
      const part = await Promise.all(
        Array.from({ length: Math.min(batch, n - i) }, async () => {
          const body = await c.newCompanyBody(extra);
          delete body.countryCode;
          delete body.platformEnvironment;
          return { ...body, ...extra };
        }),
      );
      out.push(...part);
    }
    return out;
  }

  const job = (rs: unknown[], extra: Record<string, unknown> = {}) => ({ countryCode: 'AE', platformEnvironment: 'sandbox', rows: rs, ...extra });

  before(async () => {
    t = await startTestService();
    c = await newClient(t);
  });
  after(async () => t.close());

  it('refuses 0 rows', async () => {
    const r = await c.post(JOBS, job([]));
    expect(r.status).to.equal(400);
    expect(connectError(r)).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path: ['rows'] });
  });

  it('onboards 1 row: job record and row exactly as the Connect section of the OpenAPI document', async () => {
    const [row] = await rows(1);
    const r = await c.post(JOBS, job([row], { filename: 'companies.csv' }));
    expect(r.status, r.text).to.equal(200);
    const d = r.json.data;
    expect(d).to.have.all.keys(
      'id', 'workspaceId', 'countryCode', 'status', 'totalRows', 'processedRows', 'succeededRows', 'failedRows',
      'createdAt', 'updatedAt', 'completedAt', 'rows',
    );
    expect(d).to.include({ workspaceId: c.workspaceId, countryCode: 'AE', status: 'completed', totalRows: 1, processedRows: 1, succeededRows: 1, failedRows: 0 });
    const only = d.rows[0];
    expect(only).to.have.all.keys('id', 'jobId', 'rowIndex', 'status', 'sourceName', 'sourceVersion', 'countryCode', 'nextAction', 'data');
    expect(only).to.include({ jobId: d.id, rowIndex: 0, status: 'onboarded', sourceName: row!.sourceName, sourceVersion: 'v1', countryCode: 'AE' });
    expect(only.nextAction).to.be.a('string');
    expect(only.data.readyForInvoicing).to.equal(true);
    expect(only.data.mappingReadiness).to.deep.equal({ status: 'READY', templateId: 'core-identity-ae-1' });
    expect(only.data).to.include({ tin: row!.tin, platformEnvironment: 'sandbox', peppolParticipantId: `0235:${row!.tin}` });
    const events = await t.service.runtime.store.readStream(onboardingJobStream(d.id));
    expect(events.map((e) => e.type)).to.deep.equal(['OnboardingJobCompleted']);
    const list = await c.get(`/v3/connect/companies?search=${row!.tin}`);
    expect(list.json.data.map((i: any) => i.companyId)).to.deep.equal([only.data.companyId]);
  });

  it('onboards 500 rows synchronously', async () => {
    const rs = await rows(500);
    const r = await c.post(JOBS, job(rs));
    expect(r.status, r.text.slice(0, 500)).to.equal(200);
    expect(r.json.data).to.include({ totalRows: 500, processedRows: 500, succeededRows: 500, failedRows: 0 });
    expect(r.json.data.rows.map((x: any) => x.rowIndex)).to.deep.equal(rs.map((_, i) => i));
    expect(r.json.data.rows.map((x: any) => x.data.tin)).to.deep.equal(rs.map((x) => x.tin));
    const list = await c.get(`/v3/connect/companies?limit=1`);
    expect(list.json.meta.pagination.total).to.be.at.least(500);
  });

  it('refuses 501 rows, onboarding none', async () => {
    const rs = Array.from({ length: 501 }, () => ({ tin: freshTin(), sourceName: freshName('TooMany'), sourceVersion: 'v1', contactPersonEmail: 'a@b.ae', branchName: 'HQ' }));
    const r = await c.post(JOBS, job(rs));
    expect(r.status).to.equal(400);
    expect(connectError(r)).to.deep.include({ code: 'CONNECT_VALIDATION_ERROR', path: ['rows'] });
  });

  it('processes rows independently: failures are row errors with errorCode/errorMessage and nextAction', async () => {
    const [a, b, d, e] = await rows(4);
    const existing = await c.onboard();
    const unauthorized = { ...a!, tin: freshTin(), sourceName: freshName() };
    const r = await c.post(
      JOBS,
      job([
        a, //                                                              0 ok
        { ...b, platformEnvironment: 'simulation' }, //                     1 environment disagreement
        { ...d, countryCode: 'SA' }, //                                     2 unsupported country
        unauthorized, //                                                    3 no ASP authorization
        { ...a, sourceName: freshName() }, //                               4 same tin as row 0
        { ...e, sourceName: existing.sourceName }, //                       5 source name/version in use
        { ...e, tin: '123', sourceName: freshName() }, //                   6 malformed tin
        42, //                                                              7 not an object
        { ...e, unexpected: 1 }, //                                         8 unknown field
        e, //                                                               9 ok (row 5 failed, so its tin is free)
        { ...d, platformEnvironment: 'sandbox', countryCode: 'AE' }, //    10 ok: agreeing values are fine
      ]),
    );
    expect(r.status, r.text).to.equal(200);
    const data = r.json.data;
    expect(data).to.include({ status: 'completed', totalRows: 11, processedRows: 11, succeededRows: 3, failedRows: 8 });
    const codes = data.rows.map((x: any) => x.errorCode ?? x.status);
    expect(codes).to.deep.equal([
      'onboarded',
      'CONNECT_VALIDATION_ERROR',
      'CONNECT_UNSUPPORTED_COUNTRY',
      'ASP_LINKAGE_NOT_FOUND',
      'CONNECT_COMPANY_ALREADY_EXISTS',
      'CONNECT_SOURCE_ALREADY_EXISTS',
      'CONNECT_VALIDATION_ERROR',
      'CONNECT_VALIDATION_ERROR',
      'CONNECT_VALIDATION_ERROR',
      'onboarded',
      'onboarded',
    ]);
    for (const row of data.rows) {
      if (row.status === 'failed') {
        expect(row).to.have.all.keys('id', 'jobId', 'rowIndex', 'status', 'sourceName', 'sourceVersion', 'countryCode', 'nextAction', 'data', 'errorCode', 'errorMessage');
        expect(row.errorMessage).to.be.a('string').and.not.empty;
        expect(row.data.readyForInvoicing).to.equal(undefined);
      } else {
        expect(row.data.readyForInvoicing).to.equal(true);
      }
    }
    expect(data.rows[1].errorMessage).to.match(/disagrees/);
    expect(data.rows[3].nextAction).to.not.equal(data.rows[0].nextAction);
    expect(data.rows[7]).to.include({ sourceName: null, sourceVersion: null });
  });

  it('gives the same row outcomes as processing the rows in order, also for duplicates within the job', async () => {
    const rs = await rows(30);
    const name = freshName('Shared');
    // Rows 0, 10 and 20 share a source name; rows 5 and 25 share a tin.
    for (const i of [0, 10, 20]) rs[i] = { ...rs[i], sourceName: name };
    rs[25] = { ...rs[25], tin: rs[5]!.tin, contactPersonEmail: rs[5]!.contactPersonEmail, sourceName: freshName() };
    const r = await c.post(JOBS, job(rs));
    const codes = r.json.data.rows.map((x: any) => x.errorCode ?? 'ok');
    expect(codes[0]).to.equal('ok');
    expect(codes[10]).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    expect(codes[20]).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    expect(codes[5]).to.equal('ok');
    expect(codes[25]).to.equal('CONNECT_COMPANY_ALREADY_EXISTS');
    expect(codes.filter((x: string) => x === 'ok')).to.have.length(27);
  });

  for (const [what, body, code, path] of [
    ['a missing rows array', { countryCode: 'AE', platformEnvironment: 'sandbox' }, 'CONNECT_VALIDATION_ERROR', ['rows']],
    ['rows not an array', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: {} }, 'CONNECT_VALIDATION_ERROR', ['rows']],
    ['a missing platformEnvironment', { countryCode: 'AE', rows: [{}] }, 'CONNECT_VALIDATION_ERROR', ['platformEnvironment']],
    ['an unknown platformEnvironment', { countryCode: 'AE', platformEnvironment: 'prod', rows: [{}] }, 'CONNECT_VALIDATION_ERROR', ['platformEnvironment']],
    ['an unknown field', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: [{}], jobId: 'x' }, 'CONNECT_VALIDATION_ERROR', ['jobId']],
    ['countryCode SA', { countryCode: 'SA', platformEnvironment: 'sandbox', rows: [{}] }, 'CONNECT_UNSUPPORTED_COUNTRY', ['countryCode']],
  ] as const) {
    it(`refuses ${what}`, async () => {
      const r = await c.post(JOBS, body);
      expect(r.status).to.equal(400);
      expect(connectError(r)).to.deep.include({ code, path });
    });
  }
});
