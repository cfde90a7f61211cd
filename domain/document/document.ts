/**
 * The sales document aggregate (stream `document-<documentId>`) and its state machine
 * (docs/api/unify.md). The transition table below is the whole machine: an event that is
 * not listed for the current state is refused.
 *
 *   (none) ──DocumentSubmitted──▶ submitted ──DeliveryStarted──▶ processing
 *   (none) ──DocumentRejected───▶ rejected (terminal; the number may be used again)
 *   processing ──Delivered──▶ delivery_success ──Finalized──▶ final_valid | final_invalid
 *   processing ──DeliveryFailed──▶ delivery_failed ──DeliveryStarted──▶ processing (retry)
 *                                                  └─Finalized(invalid)──▶ final_invalid
 *
 * The buyer's answer (a Peppol Invoice Response, `DocumentBuyerResponded`) is recorded in any state
 * after delivery started and moves no state by itself. A document still awaiting its final result
 * (`delivery_success`, see docs/api/invoice-response.md) is finalized by the answer in the same
 * append: RE final_invalid (`BUYER_REJECTED`), AP or PD final_valid. An answer that arrives before
 * the delivery was recorded is kept and applied when it is.
 *
 * A terminal state changes in one way only: the seller's own cancellation at the tax authority
 * (MyInvois allows it within 72 hours of validation), recorded once the authority confirmed it:
 *
 *   final_valid ──DocumentCancelled──▶ final_invalid (error DOCUMENT_CANCELLED)
 *
 * Recording a cancellation again is no change (idempotent).
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { decodeEventData, defineEvent } from '../events/envelope.js';
import { buyerRejectionError, finalOutcomeOf, InvoiceResponseFacts } from '../peppol/invoice-response.js';

export const DOCUMENT_STATES = ['submitted', 'rejected', 'processing', 'delivery_success', 'delivery_failed', 'final_valid', 'final_invalid'] as const;
export type DocumentState = (typeof DOCUMENT_STATES)[number];
export const TERMINAL_STATES: ReadonlySet<DocumentState> = new Set(['rejected', 'final_valid', 'final_invalid']);
export const isTerminal = (state: DocumentState) => TERMINAL_STATES.has(state);

const DocumentType = t.intersection([t.type({ base: t.string, modifiers: t.array(t.string) }), t.partial({ variant: t.union([t.string, t.null]) })]);
const ErrorItem = t.intersection([
  t.type({ code: t.string, message: t.string, path: t.array(t.union([t.string, t.number])), source: t.keyof({ validation: null, delivery: null, government: null }) }),
  t.partial({ payloadPath: t.union([t.string, t.null]) }),
]);
export type DocumentErrorItem = t.TypeOf<typeof ErrorItem>;

const Received = t.type({
  documentId: t.string,
  /** The e-invoice UUID. */
  uuid: t.string,
  documentNumber: t.union([t.string, t.null]),
  country: t.string,
  environment: t.string,
  documentType: DocumentType,
  source: t.type({ name: t.string, version: t.string, companyId: t.union([t.string, t.null]) }),
  format: t.keyof({ new: null, earlier: null }),
  externalId: t.union([t.string, t.null]),
  destinations: t.array(t.string),
  /** The document in the core schema (after the source's mapping template). */
  coreDocument: t.unknown,
  /** The stored validation report (meta.coreValidation). */
  validation: t.unknown,
});

const Sha256Hex = t.refinement(t.string, (s) => /^[0-9a-f]{64}$/.test(s), 'Sha256Hex');

/**
 * An artifact (the e-invoice XML, the Tax Data Document) as an event names it: the SHA-256 of its
 * bytes, which the event store keeps once in its artifact store, written in the same transaction
 * as the event (schema v2). Events written before (v1) carried the artifact inline as base64: their
 * upcast keeps those bytes in `inlineBase64`, and the hash is computed from them.
 */
export const ArtifactRef = t.intersection([t.type({ sha256: Sha256Hex }), t.partial({ inlineBase64: t.string })]);
export type ArtifactRef = t.TypeOf<typeof ArtifactRef>;

