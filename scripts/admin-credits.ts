/**
 * The credits commands of the admin CLI (registered by scripts/admin.ts):
 *
 *   credits issue --workspace <id> --environment sandbox|production --amount <n> [--expires-at <ISO>] [--reason <text>]
 *   credits enforcement --workspace <id> --on|--off
 *   credits pool --workspace <id>
 *   credits reconcile --workspace <id> --reservation <id> --outcome consumed|released --reason <text>
 *   credits lifecycle [--now <ISO>]
 *   credits reverse --workspace <id> --transaction <id> --reason <text> [--restore-pool]
 *
 * Each prints one JSON document on stdout, as the other admin commands do.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { runCreditLifecycle } from '../commands/credits/lifecycle.js';
import { issueCredits, reconcileReservation, setCreditEnforcement } from '../commands/credits/pool.js';
import { reverseConsumption } from '../commands/credits/reversal.js';
import { creditsEngine } from '../commands/credits/snapshots.js';
import { CREDIT_ENVIRONMENTS, CREDIT_LIMITS } from '../domain/credits/values.js';
import { listLots, readPool } from '../readmodels/credits.js';
import type { AdminHelpers } from './admin-connect.js';

function amount(raw: string): number {
  if (!/^\d{1,13}$/.test(raw) || Number(raw) < 1 || Number(raw) > CREDIT_LIMITS.amountMax) {
    throw new InvalidArgumentError(`expected a whole number of credits from 1 to ${CREDIT_LIMITS.amountMax}`);
  }
  return Number(raw);
}

function isoTime(raw: string): string {
  const ms = Date.parse(raw);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(raw)) {
    throw new InvalidArgumentError('expected an ISO 8601 date-time with a time zone, e.g. 2027-01-31T00:00:00Z');
  }
  return new Date(ms).toISOString();
}

function text(raw: string): string {
  if (raw.trim() === '' || raw.length > CREDIT_LIMITS.textMax) throw new InvalidArgumentError(`expected 1 to ${CREDIT_LIMITS.textMax} characters`);
  return raw;
}

export function registerCreditCommands(program: Command, h: AdminHelpers): void {
  const credits = program.command('credits').description('the credit pool and credit settings of a workspace');

  credits
    .command('issue')
    .description('issue a lot of credits into the workspace pool (credit.issued)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(new Option('--environment <env>', 'data environment the lot is labelled with').choices(CREDIT_ENVIRONMENTS).makeOptionMandatory())
    .requiredOption('--amount <n>', 'credits in the lot', amount)
    .option('--expires-at <iso>', 'when the lot expires (credit.expired); never when omitted', isoTime)
    .option('--reason <text>', 'why the credits are issued (shown in the ledger)', text)
    .action(async (o: { workspace: string; environment: 'sandbox' | 'production'; amount: number; expiresAt?: string; reason?: string }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const result = await issueCredits(
        creditsEngine({ store: r.store, knex: r.db.knex }),
        { workspaceId: o.workspace, environment: o.environment, amount: o.amount, expiresAt: o.expiresAt ?? null, reason: o.reason ?? null },
        h.ctx(),
      );
      await h.caughtUp(r);
      const { total: _total, ...pool } = result.pool;
      h.print({ workspaceId: o.workspace, lotId: result.lotId, amount: o.amount, environment: o.environment, expiresAt: o.expiresAt ?? null, pool });
    });

  credits
    .command('enforcement')
    .description('turn credit enforcement of submissions on or off (off by default)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--on', 'refuse submissions of companies whose credits are blocked')
    .option('--off', 'meter submissions without refusing any')
    .action(async (o: { workspace: string; on?: boolean; off?: boolean }) => {
      if (!!o.on === !!o.off) throw h.usage('give exactly one of --on and --off');
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const result = await setCreditEnforcement(creditsEngine({ store: r.store, knex: r.db.knex }), o.workspace, !!o.on, h.ctx());
      await h.caughtUp(r);
      h.print({ workspaceId: o.workspace, enforcement: result.enabled, changed: result.changed });
    });

  credits
    .command('pool')
    .description('print the workspace pool and its lots')
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (o: { workspace: string }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const [pool, lots] = await Promise.all([readPool(r.db.knex, o.workspace), listLots(r.db.knex, o.workspace)]);
      const { total: _total, ...rest } = pool;
      h.print({ workspaceId: o.workspace, ...rest, lots });
    });

  credits
    .command('reconcile')
    .description('settle a reservation by hand, e.g. one marked reservation.needs_reconciliation')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--reservation <id>', 'reservation id (res_<documentId>)')
    .addOption(new Option('--outcome <outcome>', 'consumed (consumption.finalized) or released (reservation.released)').choices(['consumed', 'released']).makeOptionMandatory())
    .requiredOption('--reason <text>', 'why (shown in the ledger)', text)
    .action(async (o: { workspace: string; reservation: string; outcome: 'consumed' | 'released'; reason: string }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const result = await reconcileReservation(
        creditsEngine({ store: r.store, knex: r.db.knex }),
        { workspaceId: o.workspace, reservationId: o.reservation, outcome: o.outcome, reason: o.reason },
        h.ctx(),
      );
      await h.caughtUp(r);
      h.print({ workspaceId: o.workspace, reservationId: o.reservation, outcome: o.outcome, events: result.events.map((e) => e.type) });
    });

  credits
    .command('reverse')
    .description('reverse a finalized consumption (consumption.reversed, with the balances before and after); a transaction is reversed at most once')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--transaction <id>', 'the consumption.finalized transaction id (txn_…)')
    .requiredOption('--reason <text>', 'why (shown in the ledger and the webhook)', text)
    .option('--restore-pool', 'also return the credits to the pool lots they came from')
    .action(async (o: { workspace: string; transaction: string; reason: string; restorePool?: boolean }) => {
      if (!/^txn_[0-9a-f]{32}$/.test(o.transaction)) throw h.usage('--transaction must be a ledger transaction id (txn_ and 32 hex digits)');
      const r = await h.rt();
      await h.caughtUp(r);
      await h.requireWorkspace(r, o.workspace);
      const result = await reverseConsumption(
        { engine: creditsEngine({ store: r.store, knex: r.db.knex }), knex: r.db.knex, store: r.store },
        { workspaceId: o.workspace, transactionId: o.transaction, reason: o.reason, restorePool: !!o.restorePool },
        h.ctx(),
      );
      await h.caughtUp(r);
      const reversed = result.events.find((e) => e.type === 'ConsumptionReversed');
      h.print({
        workspaceId: o.workspace,
        originalTransactionId: o.transaction,
        reversed: !result.alreadyReversed,
        alreadyReversed: result.alreadyReversed,
        ...(reversed && reversed.type === 'ConsumptionReversed'
          ? {
              amount: reversed.data.amount,
              restorePool: reversed.data.restorePool,
              balanceBefore: { companyAvailable: reversed.data.balanceBefore.companyAvailable, poolAvailable: reversed.data.balanceBefore.poolAvailable },
              balanceAfter: { companyAvailable: reversed.data.balanceAfter.companyAvailable, poolAvailable: reversed.data.balanceAfter.poolAvailable },
            }
          : {}),
      });
    });

  credits
    .command('lifecycle')
    .description('run the allowance lifecycle now (activations and expiries that are due), as the worker does every 60 s')
    .option('--now <iso>', 'the instant to run it for (default: now)', isoTime)
    .action(async (o: { now?: string }) => {
      const r = await h.rt();
      await h.caughtUp(r);
      const transitions = await runCreditLifecycle(creditsEngine({ store: r.store, knex: r.db.knex }), r.db.knex, o.now ? new Date(o.now) : new Date(), {
        actor: 'admin-cli',
      });
      await h.caughtUp(r);
      h.print({ transitions });
    });
}
