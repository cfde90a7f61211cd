/**
 * The workspace aggregate (stream `workspace-<workspaceId>`): a workspace and its API keys.
 * A key belongs to one workspace and one environment, has a permission and a member role,
 * an optional expiry, and can be revoked. Only a hash of the key is ever recorded.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';

export const KEY_ENVIRONMENTS = ['sandbox', 'production'] as const;
export const KEY_PERMISSIONS = ['read', 'read_write'] as const;
export const MEMBER_ROLES = ['owner', 'admin', 'partner', 'member'] as const;
export type KeyEnvironment = (typeof KEY_ENVIRONMENTS)[number];
export type KeyPermission = (typeof KEY_PERMISSIONS)[number];
export type MemberRole = (typeof MEMBER_ROLES)[number];

const oneOf = <T extends readonly string[]>(values: T, name: string) =>
  t.keyof(Object.fromEntries(values.map((v) => [v, null])) as Record<T[number], null>, name);

export const WorkspaceCreated = defineEvent({
  type: 'WorkspaceCreated',
  version: 1,
  codec: t.type({ workspaceId: t.string, name: t.string }),
});
export const ApiKeyCreated = defineEvent({
  type: 'ApiKeyCreated',
  version: 1,
  codec: t.type({
    keyId: t.string,
    keyHash: t.string,
    keyPrefix: t.string,
    environment: oneOf(KEY_ENVIRONMENTS, 'KeyEnvironment'),
    permission: oneOf(KEY_PERMISSIONS, 'KeyPermission'),
    role: oneOf(MEMBER_ROLES, 'MemberRole'),
    expiresAt: t.union([t.string, t.null]),
  }),
});
export const ApiKeyRevoked = defineEvent({
  type: 'ApiKeyRevoked',
  version: 1,
  codec: t.type({ keyId: t.string }),
});
export const WorkspaceDeleted = defineEvent({
  type: 'WorkspaceDeleted',
  version: 1,
  codec: t.type({ workspaceId: t.string }),
});

export type WorkspaceEvent =
  | DomainEvent<'WorkspaceCreated', t.TypeOf<typeof WorkspaceCreated.codec>>
  | DomainEvent<'ApiKeyCreated', t.TypeOf<typeof ApiKeyCreated.codec>>
  | DomainEvent<'ApiKeyRevoked', t.TypeOf<typeof ApiKeyRevoked.codec>>
  | DomainEvent<'WorkspaceDeleted', t.TypeOf<typeof WorkspaceDeleted.codec>>;

export type WorkspaceCommand =
  | { type: 'CreateWorkspace'; workspaceId: string; name: string }
  | {
      type: 'CreateApiKey';
      keyId: string;
      keyHash: string;
      keyPrefix: string;
      environment: KeyEnvironment;
      permission: KeyPermission;
      role: MemberRole;
      expiresAt: string | null;
      now: string;
    }
  | { type: 'RevokeApiKey'; keyId: string }
  | { type: 'DeleteWorkspace' };

export interface WorkspaceState {
  workspaceId: string | null;
  name: string | null;
  deleted: boolean;
  keys: Record<string, { environment: KeyEnvironment; permission: KeyPermission; role: MemberRole; expiresAt: string | null; revoked: boolean }>;
}

const initialState: WorkspaceState = { workspaceId: null, name: null, deleted: false, keys: {} };

function requireLive(state: WorkspaceState): void {
  if (!state.workspaceId) throw new DomainError('not_found', 'WORKSPACE_NOT_FOUND', 'no such workspace');
  if (state.deleted) throw new DomainError('not_found', 'WORKSPACE_DELETED', 'the workspace was deleted');
}

export const workspaceDecider: Decider<WorkspaceCommand, WorkspaceState, WorkspaceEvent> = {
  category: 'workspace',
  initialState,
  events: { WorkspaceCreated, ApiKeyCreated, ApiKeyRevoked, WorkspaceDeleted },
  decide(command, state) {
    switch (command.type) {
      case 'CreateWorkspace': {
        if (state.workspaceId) throw new DomainError('conflict', 'WORKSPACE_EXISTS', 'the workspace exists already');
        const name = command.name.trim();
        if (!name) throw new DomainError('validation', 'INVALID_NAME', 'the workspace name must not be empty', ['name']);
        return [{ type: 'WorkspaceCreated', data: { workspaceId: command.workspaceId, name } }];
      }
      case 'CreateApiKey': {
        requireLive(state);
        if (state.keys[command.keyId]) throw new DomainError('conflict', 'KEY_EXISTS', 'a key with this id exists already');
        if (command.expiresAt !== null && Date.parse(command.expiresAt) <= Date.parse(command.now)) {
          throw new DomainError('validation', 'INVALID_EXPIRY', 'the expiry must be in the future', ['expiresAt']);
        }
        const { keyId, keyHash, keyPrefix, environment, permission, role, expiresAt } = command;
        return [{ type: 'ApiKeyCreated', data: { keyId, keyHash, keyPrefix, environment, permission, role, expiresAt } }];
      }
      case 'RevokeApiKey': {
        requireLive(state);
        const key = state.keys[command.keyId];
        if (!key) throw new DomainError('not_found', 'KEY_NOT_FOUND', 'no such key in the workspace', ['keyId']);
        return key.revoked ? [] : [{ type: 'ApiKeyRevoked', data: { keyId: command.keyId } }];
      }
      case 'DeleteWorkspace': {
        requireLive(state);
        return [{ type: 'WorkspaceDeleted', data: { workspaceId: state.workspaceId! } }];
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'WorkspaceCreated':
        return { ...state, workspaceId: event.data.workspaceId, name: event.data.name };
      case 'ApiKeyCreated': {
        const { keyId, environment, permission, role, expiresAt } = event.data;
        return { ...state, keys: { ...state.keys, [keyId]: { environment, permission, role, expiresAt, revoked: false } } };
      }
      case 'ApiKeyRevoked': {
        const key = state.keys[event.data.keyId];
        return key ? { ...state, keys: { ...state.keys, [event.data.keyId]: { ...key, revoked: true } } } : state;
      }
      case 'WorkspaceDeleted':
        return { ...state, deleted: true };
    }
  },
};

registerDecider(workspaceDecider);

export const workspaceStream = (workspaceId: string) => `workspace-${workspaceId}`;

/**
 * The environments a key serves: a production key serves production only; a sandbox (mock) key
 * serves the test environments, sandbox and simulation.
 */
export function keyServesEnvironment(keyEnvironment: KeyEnvironment, requested: 'sandbox' | 'simulation' | 'production'): boolean {
  return keyEnvironment === 'production' ? requested === 'production' : requested !== 'production';
}
