/**
 * Commands of Connect companies: onboarding (ASP authorization check, source reservation,
 * participant provisioning, then one append to the new company stream), branches, and the
 * update and archiving of a source. Each write is an append with an expected revision; the
 * name/version of a source is reserved in its own stream first (see source-claim.ts), and
 * released again when the write it was reserved for fails.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  checkBranchAllowed,
  companyDecider,
  companyOfWorkspace,
  findSource,
  type CompanyRecord,
  type CompanySource,
  type CompanyState,
  type SourceChanges,
} from '../../domain/connect/company.js';
import { mappingReadinessFor, type ConnectSettingsState } from '../../domain/connect/connect-settings.js';
import type { BranchInput, CompanyCreationInput, SourcePatch } from '../../domain/connect/input.js';
import { sourceClaimDecider, sourceClaimStream } from '../../domain/connect/source-claim.js';
import { ConnectErrorCodes, companyIdFor, companyStream } from '../../domain/connect/values.js';
import { fold } from '../../domain/decider.js';
import { DomainError } from '../../domain/errors.js';
import type { Clock } from '../../platform/clock.js';
import { WrongExpectedVersionError, type AppendResult, type EventStore, type NewEvent, type Position } from '../../platform/eventstore/port.js';
import { eventMetadata, execute, loadAggregate, type CommandContext } from '../execute.js';
import {
  ParticipantUnavailableError,
  ProvisioningTimeoutError,
  provisionWithin,
  type ParticipantProvisioning,
} from './provisioning.js';
import { findAspAuthorization, loadConnectSettings } from './settings.js';

export interface ConnectCommandDeps {
  store: EventStore;
  clock: Clock;
  provisioning: ParticipantProvisioning;
  /** Budget of one participant-provisioning call (default 10 s). */
  provisioningTimeoutMs?: number;
  /** A source reservation whose holder never recorded the source may be taken over after this long (default 10 min). */
  claimStaleAfterMs?: number;
}

/** A dependency of onboarding failed; the request may be retried. */
export class ConnectDependencyError extends Error {
  override readonly name = 'ConnectDependencyError';
  constructor(
    readonly code: typeof ConnectErrorCodes.onboardingTimeout | typeof ConnectErrorCodes.participantUnavailable,
    message: string,
  ) {
    super(message);
  }
}

export interface CompanySourceResult {
  company: CompanyRecord;
  source: CompanySource;
  position: Position | null;
}

const newSourceId = () => `src_${randomBytes(12).toString('hex')}`;
const newBranchId = () => `br_${randomBytes(12).toString('hex')}`;

const companyNotFound = (message = 'no company source with that name and version in the workspace'): never => {
  throw new DomainError('not_found', ConnectErrorCodes.companyNotFound, message);
};

interface SourceKey {
  workspaceId: string;
  sourceName: string;
  sourceVersion: string;
}

/** Reserves a source name/version for `sourceId`; CONNECT_SOURCE_ALREADY_EXISTS when another source holds it. */
async function claimSource(deps: ConnectCommandDeps, key: SourceKey, holder: { companyId: string; sourceId: string }, ctx: CommandContext) {
  const stream = sourceClaimStream(key.workspaceId, key.sourceName, key.sourceVersion);
  const command = { type: 'ClaimSource' as const, ...key, ...holder, at: ctx.now.toISOString() };
  try {
    await execute(deps.store, sourceClaimDecider, stream, command, ctx);
  } catch (err) {
    if (!(err instanceof DomainError && err.code === ConnectErrorCodes.sourceExists)) throw err;
    // Taken. Only a stale reservation whose holder never recorded this source may be taken over.
    const { state } = await loadAggregate(deps.store, sourceClaimDecider, stream);
    const current = state.holder;
    if (!current || ctx.now.getTime() - Date.parse(current.claimedAt) < (deps.claimStaleAfterMs ?? 600_000)) throw err;
    const { state: holderCompany } = await loadAggregate(deps.store, companyDecider, companyStream(current.companyId));
    const recorded = findSource(holderCompany, current.sourceId);
    if (recorded && recorded.sourceName === key.sourceName && recorded.sourceVersion === key.sourceVersion) throw err;
    await execute(deps.store, sourceClaimDecider, stream, { ...command, takeOverFrom: current.sourceId }, ctx);
  }
}

