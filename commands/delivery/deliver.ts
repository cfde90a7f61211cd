/**
 * Delivering a sales document: start an attempt, hand the document to its destination's
 * connector, and record the answer — delivered (with the final result when the destination
 * gives it at once), refused, or failed (retried with back-off until the attempts run out).
 *
 * Every step is idempotent, so a crash at any instant is safe to replay: the state machine
 * refuses a step taken twice, event ids derive from (document, attempt, step), and the
 * destination recognises a document it already received by its UUID. A document left in
 * `processing` (its answer was never recorded) is sent again under the same attempt: the reactor
 * replays a submission it had not finished; an interrupted retry the worker resumes after
 * DELIVERY_RESUME_AFTER_MS (projections/reactors/delivery.ts).
 *
 * No step reads the document's whole stream in the usual case. The delivery reactor works from
 * the DocumentSubmitted event it reacts to (the stream's first event): it sends the document at
 * once, and appends the attempt's start together with the destination's answer, one append with
 * revision 0 expected. A destination that takes longer than the policy's grace has the start
 * appended on its own meanwhile (the document shows `processing`), and the answer after it with
 * the revision that append returned. The worker (retries, final results collected later) works
 * from the document's delivery snapshot (domain/delivery/snapshot.ts), appended with the step
 * after which the document waits for it, and reads the submitted XML (the stream's first event
 * alone) only when it sends the document again; it appends the start before it sends. Either way
 * the first append expects the revision the view was taken at: when the stream has moved on
 * (another runner, a crash's replay), nothing is written from the stale view; the stream is read
 * and the step decided afresh. From a snapshot nothing is sent then. From the reactor's event
 * the document is sent before that append: the reactor therefore decides every reaction the
 * runner may have run before from the stream (projections/reactors/delivery.ts), and a view from the
 * event is stale only when two reactions to it run at once, which the destination answers as a
 * document it has.
 */
import { recordDeliveryAttempt } from '../../platform/metrics.js';
import { createHash } from 'node:crypto';
import type * as t from 'io-ts';
import { v5 as uuidv5 } from 'uuid';
import { generateInvoiceXml, generateTaxDataDocument, type CoreDocument } from '../../domain/artifacts/index.js';
import { destinationFor, retryDelayMs } from '../../domain/delivery/policy.js';
import { DeliverySnapshotTaken, deliverySnapshotStream, type DeliverySnapshot } from '../../domain/delivery/snapshot.js';
import { nextLink, ZatcaInvoiceChained, zatcaSellerChainStream, zatcaUnitChainStream, type ZatcaLink } from '../../domain/delivery/zatca-chain.js';
import { csidValidityProblem, ZATCA_CSID_EXPIRED, zatcaStamper } from '../../domain/zatca/stamp.js';
import {
  DeliveryFailed,
  Delivered,
  DocumentSubmitted,
  documentDecider,
  documentStream,
  type DocumentCommand,
  type DocumentErrorItem,
  type DocumentState,
  type DocumentStateView,
} from '../../domain/document/document.js';
import { fold } from '../../domain/decider.js';
import { DomainError } from '../../domain/errors.js';
import { decodeEventData, type EventDefinition } from '../../domain/events/envelope.js';
import type { Clock } from '../../platform/clock.js';
import { artifactOf, DuplicateEventError, WrongExpectedVersionError, type Artifact, type EventStore, type NewEvent, type RecordedEvent, type StreamAppend } from '../../platform/eventstore/port.js';
import { artifactBytes, readSubmission } from '../submissions.js';
import { CONFLICT_RETRY_BUDGET_MS, ConcurrencyConflictError, conflictBackoff, eventMetadata, foldRecorded, loadAggregate, seededEventId, type CommandContext, type Loaded } from '../execute.js';
import type { ConnectorRegistry, DeliveryAnswer, DeliveryRequest } from './connector.js';
import type { SecretBox } from '../webhooks/secrets.js';
import { sellerSigningMaterial } from '../zatca/egs-units.js';

export interface DeliveryPolicy {
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * How long the reactor lets a destination work before it records the attempt's start on its
   * own, so the document shows `processing` meanwhile. A destination that answers sooner has the
   * start recorded with its answer, in one append.
   */
  startGraceMs: number;
}

