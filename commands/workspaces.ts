/** Commands on workspaces and their API keys (admin CLI). */
import { randomBytes } from 'node:crypto';
import { DomainError } from '../domain/errors.js';
import {
  workspaceDecider,
  workspaceStream,
  type KeyEnvironment,
  type KeyPermission,
  type MemberRole,
} from '../domain/workspace/workspace.js';
import { findKeyById, hashApiKey } from '../readmodels/keys.js';
import type { Knex } from 'knex';
import type { EventStore } from '../platform/eventstore/port.js';
import { execute, type CommandContext } from './execute.js';

export function newWorkspaceId(): string {
  return `ws_${randomBytes(10).toString('hex')}`;
}

export async function createWorkspace(store: EventStore, name: string, ctx: CommandContext) {
  const workspaceId = newWorkspaceId();
  const result = await execute(store, workspaceDecider, workspaceStream(workspaceId), { type: 'CreateWorkspace', workspaceId, name }, {
    ...ctx,
    workspaceId,
  });
  return { workspaceId, position: result.appended!.position };
}

export async function createApiKey(
  store: EventStore,
  input: { workspaceId: string; environment: KeyEnvironment; permission: KeyPermission; role: MemberRole; expiresAt: string | null },
  ctx: CommandContext,
) {
  const keyId = `key_${randomBytes(8).toString('hex')}`;
  const apiKey = `eik_${input.environment === 'sandbox' ? 'test' : 'live'}_${randomBytes(24).toString('base64url')}`;
  const result = await execute(
    store,
    workspaceDecider,
    workspaceStream(input.workspaceId),
    {
      type: 'CreateApiKey',
      keyId,
      keyHash: hashApiKey(apiKey),
      keyPrefix: apiKey.slice(0, 12),
      environment: input.environment,
      permission: input.permission,
      role: input.role,
      expiresAt: input.expiresAt,
      now: ctx.now.toISOString(),
    },
    { ...ctx, workspaceId: input.workspaceId, environment: input.environment },
  );
  return { keyId, apiKey, position: result.appended!.position };
}

export async function revokeApiKey(store: EventStore, knex: Knex, keyId: string, ctx: CommandContext) {
  const key = await findKeyById(knex, keyId);
  if (!key) throw new DomainError('not_found', 'KEY_NOT_FOUND', `no key with id ${keyId}`, ['keyId']);
  const result = await execute(store, workspaceDecider, workspaceStream(key.workspaceId), { type: 'RevokeApiKey', keyId }, {
    ...ctx,
    workspaceId: key.workspaceId,
  });
  return { keyId, workspaceId: key.workspaceId, revoked: true, position: result.appended?.position ?? null };
}

export async function deleteWorkspace(store: EventStore, workspaceId: string, ctx: CommandContext) {
  const result = await execute(store, workspaceDecider, workspaceStream(workspaceId), { type: 'DeleteWorkspace' }, { ...ctx, workspaceId });
  return { workspaceId, deleted: true, position: result.appended!.position };
}
