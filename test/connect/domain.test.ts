import { expect } from 'chai';
import { companyDecider, type CompanyCommand, type CompanyState } from '../../domain/connect/company.js';
import { connectSettingsDecider, mappingReadinessFor, sandboxProvisioningModeFor } from '../../domain/connect/connect-settings.js';
import { parseCompanyListQuery, parseCountsQuery, parseJobRow, parseSourcePatch } from '../../domain/connect/input.js';
import { nextActionFor } from '../../domain/connect/onboarding-job.js';
import { sourceClaimDecider } from '../../domain/connect/source-claim.js';
import { companyIdFor, isStorableText, peppolParticipantId } from '../../domain/connect/values.js';
import { fold } from '../../domain/decider.js';
import { DomainError } from '../../domain/errors.js';

const at = '2026-05-01T10:00:00.000Z';
const ws = 'ws_a';

function run(state: CompanyState, command: CompanyCommand): CompanyState {
  return companyDecider.decide(command, state).reduce(companyDecider.evolve, state);
}

function onboarded(): CompanyState {
  return run(companyDecider.initialState, {
    type: 'OnboardCompany',
    company: {
      companyId: companyIdFor(ws, '1234567890'),
      workspaceId: ws,
      countryCode: 'AE',
      tin: '1234567890',
      legalName: 'A LLC',
      legalNameArabic: null,
      vatTrn: null,
      peppolParticipantId: peppolParticipantId('1234567890'),
      platformEnvironment: 'sandbox',
      contactPersonName: null,
      contactPersonEmail: 'a@b.ae',
      contactPersonMobile: null,
      authorizationId: 'asp_1',
    },
    source: { sourceId: 'src_1', sourceName: 'ERP', sourceVersion: '1' },
    branch: { branchId: 'br_1', branchName: 'HQ' },
    mappingReadiness: { status: 'READY', templateId: 'core-identity-ae-1' },
    at,
  });
}

const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  return null;
};

