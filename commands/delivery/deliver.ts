/**
 * Delivering a sales document: start an attempt, hand the document to its destination's
 * connector, and record the answer — delivered (with the final result when the destination
 * gives it at once), refused, or failed (retried with back-off until the attempts run out).
 *
 * Every step is idempotent, so a crash at any instant is safe to replay: the state machine
 * refuses a step taken twice, event ids derive from (document, attempt, step), and the
 * destination recognises a document it already received by its UUID. A document left in
 * `processing` (its answer was never recorded) is sent again under the same attempt.
 */
import { recordDeliveryAttempt } from '../../platform/metrics.js';
import { createHash } from 'node:crypto';
import type * as t from 'io-ts';
import { v5 as uuidv5 } from 'uuid';
import { generateInvoiceXml, generateTaxDataDocument, type CoreDocument } from '../../domain/artifacts/index.js';
import { destinationFor, retryDelayMs } from '../../domain/delivery/policy.js';
import { nextLink, ZatcaInvoiceChained, type ZatcaLink } from '../../domain/delivery/zatca-chain.js';
import {
  DeliveryFailed,
  Delivered,
  DocumentSubmitted,
  documentDecider,
  documentStream,
  type DocumentCommand,
  type DocumentErrorItem,
  type DocumentStateView,
} from '../../domain/document/document.js';
import { DomainError } from '../../domain/errors.js';
import { decodeEventData, type EventDefinition } from '../../domain/events/envelope.js';
import type { Clock } from '../../platform/clock.js';
import { artifactOf, WrongExpectedVersionError, type Artifact, type EventStore, type RecordedEvent } from '../eventstore/port.js';
import { artifactBase64 } from '../submissions.js';
import { eventMetadata, execute, foldRecorded, type CommandContext, type Loaded } from '../execute.js';
import type { ConnectorRegistry, DeliveryRequest } from './connector.js';

export interface DeliveryPolicy {
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

export interface DeliveryDeps {
  store: EventStore;
  clock: Clock;
  connectors: ConnectorRegistry;
  policy: DeliveryPolicy;
}

export type DeliveryOutcome = 'delivered' | 'final' | 'retry_scheduled' | 'failed' | 'skipped';

const CHAIN_NAMESPACE = '0b8f5a52-1d7e-5c3a-8e6f-4a9d2c7b1e30';

interface DocumentHistory {
  events: RecordedEvent[];
  submitted: t.TypeOf<typeof DocumentSubmitted.codec>;
  loaded: Loaded<DocumentStateView>;
  ctx: CommandContext;
}

/**
 * The document's events. A reactor passes the DocumentSubmitted event it reacts to (always the
 * stream's first event): only the events after it are read then, not the submitted document
 * (with its XML) again.
 */
async function history(deps: DeliveryDeps, documentId: string, submittedEvent?: RecordedEvent): Promise<DocumentHistory | null> {
  const stream = documentStream(documentId);
  const known = submittedEvent && submittedEvent.streamId === stream && submittedEvent.revision === 0n ? submittedEvent : null;
  const events = known ? [known, ...(await deps.store.readStream(stream, { fromRevision: 1n }))] : await deps.store.readStream(stream);
  const first = events[0];
  if (!first || first.type !== DocumentSubmitted.type) return null;
  const submitted = decodeEventData(DocumentSubmitted, first.schemaVersion, first.data);
  const ctx: CommandContext = {
    now: deps.clock.now(),
    workspaceId: first.metadata.workspaceId ?? null,
    environment: submitted.environment,
    correlationId: first.metadata.correlationId,
    causationId: first.id,
    actor: 'delivery',
  };
  return { events, submitted, loaded: foldRecorded(documentDecider, events), ctx };
}

function lastOfType<A>(events: RecordedEvent[], def: EventDefinition<A>): A | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === def.type) return decodeEventData(def, e.schemaVersion, e.data);
  }
  return null;
}

function request(h: DocumentHistory, attempt: number, xmlBase64: string | null, invoiceHash: string | null): DeliveryRequest {
  const s = h.submitted;
  return {
    documentId: s.documentId,
    uuid: s.uuid,
    attempt,
    environment: s.environment,
    country: s.country,
    documentType: s.documentType,
    documentNumber: s.documentNumber,
    coreDocument: s.coreDocument,
    xmlBase64,
    invoiceHash,
  };
}

/**
 * Saudi invoices join their seller's chain on delivery: counter and previous hash from the
 * chain's last link, appended with that link's revision. A document already chained (an
 * attempt that crashed after chaining) gets its original link back, and the same XML.
 */
