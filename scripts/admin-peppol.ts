/**
 * The Peppol commands of the admin CLI (registered by scripts/admin.ts):
 *
 *   peppol unmatched-responses [--environment sandbox|production] [--limit <n>]
 *
 * Lists the buyer's answers (Peppol Invoice Responses) received that matched no delivered sales
 * document, newest first, one JSON object per line (docs/api/invoice-response.md).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { listUnmatchedResponses } from '../readmodels/sales-documents.js';
import type { AdminHelpers } from './admin-connect.js';

const limit = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('expected an integer from 1 to 1000');
  return n;
};

export function registerPeppolCommands(program: Command, h: AdminHelpers): void {
  const peppol = program.command('peppol').description('the Peppol access point');
  peppol
    .command('unmatched-responses')
    .description('buyer answers (Invoice Responses) that matched no delivered sales document, newest first')
    .addOption(new Option('--environment <env>', 'only this environment').choices(['sandbox', 'production']))
    .option('--limit <n>', 'at most this many (default 100)', limit, 100)
    .action(async (o: { environment?: 'sandbox' | 'production'; limit: number }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      for (const row of await listUnmatchedResponses(r.db.knex, { environment: o.environment ?? null, limit: o.limit })) h.print(row);
    });
}