/** The reference of a v1 event's inline artifact (base64), or null for none. */
export function inlineArtifactRef(base64: unknown): ArtifactRef | null {
  if (typeof base64 !== 'string' || base64 === '') return null;
  return { sha256: createHash('sha256').update(Buffer.from(base64, 'base64')).digest('hex'), inlineBase64: base64 };
}

export const DocumentSubmitted = defineEvent({
  type: 'DocumentSubmitted',
  // v2: the XML by hash (`xml`) instead of inline (`xmlBase64`).
  version: 2,
  codec: t.intersection([Received, t.type({ xml: t.union([ArtifactRef, t.null]) })]),
  upcasters: {
    1: (data) => {
      const { xmlBase64, ...rest } = data as { xmlBase64?: unknown };
      return { ...rest, xml: inlineArtifactRef(xmlBase64) };
    },
  },
});
export const DocumentRejected = defineEvent({
  type: 'DocumentRejected',
  version: 1,
  codec: t.intersection([Received, t.type({ errors: t.array(ErrorItem) })]),
});
export const DeliveryStarted = defineEvent({
  type: 'DocumentDeliveryStarted',
  version: 1,
  codec: t.type({ attempt: t.number, destination: t.string }),
});
export const Delivered = defineEvent({
  type: 'DocumentDelivered',
  // v2: the artifacts by hash (`xml`, `tdd`) instead of inline (`xmlBase64`, `tddXmlBase64`).
  version: 2,
  codec: t.intersection([
    t.type({ attempt: t.number, government: t.unknown }),
    // Artifacts produced on delivery: the XML where it is completed then (the Saudi hash
    // chain), the UAE Tax Data Document; and when a final result is expected.
    t.partial({ xml: t.union([ArtifactRef, t.null]), tdd: t.union([ArtifactRef, t.null]), finalResultDueAt: t.union([t.string, t.null]) }),
  ]),
  upcasters: {
    1: (data) => {
      const { xmlBase64, tddXmlBase64, ...rest } = data as { xmlBase64?: unknown; tddXmlBase64?: unknown };
      return { ...rest, xml: inlineArtifactRef(xmlBase64), tdd: inlineArtifactRef(tddXmlBase64) };
    },
  },
});
export const DeliveryFailed = defineEvent({
  type: 'DocumentDeliveryFailed',
  version: 1,
  codec: t.intersection([
    t.type({ attempt: t.number, error: ErrorItem, retryable: t.boolean, government: t.unknown }),
    t.partial({ nextAttemptAt: t.union([t.string, t.null]) }),
  ]),
});
export const Finalized = defineEvent({
  type: 'DocumentFinalized',
  version: 1,
  codec: t.type({ outcome: t.keyof({ valid: null, invalid: null }), government: t.unknown, errors: t.array(ErrorItem) }),
});

export const BuyerResponded = defineEvent({
  type: 'DocumentBuyerResponded',
  version: 1,
  codec: t.intersection([
    InvoiceResponseFacts,
    t.type({
      channel: t.string,
      /** The carrying message (AS4 message id, sandbox message id), when there was one. */
      messageId: t.union([t.string, t.null]),
      receivedAt: t.string,
      /** The delivery record with the answer (`buyerResponse`): the status object's `government`. */
      government: t.unknown,
      xml: t.union([ArtifactRef, t.null]),
    }),
  ]),
});
export type BuyerResponseData = t.TypeOf<typeof BuyerResponded.codec>;

/**
 * Whether a final_valid document of this country and environment may still be cancelled by its
 * seller at the authority (a production Malaysian document, at MyInvois): its state can then
 * still change.
 */
export const cancellableAtAuthority = (country: string | null | undefined, environment: string | null | undefined): boolean =>
  country === 'MY' && environment === 'production';

/** The code of the error item a cancelled document shows. */
export const DOCUMENT_CANCELLED = 'DOCUMENT_CANCELLED';

