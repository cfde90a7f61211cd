/** Commands of the Connect prerequisites (admin CLI): ASP authorizations and workspace Connect settings. */
import { randomBytes } from 'node:crypto';
import {
  aspAuthorizationDecider,
  aspAuthorizationStream,
  type AspAuthorization,
} from '../../domain/connect/asp-authorization.js';
import {
  connectSettingsDecider,
  connectSettingsStream,
  type ConnectSettingsState,
  type SandboxProvisioningMode,
} from '../../domain/connect/connect-settings.js';
import type { PlatformEnvironment } from '../../domain/connect/values.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { execute, loadAggregate, type CommandContext } from '../execute.js';

export interface AspAuthorizationInput {
  workspaceId: string;
  environment: PlatformEnvironment;
  tin: string;
  email: string;
  legalName?: string | null;
  legalNameArabic?: string | null;
  vatTrn?: string | null;
}

/** Records an authorization; the same workspace, environment, tin and email again returns the existing one. */
export async function createAspAuthorization(
  store: EventStore,
  input: AspAuthorizationInput,
  ctx: CommandContext,
): Promise<{ authorization: AspAuthorization; created: boolean; position: Position | null }> {
  const result = await execute(
    store,
    aspAuthorizationDecider,
    aspAuthorizationStream(input.workspaceId, input.environment, input.tin, input.email),
    {
      type: 'CreateAspAuthorization',
      authorizationId: `asp_${randomBytes(10).toString('hex')}`,
      workspaceId: input.workspaceId,
      environment: input.environment,
      tin: input.tin,
      email: input.email,
      legalName: input.legalName ?? null,
      legalNameArabic: input.legalNameArabic ?? null,
      vatTrn: input.vatTrn ?? null,
      at: ctx.now.toISOString(),
    },
    { ...ctx, workspaceId: input.workspaceId, environment: input.environment },
  );
  return { authorization: result.state.authorization!, created: result.events.length > 0, position: result.appended?.position ?? null };
}

/** The authorization of this tin and email in this environment, or null. */
export async function findAspAuthorization(
  store: EventStore,
  workspaceId: string,
  environment: string,
  tin: string,
  email: string,
): Promise<AspAuthorization | null> {
  const { state } = await loadAggregate(store, aspAuthorizationDecider, aspAuthorizationStream(workspaceId, environment, tin, email));
  return state.authorization;
}

export async function loadConnectSettings(store: EventStore, workspaceId: string): Promise<ConnectSettingsState> {
  return (await loadAggregate(store, connectSettingsDecider, connectSettingsStream(workspaceId))).state;
}

export async function setMappingAutoAssign(
  store: EventStore,
  input: { workspaceId: string; enabled: boolean; templateId: string | null },
  ctx: CommandContext,
) {
  const result = await execute(
    store,
    connectSettingsDecider,
    connectSettingsStream(input.workspaceId),
    { type: 'SetMappingAutoAssign', enabled: input.enabled, templateId: input.templateId },
    { ...ctx, workspaceId: input.workspaceId },
  );
  return { mapping: result.state.mapping, changed: result.events.length > 0, position: result.appended?.position ?? null };
}

export async function setSandboxProvisioning(
  store: EventStore,
  input: { workspaceId: string; mode: SandboxProvisioningMode; tin: string | null },
  ctx: CommandContext,
) {
  const result = await execute(
    store,
    connectSettingsDecider,
    connectSettingsStream(input.workspaceId),
    { type: 'SetSandboxProvisioning', mode: input.mode, tin: input.tin },
    { ...ctx, workspaceId: input.workspaceId },
  );
  return { sandboxProvisioning: result.state.sandboxProvisioning, changed: result.events.length > 0, position: result.appended?.position ?? null };
}
