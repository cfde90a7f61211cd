/** Read models of workspaces and their API keys (written by the workspaces projection). */
import type { Knex } from 'knex';

export const workspacesKeysMigration = {
  name: '0003_workspaces_keys',
  async up(knex: Knex) {
    await knex.raw(`
      create table workspaces (
        workspace_id text primary key,
        name text not null,
        deleted_at timestamptz,
        created_at timestamptz not null
      );
      create table api_keys (
        key_id text primary key,
        key_hash text not null unique,
        key_prefix text not null,
        workspace_id text not null,
        environment text not null,
        permission text not null,
        role text not null,
        expires_at timestamptz,
        revoked_at timestamptz,
        created_at timestamptz not null
      );
      create index api_keys_workspace on api_keys (workspace_id, created_at);
    `);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists api_keys; drop table if exists workspaces;');
  },
};
