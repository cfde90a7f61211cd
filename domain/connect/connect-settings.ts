/**
 * A workspace's Connect settings (stream `connectsettings-<workspaceId>`): automatic mapping
 * assignment of new sources (on with the built-in identity template until changed), and the
 * behaviour of the sandbox participant-provisioning adapter (normal, or told to time out or
 * fail, for the whole workspace or one TIN, a TIN's setting overriding the workspace's). Changes apply to future onboarding only.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { ConnectErrorCodes, DEFAULT_MAPPING_TEMPLATE_ID, oneOf, type MappingReadiness } from './values.js';

export const SANDBOX_PROVISIONING_MODES = ['normal', 'timeout', 'unavailable'] as const;
export type SandboxProvisioningMode = (typeof SANDBOX_PROVISIONING_MODES)[number];

export const ConnectMappingAutoAssignChanged = defineEvent({
  type: 'ConnectMappingAutoAssignChanged',
  version: 1,
  codec: t.type({ enabled: t.boolean, templateId: t.string }),
});
export const ConnectSandboxProvisioningChanged = defineEvent({
  type: 'ConnectSandboxProvisioningChanged',
  version: 1,
  codec: t.type({ mode: oneOf(SANDBOX_PROVISIONING_MODES, 'SandboxProvisioningMode'), tin: t.union([t.string, t.null]) }),
});

export type ConnectSettingsEvent =
  | DomainEvent<'ConnectMappingAutoAssignChanged', t.TypeOf<typeof ConnectMappingAutoAssignChanged.codec>>
  | DomainEvent<'ConnectSandboxProvisioningChanged', t.TypeOf<typeof ConnectSandboxProvisioningChanged.codec>>;

export type ConnectSettingsCommand =
  | { type: 'SetMappingAutoAssign'; enabled: boolean; templateId: string | null }
  | { type: 'SetSandboxProvisioning'; mode: SandboxProvisioningMode; tin: string | null };

export interface ConnectSettingsState {
  mapping: { autoAssign: boolean; templateId: string };
  sandboxProvisioning: { workspace: SandboxProvisioningMode; byTin: Record<string, SandboxProvisioningMode> };
}

export const connectSettingsStream = (workspaceId: string) => `connectsettings-${workspaceId}`;

export const TEMPLATE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The readiness a source created now gets. */
export function mappingReadinessFor(settings: ConnectSettingsState): MappingReadiness {
  return settings.mapping.autoAssign
    ? { status: 'READY', templateId: settings.mapping.templateId }
    : { status: 'ACTION_REQUIRED', code: ConnectErrorCodes.mappingNotConfigured };
}

export function sandboxProvisioningModeFor(settings: ConnectSettingsState, tin: string): SandboxProvisioningMode {
  return settings.sandboxProvisioning.byTin[tin] ?? settings.sandboxProvisioning.workspace;
}

export const connectSettingsDecider: Decider<ConnectSettingsCommand, ConnectSettingsState, ConnectSettingsEvent> = {
  category: 'connectsettings',
  initialState: {
    mapping: { autoAssign: true, templateId: DEFAULT_MAPPING_TEMPLATE_ID },
    sandboxProvisioning: { workspace: 'normal', byTin: {} },
  },
  events: { ConnectMappingAutoAssignChanged, ConnectSandboxProvisioningChanged },
  decide(command, state) {
    switch (command.type) {
      case 'SetMappingAutoAssign': {
        const templateId = command.templateId ?? state.mapping.templateId;
        if (!TEMPLATE_ID_PATTERN.test(templateId)) {
          throw new DomainError('validation', ConnectErrorCodes.validation, 'templateId must be 1 to 128 letters, digits, ".", "_", ":" or "-"', ['templateId']);
        }
        if (state.mapping.autoAssign === command.enabled && state.mapping.templateId === templateId) return [];
        return [{ type: 'ConnectMappingAutoAssignChanged', data: { enabled: command.enabled, templateId } }];
      }
      case 'SetSandboxProvisioning': {
        if (command.tin !== null && !/^\d{10}$/.test(command.tin)) {
          throw new DomainError('validation', ConnectErrorCodes.validation, 'tin must be exactly 10 digits', ['tin']);
        }
        const current = command.tin === null ? state.sandboxProvisioning.workspace : state.sandboxProvisioning.byTin[command.tin];
        if (current === command.mode) return [];
        return [{ type: 'ConnectSandboxProvisioningChanged', data: { mode: command.mode, tin: command.tin } }];
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ConnectMappingAutoAssignChanged':
        return { ...state, mapping: { autoAssign: event.data.enabled, templateId: event.data.templateId } };
      case 'ConnectSandboxProvisioningChanged': {
        const { mode, tin } = event.data;
        if (tin === null) return { ...state, sandboxProvisioning: { ...state.sandboxProvisioning, workspace: mode } };
        return { ...state, sandboxProvisioning: { ...state.sandboxProvisioning, byTin: { ...state.sandboxProvisioning.byTin, [tin]: mode } } };
      }
    }
  },
};

registerDecider(connectSettingsDecider);