describe('Connect domain (pure)', () => {
  it('derives a 24-hex company id per workspace and tin, and the UAE participant id', () => {
    expect(companyIdFor('ws_a', '1234567890')).to.match(/^[0-9a-f]{24}$/);
    expect(companyIdFor('ws_a', '1234567890')).to.not.equal(companyIdFor('ws_b', '1234567890'));
    expect(peppolParticipantId('1234567890')).to.equal('0235:1234567890');
  });

  it('onboards once; the same company again is CONNECT_COMPANY_ALREADY_EXISTS', () => {
    const s = onboarded();
    expect(s.sources).to.have.length(1);
    expect(s.sources[0]!.userGivenBranchId).to.equal('1234567890-B001');
    expect(code(() => companyDecider.decide({ ...(onboardedCommand(s)) }, s))).to.equal('CONNECT_COMPANY_ALREADY_EXISTS');
  });

  it('adds branches with successive buyer references, refuses a duplicate source, another workspace and an inactive company', () => {
    let s = onboarded();
    const add = (sourceId: string, sourceName: string, workspaceId = ws): CompanyCommand => ({
      type: 'AddBranch',
      workspaceId,
      sourceId,
      sourceName,
      sourceVersion: '1',
      branchId: `br_${sourceId}`,
      branchName: 'B',
      mappingReadiness: { status: 'ACTION_REQUIRED', code: 'CONNECT_MAPPING_NOT_CONFIGURED' },
      at,
    });
    s = run(s, add('src_2', 'ERP 2'));
    expect(s.sources[1]!.userGivenBranchId).to.equal('1234567890-B002');
    expect(code(() => companyDecider.decide(add('src_3', 'ERP 2'), s))).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    expect(code(() => companyDecider.decide(add('src_3', 'ERP 3', 'ws_b'), s))).to.equal('CONNECT_COMPANY_NOT_FOUND');
    for (const sourceId of ['src_1', 'src_2']) s = run(s, { type: 'ArchiveSource', workspaceId: ws, sourceId, at });
    expect(code(() => companyDecider.decide(add('src_3', 'ERP 3'), s))).to.equal('CONNECT_COMPANY_NOT_FOUND');
  });

  it('records only real changes of a source; archiving twice records once', () => {
    let s = onboarded();
    expect(companyDecider.decide({ type: 'UpdateSource', workspaceId: ws, sourceId: 'src_1', changes: { sourceVersion: '1', legalName: 'A LLC' }, at }, s)).to.deep.equal([]);
    s = run(s, { type: 'UpdateSource', workspaceId: ws, sourceId: 'src_1', changes: { status: 'inactive', metadata: { a: 1 } }, at });
    expect(s.sources[0]).to.include({ status: 'inactive', archived: false });
    expect(code(() => companyDecider.decide({ type: 'UpdateSource', workspaceId: ws, sourceId: 'src_1', changes: { countryCode: 'SA' }, at }, s))).to.equal('CONNECT_UNSUPPORTED_COUNTRY');
    const archived = companyDecider.decide({ type: 'ArchiveSource', workspaceId: ws, sourceId: 'src_1', at }, s);
    expect(archived.map((e) => e.type)).to.deep.equal(['CompanySourceArchived']);
    s = archived.reduce(companyDecider.evolve, s);
    expect(companyDecider.decide({ type: 'ArchiveSource', workspaceId: ws, sourceId: 'src_1', at }, s)).to.deep.equal([]);
    s = run(s, { type: 'UpdateSource', workspaceId: ws, sourceId: 'src_1', changes: { status: 'active' }, at });
    expect(s.sources[0]).to.include({ status: 'active', archived: false });
  });

  it('reserves a source name for one holder; a release frees it; only a verified stale claim is taken over', () => {
    const claim = (sourceId: string, takeOverFrom?: string) =>
      ({ type: 'ClaimSource', workspaceId: ws, sourceName: 'ERP', sourceVersion: '1', companyId: 'c', sourceId, at, takeOverFrom }) as const;
    let s = fold(sourceClaimDecider, sourceClaimDecider.decide(claim('src_1'), sourceClaimDecider.initialState));
    expect(sourceClaimDecider.decide(claim('src_1'), s)).to.deep.equal([]);
    expect(code(() => sourceClaimDecider.decide(claim('src_2'), s))).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    expect(code(() => sourceClaimDecider.decide(claim('src_2', 'src_other'), s))).to.equal('CONNECT_SOURCE_ALREADY_EXISTS');
    expect(sourceClaimDecider.decide(claim('src_2', 'src_1'), s)).to.have.length(1);
    expect(sourceClaimDecider.decide({ type: 'ReleaseSource', sourceId: 'src_2', reason: 'x', at }, s)).to.deep.equal([]);
    s = sourceClaimDecider.decide({ type: 'ReleaseSource', sourceId: 'src_1', reason: 'x', at }, s).reduce(sourceClaimDecider.evolve, s);
    expect(sourceClaimDecider.decide(claim('src_2'), s)).to.have.length(1);
  });

  it('starts a workspace with automatic assignment of the identity template; changes apply from then on', () => {
    let s = connectSettingsDecider.initialState;
    expect(mappingReadinessFor(s)).to.deep.equal({ status: 'READY', templateId: 'core-identity-ae-1' });
    s = connectSettingsDecider.decide({ type: 'SetMappingAutoAssign', enabled: false, templateId: null }, s).reduce(connectSettingsDecider.evolve, s);
    expect(mappingReadinessFor(s)).to.deep.equal({ status: 'ACTION_REQUIRED', code: 'CONNECT_MAPPING_NOT_CONFIGURED' });
    expect(connectSettingsDecider.decide({ type: 'SetMappingAutoAssign', enabled: false, templateId: null }, s)).to.deep.equal([]);
    s = connectSettingsDecider.decide({ type: 'SetSandboxProvisioning', mode: 'timeout', tin: null }, s).reduce(connectSettingsDecider.evolve, s);
    s = connectSettingsDecider.decide({ type: 'SetSandboxProvisioning', mode: 'normal', tin: '1234567890' }, s).reduce(connectSettingsDecider.evolve, s);
    expect(sandboxProvisioningModeFor(s, '1234567890')).to.equal('normal');
    expect(sandboxProvisioningModeFor(s, '0000000000')).to.equal('timeout');
  });

  it('parses queries and bodies with their defaults and limits', () => {
    expect(parseCompanyListQuery({})).to.deep.equal({ page: 1, limit: 10, countryCode: null, sourceVersion: null, status: null, search: null });
    expect(code(() => parseCompanyListQuery({ limit: '0' }))).to.equal('CONNECT_VALIDATION_ERROR');
    expect(parseCompanyListQuery({ limit: '100' }).limit).to.equal(100);
    expect(parseCountsQuery({}, '').environment).to.equal('production');
    expect(code(() => parseCountsQuery({}, 'test'))).to.equal('CONNECT_INVALID_ENVIRONMENT');
    expect(code(() => parseSourcePatch({}))).to.equal('CONNECT_VALIDATION_ERROR');
    expect(code(() => parseSourcePatch({ metadata: { a: '\u0000' } }))).to.equal('CONNECT_VALIDATION_ERROR');
    const row = { sourceName: 'a', sourceVersion: '1', tin: '1234567890', contactPersonEmail: 'a@b.ae', branchName: 'HQ' };
    expect(parseJobRow(row, { countryCode: 'AE', platformEnvironment: 'simulation' }).platformEnvironment).to.equal('simulation');
    expect(code(() => parseJobRow({ ...row, platformEnvironment: 'sandbox' }, { countryCode: 'AE', platformEnvironment: 'simulation' }))).to.equal('CONNECT_VALIDATION_ERROR');
    expect(isStorableText('ok 😀')).to.equal(true);
    expect(isStorableText('\ud800')).to.equal(false);
    expect(nextActionFor({ errorCode: 'ONBOARDING_TIMEOUT' })).to.equal('LIST_COMPANIES_BEFORE_RETRY');
  });
});

function onboardedCommand(s: CompanyState): CompanyCommand {
  const c = s.company!;
  return {
    type: 'OnboardCompany',
    company: { ...c, authorizationId: 'asp_2' },
    source: { sourceId: 'src_9', sourceName: 'Other', sourceVersion: '1' },
    branch: { branchId: 'br_9', branchName: 'HQ' },
    mappingReadiness: { status: 'READY', templateId: 't' },
    at,
  } as CompanyCommand;
}