export const Cancelled = defineEvent({
  type: 'DocumentCancelled',
  version: 1,
  codec: t.type({
    reason: t.string,
    /** When the authority confirmed the cancellation. */
    cancelledAt: t.string,
    by: t.literal('seller'),
    /** The authority that cancelled it (MyInvois) and its id of the document there. */
    authority: t.string,
    authorityUuid: t.string,
    /** The error item the status object shows (code DOCUMENT_CANCELLED). */
    error: ErrorItem,
    /** The delivery record with the cancellation (`cancellation`): the status object's `government`. */
    government: t.unknown,
  }),
});
export type CancellationData = t.TypeOf<typeof Cancelled.codec>;

export type DocumentEvent =
  | DomainEvent<'DocumentSubmitted', t.TypeOf<typeof DocumentSubmitted.codec>>
  | DomainEvent<'DocumentRejected', t.TypeOf<typeof DocumentRejected.codec>>
  | DomainEvent<'DocumentDeliveryStarted', t.TypeOf<typeof DeliveryStarted.codec>>
  | DomainEvent<'DocumentDelivered', t.TypeOf<typeof Delivered.codec>>
  | DomainEvent<'DocumentDeliveryFailed', t.TypeOf<typeof DeliveryFailed.codec>>
  | DomainEvent<'DocumentFinalized', t.TypeOf<typeof Finalized.codec>>
  | DomainEvent<'DocumentBuyerResponded', BuyerResponseData>
  | DomainEvent<'DocumentCancelled', CancellationData>;

/** state -> event type -> next state. Nothing else is a transition. */
export const TRANSITIONS: Readonly<Record<DocumentState | 'none', Partial<Record<DocumentEvent['type'], (e: any) => DocumentState>>>> = {
  none: { DocumentSubmitted: () => 'submitted', DocumentRejected: () => 'rejected' },
  submitted: { DocumentDeliveryStarted: () => 'processing' },
  processing: { DocumentDelivered: () => 'delivery_success', DocumentDeliveryFailed: () => 'delivery_failed' },
  delivery_failed: {
    DocumentDeliveryStarted: () => 'processing',
    // Only an invalid outcome is accepted here (decide refuses a valid one).
    DocumentFinalized: () => 'final_invalid',
  },
  delivery_success: { DocumentFinalized: (e: DocumentEvent & { type: 'DocumentFinalized' }) => (e.data.outcome === 'valid' ? 'final_valid' : 'final_invalid') },
  rejected: {},
  // The seller's cancellation at the authority: the one way out of a terminal state.
  final_valid: { DocumentCancelled: () => 'final_invalid' },
  final_invalid: {},
};

/**
 * The states in which the buyer's answer (`DocumentBuyerResponded`) is recorded: once delivery
 * started. It is no transition: the state stays (terminal ones included); a document awaiting its
 * final result is ended by the `DocumentFinalized` decided with it.
 */
export const BUYER_RESPONSE_STATES: ReadonlySet<DocumentState> = new Set(['processing', 'delivery_success', 'delivery_failed', 'final_valid', 'final_invalid']);

/** A final result known together with a delivery answer (clearance, validation, a refusal). */
export interface FinalResult {
  outcome: 'valid' | 'invalid';
  government: unknown;
  errors: DocumentErrorItem[];
}

export type DocumentCommand =
  | { type: 'Receive'; event: DocumentEvent & { type: 'DocumentSubmitted' | 'DocumentRejected' } }
  | { type: 'StartDelivery'; destination: string }
  | {
      type: 'RecordDelivered';
      government: unknown;
      /** Artifacts produced on delivery, by hash (the caller appends their bytes with the events). */
      xml?: ArtifactRef | null;
      tdd?: ArtifactRef | null;
      finalResultDueAt?: string | null;
      /** Recorded in the same append when the destination answers with the final result at once. */
      final?: FinalResult | null;
    }
  | {
      type: 'RecordDeliveryFailed';
      error: DocumentErrorItem;
      retryable: boolean;
      government: unknown;
      nextAttemptAt?: string | null;
      /** A definitive failure ends the document final_invalid in the same append. */
      final?: Omit<FinalResult, 'outcome'> | null;
    }
  | ({ type: 'Finalize' } & FinalResult)
  /** The buyer's Invoice Response, received for this document. */
  | { type: 'RecordBuyerResponse'; response: BuyerResponseData }
  /** The seller's cancellation, confirmed by the authority (a final_valid document only). */
  | { type: 'RecordCancellation'; reason: string; cancelledAt: string; authority: string; authorityUuid: string; government: unknown };

