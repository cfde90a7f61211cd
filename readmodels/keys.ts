/**
 * Queries of the workspaces/keys read model, and the API-key lookup used by authentication.
 * Lookups are kept for at most `ttlMs` (default 1 s, readmodels/recent-lookups.ts), so a revocation
 * takes effect within a second.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { TableShape } from './batch-rows.js';
import { RecentLookups } from './recent-lookups.js';

export interface ApiKeyRecord {
  keyId: string;
  keyPrefix: string;
  workspaceId: string;
  environment: 'sandbox' | 'production';
  permission: 'read' | 'read_write';
  role: 'owner' | 'admin' | 'partner' | 'member';
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
  /** False when the workspace was deleted (or never projected). */
  workspaceActive: boolean;
}

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

function toRecord(row: any): ApiKeyRecord {
  return {
    keyId: row.key_id,
    keyPrefix: row.key_prefix,
    workspaceId: row.workspace_id,
    environment: row.environment,
    permission: row.permission,
    role: row.role,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
    workspaceActive: row.workspace_name !== null && row.deleted_at === null,
  };
}

const keyQuery = (knex: Knex) =>
  knex('api_keys as k')
    .leftJoin('workspaces as w', 'w.workspace_id', 'k.workspace_id')
    .select('k.*', 'w.name as workspace_name', 'w.deleted_at');

export async function findKeyByHash(knex: Knex, keyHash: string): Promise<ApiKeyRecord | null> {
  const row = await keyQuery(knex).where('k.key_hash', keyHash).first();
  return row ? toRecord(row) : null;
}

export async function findKeyById(knex: Knex, keyId: string): Promise<ApiKeyRecord | null> {
  const row = await keyQuery(knex).where('k.key_id', keyId).first();
  return row ? toRecord(row) : null;
}

/** The keys of one workspace, or of every workspace when `workspaceId` is null. */
export async function listKeys(knex: Knex, workspaceId: string | null): Promise<ApiKeyRecord[]> {
  const query = keyQuery(knex).orderBy([{ column: 'k.created_at' }, { column: 'k.key_id' }]);
  if (workspaceId !== null) query.where('k.workspace_id', workspaceId);
  return (await query).map(toRecord);
}

export interface WorkspaceRow {
  workspaceId: string;
  name: string;
  createdAt: Date;
  deletedAt: Date | null;
}

/** Every workspace, oldest first (deleted ones too, marked by `deletedAt`). */
export async function listWorkspaces(knex: Knex): Promise<WorkspaceRow[]> {
  const rows = await knex('workspaces').select('*').orderBy([{ column: 'created_at' }, { column: 'workspace_id' }]);
  return rows.map((r: any) => ({ workspaceId: r.workspace_id, name: r.name, createdAt: r.created_at, deletedAt: r.deleted_at }));
}

export async function findWorkspace(knex: Knex, workspaceId: string) {
  return knex('workspaces').where({ workspace_id: workspaceId }).first();
}

export class ApiKeyCache {
  private readonly recent: RecentLookups<ApiKeyRecord | null>;
  constructor(
    private readonly knex: Knex,
    ttlMs = 1000,
    maxEntries = 10_000,
    now: () => number = Date.now,
  ) {
    this.recent = new RecentLookups({ ttlMs, maxEntries, now });
  }

  /** `fresh`: read the read model even when a cached answer is recent. */
  lookup(apiKey: string, options: { fresh?: boolean } = {}): Promise<ApiKeyRecord | null> {
    const hash = hashApiKey(apiKey);
    return this.recent.get(hash, () => findKeyByHash(this.knex, hash), options);
  }
}

/** The columns of the workspaces read model (written by the workspaces projection). */
export const WORKSPACES_SHAPE: TableShape = {
  table: 'workspaces',
  key: ['workspace_id'],
  columns: { workspace_id: 'text', name: 'text', deleted_at: 'timestamptz', created_at: 'timestamptz' },
};

export const API_KEYS_SHAPE: TableShape = {
  table: 'api_keys',
  key: ['key_id'],
  columns: {
    key_id: 'text',
    key_hash: 'text',
    key_prefix: 'text',
    workspace_id: 'text',
    environment: 'text',
    permission: 'text',
    role: 'text',
    expires_at: 'timestamptz',
    revoked_at: 'timestamptz',
    created_at: 'timestamptz',
  },
};
