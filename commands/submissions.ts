/**
 * Submitting a sales document (both Unify formats): map the payload through the source's
 * template, validate, claim the document number (CORE-HEAD-010, race-free through the event
 * store), produce the e-invoice XML, and record the document as submitted or rejected: the claim,
 * the document's first event and the request's idempotency record in one multi-stream append.
 */
import { createHash, randomUUID } from 'node:crypto';
import type * as t from 'io-ts';
import { DomainError } from '../domain/errors.js';
import {
  DocumentRejected,
  DocumentSubmitted,
  documentDecider,
  documentStream,
  type ArtifactRef,
  type DocumentErrorItem,
  type DocumentEvent,
} from '../domain/document/document.js';
import {
  ABANDONED_CLAIM_MS,
  DOCUMENT_NUMBER_REUSED,
  DocumentNumberClaimed,
  STALE_CLAIM_FACTS,
  numberClaimDecider,
  type NumberClaimState,
} from '../domain/document/number-claim.js';
import { decodeEventData } from '../domain/events/envelope.js';
import {
  applyTemplate,
  builtInTemplates,
  documentNumberReuseFinding,
  validateDocument,
  type ValidationFinding,
  type ValidationReport,
} from '../domain/validation/index.js';
import type { Artifact, EventStore, NewEvent, Position, RecordedEvent, StreamAppend } from '../platform/eventstore/port.js';
import { artifactOf, WrongExpectedVersionError } from '../platform/eventstore/port.js';
import { retryOnConflict } from './retry.js';
import { ConcurrencyConflictError, eventMetadata, loadAggregate, type CommandContext, type Loaded } from './execute.js';
import { appendWithEffect, takeSlot } from './idempotent-unit.js';

export interface SubmissionSource {
  name: string;
  version: string;
  companyId: string | null;
  templateId: string;
}

export interface SubmissionInput {
  workspaceId: string;
  environment: string;
  country: string;
  documentType: { base: string; modifiers: string[]; variant: string | null };
  source: SubmissionSource;
  payload: unknown;
  format: 'new' | 'earlier';
  externalId: string | null;
  destinations: string[];
}

/** Produces the e-invoice XML of a valid document (its bytes), or null where none is produced at submission. */
export type XmlProducer = (input: { country: string; documentType: SubmissionInput['documentType']; document: unknown; uuid: string }) => Buffer | null;

export interface SubmissionOutcome {
  accepted: boolean;
  documentId: string;
  documentNumber: string | null;
  uuid: string;
  /**
   * The XML's bytes (the answer's Base64XML). Bytes, not their base64 text: a submission holds its
   * outcome's parts across the append's round trip, and a Buffer's contents lie outside V8's heap,
   * where the scavenger neither copies them nor promotes them to the old generation.
   */
  xml: Buffer | null;
  report: ValidationReport;
  errors: DocumentErrorItem[];
  position: Position;
}

const toErrorItem = (f: ValidationFinding): DocumentErrorItem => ({
  code: f.code,
  message: f.message,
  path: f.path,
  payloadPath: f.payloadPath ?? null,
  source: 'validation',
});

/** The claim stream of a document number (per workspace, environment and company, or source without one). */
export function numberClaimStream(input: { workspaceId: string; environment: string; source: Pick<SubmissionSource, 'name' | 'companyId'> }, documentNumber: string): string {
  const key = [input.workspaceId, input.environment, input.source.companyId ?? input.source.name, documentNumber].join('\n');
  return `docnumber-${createHash('sha256').update(key).digest('hex')}`;
}

/** What a submission records for its idempotent request: enough to answer it again. */
interface SubmissionRecord {
  documentId: string;
}

/**
 * The number claim's decision for `documentId`, from the claim's facts. One transaction writes a
 * claim and its document: a claim without one is an orphan from before (released at once). Where
 * the parts are written one after another, a claim may be read between them, so it is given time
 * to get its document.
 */
function decideClaim(store: EventStore, facts: Awaited<ReturnType<typeof claimFacts>>, documentNumber: string, documentId: string, ctx: CommandContext) {
  return numberClaimDecider.decide(
    {
      type: 'Claim',
      documentNumber,
      documentId,
      holderId: facts.claim.state.holder,
      holderStatus: facts.holderStatus,
      now: ctx.now.toISOString(),
      orphanedAfterMs: store.atomicMultiStream ? 0 : ABANDONED_CLAIM_MS,
    },
    facts.claim.state,
  );
}