export interface DeliveryDeps {
  store: EventStore;
  clock: Clock;
  connectors: ConnectorRegistry;
  policy: DeliveryPolicy;
  /**
   * Saudi stamping: opens the keys of the sellers' EGS units (see commands/zatca/egs-units.ts).
   * Without it, Saudi invoices go unstamped, chained per seller.
   */
  zatca?: {
    secrets: SecretBox;
    /**
     * The environment of the EGS units that stamp a document of this environment (production
     * documents: the ZATCA environment they are sent to, ZATCA_ENVIRONMENT); the document's own by default.
     */
    unitEnvironment?: (documentEnvironment: string) => string;
  };
}

export type DeliveryOutcome = 'delivered' | 'final' | 'retry_scheduled' | 'failed' | 'skipped';

const CHAIN_NAMESPACE = '0b8f5a52-1d7e-5c3a-8e6f-4a9d2c7b1e30';

/** What delivery needs of the submission: the DocumentSubmitted event without its artifacts. */
interface Submission {
  documentId: string;
  uuid: string;
  documentNumber: string | null;
  country: string;
  environment: string;
  documentType: { base: string; modifiers: string[]; variant?: string | null };
  sourceName: string;
  coreDocument: unknown;
  /** When the document was submitted (ISO): the Saudi XML's issue time and the QR's timestamp. */
  submittedAt?: string | null;
}

/**
 * A document as the delivery step sees it: its state at a revision of its stream, and what the
 * step needs besides. `from` says where it came from: the stream itself (up to date when read),
 * or the reactor's event or the snapshot (perhaps stale: the first append finds out).
 */
interface DocumentHistory {
  from: 'event' | 'snapshot' | 'stream';
  submitted: Submission;
  loaded: Loaded<DocumentStateView>;
  ctx: CommandContext;
  lastFailure: { retryable: boolean; nextAttemptAt: string | null } | null;
  deliveredGovernment: unknown;
  /** The submitted XML's bytes, read when needed. */
  xml(): Promise<Buffer | null>;
}

/** The view was taken at an older revision than the stream's: read the stream and decide again. */
class StaleView extends Error {
  override readonly name = 'StaleView';
}

type Submitted = t.TypeOf<typeof DocumentSubmitted.codec>;

function submissionOf(s: Submitted): Submission {
  const { documentId, uuid, documentNumber, country, environment, documentType, coreDocument } = s;
  // The validation ran at submission: its time is the submission time.
  const validatedAt = (s.validation as { validatedAt?: unknown } | null)?.validatedAt;
  const submittedAt = typeof validatedAt === 'string' ? validatedAt : null;
  return { documentId, uuid, documentNumber, country, environment, documentType, sourceName: s.source.name, coreDocument, submittedAt };
}

function contextOf(deps: DeliveryDeps, environment: string, context: DeliverySnapshot['context']): CommandContext {
  return { now: deps.clock.now(), workspaceId: context.workspaceId, environment, correlationId: context.correlationId, causationId: context.causationId, actor: 'delivery' };
}

function submittedContext(first: RecordedEvent): DeliverySnapshot['context'] {
  return { workspaceId: first.metadata.workspaceId ?? null, correlationId: first.metadata.correlationId ?? null, causationId: first.id };
}

/** The document's events read from its stream (the fallback, and the tests' path). */
async function fromStream(deps: DeliveryDeps, documentId: string, submittedEvent?: RecordedEvent): Promise<DocumentHistory | null> {
  const stream = documentStream(documentId);
  // The reactor's DocumentSubmitted event is the stream's first: only what follows it is read then.
  const known = submittedEvent && submittedEvent.streamId === stream && submittedEvent.revision === 0n ? submittedEvent : null;
  const events = known ? [known, ...(await deps.store.readStream(stream, { fromRevision: 1n }))] : await deps.store.readStream(stream);
  const first = events[0];
  if (!first || first.type !== DocumentSubmitted.type) return null;
  const submitted = decodeEventData(DocumentSubmitted, first.schemaVersion, first.data);
  const failure = lastOfType(events, DeliveryFailed);
  const delivered = lastOfType(events, Delivered);
  return {
    from: 'stream',
    submitted: submissionOf(submitted),
    loaded: foldRecorded(documentDecider, events),
    ctx: contextOf(deps, submitted.environment, submittedContext(first)),
    lastFailure: failure ? { retryable: failure.retryable, nextAttemptAt: failure.nextAttemptAt ?? null } : null,
    deliveredGovernment: delivered?.government ?? null,
    xml: () => submittedXml(deps, submitted),
  };
}