async function chainZatcaInvoice(deps: DeliveryDeps, h: DocumentHistory): Promise<{ xmlBase64: string; invoiceHash: string }> {
  const s = h.submitted;
  const sellerVat = (s.coreDocument as CoreDocument)?.parties?.seller?.taxIds?.[0]?.value ?? s.source.name;
  const chainStream = `zatcachain-${createHash('sha256').update(`${h.ctx.workspaceId}\n${s.environment}\n${String(sellerVat)}`).digest('hex')}`;
  const eventId = uuidv5(`${s.documentId}:zatca-link`, CHAIN_NAMESPACE);
  const xmlFor = (link: { counter: number; previousInvoiceHash: string }) =>
    generateInvoiceXml({
      country: 'SA',
      documentType: s.documentType,
      document: s.coreDocument as CoreDocument,
      uuid: s.uuid,
      invoiceCounter: link.counter,
      previousInvoiceHash: link.previousInvoiceHash,
    });
  for (let attempt = 0; attempt < 20; attempt++) {
    const [lastEvent] = await deps.store.readStream(chainStream, { backwards: true, maxCount: 1 });
    const last = lastEvent ? (decodeEventData(ZatcaInvoiceChained, lastEvent.schemaVersion, lastEvent.data) as ZatcaLink) : null;
    if (last?.documentId === s.documentId) {
      const xml = xmlFor(last);
      return { xmlBase64: xml.base64, invoiceHash: xml.hash! };
    }
    const link = nextLink(last);
    const xml = xmlFor(link);
    const data: ZatcaLink = { documentId: s.documentId, counter: link.counter, invoiceHash: xml.hash!, previousInvoiceHash: link.previousInvoiceHash };
    try {
      const appended = await deps.store.append(
        chainStream,
        [{ id: eventId, type: ZatcaInvoiceChained.type, schemaVersion: ZatcaInvoiceChained.version, data, metadata: eventMetadata(h.ctx) }],
        lastEvent ? lastEvent.revision : 'no_stream',
      );
      if (!appended.replayed) return { xmlBase64: xml.base64, invoiceHash: xml.hash! };
      // Chained by an earlier attempt further back in the chain: use that link.
      const [original] = await deps.store.readStream(chainStream, { fromRevision: appended.nextExpectedRevision, maxCount: 1 });
      const link0 = decodeEventData(ZatcaInvoiceChained, original!.schemaVersion, original!.data) as ZatcaLink;
      const again = xmlFor(link0);
      return { xmlBase64: again.base64, invoiceHash: again.hash! };
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) continue;
      throw err;
    }
  }
  throw new Error(`could not extend the ZATCA chain of seller ${String(sellerVat)}: too much contention`);
}

async function record(deps: DeliveryDeps, h: DocumentHistory, loaded: Loaded<DocumentStateView>, command: DocumentCommand, step: string, artifacts?: Artifact[]) {
  const attempt = loaded.state.attempts;
  return execute(deps.store, documentDecider, documentStream(h.submitted.documentId), command, h.ctx, {
    idSeed: `${h.submitted.documentId}:${attempt}:${step}`,
    loaded,
    artifacts,
  });
}

/** The submitted XML (base64) the connector is handed: inline in a v1 event, else from the artifact store. */
const submittedXml = (deps: DeliveryDeps, h: DocumentHistory) => (h.submitted.xml ? artifactBase64(deps.store, h.submitted.xml) : Promise.resolve(null));

/**
 * Runs one delivery attempt of a document if one is due; safe to call any number of times.
 * `submittedEvent`: the document's DocumentSubmitted event, when the caller has it already.
 */
