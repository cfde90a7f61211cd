/**
 * Storing a received purchase invoice: the exact bytes and the parsed document become the two
 * events of a new `purchase-<documentId>` stream. The same transmission received again finds its
 * stream already there and is answered with the stored document (never a second copy).
 */
import { createHash } from 'node:crypto';
import {
  attributePurchase,
  PURCHASE_STORED_STATUS,
  purchaseDecider,
  purchaseDocumentId,
  purchaseStream,
  type PurchaseChannel,
} from '../../domain/purchases/purchase.js';
import { participantIdText, type ReadUbl } from '../../domain/purchases/ubl-reader.js';
import { DomainError } from '../../domain/errors.js';
import type { ReceivingCompany } from '../../readmodels/purchases.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { execute, type CommandContext } from '../execute.js';

export interface ReceivedDocument {
  channel: PurchaseChannel;
  environment: string;
  /** The exact bytes received. */
  bytes: Uint8Array;
  parsed: ReadUbl;
  company: ReceivingCompany;
  /** Country when the document does not tell (the network's, or the receiving company's). */
  fallbackCountry: string;
  transmission: Record<string, unknown> | null;
  receivedAt: Date;
  storedAt: Date;
}

export interface StoredPurchase {
  documentId: string;
  workspaceId: string;
  companyId: string;
  /** True when this transmission had been stored before (nothing was written now). */
  duplicate: boolean;
  /** Position of the stored event (null for a duplicate). */
  position: Position | null;
}

export async function storeReceivedPurchase(store: EventStore, doc: ReceivedDocument, ctx: CommandContext): Promise<StoredPurchase> {
  const { parsed, company } = doc;
  const workspaceId = company.workspaceId;
  const senderParticipantId = participantIdText(parsed.sender);
  const receiverParticipantId = participantIdText(parsed.receiver) ?? company.peppolParticipantId;
  const documentId = purchaseDocumentId({ workspaceId, environment: doc.environment, senderParticipantId, documentNumber: parsed.documentNumber });
  const xmlSha256 = createHash('sha256').update(doc.bytes).digest('hex');
  const receivedAt = doc.receivedAt.toISOString();
  const storedAt = doc.storedAt.toISOString();
  const command = {
    type: 'ReceivePurchase' as const,
    received: {
      documentId,
      workspaceId,
      environment: doc.environment,
      channel: doc.channel,
      senderParticipantId,
      receiverParticipantId,
      xmlBase64: Buffer.from(doc.bytes).toString('base64'),
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
      documentType: parsed.documentType,
      invoiceNumber: parsed.documentNumber,
      uuid: parsed.uuid,
      issueDate: parsed.issueDate,
      supplierName: parsed.supplierName,
      senderParticipantId,
      receiverParticipantId,
      attribution: attributePurchase(company.companyId, company.sources, parsed.buyerReference),
      coreDocument: parsed.coreDocument,
      xmlSha256,
      receivedAt,
      storedAt,
    },
  };
  try {
    const executed = await execute(store, purchaseDecider, purchaseStream(documentId), command, { ...ctx, workspaceId, environment: doc.environment }, {
      idSeed: `purchase:${documentId}`,
      loaded: { state: purchaseDecider.initialState, revision: 'no_stream' },
    });
    const replayed = executed.appended?.replayed ?? false;
    return { documentId, workspaceId, companyId: company.companyId, duplicate: replayed, position: executed.appended?.position ?? null };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'PURCHASE_ALREADY_STORED') {
      return { documentId, workspaceId, companyId: company.companyId, duplicate: true, position: null };
    }
    throw err;
  }
}