/** The reactor's view: the DocumentSubmitted event alone, the stream assumed at revision 0. */
function fromSubmittedEvent(deps: DeliveryDeps, event: RecordedEvent): DocumentHistory | null {
  if (event.type !== DocumentSubmitted.type || event.revision !== 0n) return null;
  const submitted = decodeEventData(DocumentSubmitted, event.schemaVersion, event.data);
  return {
    from: 'event',
    submitted: submissionOf(submitted),
    loaded: foldRecorded(documentDecider, [event]),
    ctx: contextOf(deps, submitted.environment, submittedContext(event)),
    lastFailure: null,
    deliveredGovernment: null,
    xml: () => submittedXml(deps, submitted),
  };
}

/** The worker's view: the document's last delivery snapshot, or null when it has none. */
async function fromSnapshot(deps: DeliveryDeps, documentId: string): Promise<DocumentHistory | null> {
  const [last] = await deps.store.readStream(deliverySnapshotStream(documentId), { backwards: true, maxCount: 1 });
  if (!last || last.type !== DeliverySnapshotTaken.type) return null;
  const snap = decodeEventData(DeliverySnapshotTaken, last.schemaVersion, last.data);
  return {
    from: 'snapshot',
    submitted: snap.submission,
    loaded: { state: { ...snap.state, state: snap.state.state as DocumentState }, revision: BigInt(snap.documentRevision) },
    ctx: contextOf(deps, snap.submission.environment, snap.context),
    lastFailure: snap.lastFailure,
    deliveredGovernment: snap.deliveredGovernment ?? null,
    // The stream's first event alone, and only when the document is sent again.
    xml: async () => {
      const submission = await readSubmission(deps.store, documentId);
      return submission ? submittedXml(deps, submission.data) : null;
    },
  };
}

/** The submitted XML the connector is handed: inline in a v1 event, else from the artifact store. */
const submittedXml = (deps: DeliveryDeps, submitted: Submitted): Promise<Buffer | null> =>
  submitted.xml ? artifactBytes(deps.store, submitted.xml) : Promise.resolve(null);

function lastOfType<A>(events: RecordedEvent[], def: EventDefinition<A>): A | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === def.type) return decodeEventData(def, e.schemaVersion, e.data);
  }
  return null;
}

function request(h: DocumentHistory, attempt: number, xml: Buffer | null, invoiceHash: string | null, zatcaEgsUnitId: string | null = null): DeliveryRequest {
  const s = h.submitted;
  return {
    documentId: s.documentId,
    workspaceId: h.ctx.workspaceId ?? null,
    uuid: s.uuid,
    attempt,
    environment: s.environment,
    country: s.country,
    documentType: s.documentType,
    documentNumber: s.documentNumber,
    coreDocument: s.coreDocument,
    xml,
    invoiceHash,
    zatcaEgsUnitId,
  };
}

/**
 * Saudi invoices join their chain on delivery: counter and previous hash from the chain's last
 * link, appended with that link's revision. A seller whose EGS unit holds a production CSID has
 * its invoices stamped with the unit's key and chained per unit (ZATCA counts per EGS unit); the
 * stamped XML is appended with the link as an artifact. A seller without one keeps today's
 * unstamped chain per seller (the sandbox). A document already chained (an attempt that crashed
 * after chaining) gets its original link back, and the same XML.
 */
/** Thrown before chaining when the unit's production CSID is outside its validity at the delivery's clock. */
class CsidNotUsable extends Error {
  constructor(readonly item: DocumentErrorItem) {
    super(item.message);
  }
}

