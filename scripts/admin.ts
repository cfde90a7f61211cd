/**
 * Admin CLI: `npm run --silent admin -- <command>`. Prints JSON on stdout; a bad argument or a
 * refused command prints one clear line on stderr and exits non-zero. Works against the same
 * database as the server whether the server runs or not: after a write it brings the
 * projections up to date itself (safe alongside a running server: batches are locked).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { createApiKey, createWorkspace, deleteWorkspace, revokeApiKey } from '../commands/workspaces.js';
import type { CommandContext } from '../commands/execute.js';
import { DomainError } from '../domain/errors.js';
import { KEY_ENVIRONMENTS, KEY_PERMISSIONS, MEMBER_ROLES } from '../domain/workspace/workspace.js';
import { ConfigError, loadConfig } from '../platform/config.js';
import { DatabaseUnavailableError, stopEmbeddedServer } from '../platform/database.js';
import { openRuntime, type Runtime } from '../commands/runtime.js';
import { allProjections } from '../projections/index.js';
import { ProjectionRunner } from '../projections/runner.js';
import { findWorkspace, listKeys, listWorkspaces } from '../readmodels/keys.js';
import { cliConfig } from './cli-support.js';
import { createSearchIndex } from '../readmodels/search/index.js';
import { registerConnectCommands } from './admin-connect.js';
import { registerCreditCommands } from './admin-credits.js';
import { registerPurchaseCommands } from './admin-purchases.js';
import { registerMyInvoisCommands } from './admin-myinvois.js';
import { registerZatcaCommands } from './admin-zatca.js';
import { registerPeppolCommands } from './admin-peppol.js';

class UsageError extends Error {}

function isoDate(value: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw new InvalidArgumentError('expected an ISO 8601 date-time, e.g. 2027-01-31T00:00:00Z');
  return new Date(ms).toISOString();
}

let runtime: Runtime | null = null;
async function rt(): Promise<Runtime> {
  runtime ??= await openRuntime(await cliConfig());
  return runtime;
}

function ctx(): CommandContext {
  return { now: new Date(), actor: 'admin-cli', requestId: null };
}

async function caughtUp(r: Runtime): Promise<void> {
  const search = createSearchIndex(r.config, r.db.knex);
  try {
    await new ProjectionRunner(r.db.knex, r.store, allProjections(search)).catchUp();
  } finally {
    await search.close();
  }
}

async function requireWorkspace(r: Runtime, workspaceId: string) {
  const ws = await findWorkspace(r.db.knex, workspaceId);
  if (!ws) throw new UsageError(`no workspace ${workspaceId}`);
  if (ws.deleted_at) throw new UsageError(`workspace ${workspaceId} was deleted`);
}

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

export function buildProgram(): Command {
  const program = new Command('admin').description('Administration of the e-invoicing service').exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });

  const workspace = program.command('workspace').description('workspaces');
  workspace
    .command('create')
    .requiredOption('--name <name>', 'workspace name')
    .action(async (o: { name: string }) => {
      const r = await rt();
      const { workspaceId } = await createWorkspace(r.store, o.name, ctx());
      await caughtUp(r);
      print({ workspaceId });
    });
  workspace
    .command('list')
    .description('every workspace (deleted ones marked), to find a lost ws_… id')
    .action(async () => {
      const r = await rt();
      await caughtUp(r);
      const rows = await listWorkspaces(r.db.knex);
      print(rows.map((w) => ({ workspaceId: w.workspaceId, name: w.name, createdAt: w.createdAt.toISOString(), deletedAt: w.deletedAt?.toISOString() ?? null })));
    });
  workspace
    .command('delete')
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (o: { workspace: string }) => {
      const r = await rt();
      const result = await deleteWorkspace(r.store, o.workspace, ctx());
      await caughtUp(r);
      print({ workspaceId: result.workspaceId, deleted: true });
    });

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(new Option('--environment <env>', 'key environment').choices(KEY_ENVIRONMENTS).makeOptionMandatory())
    .addOption(new Option('--permission <perm>', 'key permission').choices(KEY_PERMISSIONS).makeOptionMandatory())
    .addOption(new Option('--role <role>', 'member role').choices(MEMBER_ROLES).makeOptionMandatory())
    .option('--expires-at <iso>', 'expiry (ISO 8601)', isoDate)
    .action(async (o: { workspace: string; environment: any; permission: any; role: any; expiresAt?: string }) => {
      const r = await rt();
      await requireWorkspace(r, o.workspace);
      const created = await createApiKey(
        r.store,
        { workspaceId: o.workspace, environment: o.environment, permission: o.permission, role: o.role, expiresAt: o.expiresAt ?? null },
        ctx(),
      );
      await caughtUp(r);
      print({ keyId: created.keyId, apiKey: created.apiKey });
    });
  key
    .command('revoke')
    .requiredOption('--key-id <id>', 'key id')
    .action(async (o: { keyId: string }) => {
      const r = await rt();
      await caughtUp(r);
      const result = await revokeApiKey(r.store, r.db.knex, o.keyId, ctx());
      await caughtUp(r);
      print({ keyId: result.keyId, workspaceId: result.workspaceId, revoked: true });
    });
  key
    .command('list')
    .option('--workspace <id>', 'workspace id (all workspaces when omitted)')
    .action(async (o: { workspace?: string }) => {
      const r = await rt();
      await caughtUp(r);
      if (o.workspace !== undefined) await requireWorkspace(r, o.workspace);
      const keys = await listKeys(r.db.knex, o.workspace ?? null);
      print(
        keys.map((k) => ({
          keyId: k.keyId,
          workspaceId: k.workspaceId,
          keyPrefix: k.keyPrefix,
          environment: k.environment,
          permission: k.permission,
          role: k.role,
          expiresAt: k.expiresAt?.toISOString() ?? null,
          revokedAt: k.revokedAt?.toISOString() ?? null,
          createdAt: k.createdAt.toISOString(),
        })),
      );
    });
  const db = program.command('db').description('the embedded PostgreSQL');
  db.command('stop')
    .description('stop the embedded PostgreSQL of EMBEDDED_PG_DIR (fast shutdown: connected processes lose their connections)')
    .action(async () => {
      const config = loadConfig();
      if (config.databaseUrl) throw new UsageError('DATABASE_URL is set: the database is not the embedded one');
      const { stopped, pid } = await stopEmbeddedServer(config.embeddedPg.dataDir);
      print({ stopped, pid, dataDir: config.embeddedPg.dataDir });
    });
  registerConnectCommands(program, { rt, ctx, caughtUp, requireWorkspace, print, usage: (message) => new UsageError(message) });
  registerCreditCommands(program, { rt, ctx, caughtUp, requireWorkspace, print, usage: (message) => new UsageError(message) });
  registerPurchaseCommands(program, { rt, ctx, caughtUp, requireWorkspace, print, usage: (message) => new UsageError(message) });
  registerMyInvoisCommands(program, { rt, ctx, caughtUp, requireWorkspace, print, usage: (message) => new UsageError(message) });
  registerZatcaCommands(program, { rt, ctx, caughtUp, requireWorkspace, print, usage: (message) => new UsageError(message) });
  registerPeppolCommands(program, { rt, ctx, caughtUp, requireWorkspace, print, usage: (message) => new UsageError(message) });
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    }
    if (err instanceof UsageError || err instanceof DomainError || err instanceof DatabaseUnavailableError || err instanceof ConfigError) {
      const code = err instanceof DomainError ? ` (${err.code})` : '';
      process.stderr.write(`admin: ${err.message}${code}\n`);
      return err instanceof UsageError || err instanceof DomainError ? 2 : 1;
    }
    process.stderr.write(`admin: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await runtime?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
