/**
 * The received purchase invoice aggregate (stream `purchase-<documentId>`): one stream per
 * received document, `PurchaseInvoiceReceived` (the exact transmitted XML, immutable, as an
 * artifact named by its SHA-256) then `PurchaseInvoiceStored` (the parsed core document, attribution and
 * status `purchase.invoice.stored`), appended together. The stored event is what the purchase
 * webhook announces and what read models and the search index are built from.
 *
 * The document id derives from the workspace, the environment and the SHA-256 of the exact
 * bytes (domain/purchases/identity.ts): the same document received twice lands on the same
 * stream, and the stream is appended together with the claims of the document's identity keys,
 * all expecting `no_stream`, so it is stored once. Two documents that differ in a single byte are
 * two purchases; one that shares its supplier, type and number with a stored one is flagged
 * (`probableResendOf`), never dropped.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { decodeEventData, defineEvent } from '../events/envelope.js';
import { ArtifactRef } from '../document/document.js';
import { InvoiceResponseFacts, type ResponseCode } from '../peppol/invoice-response.js';

export const PURCHASE_STORED_STATUS = 'purchase.invoice.stored' as const;
export const PURCHASE_CHANNELS = ['peppol_sandbox', 'peppol_as4', 'ubl_import'] as const;
export type PurchaseChannel = (typeof PURCHASE_CHANNELS)[number];

const nullableString = t.union([t.string, t.null]);

export const PurchaseAttribution = t.type({
  companyId: t.string,
  sourceName: nullableString,
  sourceVersion: nullableString,
  branchId: nullableString,
  /** The buyer reference when it matched a branch of the receiving company, else null. */
  userGivenBranchId: nullableString,
});
export type PurchaseAttribution = t.TypeOf<typeof PurchaseAttribution>;

export const PurchaseInvoiceReceived = defineEvent({
  type: 'PurchaseInvoiceReceived',
  // v2: the exact bytes by hash (`xml`, an artifact stored once beside the log) instead of inline (`xmlBase64`).
  version: 2,
  codec: t.type({
    documentId: t.string,
    workspaceId: t.string,
    environment: t.string,
    channel: t.keyof({ peppol_sandbox: null, peppol_as4: null, ubl_import: null }),
    senderParticipantId: nullableString,
    receiverParticipantId: nullableString,
    /** The exact bytes received: an artifact by its SHA-256 (inline base64 in a v1 event). */
    xml: ArtifactRef,
    xmlSha256: t.string,
    xmlBytes: t.number,
    /**
     * Peppol: the sending access point, its message id (`messageId`; over AS4 also `as4MessageId`
     * and `sbdhInstanceId`) and, in the sandbox, the sales document it carried.
     */
    transmission: t.union([t.record(t.string, t.unknown), t.null]),
    receivedAt: t.string,
  }),
  upcasters: {
    // The hash was recorded beside the inline bytes: not computed again on every read.
    1: (data) => {
      const { xmlBase64, ...rest } = data as { xmlBase64: string; xmlSha256: string };
      return { ...rest, xml: { sha256: rest.xmlSha256, inlineBase64: xmlBase64 } };
    },
  },
});

/** The artifacts a purchase event names (the audit checks them against the store): the received XML, an answer's XML. */
export function purchaseArtifactRefsOf(event: { type: string; schemaVersion: number; data: unknown }): { role: 'xml' | 'response'; ref: ArtifactRef }[] {
  if (event.type === PurchaseInvoiceReceived.type) return [{ role: 'xml', ref: decodeEventData(PurchaseInvoiceReceived, event.schemaVersion, event.data).xml }];
  if (event.type === PurchaseResponseSent.type) return [{ role: 'response', ref: decodeEventData(PurchaseResponseSent, event.schemaVersion, event.data).xml }];
  return [];
}

const storedV2 = t.type({
  documentId: t.string,
  workspaceId: t.string,
  environment: t.string,
  status: t.literal(PURCHASE_STORED_STATUS),
  /** The document's own country as read (AE for PINT AE, else the supplier's), else the receiving company's. */
  country: t.string,
  /**
   * The receiving company's country: the country the purchase is filed and queried under. Null
   * only in events written before it was recorded (the projections then take the company's).
   */
  receiverCountry: nullableString,
  /** The supplier's country (its postal address), upper case; null when the document names none. */
  supplierCountry: nullableString,
  documentType: t.type({ base: t.string, modifiers: t.array(t.string) }),
  invoiceNumber: nullableString,
  uuid: nullableString,
  issueDate: nullableString,
  supplierName: nullableString,
  senderParticipantId: nullableString,
  receiverParticipantId: nullableString,
  attribution: PurchaseAttribution,
  /**
   * Purchases stored earlier with the same supplier identity, document type and number, oldest
   * first: this one is probably a re-send of them (a different document all the same: stored).
   */
  probableResendOf: t.array(t.string),
  /** The parsed core document, as read from the XML. */
  coreDocument: t.unknown,
  xmlSha256: t.string,
  receivedAt: t.string,
  storedAt: t.string,
});

/** The supplier's country in a parsed core document, upper case, or null. */
export function supplierCountryOf(coreDocument: unknown): string | null {
  const c = (coreDocument as { parties?: { seller?: { address?: { country?: unknown } } } } | null)?.parties?.seller?.address?.country;
  return typeof c === 'string' && c.trim() !== '' ? c.trim().toUpperCase() : null;
}