function csidNotUsable(egsUnitId: string, x509: { validFrom: string; validTo: string }, now: Date): CsidNotUsable | null {
  const problem = csidValidityProblem(x509, now);
  if (!problem) return null;
  const renew = `renew it with \`admin zatca renew --egs-unit ${egsUnitId} --otp <OTP from the FATOORA portal>\`; the next attempt then stamps with the new CSID`;
  const message =
    problem.reason === 'expired'
      ? `the production CSID of EGS unit ${egsUnitId} expired at ${problem.notAfter}: nothing was stamped or sent; ${renew}`
      : `the production CSID of EGS unit ${egsUnitId} is not valid before ${problem.notBefore}: nothing was stamped or sent; wait until then or ${renew}`;
  return new CsidNotUsable({ code: ZATCA_CSID_EXPIRED, message, path: [], source: 'delivery' });
}

async function chainZatcaInvoice(deps: DeliveryDeps, h: DocumentHistory): Promise<{ xml: Buffer; invoiceHash: string; egsUnitId: string | null }> {
  const s = h.submitted;
  const sellerVat = String((s.coreDocument as CoreDocument)?.parties?.seller?.taxIds?.[0]?.value ?? s.sourceName);
  const signer = deps.zatca ? await sellerSigningMaterial({ store: deps.store, secrets: deps.zatca.secrets }, { workspaceId: String(h.ctx.workspaceId), environment: deps.zatca.unitEnvironment?.(s.environment) ?? s.environment, sellerVat }) : null;
  const egsUnitId = signer?.egsUnitId ?? null;
  const chainStream = signer ? zatcaUnitChainStream(signer.egsUnitId) : zatcaSellerChainStream(h.ctx.workspaceId, s.environment, sellerVat);
  const eventId = uuidv5(`${s.documentId}:zatca-link`, CHAIN_NAMESPACE);
  const stamp = signer ? zatcaStamper(signer, deps.clock.now()) : undefined;
  const xmlFor = (link: { counter: number; previousInvoiceHash: string }) => {
    const xml = generateInvoiceXml({
      country: 'SA',
      documentType: s.documentType,
      document: s.coreDocument as CoreDocument,
      uuid: s.uuid,
      issueTimestamp: s.submittedAt ?? undefined,
      invoiceCounter: link.counter,
      previousInvoiceHash: link.previousInvoiceHash,
      stamp,
    });
    return { bytes: xml.bytes, hash: xml.hash!, stamped: stamp ? artifactOf(xml.bytes) : null };
  };
  /** The XML of a link written before: its stamped artifact, or the unstamped XML made again. */
  const xmlOf = async (link: ZatcaLink) => {
    if (link.stampedXml) {
      const stored = (await deps.store.readArtifacts([link.stampedXml])).get(link.stampedXml);
      if (!stored) throw new Error(`the stamped XML ${link.stampedXml} of document ${link.documentId} is missing from the artifact store`);
      return { xml: stored, invoiceHash: link.invoiceHash, egsUnitId: link.egsUnitId ?? null };
    }
    const again = xmlFor(link);
    return { xml: again.bytes, invoiceHash: again.hash, egsUnitId: null };
  };
  for (let attempt = 0; attempt < 20; attempt++) {
    const [lastEvent] = await deps.store.readStream(chainStream, { backwards: true, maxCount: 1 });
    const last = lastEvent ? (decodeEventData(ZatcaInvoiceChained, lastEvent.schemaVersion, lastEvent.data) as ZatcaLink) : null;
    if (last?.documentId === s.documentId) return xmlOf(last);
    // A CSID outside its validity never stamps: nothing is chained (a link stamped earlier is reused above).
    const notUsable = signer ? csidNotUsable(signer.egsUnitId, signer.x509, deps.clock.now()) : null;
    if (notUsable) throw notUsable;
    const link = nextLink(last);
    const xml = xmlFor(link);
    const data: ZatcaLink = {
      documentId: s.documentId,
      counter: link.counter,
      invoiceHash: xml.hash,
      previousInvoiceHash: link.previousInvoiceHash,
      ...(xml.stamped ? { egsUnitId: egsUnitId!, stampedXml: xml.stamped.sha256 } : {}),
    };
    try {
      const appended = await deps.store.append(
        chainStream,
        [{ id: eventId, type: ZatcaInvoiceChained.type, schemaVersion: ZatcaInvoiceChained.version, data, metadata: eventMetadata(h.ctx) }],
        lastEvent ? lastEvent.revision : 'no_stream',
        xml.stamped ? { artifacts: [xml.stamped] } : undefined,
      );
      if (!appended.replayed) return { xml: xml.bytes, invoiceHash: xml.hash, egsUnitId };
      // Chained by an earlier attempt further back in the chain: use that link.
      const [original] = await deps.store.readStream(chainStream, { fromRevision: appended.nextExpectedRevision, maxCount: 1 });
      return xmlOf(decodeEventData(ZatcaInvoiceChained, original!.schemaVersion, original!.data) as ZatcaLink);
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) continue;
      throw err;
    }
  }
  throw new Error(`could not extend the ZATCA chain ${chainStream} of seller ${sellerVat}: too much contention`);
}

