/**
 * The company aggregate (stream `company-<companyId>`): a UAE company onboarded in a workspace,
 * and its sources, each with one branch. The first branch and its source come with the
 * onboarding; more are added later. A source is active or inactive; archiving (DELETE) makes
 * it inactive and asks the credits capability to cancel the company's scheduled allowance.
 *
 * A company is active while at least one of its sources is active.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import {
  CONNECT_COUNTRY,
  ConnectErrorCodes,
  MappingReadinessCodec,
  PLATFORM_ENVIRONMENTS,
  SOURCE_STATUSES,
  oneOf,
  userGivenBranchId,
  type MappingReadiness,
  type PlatformEnvironment,
  type SourceStatus,
} from './values.js';

const nullableString = t.union([t.string, t.null]);

export const CompanyOnboarded = defineEvent({
  type: 'CompanyOnboarded',
  version: 1,
  codec: t.type({
    companyId: t.string,
    workspaceId: t.string,
    countryCode: t.string,
    tin: t.string,
    legalName: nullableString,
    legalNameArabic: nullableString,
    vatTrn: nullableString,
    peppolParticipantId: t.string,
    platformEnvironment: oneOf(PLATFORM_ENVIRONMENTS, 'PlatformEnvironment'),
    contactPersonName: nullableString,
    contactPersonEmail: t.string,
    contactPersonMobile: nullableString,
    authorizationId: t.string,
    at: t.string,
  }),
});

export const CompanyBranchAdded = defineEvent({
  type: 'CompanyBranchAdded',
  version: 1,
  codec: t.type({
    companyId: t.string,
    sourceId: t.string,
    sourceName: t.string,
    sourceVersion: t.string,
    branchId: t.string,
    branchName: t.string,
    userGivenBranchId: t.string,
    platformEnvironment: oneOf(PLATFORM_ENVIRONMENTS, 'PlatformEnvironment'),
    mappingReadiness: MappingReadinessCodec,
    at: t.string,
  }),
});

const SourceChangesCodec = t.partial({
  sourceVersion: t.string,
  legalName: t.string,
  legalIdentifier: nullableString,
  countryCode: t.string,
  status: oneOf(SOURCE_STATUSES, 'SourceStatus'),
  metadata: t.record(t.string, t.unknown),
});
export type SourceChanges = t.TypeOf<typeof SourceChangesCodec>;

export const CompanySourceUpdated = defineEvent({
  type: 'CompanySourceUpdated',
  version: 1,
  codec: t.type({ companyId: t.string, sourceId: t.string, changes: SourceChangesCodec, at: t.string }),
});

/**
 * A source archived by DELETE. The credits capability consumes this event: when
 * `cancelScheduledAllowance` is true it cancels the company's scheduled allowance, if any.
 */
export const CompanySourceArchived = defineEvent({
  type: 'CompanySourceArchived',
  version: 1,
  codec: t.type({
    companyId: t.string,
    workspaceId: t.string,
    sourceId: t.string,
    sourceName: t.string,
    sourceVersion: t.string,
    cancelScheduledAllowance: t.boolean,
    at: t.string,
  }),
});

export type CompanyEvent =
  | DomainEvent<'CompanyOnboarded', t.TypeOf<typeof CompanyOnboarded.codec>>
  | DomainEvent<'CompanyBranchAdded', t.TypeOf<typeof CompanyBranchAdded.codec>>
  | DomainEvent<'CompanySourceUpdated', t.TypeOf<typeof CompanySourceUpdated.codec>>
  | DomainEvent<'CompanySourceArchived', t.TypeOf<typeof CompanySourceArchived.codec>>;