/** Gives a reservation back; a failure here only leaves a stale reservation behind, so it is not fatal. */
async function releaseSource(deps: ConnectCommandDeps, key: SourceKey, sourceId: string, reason: string, ctx: CommandContext) {
  await execute(
    deps.store,
    sourceClaimDecider,
    sourceClaimStream(key.workspaceId, key.sourceName, key.sourceVersion),
    { type: 'ReleaseSource', sourceId, reason, at: ctx.now.toISOString() },
    ctx,
  ).catch(() => {});
}

/** Onboards a UAE company with its first source and branch (POST /v3/connect/companies, and each onboarding-job row). */
export async function onboardCompany(
  deps: ConnectCommandDeps,
  workspaceId: string,
  input: CompanyCreationInput,
  baseCtx: CommandContext,
  options: { settings?: ConnectSettingsState } = {},
): Promise<CompanySourceResult> {
  const ctx: CommandContext = { ...baseCtx, workspaceId, environment: input.platformEnvironment };
  const authorization = await findAspAuthorization(deps.store, workspaceId, input.platformEnvironment, input.tin, input.contactPersonEmail);
  if (!authorization) {
    throw new DomainError(
      'not_found',
      ConnectErrorCodes.aspLinkageNotFound,
      `no ASP authorization links tin ${input.tin} and this contact email in the ${input.platformEnvironment} environment`,
      ['tin'],
    );
  }
  const companyId = companyIdFor(workspaceId, input.tin);
  const stream = companyStream(companyId);
  const existing = await loadAggregate(deps.store, companyDecider, stream);
  if (existing.state.company) {
    throw new DomainError('conflict', ConnectErrorCodes.companyExists, `a company with tin ${input.tin} exists already in this workspace`, ['tin']);
  }
  const settings = options.settings ?? (await loadConnectSettings(deps.store, workspaceId));
  const key: SourceKey = { workspaceId, sourceName: input.sourceName, sourceVersion: input.sourceVersion };
  const sourceId = newSourceId();
  await claimSource(deps, key, { companyId, sourceId }, ctx);

  let participantId: string;
  try {
    ({ participantId } = await provisionWithin(
      deps.provisioning,
      { workspaceId, environment: input.platformEnvironment, tin: input.tin },
      deps.provisioningTimeoutMs ?? 10_000,
    ));
  } catch (err) {
    await releaseSource(deps, key, sourceId, 'participant provisioning failed', ctx);
    if (err instanceof ProvisioningTimeoutError) {
      throw new ConnectDependencyError(
        ConnectErrorCodes.onboardingTimeout,
        'Onboarding timed out while provisioning the Peppol participant; the creation may still have completed: list companies before retrying.',
      );
    }
    if (err instanceof ParticipantUnavailableError) {
      throw new ConnectDependencyError(ConnectErrorCodes.participantUnavailable, 'The Peppol participant could not be provisioned; retry later.');
    }
    throw err;
  }

  try {
    const result = await execute(
      deps.store,
      companyDecider,
      stream,
      {
        type: 'OnboardCompany',
        company: {
          companyId,
          workspaceId,
          countryCode: input.countryCode,
          tin: input.tin,
          legalName: authorization.legalName,
          legalNameArabic: authorization.legalNameArabic,
          vatTrn: authorization.vatTrn,
          peppolParticipantId: participantId,
          platformEnvironment: input.platformEnvironment,
          contactPersonName: input.contactPersonName,
          contactPersonEmail: input.contactPersonEmail,
          contactPersonMobile: input.contactPersonMobile,
          authorizationId: authorization.authorizationId,
        },
        source: { sourceId, sourceName: input.sourceName, sourceVersion: input.sourceVersion },
        branch: { branchId: newBranchId(), branchName: input.branchName },
        mappingReadiness: mappingReadinessFor(settings),
        at: ctx.now.toISOString(),
      },
      ctx,
    );
    return { company: result.state.company!, source: result.state.sources[0]!, position: result.appended!.position };
  } catch (err) {
    await releaseSource(deps, key, sourceId, 'company not recorded', ctx);
    throw err;
  }
}