/** The facts a claim is decided on: the claim stream and what its holder's own stream says. */
async function claimFacts(store: EventStore, streamId: string, fresh: boolean) {
  // Most numbers are new: the first attempt assumes the claim stream does not exist yet
  // (expected revision no_stream) without reading it; if it exists, the append fails and the
  // next attempt reads the claim and its holder.
  const claim: Loaded<NumberClaimState> = fresh ? { state: numberClaimDecider.initialState, revision: 'no_stream' } : await loadAggregate(store, numberClaimDecider, streamId);
  let holderStatus: 'none' | 'rejected' | 'never_submitted' | 'live' = 'none';
  if (claim.state.holder) {
    const holder = await loadAggregate(store, documentDecider, documentStream(claim.state.holder));
    holderStatus = holder.state.state === 'none' ? 'never_submitted' : holder.state.state === 'rejected' ? 'rejected' : 'live';
  }
  return { claim, holderStatus };
}

/**
 * A document's submission: the first event of its stream when that is DocumentSubmitted (null for
 * a rejected document or an unknown one). One read of one event.
 */
export async function readSubmission(
  store: Pick<EventStore, 'readStream'>,
  documentId: string,
): Promise<{ event: RecordedEvent; data: t.TypeOf<typeof DocumentSubmitted.codec> } | null> {
  const [first] = await store.readStream(documentStream(documentId), { maxCount: 1 });
  if (!first || first.type !== DocumentSubmitted.type) return null;
  return { event: first, data: decodeEventData(DocumentSubmitted, first.schemaVersion, first.data) };
}

/** The answer of a submission an earlier attempt of this idempotent request committed, from the document's first event. */
async function recordedOutcome(store: EventStore, documentId: string): Promise<SubmissionOutcome> {
  const [first] = await store.readStream(documentStream(documentId), { maxCount: 1 });
  if (!first || (first.type !== 'DocumentSubmitted' && first.type !== 'DocumentRejected')) {
    throw new Error(`the idempotency record names document ${documentId}, whose stream does not start with its submission`);
  }
  const decoded: unknown =
    first.type === 'DocumentSubmitted' ? decodeEventData(DocumentSubmitted, first.schemaVersion, first.data) : decodeEventData(DocumentRejected, first.schemaVersion, first.data);
  const data = decoded as { uuid: string; documentNumber: string | null; validation: ValidationReport; xml?: ArtifactRef | null; errors?: DocumentErrorItem[] };
  const accepted = first.type === 'DocumentSubmitted';
  return {
    accepted,
    documentId,
    documentNumber: data.documentNumber,
    uuid: data.uuid,
    xml: accepted && data.xml ? await artifactBytes(store, data.xml) : null,
    report: data.validation,
    errors: accepted ? data.validation.errors.map(toErrorItem) : (data.errors ?? []),
    position: first.position,
  };
}

/** The bytes of an artifact an event names: inline in a v1 event, else from the store. */
export async function artifactBytes(store: EventStore, ref: ArtifactRef): Promise<Buffer> {
  if (ref.inlineBase64 !== undefined) return Buffer.from(ref.inlineBase64, 'base64');
  const content = (await store.readArtifacts([ref.sha256])).get(ref.sha256);
  if (!content) throw new Error(`artifact ${ref.sha256} named by an event is not stored`);
  return content;
}

/** The bytes of an artifact an event names, as base64 (an API's answer). */
export async function artifactBase64(store: EventStore, ref: ArtifactRef): Promise<string> {
  return ref.inlineBase64 ?? (await artifactBytes(store, ref)).toString('base64');
}

function toNewEvent(id: string, type: string, version: number, data: unknown, ctx: CommandContext): NewEvent {
  return { id, type, schemaVersion: version, data, metadata: eventMetadata(ctx) };
}

/**
 * The validation path of a submission, recording nothing: the source's mapping template, the
 * validator, the document number, and the report of a document whose number is taken
 * (CORE-HEAD-010). Shared by the submission and its dry run.
 */
