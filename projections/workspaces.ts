/** Projects workspace streams into the workspaces and api_keys read models. */
import { decodeEventData } from '../domain/events/envelope.js';
import { ApiKeyCreated, ApiKeyRevoked, WorkspaceCreated, WorkspaceDeleted } from '../domain/workspace/workspace.js';
import { defineProjection } from './projection.js';

export const workspacesProjection = defineProjection({
  name: 'workspaces',
  version: 1,
  tables: ['workspaces', 'api_keys'],
  eventTypes: new Set([WorkspaceCreated.type, ApiKeyCreated.type, ApiKeyRevoked.type, WorkspaceDeleted.type]),
  async apply(trx, event) {
    const at = event.metadata.occurredAt;
    const workspaceId = event.streamId.slice('workspace-'.length);
    switch (event.type) {
      case WorkspaceCreated.type: {
        const data = decodeEventData(WorkspaceCreated, event.schemaVersion, event.data);
        await trx('workspaces').insert({ workspace_id: data.workspaceId, name: data.name, created_at: at });
        return;
      }
      case ApiKeyCreated.type: {
        const data = decodeEventData(ApiKeyCreated, event.schemaVersion, event.data);
        await trx('api_keys').insert({
          key_id: data.keyId,
          key_hash: data.keyHash,
          key_prefix: data.keyPrefix,
          workspace_id: workspaceId,
          environment: data.environment,
          permission: data.permission,
          role: data.role,
          expires_at: data.expiresAt,
          created_at: at,
        });
        return;
      }
      case ApiKeyRevoked.type: {
        const data = decodeEventData(ApiKeyRevoked, event.schemaVersion, event.data);
        await trx('api_keys').where({ key_id: data.keyId }).update({ revoked_at: at });
        return;
      }
      case WorkspaceDeleted.type:
        await trx('workspaces').where({ workspace_id: workspaceId }).update({ deleted_at: at });
        return;
    }
  },
});
