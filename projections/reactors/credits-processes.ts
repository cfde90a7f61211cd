/**
 * The processes of credits (see reactor.ts):
 *
 * - metering: DocumentSubmitted reserves the document's credits; DocumentFinalized finalizes
 *   them (valid), releases them (invalid), or marks them for reconciliation (invalid with
 *   DELIVERY_OUTCOME_UNKNOWN: the destination may have the document). Documents are metered
 *   concurrently, but the reactions of one document run in log order;
 * - in the background reactor: archived sources (CompanySourceArchived with
 *   cancelScheduledAllowance cancels the company's scheduled allowance), bulk jobs (a submitted
 *   job runs its rows), exports (completed once the ledger read model has caught up with them);
 * - the lifecycle worker: activations and expiries of allowances and lots, ticked with the
 *   injected clock (every 60 s by default).
 *
 * Every reaction is idempotent: it decides on the aggregate's current state and passes the
 * triggering event's id as idSeed, so a reaction replayed after a crash is recognised.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../../platform/eventstore/port.js';
import { comparePositions, type EventStore } from '../../platform/eventstore/port.js';
import { execute, loadAggregate, type CommandContext } from '../../commands/execute.js';
import { cancelScheduledForArchivedSource } from '../../commands/credits/allowances.js';
import { processBulkJob } from '../../commands/credits/bulk.js';
import type { CreditsEngine } from '../../commands/credits/engine.js';
import { runCreditLifecycle } from '../../commands/credits/lifecycle.js';
import { reserveForDocument, settleDocumentReservation } from '../../commands/credits/metering.js';
import { readSubmission } from '../../commands/submissions.js';
import { creditsEngine } from '../../commands/credits/snapshots.js';
import { CompanySourceArchived } from '../../domain/connect/company.js';
import { CreditBulkJobSubmitted, CreditExportRequested, creditExportDecider } from '../../domain/credits/jobs.js';
import { CREDIT_LIMITS, creditExportStream } from '../../domain/credits/values.js';
import { DocumentSubmitted, Finalized } from '../../domain/document/document.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import type { Clock } from '../../platform/clock.js';
import { countLedgerBefore } from '../../readmodels/credits.js';
import type { Reactor, Worker } from './reactor.js';
import { readCheckpoint } from '../../readmodels/checkpoints.js';

export interface CreditProcessDeps {
  knex: Knex;
  store: EventStore;
  clock: Clock;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  engine?: CreditsEngine;
  /** Documents metered at once (default 64: their reservations are decided and appended together). */
  meteringConcurrency?: number;
}

/** The reactions of one key run one after the other, in the order they were started. */
function keyedSerial() {
  const chains = new Map<string, Promise<unknown>>();
  return async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const previous = chains.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => {});
    chains.set(key, settled);
    try {
      return await run;
    } finally {
      if (chains.get(key) === settled) chains.delete(key);
    }
  };
}

function reactionContext(event: RecordedEvent, clock: Clock, actor: string): CommandContext {
  return {
    now: clock.now(),
    correlationId: event.metadata.correlationId,
    causationId: event.id,
    requestId: event.metadata.requestId ?? null,
    keyId: event.metadata.keyId ?? null,
    environment: event.metadata.environment ?? null,
    actor,
  };
}

const DELIVERY_OUTCOME_UNKNOWN = 'DELIVERY_OUTCOME_UNKNOWN';

export function meteringReactor(deps: CreditProcessDeps): Reactor {
  const engine = deps.engine ?? creditsEngine(deps);
  const serial = keyedSerial();
  /** Workspace, company and environment of a document, from its submission (first event). */
  const submissionOf = async (documentId: string) => {
    const submission = await readSubmission(deps.store, documentId);
    if (!submission) return null;
    return { workspaceId: submission.event.metadata.workspaceId ?? null, companyId: submission.data.source.companyId, environment: submission.data.environment };
  };
  return {
    name: 'credit_metering',
    eventTypes: new Set([DocumentSubmitted.type, Finalized.type]),
    concurrency: deps.meteringConcurrency ?? 64,
    react(event) {
      const documentId = event.streamId.slice('document-'.length);
      return serial(documentId, async () => {
        const ctx = reactionContext(event, deps.clock, 'credit-metering');
        if (event.type === DocumentSubmitted.type) {
          const d = decodeEventData(DocumentSubmitted, event.schemaVersion, event.data);
          const workspaceId = event.metadata.workspaceId;
          if (!workspaceId || !d.source.companyId) return; // not a document of a Connect company: not metered
          await reserveForDocument(engine, { workspaceId, companyId: d.source.companyId, documentId }, { ...ctx, environment: d.environment }, { idSeed: event.id });
          return;
        }
        const d = decodeEventData(Finalized, event.schemaVersion, event.data);
        // The settlement needs only the workspace and the environment, which the delivery records
        // in the event's metadata: no read of the submission. Settling a document that holds no
        // reservation (not of a Connect company, or refused) changes nothing. Events without them
        // read the submission, as before.
        let target: { workspaceId: string; environment: string };
        if (event.metadata.workspaceId && event.metadata.environment) {
          target = { workspaceId: event.metadata.workspaceId, environment: event.metadata.environment };
        } else {
          const submission = await submissionOf(documentId);
          if (!submission?.workspaceId || !submission.companyId) return;
          target = { workspaceId: submission.workspaceId, environment: submission.environment };
        }
        const how = d.outcome === 'valid' ? 'finalize' : d.errors.some((e) => e.code === DELIVERY_OUTCOME_UNKNOWN) ? 'needs_reconciliation' : 'release';
        const reason =
          how === 'finalize'
            ? 'the document is final and valid'
            : how === 'release'
              ? `the document ended invalid${d.errors[0] ? ` (${d.errors[0].code})` : ''}`
              : 'the delivery outcome could not be determined';
        await settleDocumentReservation(engine, target.workspaceId, documentId, how, reason, { ...ctx, environment: target.environment }, { idSeed: event.id });
      });
    },
  };
}

