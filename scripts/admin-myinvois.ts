/**
 * The MyInvois commands of the admin CLI (registered by scripts/admin.ts); they need MYINVOIS_SYSTEM
 * and MYINVOIS_CREDENTIALS_KEY (docs/operations/malaysia.md):
 *
 *   myinvois taxpayer set --environment production --tin <TIN> --mode taxpayer|intermediary
 *       [--client-id <id> --client-secret-file <file>] --key-file <pem> --certificate-file <pem>
 *   myinvois taxpayer list [--environment <env>]
 *   myinvois taxpayer remove --environment <env> --tin <TIN>
 *   myinvois cancel --workspace <id> --document <id> --reason <text>
 *
 * Secrets are read from files (or `-` for standard input), never from the command line, and are
 * never printed: `set` and `list` print the TIN, the mode, the client id and the certificate's
 * subject, issuer, serial number and expiry.
 */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { cancelMyInvoisDocument, CancellationRefused } from '../commands/myinvois/cancel.js';
import { createMyInvoisConnector } from '../commands/myinvois/index.js';
import { MyInvoisCredentials, MyInvoisCredentialsError } from '../commands/myinvois/credentials.js';
import type { Runtime } from '../commands/runtime.js';
import { systemClock } from '../platform/clock.js';
import type { AdminHelpers } from './admin-connect.js';

async function readSecretFile(path: string, what: string, h: AdminHelpers): Promise<string> {
  try {
    if (path === '-') {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8').trim();
    }
    return (await readFile(path, 'utf8')).trim();
  } catch {
    throw h.usage(`cannot read the ${what} from ${path}`);
  }
}

function credentialsOf(r: Runtime, h: AdminHelpers): MyInvoisCredentials {
  const c = r.config.myinvois;
  if (!c) throw h.usage('MyInvois is not configured: set MYINVOIS_SYSTEM and MYINVOIS_CREDENTIALS_KEY (docs/operations/malaysia.md)');
  return new MyInvoisCredentials(r.db.knex, c.credentialsKey, 0);
}

export function registerMyInvoisCommands(program: Command, h: AdminHelpers): void {
  const myinvois = program.command('myinvois').description('MyInvois (Malaysia): taxpayers and cancellations');
  const taxpayer = myinvois.command('taxpayer').description('the taxpayers the service submits for');
  const environment = () => new Option('--environment <env>', 'the service environment whose documents go to MyInvois').choices(['production']).default('production');
  taxpayer
    .command('set')
    .description('onboard (or update) a taxpayer: how the service logs in for it and the certificate it signs with')
    .addOption(environment())
    .requiredOption('--tin <tin>', "the taxpayer's TIN (the supplier TIN of its documents)")
    .addOption(new Option('--mode <mode>', 'log in as the taxpayer\'s own system, or as the service\'s intermediary system on behalf of the TIN').choices(['taxpayer', 'intermediary']).makeOptionMandatory())
    .option('--client-id <id>', 'taxpayer mode: the client id of the taxpayer\'s ERP system')
    .option('--client-secret-file <file>', 'taxpayer mode: a file holding the client secret (- for standard input)')
    .requiredOption('--key-file <file>', "the PEM private key of the taxpayer's signing certificate")
    .requiredOption('--certificate-file <file>', 'the PEM signing certificate')
    .action(async (o: { environment: string; tin: string; mode: 'taxpayer' | 'intermediary'; clientId?: string; clientSecretFile?: string; keyFile: string; certificateFile: string }) => {
      const r = await h.rt();
      const credentials = credentialsOf(r, h);
      if (o.mode === 'taxpayer' && (!o.clientId || !o.clientSecretFile)) throw h.usage('--mode taxpayer needs --client-id and --client-secret-file');
      if (o.mode === 'intermediary' && (o.clientId || o.clientSecretFile)) throw h.usage('--mode intermediary takes no client credentials: the service logs in with MYINVOIS_CLIENT_ID on behalf of the TIN');
      if (o.mode === 'intermediary' && !r.config.myinvois!.intermediary) throw h.usage('--mode intermediary needs MYINVOIS_CLIENT_ID and MYINVOIS_CLIENT_SECRET (the service\'s intermediary system)');
      const clientSecret = o.clientSecretFile ? await readSecretFile(o.clientSecretFile, 'client secret', h) : null;
      const signingKeyPem = await readSecretFile(o.keyFile, 'signing key', h);
      const certificatePem = await readSecretFile(o.certificateFile, 'certificate', h);
      try {
        h.print(await credentials.set({ environment: o.environment, tin: o.tin, mode: o.mode, clientId: o.clientId ?? null, clientSecret, signingKeyPem, certificatePem }, new Date()));
      } catch (err) {
        if (err instanceof MyInvoisCredentialsError) throw h.usage(err.message);
        throw err;
      }
    });
  taxpayer
    .command('list')
    .description('the onboarded taxpayers (never their secrets)')
    .addOption(new Option('--environment <env>', 'only this environment').choices(['production']))
    .action(async (o: { environment?: string }) => {
      const r = await h.rt();
      h.print(await credentialsOf(r, h).list(o.environment));
    });
  taxpayer
    .command('remove')
    .description("forget a taxpayer's credentials (its documents then wait in delivery_failed)")
    .addOption(environment())
    .requiredOption('--tin <tin>', "the taxpayer's TIN")
    .action(async (o: { environment: string; tin: string }) => {
      const r = await h.rt();
      if (!(await credentialsOf(r, h).remove(o.environment, o.tin))) throw h.usage(`no taxpayer ${o.tin} in ${o.environment}`);
      h.print({ environment: o.environment, tin: o.tin, removed: true });
    });
  myinvois
    .command('cancel')
    .description('cancel a valid production MY document at MyInvois (within 72 hours of its validation); the document then ends final_invalid')
    .requiredOption('--workspace <id>', 'the workspace of the document')
    .requiredOption('--document <id>', 'the document id')
    .requiredOption('--reason <text>', 'the reason MyInvois records (up to 300 characters)')
    .action(async (o: { workspace: string; document: string; reason: string }) => {
      const r = await h.rt();
      credentialsOf(r, h);
      await h.caughtUp(r);
      const connector = createMyInvoisConnector({ config: r.config, knex: r.db.knex, clock: systemClock })!;
      try {
        h.print(await cancelMyInvoisDocument({ ...connector.deps, knex: r.db.knex, store: r.store }, { workspaceId: o.workspace, documentId: o.document, reason: o.reason }));
      } catch (err) {
        if (err instanceof CancellationRefused) throw h.usage(`refused (${err.code}): ${err.message}`);
        throw err;
      }
    });
}