export const PurchaseInvoiceStored = defineEvent({
  type: 'PurchaseInvoiceStored',
  version: 2,
  codec: storedV2,
  upcasters: {
    // v1 had no receiver's country (the projections look up the company's), no supplier country and no re-send flag.
    1: (data) => {
      const d = data as Record<string, unknown>;
      return { ...d, receiverCountry: null, supplierCountry: supplierCountryOf(d.coreDocument), probableResendOf: [] };
    },
  },
});

/**
 * The buyer answered the purchase (a Peppol Invoice Response, docs/api/invoice-response.md): what
 * it said, the XML sent (by hash), and how it travelled back to the seller's access point.
 */
export const PurchaseResponseSent = defineEvent({
  type: 'PurchaseResponseSent',
  version: 1,
  codec: t.intersection([
    InvoiceResponseFacts,
    t.type({
      xml: ArtifactRef,
      channel: t.keyof({ peppol_sandbox: null, peppol_as4: null }),
      sentAt: t.string,
      transmission: t.type({
        status: t.keyof({ delivered: null, failed: null }),
        messageId: t.union([t.string, t.null]),
        detail: t.union([t.string, t.null]),
      }),
    }),
  ]),
});
export type PurchaseResponseData = t.TypeOf<typeof PurchaseResponseSent.codec>;

export type PurchaseEvent =
  | DomainEvent<'PurchaseInvoiceReceived', t.TypeOf<typeof PurchaseInvoiceReceived.codec>>
  | DomainEvent<'PurchaseInvoiceStored', t.TypeOf<typeof PurchaseInvoiceStored.codec>>
  | DomainEvent<'PurchaseResponseSent', PurchaseResponseData>;

export type PurchaseStoredData = t.TypeOf<typeof PurchaseInvoiceStored.codec>;
export type PurchaseReceivedData = t.TypeOf<typeof PurchaseInvoiceReceived.codec>;

export type PurchaseCommand =
  | { type: 'ReceivePurchase'; received: PurchaseReceivedData; stored: PurchaseStoredData }
  | { type: 'RecordResponse'; response: PurchaseResponseData };

export interface PurchaseState {
  state: 'none' | 'received' | 'stored';
  documentId: string | null;
  /** The codes of the answers delivered, oldest first. */
  answered?: readonly ResponseCode[];
}

/**
 * Whether the buyer may still give `code` after the answers delivered (the BIS's order): nothing
 * after RE or PD; after AP only PD. Null when it may, else why not.
 */
export function responseRefusal(answered: readonly ResponseCode[], code: ResponseCode): string | null {
  if (answered.includes('RE')) return 'the purchase was already rejected (RE): a rejection is final';
  if (answered.includes('PD')) return 'the purchase was already answered as paid (PD): that answer is final';
  if (answered.includes('AP') && code !== 'PD') return 'the purchase was already accepted (AP): only PD (paid) may follow';
  return null;
}

export const purchaseDecider: Decider<PurchaseCommand, PurchaseState, PurchaseEvent> = {
  category: 'purchase',
  initialState: { state: 'none', documentId: null },
  events: { PurchaseInvoiceReceived, PurchaseInvoiceStored, PurchaseResponseSent },
  decide(command, s) {
    if (command.type === 'RecordResponse') {
      if (s.state !== 'stored') throw new DomainError('not_found', 'NOT_FOUND', 'no stored purchase invoice to answer');
      // Only a delivered answer counts for the order of answers; a failed one may be given again.
      const refusal = command.response.transmission.status === 'delivered' ? responseRefusal(s.answered ?? [], command.response.code) : null;
      if (refusal) throw new DomainError('conflict', 'RESPONSE_NOT_ALLOWED', refusal, ['body', 'code']);
      return [{ type: 'PurchaseResponseSent', data: command.response }];
    }
    if (s.state !== 'none') {
      throw new DomainError('conflict', 'PURCHASE_ALREADY_STORED', `purchase invoice ${s.documentId} was already received`);
    }
    if (command.received.documentId !== command.stored.documentId) throw new Error('received and stored events name different documents');
    return [
      { type: 'PurchaseInvoiceReceived', data: command.received },
      { type: 'PurchaseInvoiceStored', data: command.stored },
    ];
  },
  evolve(s, event) {
    switch (event.type) {
      case 'PurchaseInvoiceReceived':
        return { state: 'received', documentId: event.data.documentId };
      case 'PurchaseInvoiceStored':
        return { state: 'stored', documentId: event.data.documentId };
      case 'PurchaseResponseSent':
        return event.data.transmission.status === 'delivered' ? { ...s, answered: [...(s.answered ?? []), event.data.code] } : s;
    }
  },
};

registerDecider(purchaseDecider);

export const purchaseStream = (documentId: string) => `purchase-${documentId}`;

/** The branch a buyer reference names among the receiving company's sources (the Connect section of the OpenAPI document), else the company's first source. */
export function attributePurchase(
  companyId: string,
  sources: readonly { sourceName: string; sourceVersion: string; branchId: string; userGivenBranchId: string; status: string }[],
  buyerReference: string | null,
): PurchaseAttribution {
  const ref = buyerReference?.trim();
  const matched = ref ? sources.find((s) => s.userGivenBranchId === ref) : undefined;
  const chosen = matched ?? sources.find((s) => s.status === 'active') ?? sources[0];
  return {
    companyId,
    sourceName: chosen?.sourceName ?? null,
    sourceVersion: chosen?.sourceVersion ?? null,
    branchId: chosen?.branchId ?? null,
    userGivenBranchId: matched ? matched.userGivenBranchId : null,
  };
}
