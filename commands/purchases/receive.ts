/**
 * Storing a received purchase invoice for one receiving company, decided from the log
 * (domain/purchases/identity.ts): read the claims of the document's identity keys and the
 * purchases sharing its supplier, type and number (the first attempt assumes them all empty and
 * reads only when its append finds otherwise); decide; append the purchase's stream (its two
 * events), the claims (each expecting `no_stream`) and the number stream (expecting the revision
 * read) in one multi-stream append. A concurrent receiver of the same document loses the append,
 * reads again, finds the claim and is answered with the stored purchase (`duplicate: true`);
 * nothing is written twice.
 */
import {
  attributePurchase,
  PURCHASE_STORED_STATUS,
  purchaseDecider,
  purchaseStream,
  supplierCountryOf,
  type PurchaseChannel,
} from '../../domain/purchases/purchase.js';
import {
  decideReceipt,
  documentNumberStream,
  identityKeys,
  identityStream,
  purchaseDocumentIdFor,
  purchaseIdentityDecider,
  purchaseNumberDecider,
  supplierIdentity,
  type TransmissionIdentity,
} from '../../domain/purchases/identity.js';
import { participantIdText, type ReadUbl } from '../../domain/purchases/ubl-reader.js';
import type { ReceivingCompany } from '../../readmodels/purchases.js';
import { artifactOf, DuplicateEventError, WrongExpectedVersionError, type EventStore, type NewEvent, type Position, type StreamAppend } from '../../platform/eventstore/port.js';
import { ConcurrencyConflictError, CONFLICT_RETRY_BUDGET_MS, conflictBackoff, eventMetadata, foldRecorded, seededEventId, type CommandContext } from '../execute.js';

export interface ReceivedDocument {
  channel: PurchaseChannel;
  environment: string;
  /** The exact bytes received. */
  bytes: Uint8Array;
  parsed: ReadUbl;
  company: ReceivingCompany;
  /** Country when the document does not tell (the network's, or the receiving company's). */
  fallbackCountry: string;
  /** What the transmission says of itself (kept with the received event), or null for a file import. */
  transmission: Record<string, unknown> | null;
  /** The transmission's own identifiers, each one more identity key of the document. */
  identity?: TransmissionIdentity | null;
  receivedAt: Date;
  storedAt: Date;
}

export interface StoredPurchase {
  documentId: string;
  workspaceId: string;
  companyId: string;
  /** True when this document had been stored before (nothing was written now). */
  duplicate: boolean;
  /** Earlier purchases with the same supplier, document type and number (a probable re-send); empty for a duplicate. */
  probableResendOf: string[];
  /** Position of the stored event (null for a duplicate). */
  position: Position | null;
}

