/**
 * Reversal of a finalized consumption by an operator (admin CLI `credits reverse`; the interface (docs/) has
 * no public operation). The transaction is found in the ledger read model (only to locate it:
 * a ledger row never changes), the reversal is decided on the credits aggregate and appended
 * with an id derived from the reversed transaction, so a transaction is reversed at most once
 * however often the command runs.
 */
import type { Knex } from 'knex';
import { DomainError } from '../../domain/errors.js';
import { DocumentSubmitted, documentStream } from '../../domain/document/document.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { CreditErrorCodes } from '../../domain/credits/values.js';
import type { LedgerFilters } from '../../domain/credits/jobs.js';
import { listLedger } from '../../readmodels/credits.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import type { CommandContext } from '../execute.js';
import type { CreditsEngine, CreditsOutcome } from './engine.js';

const NO_FILTERS: LedgerFilters = {
  companyId: null,
  eventType: null,
  occurredFrom: null,
  occurredTo: null,
  correlationId: null,
  idempotencyKey: null,
  requestId: null,
  transactionId: null,
  bulkJobId: null,
};

export interface ReversalInput {
  workspaceId: string;
  transactionId: string;
  reason: string;
  restorePool: boolean;
}

export async function reverseConsumption(
  deps: { engine: CreditsEngine; knex: Knex; store: EventStore },
  input: ReversalInput,
  ctx: CommandContext,
): Promise<CreditsOutcome & { alreadyReversed: boolean }> {
  const page = await listLedger(deps.knex, input.workspaceId, { limit: 1, after: null, filters: { ...NO_FILTERS, transactionId: input.transactionId } });
  const row = page.items[0];
  if (!row) throw new DomainError('not_found', CreditErrorCodes.transactionNotFound, `no ledger transaction ${input.transactionId} in workspace ${input.workspaceId}`, ['transactionId']);
  if (row.eventType !== 'consumption.finalized' || !row.companyId || !row.reservationId || !row.allowancePeriodId || row.amount === null) {
    throw new DomainError('conflict', CreditErrorCodes.notReversible, `transaction ${input.transactionId} is a ${row.eventType}; only a consumption.finalized transaction can be reversed`, ['transactionId']);
  }
  let countryCode: string | null = null;
  let documentType: string | null = null;
  if (row.documentId) {
    const [first] = await deps.store.readStream(documentStream(row.documentId), { maxCount: 1 });
    if (first && first.type === DocumentSubmitted.type) {
      const d = decodeEventData(DocumentSubmitted, first.schemaVersion, first.data);
      countryCode = d.country;
      documentType = d.documentType.base;
    }
  }
  const outcome = await deps.engine.execute(
    input.workspaceId,
    {
      type: 'ReverseConsumption',
      original: {
        transactionId: row.transactionId,
        eventType: row.eventType,
        reservationId: row.reservationId,
        companyId: row.companyId,
        documentId: row.documentId,
        allowancePeriodId: row.allowancePeriodId,
        version: row.version ?? 0,
        amount: row.amount,
        lots: (row.details.lots as { lotId: string; amount: number }[] | undefined) ?? [],
      },
      restorePool: input.restorePool,
      reason: input.reason,
      countryCode,
      documentType,
      now: ctx.now.toISOString(),
    },
    { ...ctx, workspaceId: input.workspaceId, environment: row.environment },
    { idSeed: `consumption-reversal/${row.transactionId}` },
  );
  return { ...outcome, alreadyReversed: outcome.replayed };
}