/** The snapshot of a document after a step (see domain/delivery/snapshot.ts). */
function snapshotAfter(h: DocumentHistory, state: DocumentStateView, revision: bigint, extra: Pick<DeliverySnapshot, 'lastFailure' | 'deliveredGovernment'>): DeliverySnapshot {
  return {
    documentRevision: revision.toString(),
    state,
    submission: h.submitted,
    context: { workspaceId: h.ctx.workspaceId ?? null, correlationId: h.ctx.correlationId ?? null, causationId: h.ctx.causationId ?? null },
    ...extra,
  };
}

/** The state after a step (which must be a transition of `state`). */
const afterStep = (state: DocumentStateView, { command }: Step) => fold(documentDecider, documentDecider.decide(command, state), state);

/** A command of the document's state machine, and the name its events' ids are seeded with. */
interface Step {
  command: DocumentCommand;
  step: string;
}

/**
 * Decides one step, or several in order (an attempt's start with its answer), on `loaded` and
 * appends their events in one append with `loaded`'s revision expected (and, with `snapshot`, the
 * document's delivery snapshot after them, in the same append). Each step's event ids are seeded
 * with the attempt count of the state it meets, so a step gets the same ids whether it is
 * appended alone or with the next. On a view that may be stale (`h.from` is not the stream) a
 * conflict of the first append is StaleView; otherwise a conflict re-decides on the stream's
 * fresh state, within the usual retry budget.
 */
async function record(
  deps: DeliveryDeps,
  h: DocumentHistory,
  loaded: Loaded<DocumentStateView>,
  steps: Step | readonly Step[],
  options: { firstOfView?: boolean; snapshot?: Pick<DeliverySnapshot, 'lastFailure' | 'deliveredGovernment'>; artifacts?: readonly Artifact[] } = {},
): Promise<{ state: DocumentStateView; revision: bigint; replayed: boolean }> {
  const stream = documentStream(h.submitted.documentId);
  const list = Array.isArray(steps) ? (steps as readonly Step[]) : [steps as Step];
  // The ids are those of the first decision (on `loaded`), kept when a conflict decides again.
  let seeds: string[] | null = null;
  const deadline = Date.now() + CONFLICT_RETRY_BUDGET_MS;
  for (let attempt = 1; ; attempt++) {
    const current = attempt === 1 ? loaded : await loadAggregate(deps.store, documentDecider, stream);
    const metadata = eventMetadata(h.ctx);
    let state = current.state;
    const toAppend: NewEvent[] = [];
    const seedsNow: string[] = [];
    list.forEach(({ command, step }, k) => {
      const idSeed = seeds?.[k] ?? `${h.submitted.documentId}:${state.attempts}:${step}`;
      seedsNow.push(idSeed);
      const events = documentDecider.decide(command, state);
      state = fold(documentDecider, events, state);
      events.forEach((e, i) =>
        toAppend.push({
          id: seededEventId(idSeed, i),
          type: e.type,
          schemaVersion: (documentDecider.events as Record<string, { version: number }>)[e.type]!.version,
          data: e.data,
          metadata,
        }),
      );
    });
    seeds ??= seedsNow;
    const revision = (current.revision === 'no_stream' ? -1n : current.revision) + BigInt(toAppend.length);
    const parts: StreamAppend[] = [{ streamId: stream, events: toAppend, expected: current.revision }];
    if (options.snapshot) {
      const snapshot = snapshotAfter(h, state, revision, options.snapshot);
      parts.push({
        streamId: deliverySnapshotStream(h.submitted.documentId),
        events: [{ id: seededEventId(seeds[seeds.length - 1]!, 'snapshot'), type: DeliverySnapshotTaken.type, schemaVersion: DeliverySnapshotTaken.version, data: snapshot, metadata }],
        expected: 'any',
      });
    }
    try {
      // The store need not keep the delivery's artifacts in memory: nothing reads them back soon.
      const append = { artifacts: options.artifacts, keep: false };
      const [appended] = parts.length === 1 ? [await deps.store.append(stream, toAppend, current.revision, append)] : await deps.store.appendMulti(parts, append);
      return { state, revision: appended!.nextExpectedRevision, replayed: appended!.replayed };
    } catch (err) {
      // Some of these events stored already, not all: an earlier run appended the start alone.
      if (err instanceof DuplicateEventError && err.streamId === stream && attempt === 1 && options.firstOfView && h.from !== 'stream') {
        throw new StaleView(`${stream} holds part of this step already`);
      }
      if (!(err instanceof WrongExpectedVersionError) || err.streamId !== stream) throw err;
      if (attempt === 1 && options.firstOfView && h.from !== 'stream') throw new StaleView(`${stream} moved past revision ${String(current.revision)}`);
      if (!(await conflictBackoff(attempt, deadline))) throw new ConcurrencyConflictError(stream, attempt);
    }
  }
}