export async function deliverDocument(deps: DeliveryDeps, documentId: string, submittedEvent?: RecordedEvent): Promise<DeliveryOutcome> {
  const h = await history(deps, documentId, submittedEvent);
  if (!h) return 'skipped';
  let loaded = h.loaded;
  const state = loaded.state.state;
  if (state === 'delivery_failed') {
    const failure = lastOfType(h.events, DeliveryFailed);
    if (!failure?.retryable) return 'skipped';
    if (failure.nextAttemptAt && Date.parse(failure.nextAttemptAt) > h.ctx.now.getTime()) return 'skipped';
  } else if (state !== 'submitted' && state !== 'processing') {
    return 'skipped';
  }
  const s = h.submitted;
  const destination = destinationFor(s.country);
  try {
    if (state !== 'processing') {
      const started = await record(deps, h, loaded, { type: 'StartDelivery', destination: destination ?? 'NONE' }, 'start-next');
      loaded = { state: started.state, revision: started.appended!.nextExpectedRevision };
    }
    const attempt = loaded.state.attempts;
    const connector = destination ? deps.connectors.connectorFor(s.environment, destination) : null;
    if (!connector) {
      recordDeliveryAttempt(destination ?? 'NONE', s.environment, 'not_configured');
      const error: DocumentErrorItem = {
        code: 'DESTINATION_NOT_CONFIGURED',
        message: destination ? `no ${destination} connector is configured for the ${s.environment} environment` : `delivery to ${s.country} is not supported`,
        path: [],
        source: 'delivery',
      };
      await record(deps, h, loaded, { type: 'RecordDeliveryFailed', error, retryable: false, government: null }, 'result');
      return 'failed';
    }

    let xmlBase64 = s.country === 'SA' ? null : await submittedXml(deps, h);
    let invoiceHash: string | null = null;
    let chainedXml: string | null = null;
    if (s.country === 'SA') {
      const chained = await chainZatcaInvoice(deps, h);
      xmlBase64 = chainedXml = chained.xmlBase64;
      invoiceHash = chained.invoiceHash;
    }
    const answer = await connector.deliver(request(h, attempt, xmlBase64, invoiceHash));
    recordDeliveryAttempt(destination!, s.environment, answer.kind);
    const now = deps.clock.now();
    switch (answer.kind) {
      case 'delivered': {
        const tddXmlBase64 =
          s.country === 'AE'
            ? generateTaxDataDocument({ documentType: s.documentType, document: s.coreDocument as CoreDocument, uuid: s.uuid, reportedAt: now.toISOString() }).base64
            : null;
        // Artifacts produced on delivery are stored by hash with the Delivered event.
        const xml = chainedXml ? artifactOf(Buffer.from(chainedXml, 'base64')) : null;
        const tdd = tddXmlBase64 ? artifactOf(Buffer.from(tddXmlBase64, 'base64')) : null;
        await record(
          deps,
          h,
          loaded,
          { type: 'RecordDelivered', government: answer.government, xml, tdd, finalResultDueAt: answer.finalResultDueAt, final: answer.final },
          'result',
          [xml, tdd].filter((a): a is Artifact => a !== null),
        );
        return answer.final ? 'final' : 'delivered';
      }
      case 'refused':
        await record(
          deps,
          h,
          loaded,
          { type: 'RecordDeliveryFailed', error: answer.errors[0]!, retryable: false, government: answer.government, final: { government: answer.government, errors: answer.errors } },
          'result',
        );
        return 'final';
      case 'failed': {
        if (attempt >= deps.policy.maxAttempts) {
          const summary: DocumentErrorItem = answer.outcomeUnknown
            ? { code: 'DELIVERY_OUTCOME_UNKNOWN', message: `no answer after ${attempt} attempts: the destination may have received the document; it needs reconciliation`, path: [], source: 'delivery' }
            : { code: 'DELIVERY_ATTEMPTS_EXHAUSTED', message: `delivery failed ${attempt} times; send it again as a new document`, path: [], source: 'delivery' };
          await record(
            deps,
            h,
            loaded,
            { type: 'RecordDeliveryFailed', error: answer.error, retryable: false, government: null, final: { government: null, errors: [summary, answer.error] } },
            'result',
          );
          return 'final';
        }
        const nextAttemptAt = new Date(now.getTime() + retryDelayMs(attempt, deps.policy.retryBaseMs, deps.policy.retryMaxMs)).toISOString();
        await record(deps, h, loaded, { type: 'RecordDeliveryFailed', error: answer.error, retryable: true, government: null, nextAttemptAt }, 'result');
        return 'retry_scheduled';
      }
    }
  } catch (err) {
    // Another runner took this step first: its outcome stands.
    if (err instanceof DomainError && err.code === 'INVALID_TRANSITION') return 'skipped';
    throw err;
  }
}

/** Asks the destination for the final result of a delivered document whose result is due. */
export async function completeFinalResult(deps: DeliveryDeps, documentId: string): Promise<DeliveryOutcome> {
  const h = await history(deps, documentId);
  if (!h || h.loaded.state.state !== 'delivery_success') return 'skipped';
  const delivered = lastOfType(h.events, Delivered);
  if (!delivered) return 'skipped';
  const destination = destinationFor(h.submitted.country);
  const connector = destination ? deps.connectors.connectorFor(h.submitted.environment, destination) : null;
  if (!connector) return 'skipped';
  const final = await connector.finalResult(request(h, h.loaded.state.attempts, await submittedXml(deps, h), null), delivered.government as Record<string, unknown>);
  if (!final) return 'skipped';
  try {
    await record(deps, h, h.loaded, { type: 'Finalize', ...final }, 'final');
    return 'final';
  } catch (err) {
    if (err instanceof DomainError && err.code === 'INVALID_TRANSITION') return 'skipped';
    throw err;
  }
}
