import { expect } from 'chai';
import { aspAuthorizationsProjection, companiesProjection } from '../../projections/connect.js';
import { rebuildProjection } from '../../projections/rebuild.js';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { newClient, sourcePath } from './support.js';

describe('Connect read models rebuild from the event log into the same rows', function () {
  this.timeout(60000);
  let t: TestService;

  before(async () => {
    t = await startTestService();
  });
  after(async () => t.close());

  it('connect_companies and asp_authorizations', async () => {
    const c = await newClient(t);
    const a = await c.onboard();
    const b = await c.onboard({ sourceName: 'Rebuild / Source' });
    await c.post(`/v3/connect/companies/${a.companyId}/branches`, { branchName: 'Second', sourceName: 'Rebuild second', sourceVersion: '2' });
    await c.patch(sourcePath(a.sourceName, 'v1'), { legalName: 'Changed LLC', metadata: { k: [1, 2] }, sourceVersion: 'v9' });
    await c.del(sourcePath('Rebuild / Source', 'v1'));
    expect(b.companyId).to.be.a('string');

    const knex = testDb().knex;
    const snapshot = async () => ({
      companies: await knex('connect_companies').orderBy('company_id'),
      sources: await knex('connect_sources').orderBy('source_id'),
      authorizations: await knex('asp_authorizations').orderBy('authorization_id'),
    });
    const live = await snapshot();
    expect(live.sources.length).to.be.at.least(3);
    await rebuildProjection(knex, t.service.runtime.store, companiesProjection);
    await rebuildProjection(knex, t.service.runtime.store, aspAuthorizationsProjection);
    expect(await snapshot()).to.deep.equal(live);
  });
});
