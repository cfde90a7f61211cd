/**
 * The purchases commands of the admin CLI (registered by scripts/admin.ts):
 *
 *   purchases receive --workspace <id> --environment sandbox|production --file <xml> [--company <companyId>]
 *
 * Imports a UBL 2.1 Invoice or CreditNote as a received purchase invoice and prints
 * {"documentId","workspaceId","companyId","invoiceNumber","duplicate"}. A refused file (too large,
 * a DOCTYPE, not well-formed, not UBL, failing the UBL 2.1 schema, no receiving company) prints
 * one line on stderr, exits 2 and stores nothing.
 */
import { readFile, stat } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ImportRefused, importUblPurchase } from '../commands/purchases/import.js';
import { systemClock } from '../platform/clock.js';
import type { AdminHelpers } from './admin-connect.js';

const companyId = (value: string) => {
  if (!/^[0-9a-f]{24}$/.test(value)) throw new InvalidArgumentError('expected a company id (24 hexadecimal characters)');
  return value;
};

export function registerPurchaseCommands(program: Command, h: AdminHelpers): void {
  const purchases = program.command('purchases').description('received purchase invoices');
  purchases
    .command('receive')
    .description('import a UBL 2.1 Invoice or CreditNote as a received purchase invoice')
    .requiredOption('--workspace <id>', 'receiving workspace id')
    .addOption(new Option('--environment <env>', 'environment the purchase belongs to').choices(['sandbox', 'production']).makeOptionMandatory())
    .requiredOption('--file <xml>', 'the UBL XML file')
    .option('--company <companyId>', 'receiving company (default: the one whose Peppol participant id is the buyer endpoint)', companyId)
    .action(async (o: { workspace: string; environment: 'sandbox' | 'production'; file: string; company?: string }) => {
      const r = await h.rt();
      let size: number;
      try {
        size = (await stat(o.file)).size;
      } catch {
        throw h.usage(`cannot read ${o.file}: no such file`);
      }
      const max = r.config.purchases.maxXmlBytes;
      if (size > max) throw h.usage(`refused: ${o.file} is ${size} bytes; at most ${max} are accepted (XML_TOO_LARGE)`);
      const bytes = await readFile(o.file);
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      try {
        const stored = await importUblPurchase(
          { store: r.store, knex: r.db.knex, clock: systemClock, maxXmlBytes: max },
          { workspaceId: o.workspace, environment: o.environment, bytes, companyId: o.company ?? null },
          h.ctx(),
        );
        await h.caughtUp(r);
        h.print({ documentId: stored.documentId, workspaceId: stored.workspaceId, companyId: stored.companyId, invoiceNumber: stored.invoiceNumber, duplicate: stored.duplicate });
      } catch (err) {
        if (err instanceof ImportRefused) throw h.usage(`refused: ${err.message} (${err.code})`);
        throw err;
      }
    });
}
