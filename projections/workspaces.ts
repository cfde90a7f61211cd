/**
 * Projects workspace streams into the workspaces and api_keys read models, a batch at a time:
 * the rows the batch touches are read at once, changed in memory in log order and written back
 * with one upsert per table (see readmodels/batch-rows.ts).
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { ApiKeyCreated, ApiKeyRevoked, WorkspaceCreated, WorkspaceDeleted } from '../domain/workspace/workspace.js';
import { BatchRows } from '../readmodels/batch-rows.js';
import { API_KEYS_SHAPE, WORKSPACES_SHAPE } from '../readmodels/keys.js';
import { defineProjection } from './projection.js';

const workspaceOf = (event: RecordedEvent) => event.streamId.slice('workspace-'.length);

type Decoded =
  | { type: 'created'; at: string; workspaceId: string; data: ReturnType<typeof decodeWorkspaceCreated> }
  | { type: 'key'; at: string; workspaceId: string; data: ReturnType<typeof decodeKeyCreated> }
  | { type: 'revoked'; at: string; keyId: string }
  | { type: 'deleted'; at: string; workspaceId: string };

const decodeWorkspaceCreated = (e: RecordedEvent) => decodeEventData(WorkspaceCreated, e.schemaVersion, e.data);
const decodeKeyCreated = (e: RecordedEvent) => decodeEventData(ApiKeyCreated, e.schemaVersion, e.data);

function decode(event: RecordedEvent): Decoded | null {
  const at = event.metadata.occurredAt;
  switch (event.type) {
    case WorkspaceCreated.type:
      return { type: 'created', at, workspaceId: workspaceOf(event), data: decodeWorkspaceCreated(event) };
    case ApiKeyCreated.type:
      return { type: 'key', at, workspaceId: workspaceOf(event), data: decodeKeyCreated(event) };
    case ApiKeyRevoked.type:
      return { type: 'revoked', at, keyId: decodeEventData(ApiKeyRevoked, event.schemaVersion, event.data).keyId };
    case WorkspaceDeleted.type:
      return { type: 'deleted', at, workspaceId: workspaceOf(event) };
    default:
      return null;
  }
}

async function applyWorkspaces(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const decoded = events.map(decode).filter((d): d is Decoded => d !== null);
  const workspaces = new BatchRows(WORKSPACES_SHAPE);
  const keys = new BatchRows(API_KEYS_SHAPE);
  await workspaces.load(trx, decoded.flatMap((d) => (d.type === 'created' ? [[d.data.workspaceId]] : d.type === 'deleted' ? [[d.workspaceId]] : [])));
  await keys.load(trx, decoded.flatMap((d) => (d.type === 'key' ? [[d.data.keyId]] : d.type === 'revoked' ? [[d.keyId]] : [])));
  for (const d of decoded) {
    switch (d.type) {
      case 'created':
        // An insert: a second creation of the same workspace is an error, as it always was.
        if (workspaces.get([d.data.workspaceId])) throw new Error(`workspace ${d.data.workspaceId} is already projected`);
        workspaces.put({ workspace_id: d.data.workspaceId, name: d.data.name, created_at: d.at });
        break;
      case 'key':
        if (keys.get([d.data.keyId])) throw new Error(`API key ${d.data.keyId} is already projected`);
        keys.put({
          key_id: d.data.keyId,
          key_hash: d.data.keyHash,
          key_prefix: d.data.keyPrefix,
          workspace_id: d.workspaceId,
          environment: d.data.environment,
          permission: d.data.permission,
          role: d.data.role,
          expires_at: d.data.expiresAt,
          created_at: d.at,
        });
        break;
      case 'revoked':
        keys.update([d.keyId], () => ({ revoked_at: d.at }));
        break;
      case 'deleted':
        workspaces.update([d.workspaceId], () => ({ deleted_at: d.at }));
        break;
    }
  }
  await workspaces.flush(trx);
  await keys.flush(trx);
}

export const workspacesProjection = defineProjection({
  name: 'workspaces',
  version: 1,
  tables: ['workspaces', 'api_keys'],
  eventTypes: new Set([WorkspaceCreated.type, ApiKeyCreated.type, ApiKeyRevoked.type, WorkspaceDeleted.type]),
  apply: (trx, event) => applyWorkspaces(trx, [event]),
  applyMany: applyWorkspaces,
});