/** Adds a branch, with its own source, to an active UAE company of the workspace. */
export async function addBranch(
  deps: ConnectCommandDeps,
  workspaceId: string,
  companyId: string,
  input: BranchInput,
  baseCtx: CommandContext,
  options: { settings?: ConnectSettingsState; state?: CompanyState } = {},
): Promise<CompanySourceResult> {
  const stream = companyStream(companyId);
  const state = options.state ?? (await loadAggregate(deps.store, companyDecider, stream)).state;
  const company = checkBranchAllowed(state, workspaceId);
  const ctx: CommandContext = { ...baseCtx, workspaceId, environment: company.platformEnvironment };
  const settings = options.settings ?? (await loadConnectSettings(deps.store, workspaceId));
  const key: SourceKey = { workspaceId, sourceName: input.sourceName, sourceVersion: input.sourceVersion };
  const sourceId = newSourceId();
  await claimSource(deps, key, { companyId, sourceId }, ctx);
  try {
    const result = await execute(
      deps.store,
      companyDecider,
      stream,
      {
        type: 'AddBranch',
        workspaceId,
        sourceId,
        sourceName: input.sourceName,
        sourceVersion: input.sourceVersion,
        branchId: newBranchId(),
        branchName: input.branchName,
        mappingReadiness: mappingReadinessFor(settings),
        at: ctx.now.toISOString(),
      },
      ctx,
    );
    return { company: result.state.company!, source: findSource(result.state, sourceId)!, position: result.appended!.position };
  } catch (err) {
    await releaseSource(deps, key, sourceId, 'branch not recorded', ctx);
    throw err;
  }
}

/**
 * Several branches of one company (the bulk request), each on its own: a failed branch undoes
 * nothing. The source names are claimed side by side (each in its own stream; a name repeated
 * in the request is claimed in request order, so the first wins), then the branches are
 * recorded one after the other on the company stream, each from the state the previous one
 * left (no re-read). Results are in input order: a result, or the error that branch met.
 */
export async function addBranches(
  deps: ConnectCommandDeps,
  workspaceId: string,
  companyId: string,
  inputs: readonly BranchInput[],
  baseCtx: CommandContext,
  options: { settings: ConnectSettingsState; concurrency?: number },
): Promise<({ ok: true; result: CompanySourceResult } | { ok: false; error: unknown })[]> {
  const stream = companyStream(companyId);
  let loaded = await loadAggregate(deps.store, companyDecider, stream);
  const company = checkBranchAllowed(loaded.state, workspaceId);
  const ctx: CommandContext = { ...baseCtx, workspaceId, environment: company.platformEnvironment };
  const keys = inputs.map((input): SourceKey => ({ workspaceId, sourceName: input.sourceName, sourceVersion: input.sourceVersion }));
  const sourceIds = inputs.map(() => newSourceId());

  // Claims: one chain per source name and version (request order within it), chains side by side.
  const chains = new Map<string, number[]>();
  keys.forEach((k, i) => {
    const id = JSON.stringify([k.sourceName, k.sourceVersion]);
    chains.set(id, [...(chains.get(id) ?? []), i]);
  });
  const claimed: (unknown | true)[] = new Array(inputs.length);
  const queue = [...chains.values()];
  const runChain = async () => {
    for (let chain = queue.shift(); chain; chain = queue.shift()) {
      for (const i of chain) {
        claimed[i] = await claimSource(deps, keys[i]!, { companyId, sourceId: sourceIds[i]! }, ctx).then(
          () => true as const,
          (err: unknown) => err,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, queue.length) }, runChain));

  // Every claimed branch decided on the state the previous one left, then all appended at once.
  const branchIds = inputs.map(() => newBranchId());
  const outcome: ({ ok: true } | { ok: false; error: unknown })[] = new Array(inputs.length);
  let appended: AppendResult | null = null;
  let state = loaded.state;
  for (let attempt = 1; ; attempt++) {
    state = loaded.state;
    const events: NewEvent[] = [];
    const metadata = eventMetadata(ctx);
    for (const [i, input] of inputs.entries()) {
      if (claimed[i] !== true) {
        outcome[i] = { ok: false, error: claimed[i] };
        continue;
      }
      try {
        const decided = companyDecider.decide(
          {
            type: 'AddBranch',
            workspaceId,
            sourceId: sourceIds[i]!,
            sourceName: input.sourceName,
            sourceVersion: input.sourceVersion,
            branchId: branchIds[i]!,
            branchName: input.branchName,
            mappingReadiness: mappingReadinessFor(options.settings),
            at: ctx.now.toISOString(),
          },
          state,
        );
        state = fold(companyDecider, decided, state);
        for (const e of decided) {
          events.push({ id: randomUUID(), type: e.type, schemaVersion: (companyDecider.events as Record<string, { version: number }>)[e.type]!.version, data: e.data, metadata });
        }
        outcome[i] = { ok: true };
      } catch (err) {
        outcome[i] = { ok: false, error: err };
      }
    }
    if (events.length === 0) break;
    try {
      appended = await deps.store.append(stream, events, loaded.revision);
      break;
    } catch (err) {
      if (err instanceof WrongExpectedVersionError && attempt < 5) {
        loaded = await loadAggregate(deps.store, companyDecider, stream);
        continue;
      }
      for (const [i] of inputs.entries()) if (outcome[i]!.ok) outcome[i] = { ok: false, error: err };
      break;
    }
  }
  const results: ({ ok: true; result: CompanySourceResult } | { ok: false; error: unknown })[] = [];
  for (const [i] of inputs.entries()) {
    const o = outcome[i]!;
    if (o.ok && appended) {
      results.push({ ok: true, result: { company: state.company!, source: findSource(state, sourceIds[i]!)!, position: appended.position } });
      continue;
    }
    // A claim whose branch was not recorded is given back.
    if (claimed[i] === true) await releaseSource(deps, keys[i]!, sourceIds[i]!, 'branch not recorded', ctx).catch(() => {});
    results.push({ ok: false, error: o.ok ? new Error('branch not recorded') : o.error });
  }
  return results;
}

