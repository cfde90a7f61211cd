/**
 * Sales documents (and receipts) as a source of the search projection: indexes the whole
 * document (domain/query/indexed-document.ts) when it is received (submitted or rejected), and
 * on every later state change its new state alone, from the facts it keeps of each document in
 * `search_sales_facts`: its identity, type and the states it went through, not the submission's
 * content (the body, indexed once, never changes). One read and one write of the facts per batch;
 * no read where the projection remembers the facts of the batch's documents (FactsMemo): the
 * batch then goes as one statement with its checkpoint, applied only if the stored facts are
 * still the remembered ones.
 *
 * The facts of a document in a terminal state (rejected, final valid or invalid) are not kept:
 * no later event can change its indexed document, so they would never be read again. The one
 * exception: a final_valid production MY document, which its seller may still cancel at MyInvois
 * (final_invalid); its facts stay. A catch-up, where most documents reach
 * their final state within one batch, then writes no facts for them at all; a document that
 * becomes final in a later batch has its row dropped. The table holds documents in flight.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { BUSINESS_STATUS_OF } from '../domain/peppol/invoice-response.js';
import { BuyerResponded, DocumentRejected, DocumentSubmitted, Finalized, TRANSITIONS, cancellableAtAuthority, documentDecider, isTerminal, type DocumentState } from '../domain/document/document.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { indexedSalesDocument, indexedSalesState, type SalesDocumentFacts, type SalesStateFacts } from '../domain/query/indexed-document.js';
import type { IndexWrite } from '../readmodels/search/port.js';
import { requirement } from '../readmodels/batch-writes.js';
import { readSalesFacts, SALES_FACTS_TABLE, salesFactsStoredAs, salesFactsWrites, writeSalesFacts, type SalesFactsRow } from '../readmodels/search/sales-facts.js';
import type { FactsMemo, PlannedChanges, SearchSource, SourceChanges } from './search-source.js';

const STREAM_PREFIX = 'document-';

interface Known {
  /** Whole when received in this batch (its body is indexed with it), else as stored. */
  facts: SalesDocumentFacts | SalesStateFacts;
  /** Received in this batch: the whole document is written. */
  received: boolean;
  revision: bigint;
  changed: boolean;
  /** Whether the table has a row for it (read at the start of the batch). */
  stored: boolean;
}

const isFinal = (facts: SalesStateFacts) => {
  const state = facts.transitions[facts.transitions.length - 1]!.state;
  return isTerminal(state) && !(state === 'final_valid' && cancellableAtAuthority(facts.country, facts.environment));
};

function received(event: RecordedEvent): SalesDocumentFacts {
  const submitted = event.type === DocumentSubmitted.type;
  const data = submitted ? decodeEventData(DocumentSubmitted, event.schemaVersion, event.data) : decodeEventData(DocumentRejected, event.schemaVersion, event.data);
  return {
    documentId: data.documentId,
    workspaceId: event.metadata.workspaceId ?? '',
    environment: data.environment,
    country: data.country,
    documentType: { base: data.documentType.base, modifiers: [...data.documentType.modifiers], variant: data.documentType.variant ?? null },
    source: data.source,
    coreDocument: data.coreDocument,
    validation: data.validation ?? null,
    transitions: [{ state: submitted ? 'submitted' : 'rejected', at: event.metadata.occurredAt }],
  };
}

/** The facts a later state change needs (those stored for a document in flight). */
function stateFacts(facts: SalesStateFacts): SalesStateFacts {
  const { documentId, workspaceId, environment, documentType, transitions, country } = facts;
  // The country only where it matters: a document its seller may still cancel at the authority.
  return { documentId, workspaceId, environment, documentType, transitions, ...(cancellableAtAuthority(country, environment) ? { country } : {}) };
}

/** The state an event moves `state` to (the document state machine), or null when it is no transition. */
function nextState(state: DocumentState, event: RecordedEvent): DocumentState | null {
  const transition = TRANSITIONS[state][event.type as keyof (typeof TRANSITIONS)[DocumentState]];
  if (!transition) return null;
  if (event.type === Finalized.type) return transition({ data: decodeEventData(Finalized, event.schemaVersion, event.data) });
  return transition(event);
}

/** Folds a batch's events of documents (log order) into `known`; the documents it changed. */
function fold(documents: readonly RecordedEvent[], known: Map<string, Known>): Known[] {
  for (const event of documents) {
    const id = event.streamId.slice(STREAM_PREFIX.length);
    const k = known.get(id);
    if (k && event.revision <= k.revision) continue; // applied before (a replay)
    if (event.type === DocumentSubmitted.type || event.type === DocumentRejected.type) {
      known.set(id, { facts: received(event), received: true, revision: event.revision, changed: true, stored: k?.stored ?? false });
      continue;
    }
    if (!k) continue; // a state change of a document never received: nothing to index
    const transitions = k.facts.transitions;
    const last = transitions[transitions.length - 1]!;
    const next = nextState(last.state, event);
    // The buyer's answer sets the business status; the document's end that follows it keeps it (a PD stays PAID).
    const business =
      event.type === BuyerResponded.type
        ? BUSINESS_STATUS_OF[decodeEventData(BuyerResponded, event.schemaVersion, event.data).code]
        : event.type === Finalized.type && last.business && next === (last.business === 'REJECTED' ? 'final_invalid' : 'final_valid') && ['ACCEPTED', 'PAID', 'REJECTED'].includes(last.business)
          ? last.business
          : undefined;
    // The answer is no transition (the state stays) but a step of the business status.
    const state = next ?? (event.type === BuyerResponded.type ? last.state : null);
    const facts = state ? { ...k.facts, transitions: [...transitions, { state, at: event.metadata.occurredAt, ...(business ? { business } : {}) }] } : k.facts;
    known.set(id, { ...k, facts, revision: event.revision, changed: true });
  }
  return [...known.values()].filter((k) => k.changed);
}

