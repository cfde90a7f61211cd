/**
 * Onboarding jobs (stream `onboardingjob-<jobId>`): up to 500 companies onboarded synchronously,
 * each row on its own. The job is recorded once, complete, with the outcome of every row; the
 * companies themselves are recorded in their own streams as each row succeeds.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { ConnectErrorCodes, type MappingReadiness } from './values.js';

const nullableString = t.union([t.string, t.null]);

const JobRowCodec = t.type({
  rowId: t.string,
  rowIndex: t.number,
  status: t.keyof({ onboarded: null, failed: null }),
  sourceName: nullableString,
  sourceVersion: nullableString,
  companyId: nullableString,
  sourceId: nullableString,
  nextAction: t.string,
  errorCode: nullableString,
  errorMessage: nullableString,
});
export type OnboardingJobRow = t.TypeOf<typeof JobRowCodec>;

export const OnboardingJobCompleted = defineEvent({
  type: 'OnboardingJobCompleted',
  version: 1,
  codec: t.type({
    jobId: t.string,
    workspaceId: t.string,
    countryCode: t.string,
    platformEnvironment: t.string,
    filename: nullableString,
    status: t.literal('completed'),
    totalRows: t.number,
    succeededRows: t.number,
    failedRows: t.number,
    createdAt: t.string,
    completedAt: t.string,
    rows: t.array(JobRowCodec),
  }),
});
export type OnboardingJobRecord = t.TypeOf<typeof OnboardingJobCompleted.codec>;

export type OnboardingJobEvent = DomainEvent<'OnboardingJobCompleted', OnboardingJobRecord>;
export type OnboardingJobCommand = { type: 'RecordOnboardingJob'; job: OnboardingJobRecord };
export interface OnboardingJobState {
  job: OnboardingJobRecord | null;
}

export const onboardingJobStream = (jobId: string) => `onboardingjob-${jobId}`;

/** What the caller should do next with a row, from its outcome. */
export function nextActionFor(outcome: { mappingReadiness: MappingReadiness } | { errorCode: string }): string {
  if ('mappingReadiness' in outcome) return outcome.mappingReadiness.status === 'READY' ? 'START_INVOICING' : 'CONFIGURE_MAPPING';
  switch (outcome.errorCode) {
    case ConnectErrorCodes.aspLinkageNotFound:
      return 'REGISTER_ASP_AUTHORIZATION';
    case ConnectErrorCodes.companyExists:
      return 'USE_EXISTING_COMPANY';
    case ConnectErrorCodes.sourceExists:
      return 'CHOOSE_ANOTHER_SOURCE';
    case ConnectErrorCodes.participantUnavailable:
      return 'RETRY_LATER';
    case ConnectErrorCodes.onboardingTimeout:
      return 'LIST_COMPANIES_BEFORE_RETRY';
    default:
      return 'FIX_ROW';
  }
}

export const onboardingJobDecider: Decider<OnboardingJobCommand, OnboardingJobState, OnboardingJobEvent> = {
  category: 'onboardingjob',
  initialState: { job: null },
  events: { OnboardingJobCompleted },
  decide(command, state) {
    if (state.job) throw new DomainError('conflict', 'CONNECT_ONBOARDING_JOB_EXISTS', 'the onboarding job was recorded already');
    const { job } = command;
    const succeeded = job.rows.filter((r) => r.status === 'onboarded').length;
    if (job.totalRows !== job.rows.length || job.succeededRows !== succeeded || job.failedRows !== job.rows.length - succeeded) {
      throw new DomainError('validation', ConnectErrorCodes.validation, 'the job counters do not match its rows');
    }
    return [{ type: 'OnboardingJobCompleted', data: job }];
  },
  evolve(_state, event) {
    return { job: event.data };
  },
};

registerDecider(onboardingJobDecider);
