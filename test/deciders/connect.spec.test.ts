/** The Connect company decider as given / when / then specifications (no I/O). */
import { expect } from 'chai';
import { companyDecider, type CompanyCommand } from '../../domain/connect/company.js';
import { companyIdFor, peppolParticipantId } from '../../domain/connect/values.js';
import { deciderSpecification } from '../support/decider-spec.js';

const given = deciderSpecification(companyDecider);
const at = '2026-05-01T10:00:00.000Z';
const onboard: CompanyCommand = {
  type: 'OnboardCompany',
  company: {
    companyId: companyIdFor('ws_a', '1234567890'),
    workspaceId: 'ws_a',
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
} as CompanyCommand;

describe('decider specification: Connect companies', () => {
  it('onboards a company with its first source and branch', () => {
    given([]).when(onboard).then((events, state) => {
      expect(events.map((e) => e.type)).to.deep.equal(['CompanyOnboarded', 'CompanyBranchAdded']);
      expect(state).to.not.deep.equal(companyDecider.initialState);
    });
  });

  it('refuses the same company again with CONNECT_COMPANY_ALREADY_EXISTS', () => {
    const onboarded = companyDecider.decide(onboard, companyDecider.initialState);
    given(onboarded).when(onboard).thenThrows('CONNECT_COMPANY_ALREADY_EXISTS');
  });
});
