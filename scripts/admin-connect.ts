/**
 * The Connect commands of the admin CLI (registered by scripts/admin.ts):
 *
 *   authorization create --workspace <id> --environment sandbox|simulation|production --tin <10 digits> --email <email>
 *                        [--legal-name <name>] [--legal-name-arabic <name>] [--vat-trn <15 digits>]
 *   authorization list --workspace <id>
 *   mapping auto-assign --workspace <id> --on|--off [--template <templateId>]
 *   provisioning simulate --workspace <id> --mode normal|timeout|unavailable [--tin <10 digits>]
 *
 * Each prints one JSON document on stdout, as the other admin commands do.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  createAspAuthorization,
  setMappingAutoAssign,
  setSandboxProvisioning,
} from '../commands/connect/settings.js';
import type { CommandContext } from '../commands/execute.js';
import { SANDBOX_PROVISIONING_MODES, TEMPLATE_ID_PATTERN } from '../domain/connect/connect-settings.js';
import { PLATFORM_ENVIRONMENTS } from '../domain/connect/values.js';
import type { Runtime } from '../commands/runtime.js';
import { listAspAuthorizations } from '../readmodels/connect.js';

export interface AdminHelpers {
  rt(): Promise<Runtime>;
  ctx(): CommandContext;
  caughtUp(r: Runtime): Promise<void>;
  requireWorkspace(r: Runtime, workspaceId: string): Promise<void>;
  print(value: unknown): void;
  usage(message: string): Error;
}

function pattern(re: RegExp, what: string) {
  return (value: string) => {
    if (!re.test(value)) throw new InvalidArgumentError(what);
    return value;
  };
}

const tin = pattern(/^\d{10}$/, 'expected exactly 10 digits');
const email = pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'expected an email address');
const vatTrn = pattern(/^\d{15}$/, 'expected exactly 15 digits');
const templateId = pattern(TEMPLATE_ID_PATTERN, 'expected 1 to 128 letters, digits, ".", "_", ":" or "-"');

export function registerConnectCommands(program: Command, h: AdminHelpers): void {
  const authorization = program.command('authorization').description('ASP authorizations (prerequisite of Connect onboarding)');
  authorization
    .command('create')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(new Option('--environment <env>', 'platform environment').choices(PLATFORM_ENVIRONMENTS).makeOptionMandatory())
    .requiredOption('--tin <tin>', 'tax identification number (10 digits)', tin)
    .requiredOption('--email <email>', 'contact email the company onboards with', email)
    .option('--legal-name <name>', 'registered legal name')
    .option('--legal-name-arabic <name>', 'registered legal name in Arabic')
    .option('--vat-trn <trn>', 'VAT tax registration number (15 digits)', vatTrn)
    .action(
      async (o: { workspace: string; environment: any; tin: string; email: string; legalName?: string; legalNameArabic?: string; vatTrn?: string }) => {
        const r = await h.rt();
        await h.caughtUp(r);
        await h.requireWorkspace(r, o.workspace);
        const { authorization: a, created } = await createAspAuthorization(
          r.store,
          {
            workspaceId: o.workspace,
            environment: o.environment,
            tin: o.tin,
            email: o.email,
            legalName: o.legalName ?? null,
            legalNameArabic: o.legalNameArabic ?? null,
            vatTrn: o.vatTrn ?? null,
          },
          h.ctx(),
        );
        await h.caughtUp(r);
        const { at, ...rest } = a;
        h.print({ ...rest, createdAt: at, created });
      },
    );
  authorization
    .command('list')
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (o: { workspace: string }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      h.print(await listAspAuthorizations(r.db.knex, o.workspace));
    });

  const mapping = program.command('mapping').description('mapping assignment of new Connect sources');
  mapping
    .command('auto-assign')
    .description('turn automatic assignment of the default mapping to new sources on or off (future sources only)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--on', 'assign the default mapping to new sources')
    .option('--off', 'leave new sources without a mapping (ACTION_REQUIRED)')
    .option('--template <templateId>', 'the default mapping template', templateId)
    .action(async (o: { workspace: string; on?: boolean; off?: boolean; template?: string }) => {
      if (!!o.on === !!o.off) throw h.usage('give exactly one of --on and --off');
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const result = await setMappingAutoAssign(r.store, { workspaceId: o.workspace, enabled: !!o.on, templateId: o.template ?? null }, h.ctx());
      h.print({ workspaceId: o.workspace, autoAssign: result.mapping.autoAssign, templateId: result.mapping.templateId, changed: result.changed });
    });

  const provisioning = program.command('provisioning').description('the sandbox Peppol participant-provisioning adapter');
  provisioning
    .command('simulate')
    .description('make sandbox provisioning answer normally, time out (ONBOARDING_TIMEOUT) or fail (PEPPOL_PARTICIPANT_UNAVAILABLE)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(new Option('--mode <mode>', 'behaviour').choices(SANDBOX_PROVISIONING_MODES).makeOptionMandatory())
    .option('--tin <tin>', 'only for this TIN (default: the whole workspace)', tin)
    .action(async (o: { workspace: string; mode: any; tin?: string }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const result = await setSandboxProvisioning(r.store, { workspaceId: o.workspace, mode: o.mode, tin: o.tin ?? null }, h.ctx());
      h.print({ workspaceId: o.workspace, tin: o.tin ?? null, mode: o.mode, changed: result.changed });
    });
}
