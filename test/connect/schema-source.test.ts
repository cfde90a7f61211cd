/**
 * The Connect request bodies have one description: the OpenAPI document shows the JSON Schema of
 * their codecs (domain/connect/codecs.ts), the request rules take the member names from the same
 * codecs, and the schema, the codec and the rules agree on bodies either side of each limit.
 */
import { expect } from 'chai';
import { isRight } from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../http/openapi/index.js';
import { BranchBody, BranchBulkBody, CompanyCreationBody, CONNECT_INPUT_LIMITS, JobRow, OnboardingJobBody, SourcePatchBody } from '../../domain/connect/codecs.js';
import { COMPANY_FIELDS, parseBranch, parseBranchBulk, parseCompanyCreation, parseJobRow, parseOnboardingJob, parseSourcePatch } from '../../domain/connect/input.js';
import { jsonSchemaOf, memberNames, unknownMembers } from '../../domain/schema/json-schema.js';

type Operation = { requestBody: { content: { 'application/json': { schema: Record<string, unknown> } } } };
const doc = () => openApiDocument() as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Record<string, unknown>> } };
const bodyOf = (path: string, method: string) => doc().paths[path]![method]!.requestBody.content['application/json'].schema;

const accepts = (codec: t.Mixed, body: unknown) => isRight(codec.decode(body)) && unknownMembers(codec, body).length === 0;
const parses = (parse: () => unknown) => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

const company = {
  sourceName: 'Acme ERP',
  sourceVersion: 'v1',
  countryCode: 'AE',
  tin: '1234567890',
  contactPersonEmail: 'finance@acme.example',
  branchName: 'Dubai',
  platformEnvironment: 'sandbox',
};