/**
 * The low-volume reactions of credits in one reactor (each projection or reactor reads the whole
 * log, so fewer of them cost less): archived sources cancel scheduled allowances, submitted bulk
 * jobs run, requested exports complete. Independent of one another, they run concurrently.
 */
export function backgroundReactor(deps: CreditProcessDeps): Reactor {
  const engine = deps.engine ?? creditsEngine(deps);
  return {
    name: 'credit_background',
    eventTypes: new Set([CompanySourceArchived.type, CreditBulkJobSubmitted.type, CreditExportRequested.type]),
    concurrency: 4,
    async react(event) {
      switch (event.type) {
        case CompanySourceArchived.type: {
          const d = decodeEventData(CompanySourceArchived, event.schemaVersion, event.data);
          if (d.cancelScheduledAllowance) await cancelScheduledForArchivedSource(engine, d.workspaceId, d.companyId, reactionContext(event, deps.clock, 'connect'), event.id);
          return;
        }
        case CreditBulkJobSubmitted.type:
          await processBulkJob(
            {
              store: deps.store,
              engine,
              clock: deps.clock,
              onUnexpectedError: (err, row) => deps.log?.('credit bulk job row failed unexpectedly', { jobId: event.streamId, operationId: row.operationId, error: String(err) }),
            },
            event.streamId.slice('creditbulkjob-'.length),
            event,
          );
          return;
        case CreditExportRequested.type:
          await completeExport(deps, event);
          return;
      }
    },
  };
}

/** How long an export waits for the ledger read model before the runner retries it. */
const EXPORT_WAIT_MS = 30_000;

async function completeExport(deps: CreditProcessDeps, event: RecordedEvent): Promise<void> {
  const d = decodeEventData(CreditExportRequested, event.schemaVersion, event.data);
  const { state } = await loadAggregate(deps.store, creditExportDecider, creditExportStream(d.exportId));
  if (state.export?.status !== 'accepted') return;
  const deadline = Date.now() + EXPORT_WAIT_MS;
  for (;;) {
    const at = await readCheckpoint(deps.knex, 'credits');
    if (at && comparePositions(at, event.position) >= 0) break;
    if (Date.now() > deadline) throw new Error(`export ${d.exportId}: the ledger read model has not reached the request yet`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const through: [string, string] = [event.position.commit.toString(), event.position.prepare.toString()];
  const rowCount = await countLedgerBefore(deps.knex, d.workspaceId, d.filters, through);
  await execute(
    deps.store,
    creditExportDecider,
    creditExportStream(d.exportId),
    { type: 'CompleteExport', rowCount, throughPosition: through.join('/'), now: deps.clock.now().toISOString(), availableMs: CREDIT_LIMITS.exportAvailableMs },
    { ...reactionContext(event, deps.clock, 'credit-exports'), workspaceId: d.workspaceId },
    { idSeed: event.id },
  );
}

export function creditLifecycleWorker(deps: CreditProcessDeps): Worker {
  const engine = deps.engine ?? creditsEngine(deps);
  return {
    name: 'credit_lifecycle',
    tick: (now) => runCreditLifecycle(engine, deps.knex, now),
  };
}

/** Every reactor and worker of credits, for serviceProcesses. */
export function creditProcesses(deps: CreditProcessDeps, options: { lifecycleIntervalMs?: number } = {}) {
  return {
    reactors: [meteringReactor(deps), backgroundReactor(deps)],
    workers: [{ worker: creditLifecycleWorker(deps), intervalMs: options.lifecycleIntervalMs ?? CREDIT_LIMITS.lifecycleIntervalMs }],
  };
}
