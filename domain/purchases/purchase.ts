/**
 * The received purchase invoice aggregate (stream `purchase-<documentId>`): one stream per
 * received document, `PurchaseInvoiceReceived` (the exact transmitted XML, immutable in the log,
 * with its SHA-256) then `PurchaseInvoiceStored` (the parsed core document, attribution and
 * status `purchase.invoice.stored`), appended together. The stored event is what the purchase
 * webhook announces and what read models and the search index are built from.
 *
 * The document id derives from (workspace, environment, sender participant, document number),
 * so the same transmission received twice lands on the same stream and the first append
 * (expected revision `no_stream`) is the duplicate guard: it is stored once.
 */
import * as t from 'io-ts';
import { v5 as uuidv5 } from 'uuid';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';

export const PURCHASE_STORED_STATUS = 'purchase.invoice.stored' as const;
export const PURCHASE_CHANNELS = ['peppol_sandbox', 'ubl_import', 'peppol_as4'] as const;
export type PurchaseChannel = (typeof PURCHASE_CHANNELS)[number];

const PURCHASE_ID_NAMESPACE = '2c6f0e3a-8d41-5b9e-a7c3-51f04e9b6d28';

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
  version: 1,
  codec: t.type({
    documentId: t.string,
    workspaceId: t.string,
    environment: t.string,
    channel: t.keyof({ peppol_sandbox: null, ubl_import: null, peppol_as4: null }),
    senderParticipantId: nullableString,
    receiverParticipantId: nullableString,
    /** The exact bytes received, base64. */
    xmlBase64: t.string,
    xmlSha256: t.string,
    xmlBytes: t.number,
    /** Peppol: the sending access point's message id and the sales document it carried. */
    transmission: t.union([t.record(t.string, t.unknown), t.null]),
    receivedAt: t.string,
  }),
});

export const PurchaseInvoiceStored = defineEvent({
  type: 'PurchaseInvoiceStored',
  version: 1,
  codec: t.type({
    documentId: t.string,
    workspaceId: t.string,
    environment: t.string,
    status: t.literal(PURCHASE_STORED_STATUS),
    country: t.string,
    documentType: t.type({ base: t.string, modifiers: t.array(t.string) }),
    invoiceNumber: nullableString,
    uuid: nullableString,
    issueDate: nullableString,
    supplierName: nullableString,
    senderParticipantId: nullableString,
    receiverParticipantId: nullableString,
    attribution: PurchaseAttribution,
    /** The parsed core document (SPEC.md 2.2 shape), as read from the XML. */
    coreDocument: t.unknown,
    xmlSha256: t.string,
    receivedAt: t.string,
    storedAt: t.string,
  }),
});

export type PurchaseEvent =
  | DomainEvent<'PurchaseInvoiceReceived', t.TypeOf<typeof PurchaseInvoiceReceived.codec>>
  | DomainEvent<'PurchaseInvoiceStored', t.TypeOf<typeof PurchaseInvoiceStored.codec>>;

export type PurchaseStoredData = t.TypeOf<typeof PurchaseInvoiceStored.codec>;
export type PurchaseReceivedData = t.TypeOf<typeof PurchaseInvoiceReceived.codec>;

export type PurchaseCommand = { type: 'ReceivePurchase'; received: PurchaseReceivedData; stored: PurchaseStoredData };

export interface PurchaseState {
  state: 'none' | 'received' | 'stored';
  documentId: string | null;
}

export const purchaseDecider: Decider<PurchaseCommand, PurchaseState, PurchaseEvent> = {
  category: 'purchase',
  initialState: { state: 'none', documentId: null },
  events: { PurchaseInvoiceReceived, PurchaseInvoiceStored },
  decide(command, s) {
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
    }
  },
};

registerDecider(purchaseDecider);

export const purchaseStream = (documentId: string) => `purchase-${documentId}`;

/**
 * The document id of a received document: the same transmission (same receiving workspace and
 * environment, same sender, same document number) always gets the same id.
 */
export function purchaseDocumentId(input: { workspaceId: string; environment: string; senderParticipantId: string | null; documentNumber: string }): string {
  return `pur_${uuidv5(`${input.workspaceId}\n${input.environment}\n${input.senderParticipantId ?? ''}\n${input.documentNumber}`, PURCHASE_ID_NAMESPACE).replace(/-/g, '')}`;
}

/** The branch a buyer reference names among the receiving company's sources (SPEC.md 2.9), else the company's first source. */
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