/** The facts rows a batch stores and the documents whose facts it drops. */
function factsWrites(changed: readonly Known[]): { rows: SalesFactsRow<SalesStateFacts>[]; dropped: string[] } {
  return {
    rows: changed
      .filter((k) => !isFinal(k.facts))
      .map((k) => ({ documentId: k.facts.documentId, workspaceId: k.facts.workspaceId, environment: k.facts.environment, revision: k.revision, facts: stateFacts(k.facts) })),
    dropped: changed.filter((k) => k.stored && isFinal(k.facts)).map((k) => k.facts.documentId),
  };
}

function indexWrites(changed: readonly Known[]): IndexWrite[] {
  return changed.map((k): IndexWrite => {
    const key = { workspaceId: k.facts.workspaceId, environment: k.facts.environment, documentId: k.facts.documentId, version: k.revision };
    if (k.received) {
      const { type, document } = indexedSalesDocument(k.facts as SalesDocumentFacts);
      return { ...key, type, document };
    }
    const { type, state } = indexedSalesState(k.facts);
    return { ...key, type, state };
  });
}

/** Remembers what the facts of the batch's documents are once its writes are stored (FactsMemo). */
function remember(memo: FactsMemo | undefined, ids: readonly string[], known: ReadonlyMap<string, Known>, rows: readonly SalesFactsRow<SalesStateFacts>[]): void {
  if (!memo) return;
  const written = new Map(rows.map((r) => [r.documentId, r]));
  for (const id of ids) {
    const k = known.get(id);
    const row = written.get(id);
    // The facts as a read of the stored JSON would return them.
    if (row) memo.set(id, { revision: row.revision, facts: JSON.parse(JSON.stringify(row.facts)) as unknown });
    else if (k && !k.changed) memo.set(id, { revision: k.revision, facts: k.facts });
    else memo.set(id, { revision: null, facts: null });
  }
}

const documentEvents = (events: readonly RecordedEvent[]) => events.filter((e) => e.streamId.startsWith(STREAM_PREFIX));
const documentIds = (documents: readonly RecordedEvent[]) => [...new Set(documents.map((e) => e.streamId.slice(STREAM_PREFIX.length)))];
const isReceived = (e: RecordedEvent) => e.type === DocumentSubmitted.type || e.type === DocumentRejected.type;

export const salesSearchSource: SearchSource = {
  name: 'sales',
  eventTypes: new Set(Object.keys(documentDecider.events)),
  tables: [SALES_FACTS_TABLE],
  async apply(trx: Knex.Transaction, events: readonly RecordedEvent[], memo?: FactsMemo): Promise<SourceChanges> {
    const documents = documentEvents(events);
    const ids = documentIds(documents);
    const known = new Map<string, Known>();
    for (const r of await readSalesFacts<SalesStateFacts>(trx, ids)) {
      known.set(r.documentId, { facts: r.facts, received: false, revision: r.revision, changed: false, stored: true });
    }
    const changed = fold(documents, known);
    const { rows, dropped } = factsWrites(changed);
    remember(memo, ids, known, rows);
    if (changed.length === 0) return { documents: [], written: Promise.resolve() };
    // Not awaited here: the projection awaits it beside the index write.
    const written = writeSalesFacts(trx, rows, dropped);
    return { documents: indexWrites(changed), written };
  },
  plan(events: readonly RecordedEvent[], memo: FactsMemo): PlannedChanges | null {
    const documents = documentEvents(events);
    const ids = documentIds(documents);
    const known = new Map<string, Known>();
    const expected: { documentId: string; revision: bigint | null }[] = [];
    for (const id of ids) {
      const m = memo.get(id);
      if (m?.facts) {
        known.set(id, { facts: m.facts as SalesStateFacts, received: false, revision: m.revision!, changed: false, stored: true });
        expected.push({ documentId: id, revision: m.revision });
      } else if (m || isReceived(documents.find((e) => e.streamId === `${STREAM_PREFIX}${id}`)!)) {
        // Remembered as no row, or received in this batch (first), which a stored row would make a replay.
        expected.push({ documentId: id, revision: null });
      } else {
        return null; // a state change of a document whose facts only a read can tell
      }
    }
    const changed = fold(documents, known);
    const { rows, dropped } = factsWrites(changed);
    remember(memo, ids, known, rows);
    const requires = salesFactsStoredAs(expected);
    const writes = salesFactsWrites(rows, dropped);
    return { documents: indexWrites(changed), writes: writes.length > 0 ? [{ ...writes[0]!, requires }, ...writes.slice(1)] : [requirement(requires)] };
  },
};