describe('the Connect request bodies have one schema source', () => {
  const ajv = new Ajv2020({ strict: false });

  it('the OpenAPI request bodies are the codecs\' JSON Schemas, with the members the rules take', () => {
    const schemas = doc().components.schemas;
    expect(schemas['CompanyCreation']).to.deep.equal(jsonSchemaOf(CompanyCreationBody));
    expect(schemas['Branch']).to.deep.equal(jsonSchemaOf(BranchBody));
    expect(bodyOf('/v3/connect/companies/onboarding-jobs', 'post')).to.deep.equal(jsonSchemaOf(OnboardingJobBody));
    expect(bodyOf('/v3/connect/companies/{companyId}/branches/bulk', 'post')).to.deep.equal(jsonSchemaOf(BranchBulkBody));
    expect(bodyOf('/v3/connect/companies/{sourceName}', 'patch')).to.deep.equal(jsonSchemaOf(SourcePatchBody));
    expect(memberNames(CompanyCreationBody)).to.have.members([...COMPANY_FIELDS]);
  });

  it('schema, codec and rules agree on company bodies and job rows', () => {
    const schema = ajv.compile(doc().components.schemas['CompanyCreation']!);
    const row = ajv.compile(jsonSchemaOf(JobRow));
    const job = { countryCode: 'AE' as const, platformEnvironment: 'sandbox' as const };
    const { countryCode: _c, platformEnvironment: _p, ...rowMembers } = company;
    const cases: [string, Record<string, unknown>, boolean][] = [
      ['the required members', company, true],
      ['every member', { ...company, contactPersonName: 'Mona', contactPersonMobile: '+971500000000' }, true],
      ['null optional members', { ...company, contactPersonName: null, contactPersonMobile: null }, true],
      ['an unknown member', { ...company, tinn: '1' }, false],
      ['a system-managed member', { ...company, companyId: 'a'.repeat(24) }, false],
      ['a TIN of 9 digits', { ...company, tin: '123456789' }, false],
      ['an email without a domain', { ...company, contactPersonEmail: 'finance@acme' }, false],
      ['a mobile number with spaces', { ...company, contactPersonMobile: '+971 50' }, false],
      ['a blank branch name', { ...company, branchName: '  ' }, false],
      ['a source name too long', { ...company, sourceName: 'x'.repeat(CONNECT_INPUT_LIMITS.textMax + 1) }, false],
      ['a country other than AE', { ...company, countryCode: 'SA' }, false],
      ['an unknown environment', { ...company, platformEnvironment: 'staging' }, false],
    ];
    for (const [what, body, ok] of cases) {
      expect(schema(body), `schema: ${what}`).to.equal(ok);
      expect(accepts(CompanyCreationBody, body), `codec: ${what}`).to.equal(ok);
      expect(parses(() => parseCompanyCreation(body)), `rules: ${what}`).to.equal(ok);
      // A row: the same, and it may leave country and environment to the job.
      expect(row(body), `row schema: ${what}`).to.equal(ok);
      expect(accepts(JobRow, body), `row codec: ${what}`).to.equal(ok);
      expect(parses(() => parseJobRow(body, job)), `row rules: ${what}`).to.equal(ok);
    }
    expect([row(rowMembers), accepts(JobRow, rowMembers), parses(() => parseJobRow(rowMembers, job))]).to.deep.equal([true, true, true]);
  });

  it('schema, codec and rules agree on job, branch and patch envelopes', () => {
    const jobSchema = ajv.compile(bodyOf('/v3/connect/companies/onboarding-jobs', 'post'));
    const bulkSchema = ajv.compile(bodyOf('/v3/connect/companies/{companyId}/branches/bulk', 'post'));
    const patchSchema = ajv.compile(bodyOf('/v3/connect/companies/{sourceName}', 'patch'));
    const branchSchema = ajv.compile(doc().components.schemas['Branch']!);
    const branch = { branchName: 'Abu Dhabi', sourceName: 'Acme ERP', sourceVersion: 'v1' };
    const rows = (n: number) => Array.from({ length: n }, () => company);
    const jobCases: [string, unknown, boolean][] = [
      ['a job', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: rows(2), filename: 'companies.csv' }, true],
      ['a job with a bad row (the row fails on its own)', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: [{ tin: 'x' }] }, true],
      ['no rows', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: [] }, false],
      ['too many rows', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: rows(CONNECT_INPUT_LIMITS.onboardingRowsMax + 1) }, false],
      ['an unknown member', { countryCode: 'AE', platformEnvironment: 'sandbox', rows: rows(1), dryRun: true }, false],
    ];
    for (const [what, body, ok] of jobCases) {
      expect([jobSchema(body), accepts(OnboardingJobBody, body), parses(() => parseOnboardingJob(body))], what).to.deep.equal([ok, ok, ok]);
    }
    const bulkCases: [string, unknown, boolean][] = [
      ['branches', { branches: [branch, { branchName: '' }] }, true],
      ['no branches', { branches: [] }, false],
      ['too many branches', { branches: Array.from({ length: CONNECT_INPUT_LIMITS.branchesBulkMax + 1 }, () => branch) }, false],
    ];
    for (const [what, body, ok] of bulkCases) {
      expect([bulkSchema(body), accepts(BranchBulkBody, body), parses(() => parseBranchBulk(body))], what).to.deep.equal([ok, ok, ok]);
    }
    for (const [what, body, ok] of [
      ['a branch', branch, true],
      ['a branch with an unknown member', { ...branch, city: 'x' }, false],
      ['a branch without its source', { branchName: 'x' }, false],
    ] as [string, unknown, boolean][]) {
      expect([branchSchema(body), accepts(BranchBody, body), parses(() => parseBranch(body))], what).to.deep.equal([ok, ok, ok]);
    }
    const patchCases: [string, unknown, boolean][] = [
      ['a status', { status: 'inactive' }, true],
      ['every member', { sourceVersion: 'v2', legalName: 'Acme LLC', legalIdentifier: null, countryCode: 'AE', status: 'active', metadata: { a: 1 } }, true],
      ['nothing', {}, false],
      ['an unknown status', { status: 'archived' }, false],
      ['an unknown member', { legalNmae: 'x' }, false],
      ['metadata that is an array', { metadata: [] }, false],
    ];
    for (const [what, body, ok] of patchCases) {
      expect([patchSchema(body), accepts(SourcePatchBody, body), parses(() => parseSourcePatch(body))], what).to.deep.equal([ok, ok, ok]);
    }
  });
});