/** Finds a source of the workspace by name and version, from its reservation (the write side's own record). */
export async function resolveSource(
  store: EventStore,
  workspaceId: string,
  sourceName: string,
  sourceVersion: string,
): Promise<{ state: CompanyState; source: CompanySource }> {
  const { state: claim } = await loadAggregate(store, sourceClaimDecider, sourceClaimStream(workspaceId, sourceName, sourceVersion));
  if (!claim.holder) companyNotFound();
  const { state } = await loadAggregate(store, companyDecider, companyStream(claim.holder!.companyId));
  if (!state.company || state.company.workspaceId !== workspaceId) companyNotFound();
  const source = findSource(state, claim.holder!.sourceId);
  if (!source || source.sourceName !== sourceName || source.sourceVersion !== sourceVersion) companyNotFound();
  return { state, source: source! };
}

/** PATCH: only the fields sent change; a new sourceVersion is reserved first and the old one released after. */
export async function updateSource(
  deps: ConnectCommandDeps,
  workspaceId: string,
  address: { sourceName: string; sourceVersion: string },
  patch: SourcePatch,
  baseCtx: CommandContext,
): Promise<CompanySourceResult> {
  const { state, source } = await resolveSource(deps.store, workspaceId, address.sourceName, address.sourceVersion);
  const company = companyOfWorkspace(state, workspaceId);
  const ctx: CommandContext = { ...baseCtx, workspaceId, environment: company.platformEnvironment };
  const moving = patch.sourceVersion !== undefined && patch.sourceVersion !== source.sourceVersion;
  const newKey: SourceKey = { workspaceId, sourceName: source.sourceName, sourceVersion: patch.sourceVersion ?? source.sourceVersion };
  if (moving) await claimSource(deps, newKey, { companyId: company.companyId, sourceId: source.sourceId }, ctx);
  let result;
  try {
    const changes: SourceChanges = { ...patch };
    result = await execute(
      deps.store,
      companyDecider,
      companyStream(company.companyId),
      { type: 'UpdateSource', workspaceId, sourceId: source.sourceId, changes, at: ctx.now.toISOString() },
      ctx,
    );
  } catch (err) {
    if (moving) await releaseSource(deps, newKey, source.sourceId, 'source update not recorded', ctx);
    throw err;
  }
  if (moving) await releaseSource(deps, { workspaceId, ...address }, source.sourceId, 'source version changed', ctx);
  return { company: result.state.company!, source: findSource(result.state, source.sourceId)!, position: result.appended?.position ?? null };
}

/** DELETE: archives the source (inactive) and asks the credits capability to cancel the company's scheduled allowance. */
export async function archiveSource(
  deps: ConnectCommandDeps,
  workspaceId: string,
  address: { sourceName: string; sourceVersion: string },
  baseCtx: CommandContext,
): Promise<CompanySourceResult> {
  const { state, source } = await resolveSource(deps.store, workspaceId, address.sourceName, address.sourceVersion);
  const company = companyOfWorkspace(state, workspaceId);
  const ctx: CommandContext = { ...baseCtx, workspaceId, environment: company.platformEnvironment };
  const result = await execute(
    deps.store,
    companyDecider,
    companyStream(company.companyId),
    { type: 'ArchiveSource', workspaceId, sourceId: source.sourceId, at: ctx.now.toISOString() },
    ctx,
  );
  return { company: result.state.company!, source: findSource(result.state, source.sourceId)!, position: result.appended?.position ?? null };
}