export async function storeReceivedPurchase(store: EventStore, doc: ReceivedDocument, ctx: CommandContext): Promise<StoredPurchase> {
  const { parsed, company } = doc;
  const workspaceId = company.workspaceId;
  const scope = { workspaceId, environment: doc.environment };
  const senderParticipantId = participantIdText(parsed.sender);
  const receiverParticipantId = participantIdText(parsed.receiver) ?? company.peppolParticipantId;
  // The exact bytes as an artifact (stored once by hash beside the log, not inline in the event).
  const xml = artifactOf(Buffer.from(doc.bytes.buffer, doc.bytes.byteOffset, doc.bytes.byteLength));
  const xmlSha256 = xml.sha256;
  const documentId = purchaseDocumentIdFor(scope, xmlSha256);
  const keys = identityKeys({ xmlSha256, senderParticipantId, transmission: doc.identity ?? null });
  const supplier = supplierIdentity(senderParticipantId, parsed.coreDocument.parties?.seller);
  const numberStream = documentNumberStream(scope, supplier, parsed.documentType.base, parsed.documentNumber);
  const receivedAt = doc.receivedAt.toISOString();
  const storedAt = doc.storedAt.toISOString();
  const metadata = eventMetadata({ ...ctx, workspaceId, environment: doc.environment });
  const idSeed = `purchase:${documentId}`;
  const result = (duplicate: boolean, id: string, probableResendOf: string[], position: Position | null): StoredPurchase => ({
    documentId: id,
    workspaceId,
    companyId: company.companyId,
    duplicate,
    probableResendOf,
    position,
  });

  const deadline = Date.now() + CONFLICT_RETRY_BUDGET_MS;
  const streams = [...keys.map((key) => identityStream(scope, key)), numberStream];
  // The first attempt assumes what nearly every document finds: no key claimed and no purchase
  // under its number (every stream empty). Its append expects exactly that (`no_stream` for each),
  // so when any of them is not empty it writes nothing and fails, and the next attempt reads.
  let optimistic = true;
  for (let attempt = 1; ; attempt++) {
    // The claim of each identity key (its first event) and the number stream, in one read.
    const read = optimistic ? streams.map(() => []) : await store.readStreams(streams);
    const claims = keys.map((key, i) => ({ key, documentId: foldRecorded(purchaseIdentityDecider, read[i]!.slice(0, 1)).state.documentId }));
    const numbers = foldRecorded(purchaseNumberDecider, read[keys.length]!);
    const decision = decideReceipt(documentId, { claims, sameNumber: numbers.state.documentIds });
    if (decision.kind === 'duplicate') return result(true, decision.documentId, [], null);

    const events = purchaseDecider.decide(
      {
        type: 'ReceivePurchase',
        received: {
          documentId,
          workspaceId,
          environment: doc.environment,
          channel: doc.channel,
          senderParticipantId,
          receiverParticipantId,
          xml: { sha256: xmlSha256 },
          xmlSha256,
          xmlBytes: doc.bytes.byteLength,
          transmission: doc.transmission,
          receivedAt,
        },
        stored: {
          documentId,
          workspaceId,
          environment: doc.environment,
          status: PURCHASE_STORED_STATUS,
          country: parsed.country ?? doc.fallbackCountry,
          receiverCountry: company.countryCode,
          supplierCountry: supplierCountryOf(parsed.coreDocument),
          documentType: parsed.documentType,
          invoiceNumber: parsed.documentNumber,
          uuid: parsed.uuid,
          issueDate: parsed.issueDate,
          supplierName: parsed.supplierName,
          senderParticipantId,
          receiverParticipantId,
          attribution: attributePurchase(company.companyId, company.sources, parsed.buyerReference),
          probableResendOf: decision.probableResendOf,
          coreDocument: parsed.coreDocument,
          xmlSha256,
          receivedAt,
          storedAt,
        },
      },
      purchaseDecider.initialState,
    );
    // Every event of one decision gets an id seeded from the document id, so a concurrent
    // receiver of the same document appends the very same events (recognised as a replay).
    const toNew = (decider: { events: Record<string, { version: number }> }, seed: string) => (e: { type: string; data: unknown }, i: number): NewEvent => ({
      id: seededEventId(seed, i),
      type: e.type,
      schemaVersion: decider.events[e.type]!.version,
      data: e.data,
      metadata,
    });
    const numberEvents = purchaseNumberDecider.decide({ type: 'Use', documentId, supplier, documentBase: parsed.documentType.base, documentNumber: parsed.documentNumber }, numbers.state);
    // The claims first: where a store cannot append several streams atomically it writes the
    // parts in this order, and a claimed key then always names a purchase being stored.
    const parts: StreamAppend[] = keys.map((key, i) => ({
      streamId: streams[i]!,
      expected: 'no_stream' as const,
      events: purchaseIdentityDecider.decide({ type: 'Claim', documentId, key }, purchaseIdentityDecider.initialState).map(toNew(purchaseIdentityDecider, `${idSeed}:key:${i}`)),
    }));
    parts.push({ streamId: purchaseStream(documentId), expected: 'no_stream', events: events.map(toNew(purchaseDecider, idSeed)) });
    if (numberEvents.length > 0) parts.push({ streamId: numberStream, expected: numbers.revision, events: numberEvents.map(toNew(purchaseNumberDecider, `${idSeed}:number`)) });
    const guessed = optimistic;
    optimistic = false;
    try {
      const appended = await store.appendMulti(parts, { artifacts: [xml] });
      const purchase = appended[keys.length]!;
      if (purchase.replayed) return result(true, documentId, [], null);
      return result(false, documentId, decision.probableResendOf, purchase.position);
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError) && !(err instanceof DuplicateEventError)) throw err;
      // Not every stream was empty (read them now), or someone else stored this document (or another
      // one with the same number) meanwhile: decide again.
      if (guessed) continue;
      if (!(await conflictBackoff(attempt, deadline))) throw new ConcurrencyConflictError(numberStream, attempt);
    }
  }
}