export interface DocumentStateView {
  state: DocumentState | 'none';
  documentNumber: string | null;
  attempts: number;
  /** Ids of the buyer's answers recorded (an answer received again is recorded once). */
  responses?: readonly string[];
  /** A final answer received before the delivery was recorded: applied when it is. */
  pendingFinal?: FinalResult | null;
  /** The buyer's latest answer as the status object shows it (`government.buyerResponse`). */
  lastBuyerResponse?: unknown;
  /** Set once the seller's cancellation is recorded. */
  cancelled?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The final result a buyer's answer gives a document awaiting it, or null (an answer that ends nothing). */
export function finalOfResponse(response: BuyerResponseData): FinalResult | null {
  const outcome = finalOutcomeOf(response.code);
  if (!outcome) return null;
  return { outcome, government: response.government, errors: outcome === 'invalid' ? [buyerRejectionError(response)] : [] };
}

export const documentDecider: Decider<DocumentCommand, DocumentStateView, DocumentEvent> = {
  category: 'document',
  initialState: { state: 'none', documentNumber: null, attempts: 0 },
  events: {
    DocumentSubmitted,
    DocumentRejected,
    DocumentDeliveryStarted: DeliveryStarted,
    DocumentDelivered: Delivered,
    DocumentDeliveryFailed: DeliveryFailed,
    DocumentFinalized: Finalized,
    DocumentBuyerResponded: BuyerResponded,
    DocumentCancelled: Cancelled,
  },
  decide(command, s) {
    const events: DocumentEvent[] = [];
    const finalEvent = (f: FinalResult): DocumentEvent => ({ type: 'DocumentFinalized', data: { outcome: f.outcome, government: f.government, errors: f.errors } });
    switch (command.type) {
      case 'Receive':
        events.push(command.event);
        break;
      case 'StartDelivery':
        events.push({ type: 'DocumentDeliveryStarted', data: { attempt: s.attempts + 1, destination: command.destination } });
        break;
      case 'RecordDelivered': {
        const { government, xml, tdd, finalResultDueAt, final } = command;
        const ref = (r: ArtifactRef | null | undefined) => (r ? { sha256: r.sha256 } : null);
        events.push({
          type: 'DocumentDelivered',
          data: { attempt: s.attempts, government, xml: ref(xml), tdd: ref(tdd), finalResultDueAt: finalResultDueAt ?? null },
        });
        // A delivery that awaits its final result takes an answer the buyer gave before it was recorded.
        const early = !final && s.pendingFinal ? s.pendingFinal : null;
        const closing = final ?? (early ? { ...early, government: { ...(isObject(government) ? government : {}), ...(isObject(early.government) ? early.government : {}) } } : null);
        if (closing) events.push(finalEvent(closing));
        break;
      }
      case 'RecordDeliveryFailed':
        events.push({
          type: 'DocumentDeliveryFailed',
          data: { attempt: s.attempts, error: command.error, retryable: command.retryable, government: command.government, nextAttemptAt: command.nextAttemptAt ?? null },
        });
        if (command.final) events.push(finalEvent({ outcome: 'invalid', ...command.final }));
        break;
      case 'Finalize': {
        // A final result that comes later (the buyer-response window closing) keeps the buyer's last answer on record.
        const answer = s.lastBuyerResponse;
        const government = answer && isObject(command.government) && !command.government.buyerResponse ? { ...command.government, buyerResponse: answer } : command.government;
        events.push(finalEvent({ ...command, government }));
        break;
      }
      case 'RecordBuyerResponse': {
        if (s.responses?.includes(command.response.responseId)) return [];
        if (s.state === 'none' || !BUYER_RESPONSE_STATES.has(s.state)) {
          throw new DomainError('conflict', 'DOCUMENT_NOT_DELIVERED', `a ${s.state} document was never delivered: the buyer cannot answer it`);
        }
        events.push({ type: 'DocumentBuyerResponded', data: command.response });
        const final = s.state === 'delivery_success' ? finalOfResponse(command.response) : null;
        if (final) events.push(finalEvent(final));
        break;
      }
      case 'RecordCancellation': {
        if (s.cancelled) return [];
        if (s.state !== 'final_valid') {
          throw new DomainError('conflict', 'INVALID_TRANSITION', `a ${s.state} document cannot be cancelled: only a final_valid one can`);
        }
        const reason = command.reason.trim();
        if (reason === '') throw new DomainError('validation', 'CANCELLATION_REASON_REQUIRED', 'a cancellation needs a reason');
        const { cancelledAt, authority, authorityUuid, government } = command;
        const error: DocumentErrorItem = {
          code: DOCUMENT_CANCELLED,
          message: `cancelled by the seller at ${authority} on ${cancelledAt}: ${reason}`,
          path: [],
          source: 'government',
        };
        events.push({ type: 'DocumentCancelled', data: { reason, cancelledAt, by: 'seller', authority, authorityUuid, error, government } });
        break;
      }
    }
    // Every event must be a transition of the state it meets.
    let state = s;
    for (const event of events) {
      const recorded = event.type === 'DocumentBuyerResponded' && state.state !== 'none' && BUYER_RESPONSE_STATES.has(state.state);
      if (!recorded && !TRANSITIONS[state.state][event.type]) {
        throw new DomainError('conflict', 'INVALID_TRANSITION', `a ${state.state} document cannot take ${event.type}`);
      }
      if (event.type === 'DocumentFinalized' && state.state === 'delivery_failed' && event.data.outcome === 'valid') {
        throw new DomainError('conflict', 'INVALID_TRANSITION', 'a document whose delivery failed can only end final_invalid');
      }
      state = documentDecider.evolve(state, event);
    }
    return events;
  },
  evolve(s, event) {
    if (event.type === 'DocumentBuyerResponded') {
      const final = finalOfResponse(event.data);
      const before = s.state === 'processing' || s.state === 'delivery_failed';
      const shown = isObject(event.data.government) ? event.data.government.buyerResponse : undefined;
      return {
        ...s,
        responses: [...(s.responses ?? []), event.data.responseId],
        pendingFinal: before && final ? final : (s.pendingFinal ?? null),
        lastBuyerResponse: shown ?? s.lastBuyerResponse ?? null,
      };
    }
    const next = TRANSITIONS[s.state][event.type];
    if (!next) return s; // never written by decide; tolerated on read so an old log still folds
    const state = next(event);
    switch (event.type) {
      case 'DocumentSubmitted':
      case 'DocumentRejected':
        return { ...s, state, documentNumber: event.data.documentNumber };
      case 'DocumentDeliveryStarted':
        return { ...s, state, attempts: event.data.attempt };
      case 'DocumentFinalized':
        return { ...s, state, pendingFinal: null };
      case 'DocumentCancelled':
        return { ...s, state, cancelled: true };
      default:
        return { ...s, state };
    }
  },
};

registerDecider(documentDecider);

/**
 * The artifacts an event names (with the role each plays), for audits: the XML of a submitted
 * document, the XML and the Tax Data Document produced on delivery. Any other event names none.
 * Events of schema v1 are upcast: their references carry the inline bytes.
 */
export function artifactRefsOf(event: { type: string; schemaVersion: number; data: unknown }): { role: 'xml' | 'tdd'; ref: ArtifactRef }[] {
  const refs: { role: 'xml' | 'tdd'; ref: ArtifactRef | null | undefined }[] = [];
  if (event.type === DocumentSubmitted.type) {
    refs.push({ role: 'xml', ref: decodeEventData(DocumentSubmitted, event.schemaVersion, event.data).xml });
  } else if (event.type === Delivered.type) {
    const d = decodeEventData(Delivered, event.schemaVersion, event.data);
    refs.push({ role: 'xml', ref: d.xml }, { role: 'tdd', ref: d.tdd });
  }
  return refs.filter((r): r is { role: 'xml' | 'tdd'; ref: ArtifactRef } => Boolean(r.ref));
}

export const documentStream = (documentId: string) => `document-${documentId}`;