function validateSubmission(input: SubmissionInput, ctx: CommandContext) {
  const template = builtInTemplates.get(input.source.templateId);
  if (!template) {
    throw new DomainError('validation', 'SOURCE_NOT_READY', `the source's mapping template ${input.source.templateId} is not available`, ['source']);
  }
  const started = performance.now();
  const mapped = applyTemplate(template, input.payload);
  const validated = validateDocument({
    country: input.country,
    documentType: input.documentType,
    document: mapped.document,
    now: ctx.now,
    pathMap: mapped.pathMap,
    mappingProblems: mapped.problems,
    durationMs: performance.now() - started,
  });
  const header = (mapped.document as { header?: { documentNumber?: unknown } } | null)?.header;
  const documentNumber = typeof header?.documentNumber === 'string' && header.documentNumber.trim() !== '' ? header.documentNumber : null;
  const rejectedForReuse = (): ValidationReport => ({
    ...validated,
    success: false,
    errors: [...validated.errors, documentNumberReuseFinding(mapped.pathMap)],
    metadata: { ...validated.metadata, totals: { ...validated.metadata.totals, errors: validated.metadata.totals.errors + 1 } },
  });
  return { mapped, validated, documentNumber, rejectedForReuse };
}

/** What a dry run finds: the report a submission would get, and the XML it would produce. */
export interface DryRunOutcome {
  accepted: boolean;
  documentNumber: string | null;
  /** The XML's bytes (see SubmissionOutcome.xml). */
  xml: Buffer | null;
  report: ValidationReport;
}

/**
 * A submission's dry run: the same validation path and the same number check as submitDocument
 * (the claim is read and decided, not appended), and the XML a valid document would get. Appends
 * nothing, claims no number and stores no artifact.
 */
export async function dryRunDocument(store: EventStore, input: SubmissionInput, ctx: CommandContext, produceXml: XmlProducer): Promise<DryRunOutcome> {
  const { mapped, validated, documentNumber, rejectedForReuse } = validateSubmission(input, ctx);
  let report = validated;
  if (validated.success && documentNumber) {
    const { claim, holderStatus } = await claimFacts(store, numberClaimStream(input, documentNumber), false);
    try {
      decideClaim(store, { claim, holderStatus }, documentNumber, randomUUID(), ctx);
    } catch (err) {
      // Stale facts would be read again by a submission; the number is free as far as can be known.
      if (err instanceof DomainError && err.code === DOCUMENT_NUMBER_REUSED) report = rejectedForReuse();
      else if (!(err instanceof DomainError && err.code === STALE_CLAIM_FACTS)) throw err;
    }
  }
  const xml = report.success ? produceXml({ country: input.country, documentType: input.documentType, document: mapped.document, uuid: randomUUID() }) : null;
  return { accepted: report.success, documentNumber, xml, report };
}

/**
 * Submits one document. The number claim and the document's first event are one multi-stream
 * append (with the idempotency record of the request, when it has a key): there is no instant at
 * which a number is claimed by a document that does not exist, nor a document without its answer
 * recorded for its key. Concurrent submissions of one number: the claim stream's expected
 * revision lets one through; the others look again and find the number taken.
 */
