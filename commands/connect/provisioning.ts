/**
 * The participant-provisioning port: registers a company's Peppol participant (UAE scheme,
 * from its TIN) with the network before the company is recorded. Adapters throw
 * ProvisioningTimeoutError or ParticipantUnavailableError; the onboarding command turns them
 * into ONBOARDING_TIMEOUT and PEPPOL_PARTICIPANT_UNAVAILABLE.
 *
 * The sandbox adapter provisions nothing remote: it answers with the participant id at once,
 * unless the workspace's Connect settings (admin CLI `provisioning simulate`) or its
 * constructor option tell it to time out or to fail, for the whole workspace or one TIN.
 */
import { loadAggregate } from '../execute.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import {
  connectSettingsDecider,
  connectSettingsStream,
  sandboxProvisioningModeFor,
  type SandboxProvisioningMode,
} from '../../domain/connect/connect-settings.js';
import { peppolParticipantId, type PlatformEnvironment } from '../../domain/connect/values.js';

export interface ProvisioningRequest {
  workspaceId: string;
  environment: PlatformEnvironment;
  tin: string;
}

export interface ParticipantProvisioning {
  /** Registers (or finds) the participant; resolves with its identifier `<scheme>:<id>`. */
  provision(request: ProvisioningRequest, signal: AbortSignal): Promise<{ participantId: string }>;
}

export class ProvisioningTimeoutError extends Error {
  override readonly name = 'ProvisioningTimeoutError';
}

export class ParticipantUnavailableError extends Error {
  override readonly name = 'ParticipantUnavailableError';
}

/** Runs a provisioning call under a deadline; past it the call is aborted and counts as a time-out. */
export async function provisionWithin(
  port: ParticipantProvisioning,
  request: ProvisioningRequest,
  timeoutMs: number,
): Promise<{ participantId: string }> {
  const controller = new AbortController();
  const timeout = () => new ProvisioningTimeoutError(`participant provisioning did not answer within ${timeoutMs} ms`);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(timeout());
      controller.abort();
    }, timeoutMs);
  });
  try {
    return await Promise.race([port.provision(request, controller.signal), deadline]);
  } catch (err) {
    // Whatever the adapter threw after the deadline aborted it, the call timed out.
    if (controller.signal.aborted && !(err instanceof ProvisioningTimeoutError)) throw timeout();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export class SandboxParticipantProvisioning implements ParticipantProvisioning {
  constructor(
    private readonly store: EventStore,
    private readonly options: { mode?: SandboxProvisioningMode } = {},
  ) {}

  async provision(request: ProvisioningRequest): Promise<{ participantId: string }> {
    const mode = await this.modeFor(request);
    if (mode === 'timeout') throw new ProvisioningTimeoutError('the sandbox participant registry did not answer in time (simulated)');
    if (mode === 'unavailable') throw new ParticipantUnavailableError('the sandbox participant registry is unavailable (simulated)');
    return { participantId: peppolParticipantId(request.tin) };
  }

  private async modeFor(request: ProvisioningRequest): Promise<SandboxProvisioningMode> {
    const { state } = await loadAggregate(this.store, connectSettingsDecider, connectSettingsStream(request.workspaceId));
    const configured = sandboxProvisioningModeFor(state, request.tin);
    return configured === 'normal' && this.options.mode ? this.options.mode : configured;
  }
}