/** The destination's answer, or null when it has not answered within `ms` (it goes on working). */
async function answerWithin<T>(answer: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs one delivery attempt of a document if one is due; safe to call any number of times.
 * `submittedEvent`: the document's DocumentSubmitted event, when the caller has it already.
 * `fromStream`: decide from the document's stream at once rather than first trying the view the
 * event gives (a document submitted long ago has usually moved on: the view's first append would
 * only fail on its revision).
 */
export async function deliverDocument(deps: DeliveryDeps, documentId: string, submittedEvent?: RecordedEvent, options: { fromStream?: boolean } = {}): Promise<DeliveryOutcome> {
  const view = options.fromStream ? null : submittedEvent ? fromSubmittedEvent(deps, submittedEvent) : await fromSnapshot(deps, documentId);
  if (view) {
    try {
      return await attemptDelivery(deps, view);
    } catch (err) {
      if (!(err instanceof StaleView)) throw err;
    }
  }
  const h = await fromStream(deps, documentId, submittedEvent);
  return h ? attemptDelivery(deps, h) : 'skipped';
}

async function attemptDelivery(deps: DeliveryDeps, h: DocumentHistory): Promise<DeliveryOutcome> {
  let loaded = h.loaded;
  const state = loaded.state.state;
  if (state === 'delivery_failed') {
    const failure = h.lastFailure;
    if (!failure?.retryable) return 'skipped';
    if (failure.nextAttemptAt && Date.parse(failure.nextAttemptAt) > h.ctx.now.getTime()) return 'skipped';
  } else if (state !== 'submitted' && state !== 'processing') {
    return 'skipped';
  }
  if (state === 'processing' && h.from !== 'stream') throw new StaleView('a view never says processing'); // defensive: only the stream knows an interrupted attempt
  const s = h.submitted;
  const destination = destinationFor(s.country);
  /**
   * The attempt's start. From the reactor's event it waits to be appended with the destination's
   * answer (one append instead of two) unless the destination takes longer than the grace: then
   * it is appended on its own meanwhile, and the document shows `processing`. From a snapshot or
   * the stream it is appended first, so nothing is sent from a view the stream has moved past.
   */
  let start: Step | null = null;
  const recordStart = async () => {
    const started = await record(deps, h, loaded, start!, { firstOfView: true });
    // A replayed start (a crash's earlier run) may have been followed by more: read the stream.
    if (started.replayed && h.from !== 'stream') throw new StaleView('the start was a replay');
    loaded = { state: started.state, revision: started.revision };
    start = null;
  };
  /**
   * Appends an answer's step, with the start when it waits; `outcome` unless every event was
   * stored already (the same reaction run before, a crash's replay): then nothing changed.
   */
  const recordAnswer = async (step: Step, outcome: DeliveryOutcome, options: { snapshot?: Pick<DeliverySnapshot, 'lastFailure' | 'deliveredGovernment'>; artifacts?: readonly Artifact[] } = {}) => {
    const recorded = await record(deps, h, loaded, start ? [start, step] : step, { ...options, firstOfView: start !== null });
    return recorded.replayed ? 'skipped' : outcome;
  };
  try {
    if (state !== 'processing') {
      start = { command: { type: 'StartDelivery', destination: destination ?? 'NONE' }, step: 'start-next' };
      if (h.from !== 'event') await recordStart();
    }
    const attempt = (start ? afterStep(loaded.state, start) : loaded.state).attempts;
    const connector = destination ? deps.connectors.connectorFor(s.environment, destination) : null;
    if (!connector) {
      recordDeliveryAttempt(destination ?? 'NONE', s.environment, 'not_configured');
      const error: DocumentErrorItem = {
        code: 'DESTINATION_NOT_CONFIGURED',
        message: destination ? `no ${destination} connector is configured for the ${s.environment} environment` : `delivery to ${s.country} is not supported`,
        path: [],
        source: 'delivery',
      };
      return await recordAnswer({ command: { type: 'RecordDeliveryFailed', error, retryable: false, government: null }, step: 'result' }, 'failed');
    }

    let xml = s.country === 'SA' ? null : await h.xml();
    let invoiceHash: string | null = null;
    let chainedXml: Buffer | null = null;
    let egsUnitId: string | null = null;
    let unusable: CsidNotUsable | null = null;
    if (s.country === 'SA') {
      try {
        const chained = await chainZatcaInvoice(deps, h);
        xml = chainedXml = chained.xml;
        invoiceHash = chained.invoiceHash;
        egsUnitId = chained.egsUnitId;
      } catch (err) {
        if (!(err instanceof CsidNotUsable)) throw err;
        unusable = err;
      }
    }
    // Settled either way, so a rejection is never left unhandled while the start is appended.
    // A CSID outside its validity sends nothing: the attempt fails retryable (a renewal lets the next one through).
    const sending: Promise<{ answer: DeliveryAnswer } | { error: unknown }> = unusable
      ? Promise.resolve({ answer: { kind: 'failed', error: unusable.item, outcomeUnknown: false } })
      : connector.deliver(request(h, attempt, xml, invoiceHash, egsUnitId)).then(
          (answer) => ({ answer }),
          (error: unknown) => ({ error }),
        );
    if (start && (await answerWithin(sending, deps.policy.startGraceMs)) === null) {
      // The destination is still working: record the start now (the document shows processing).
      try {
        await recordStart();
      } catch (err) {
        await sending; // never decide afresh while this attempt's call is still out
        throw err;
      }
    }
    const sent = await sending;
    if ('error' in sent) throw sent.error;
    const answer = sent.answer;
    recordDeliveryAttempt(destination!, s.environment, answer.kind);
    const now = deps.clock.now();
    switch (answer.kind) {
      case 'delivered': {
        // The Tax Data Document embeds the document as it was transmitted; a connector that sent
        // it to corner 5 itself says when and to whom, so the stored TDD is the one it sent.
        const corner5 = (answer.government as { corner5?: { reportedAt?: unknown; receiverId?: unknown; transportHeaderId?: unknown } }).corner5;
        const sentTdd = typeof corner5?.reportedAt === 'string' ? corner5 : null;
        const tddXml =
          s.country === 'AE'
            ? generateTaxDataDocument({
                documentType: s.documentType,
                document: s.coreDocument as CoreDocument,
                uuid: s.uuid,
                reportedAt: sentTdd ? String(sentTdd.reportedAt) : now.toISOString(),
                // The transmitted bytes, spliced into the TDD's without a round trip through text.
                sourceXml: xml ?? undefined,
                ...(sentTdd ? { receiverId: String(sentTdd.receiverId), transportHeaderId: String(sentTdd.transportHeaderId) } : {}),
              }).bytes
            : null;
        // Artifacts produced on delivery are stored by hash with the Delivered event.
        // A destination that signs the document or returns it as it accepted it (MyInvois, ZATCA's cleared invoice) has that stored.
        const chained = answer.xml ? artifactOf(answer.xml) : chainedXml ? artifactOf(chainedXml) : null;
        const tdd = tddXml ? artifactOf(tddXml) : null;
        const artifacts = [chained, tdd].filter((a): a is Artifact => a !== null);
        return await recordAnswer(
          { command: { type: 'RecordDelivered', government: answer.government, xml: chained, tdd, finalResultDueAt: answer.finalResultDueAt, final: answer.final }, step: 'result' },
          answer.final ? 'final' : 'delivered',
          // Without its final result the document waits for the worker: keep a snapshot for it.
          answer.final ? { artifacts } : { artifacts, snapshot: { lastFailure: null, deliveredGovernment: answer.government } },
        );
      }
      case 'refused':
        return await recordAnswer(
          {
            command: { type: 'RecordDeliveryFailed', error: answer.errors[0]!, retryable: false, government: answer.government, final: { government: answer.government, errors: answer.errors } },
            step: 'result',
          },
          'final',
        );
      case 'failed': {
        if (attempt >= deps.policy.maxAttempts) {
          const summary: DocumentErrorItem = answer.outcomeUnknown
            ? { code: 'DELIVERY_OUTCOME_UNKNOWN', message: `no answer after ${attempt} attempts: the destination may have received the document; it needs reconciliation`, path: [], source: 'delivery' }
            : { code: 'DELIVERY_ATTEMPTS_EXHAUSTED', message: `delivery failed ${attempt} times; send it again as a new document`, path: [], source: 'delivery' };
          return await recordAnswer(
            {
              command: { type: 'RecordDeliveryFailed', error: answer.error, retryable: false, government: null, final: { government: null, errors: [summary, answer.error] } },
              step: 'result',
            },
            'final',
          );
        }
        const nextAttemptAt = new Date(now.getTime() + retryDelayMs(attempt, deps.policy.retryBaseMs, deps.policy.retryMaxMs)).toISOString();
        return await recordAnswer({ command: { type: 'RecordDeliveryFailed', error: answer.error, retryable: true, government: null, nextAttemptAt }, step: 'result' }, 'retry_scheduled', {
          // The document waits for the worker's retry: keep a snapshot for it.
          snapshot: { lastFailure: { retryable: true, nextAttemptAt }, deliveredGovernment: null },
        });
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
  const view = await fromSnapshot(deps, documentId);
  if (view) {
    try {
      return await collectFinalResult(deps, view);
    } catch (err) {
      if (!(err instanceof StaleView)) throw err;
    }
  }
  const h = await fromStream(deps, documentId);
  return h ? collectFinalResult(deps, h) : 'skipped';
}

async function collectFinalResult(deps: DeliveryDeps, h: DocumentHistory): Promise<DeliveryOutcome> {
  if (h.loaded.state.state !== 'delivery_success') {
    // A snapshot taken before the delivery (a retry's) says nothing of what followed it.
    if (h.from !== 'stream') throw new StaleView('the snapshot is not of a delivered document');
    return 'skipped';
  }
  if (h.deliveredGovernment === null) return 'skipped';
  const destination = destinationFor(h.submitted.country);
  const connector = destination ? deps.connectors.connectorFor(h.submitted.environment, destination) : null;
  if (!connector) return 'skipped';
  // The final result is asked by the document's identity; the XML is not sent again.
  const final = await connector.finalResult(request(h, h.loaded.state.attempts, null, null), h.deliveredGovernment as Record<string, unknown>);
  if (!final) return 'skipped';
  try {
    await record(deps, h, h.loaded, { command: { type: 'Finalize', ...final }, step: 'final' }, { firstOfView: true });
    return 'final';
  } catch (err) {
    if (err instanceof DomainError && err.code === 'INVALID_TRANSITION') return 'skipped';
    throw err;
  }
}