export interface CompanyRecord {
  companyId: string;
  workspaceId: string;
  countryCode: string;
  tin: string;
  legalName: string | null;
  legalNameArabic: string | null;
  legalIdentifier: string | null;
  vatTrn: string | null;
  peppolParticipantId: string;
  platformEnvironment: PlatformEnvironment;
  contactPersonName: string | null;
  contactPersonEmail: string;
  contactPersonMobile: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CompanySource {
  sourceId: string;
  sourceName: string;
  sourceVersion: string;
  status: SourceStatus;
  /** Set by DELETE; a later PATCH back to active clears it. */
  archived: boolean;
  metadata: Record<string, unknown>;
  branchId: string;
  branchName: string;
  userGivenBranchId: string;
  platformEnvironment: PlatformEnvironment;
  mappingReadiness: MappingReadiness;
  createdAt: string;
  updatedAt: string;
}

export interface CompanyState {
  company: CompanyRecord | null;
  /** In the order they were added. */
  sources: CompanySource[];
}

export interface OnboardCompany {
  type: 'OnboardCompany';
  company: Omit<CompanyRecord, 'legalIdentifier' | 'createdAt' | 'updatedAt'> & { authorizationId: string };
  source: { sourceId: string; sourceName: string; sourceVersion: string };
  branch: { branchId: string; branchName: string };
  mappingReadiness: MappingReadiness;
  at: string;
}

export type CompanyCommand =
  | OnboardCompany
  | {
      type: 'AddBranch';
      workspaceId: string;
      sourceId: string;
      sourceName: string;
      sourceVersion: string;
      branchId: string;
      branchName: string;
      mappingReadiness: MappingReadiness;
      at: string;
    }
  | { type: 'UpdateSource'; workspaceId: string; sourceId: string; changes: SourceChanges; at: string }
  | { type: 'ArchiveSource'; workspaceId: string; sourceId: string; at: string };

const notFound = (what = 'no active company with that id in the workspace'): never => {
  throw new DomainError('not_found', ConnectErrorCodes.companyNotFound, what);
};

export function isCompanyActive(state: CompanyState): boolean {
  return state.sources.some((s) => s.status === 'active');
}

/** The company of the workspace, or 404 (another workspace's company is never revealed). */
export function companyOfWorkspace(state: CompanyState, workspaceId: string): CompanyRecord {
  if (!state.company || state.company.workspaceId !== workspaceId) notFound();
  return state.company!;
}

export function findSource(state: CompanyState, sourceId: string): CompanySource | undefined {
  return state.sources.find((s) => s.sourceId === sourceId);
}

function sourceNameTaken(state: CompanyState, sourceName: string, sourceVersion: string, except?: string): boolean {
  return state.sources.some((s) => s.sourceId !== except && s.sourceName === sourceName && s.sourceVersion === sourceVersion);
}

const sourceExists = (sourceName: string, sourceVersion: string): never => {
  throw new DomainError('conflict', ConnectErrorCodes.sourceExists, `the source ${sourceName} version ${sourceVersion} exists already in this workspace`);
};

/** Checks that a branch may be added now (also used before reserving its source name). */
export function checkBranchAllowed(state: CompanyState, workspaceId: string): CompanyRecord {
  const company = companyOfWorkspace(state, workspaceId);
  if (!isCompanyActive(state)) notFound();
  if (company.countryCode !== CONNECT_COUNTRY) {
    throw new DomainError('validation', ConnectErrorCodes.unsupportedCountry, 'branches can be added to UAE (AE) companies only');
  }
  return company;
}

export const companyDecider: Decider<CompanyCommand, CompanyState, CompanyEvent> = {
  category: 'company',
  initialState: { company: null, sources: [] },
  events: { CompanyOnboarded, CompanyBranchAdded, CompanySourceUpdated, CompanySourceArchived },
  decide(command, state) {
    switch (command.type) {
      case 'OnboardCompany': {
        if (state.company) {
          throw new DomainError('conflict', ConnectErrorCodes.companyExists, `a company with tin ${command.company.tin} exists already in this workspace`);
        }
        const c = command.company;
        return [
          { type: 'CompanyOnboarded', data: { ...c, at: command.at } },
          {
            type: 'CompanyBranchAdded',
            data: {
              companyId: c.companyId,
              ...command.source,
              ...command.branch,
              userGivenBranchId: userGivenBranchId(c.tin, 1),
              platformEnvironment: c.platformEnvironment,
              mappingReadiness: command.mappingReadiness,
              at: command.at,
            },
          },
        ];
      }
      case 'AddBranch': {
        const company = checkBranchAllowed(state, command.workspaceId);
        if (sourceNameTaken(state, command.sourceName, command.sourceVersion)) sourceExists(command.sourceName, command.sourceVersion);
        return [
          {
            type: 'CompanyBranchAdded',
            data: {
              companyId: company.companyId,
              sourceId: command.sourceId,
              sourceName: command.sourceName,
              sourceVersion: command.sourceVersion,
              branchId: command.branchId,
              branchName: command.branchName,
              userGivenBranchId: userGivenBranchId(company.tin, state.sources.length + 1),
              platformEnvironment: company.platformEnvironment,
              mappingReadiness: command.mappingReadiness,
              at: command.at,
            },
          },
        ];
      }
      case 'UpdateSource': {
        const company = companyOfWorkspace(state, command.workspaceId);
        const source = findSource(state, command.sourceId) ?? notFound('no such source in the workspace');
        const c = command.changes;
        if (c.countryCode !== undefined && c.countryCode !== CONNECT_COUNTRY) {
          throw new DomainError('validation', ConnectErrorCodes.unsupportedCountry, 'countryCode must stay AE', ['countryCode']);
        }
        if (c.sourceVersion !== undefined && sourceNameTaken(state, source.sourceName, c.sourceVersion, source.sourceId)) {
          sourceExists(source.sourceName, c.sourceVersion);
        }
        // Only what really changes is recorded.
        const changes: SourceChanges = {};
        if (c.sourceVersion !== undefined && c.sourceVersion !== source.sourceVersion) changes.sourceVersion = c.sourceVersion;
        if (c.legalName !== undefined && c.legalName !== company.legalName) changes.legalName = c.legalName;
        if (c.legalIdentifier !== undefined && c.legalIdentifier !== company.legalIdentifier) changes.legalIdentifier = c.legalIdentifier;
        if (c.countryCode !== undefined && c.countryCode !== company.countryCode) changes.countryCode = c.countryCode;
        if (c.status !== undefined && c.status !== source.status) changes.status = c.status;
        if (c.metadata !== undefined && JSON.stringify(c.metadata) !== JSON.stringify(source.metadata)) changes.metadata = c.metadata;
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'CompanySourceUpdated', data: { companyId: company.companyId, sourceId: source.sourceId, changes, at: command.at } }];
      }
      case 'ArchiveSource': {
        const company = companyOfWorkspace(state, command.workspaceId);
        const source = findSource(state, command.sourceId) ?? notFound('no such source in the workspace');
        if (source.archived) return [];
        return [
          {
            type: 'CompanySourceArchived',
            data: {
              companyId: company.companyId,
              workspaceId: company.workspaceId,
              sourceId: source.sourceId,
              sourceName: source.sourceName,
              sourceVersion: source.sourceVersion,
              cancelScheduledAllowance: true,
              at: command.at,
            },
          },
        ];
      }
    }
  },
  evolve(state, event) {
    const touchSource = (sourceId: string, at: string, f: (s: CompanySource) => CompanySource): CompanyState => ({
      company: state.company ? { ...state.company, updatedAt: at } : null,
      sources: state.sources.map((s) => (s.sourceId === sourceId ? { ...f(s), updatedAt: at } : s)),
    });
    switch (event.type) {
      case 'CompanyOnboarded': {
        const { authorizationId: _a, at, ...c } = event.data;
        return {
          company: { ...c, legalIdentifier: null, createdAt: at, updatedAt: at },
          sources: [],
        };
      }
      case 'CompanyBranchAdded': {
        const d = event.data;
        return {
          company: state.company ? { ...state.company, updatedAt: d.at } : null,
          sources: [
            ...state.sources,
            {
              sourceId: d.sourceId,
              sourceName: d.sourceName,
              sourceVersion: d.sourceVersion,
              status: 'active',
              archived: false,
              metadata: {},
              branchId: d.branchId,
              branchName: d.branchName,
              userGivenBranchId: d.userGivenBranchId,
              platformEnvironment: d.platformEnvironment,
              mappingReadiness: d.mappingReadiness,
              createdAt: d.at,
              updatedAt: d.at,
            },
          ],
        };
      }
      case 'CompanySourceUpdated': {
        const { changes, at } = event.data;
        const next = touchSource(event.data.sourceId, at, (s) => ({
          ...s,
          sourceVersion: changes.sourceVersion ?? s.sourceVersion,
          status: changes.status ?? s.status,
          archived: changes.status === 'active' ? false : s.archived,
          metadata: changes.metadata ?? s.metadata,
        }));
        if (next.company) {
          next.company = {
            ...next.company,
            legalName: changes.legalName ?? next.company.legalName,
            legalIdentifier: changes.legalIdentifier !== undefined ? changes.legalIdentifier : next.company.legalIdentifier,
            countryCode: changes.countryCode ?? next.company.countryCode,
          };
        }
        return next;
      }
      case 'CompanySourceArchived':
        return touchSource(event.data.sourceId, event.data.at, (s) => ({ ...s, status: 'inactive', archived: true }));
    }
  },
};

registerDecider(companyDecider);