export async function submitDocument(store: EventStore, input: SubmissionInput, ctx: CommandContext, produceXml: XmlProducer): Promise<SubmissionOutcome> {
  const slot = takeSlot<SubmissionRecord>();
  if (slot?.recorded) return recordedOutcome(store, slot.recorded.documentId);
  const { mapped, validated, documentNumber, rejectedForReuse } = validateSubmission(input, ctx);
  // Under an Idempotency-Key the ids are the same on every attempt of the request.
  const documentId = slot ? slot.id('document') : randomUUID();
  const uuid = slot ? slot.id('uuid') : randomUUID();
  const eventCtx: CommandContext = { ...ctx, environment: input.environment };
  const effect = slot ? { slot, record: { documentId } satisfies SubmissionRecord, ctx: eventCtx } : null;

  /** The document's first event, as submitted (report passed) or rejected, with the XML it names. */
  const documentPart = (report: ValidationReport): DocumentPart => {
    const received = {
      documentId,
      uuid,
      documentNumber,
      country: input.country,
      environment: input.environment,
      documentType: input.documentType,
      source: { name: input.source.name, version: input.source.version, companyId: input.source.companyId },
      format: input.format,
      externalId: input.externalId,
      destinations: input.destinations,
      coreDocument: mapped.document,
      validation: report,
    };
    const xmlBytes = report.success ? produceXml({ country: input.country, documentType: input.documentType, document: mapped.document, uuid }) : null;
    // Stored once, by hash, in the append's transaction; the event names the hash.
    const xml = xmlBytes ? artifactOf(xmlBytes) : null;
    const event: DocumentEvent & { type: 'DocumentSubmitted' | 'DocumentRejected' } = report.success
      ? { type: 'DocumentSubmitted', data: { ...received, xml: xml ? { sha256: xml.sha256 } : null } }
      : { type: 'DocumentRejected', data: { ...received, errors: report.errors.map(toErrorItem) } };
    const [decided] = documentDecider.decide({ type: 'Receive', event }, documentDecider.initialState);
    const definition = decided!.type === 'DocumentSubmitted' ? DocumentSubmitted : DocumentRejected;
    return {
      streamId: documentStream(documentId),
      events: [toNewEvent(slot ? slot.id('document-event') : randomUUID(), decided!.type, definition.version, decided!.data, eventCtx)],
      expected: 'no_stream',
      artifacts: xml ? [xml] : [],
      // The answer's Base64XML (docs/api/unify.md), encoded when the answer is written.
      xml: xmlBytes,
    };
  };
  if (!validated.success || !documentNumber) {
    const document = documentPart(validated);
    const [result] = await appendWithEffect(store, [streamPart(document)], effect, document.artifacts);
    return outcomeOf(document, validated, result!.position);
  }

  const claimStream = numberClaimStream(input, documentNumber);
  // Stale facts, or someone claimed the number meanwhile: gather the facts again (10 tries),
  // then the family's 409 (retryable), never a 500: the client retries with the same request.
  return retryOnConflict(
    async (attempt) => {
      const { claim, holderStatus } = await claimFacts(store, claimStream, attempt === 1);
      let claimEvents;
      try {
        claimEvents = decideClaim(store, { claim, holderStatus }, documentNumber, documentId, ctx);
      } catch (err) {
        if (err instanceof DomainError && err.code === STALE_CLAIM_FACTS) throw new StaleClaimFacts();
        if (!(err instanceof DomainError && err.code === DOCUMENT_NUMBER_REUSED)) throw err;
        // The number is held by a live or final document: this one is stored as rejected.
        const report = rejectedForReuse();
        const document = documentPart(report);
        const [result] = await appendWithEffect(store, [streamPart(document)], effect, document.artifacts);
        return outcomeOf(document, report, result!.position);
      }
      const document = documentPart(validated);
      const parts: StreamAppend[] = [];
      if (claimEvents.length > 0) {
        parts.push({
          streamId: claimStream,
          events: claimEvents.map((e, i) => toNewEvent(slot ? slot.id(`claim-event-${i}`) : randomUUID(), e.type, DocumentNumberClaimed.version, e.data, eventCtx)),
          expected: claim.revision,
        });
      }
      parts.push(streamPart(document));
      const results = await appendWithEffect(store, parts, effect, document.artifacts);
      return outcomeOf(document, validated, results[results.length - 1]!.position);
    },
    {
      isConflict: (err) => err instanceof StaleClaimFacts || (err instanceof WrongExpectedVersionError && err.streamId === claimStream),
      maxAttempts: 10,
      onSpent: (_err, attempts) => new ConcurrencyConflictError(claimStream, attempts),
    },
  );
}

/** The claim's facts changed between reading and deciding: read them again. */
class StaleClaimFacts extends Error {}

interface DocumentPart extends StreamAppend {
  artifacts: Artifact[];
  xml: Buffer | null;
}

const streamPart = ({ streamId, events, expected }: DocumentPart): StreamAppend => ({ streamId, events, expected });

function outcomeOf(document: DocumentPart, report: ValidationReport, position: Position): SubmissionOutcome {
  const data = document.events[0]!.data as { documentId: string; uuid: string; documentNumber: string | null };
  return {
    accepted: report.success,
    documentId: data.documentId,
    documentNumber: data.documentNumber,
    uuid: data.uuid,
    xml: report.success ? document.xml : null,
    report,
    errors: report.errors.map(toErrorItem),
    position,
  };
}
