/**
 * The sandbox Peppol network between onboarded companies: the sandbox access point hands each
 * delivered sales document (AE, BE, DE) to every active company, in any workspace, onboarded in
 * the same environment whose `peppolParticipantId` is the document's buyer endpoint
 * (`schemeID:EndpointID` of the transmitted XML). Each receiving workspace stores the exact
 * transmitted bytes, parsed, as a purchase invoice.
 *
 * The network routes a message by its parties, read from the XML up to its first line (as an
 * access point routes by the envelope); the whole document is read only by the receiving access
 * point of an onboarded company, to store it.
 */
import type { Knex } from 'knex';
import { screenXml, readUblHeader, participantIdText, type ParticipantId, type UblRoot, UblRefusal } from '../../domain/purchases/ubl-reader.js';
import type { Clock } from '../../platform/clock.js';
import { turnBatcher } from '../../platform/batching.js';
import { companiesHoldingParticipants, type ReceivingCompany } from '../../readmodels/purchases.js';
import type { EventStore } from '../../platform/eventstore/port.js';
import { checkReceivedDocument, ImportRefused, receivePurchaseDocument, type CheckedDocument } from './import.js';
import type { StoredPurchase } from './receive.js';
import { receiveInvoiceResponse } from '../peppol/invoice-response-inbound.js';
import type { ResponseTransport } from './respond.js';

export interface Transmission {
  /** The sales document that was sent, and the message that carried it. */
  documentId: string;
  messageId: string;
  country: string;
  environment: string;
  xml: Uint8Array;
  /** The document as the receiving access point checked it (`read`). */
  checked: CheckedDocument;
  /** The Peppol document type and process the message travelled with (kept in the transmission record). */
  documentTypeId?: string;
  processId?: string;
}

export type Refusable<T> = ({ ok: true } & T) | { ok: false; reason: string };

export interface PeppolNetwork {
  /**
   * The sending and receiving participants of the transmitted XML, and its root, CustomizationID and
   * ProfileID (its Peppol document type and process), from one read of its header (refused: the
   * message cannot be routed or read).
   */
  route(xml: Uint8Array): Refusable<{ root: UblRoot; sender: ParticipantId | null; receiver: ParticipantId | null; customizationId: string | null; profileId: string | null }>;
  /**
   * Reads and checks the whole transmitted XML, as a receiving access point does (refused: it
   * rejects the message): the checks of every received document (./import.ts).
   */
  read(xml: Uint8Array): Promise<Refusable<{ checked: CheckedDocument }>>;
  /** The onboarded companies that receive documents addressed to `receiver`. */
  receiversOf(receiver: ParticipantId | null, environment: string): Promise<ReceivingCompany[]>;
  /** Stores the transmission in every receiving workspace (idempotent: a retransmission is stored once). */
  transmit(transmission: Transmission, receivers: readonly ReceivingCompany[]): Promise<StoredPurchase[]>;
}

/** Runs a read of the XML, turning its refusal into the receiving access point's reason. */
function refusable<T>(read: () => T): Refusable<T> {
  try {
    return { ok: true, ...read() };
  } catch (err) {
    if (err instanceof UblRefusal) return { ok: false, reason: err.message };
    throw err;
  }
}

export function sandboxPeppolNetwork(deps: { store: EventStore; knex: Knex; clock: Clock; maxXmlBytes: number }): PeppolNetwork {
  // The deliveries of a reactor's batch ask at once: one statement answers them (platform/batching.ts).
  const holding = turnBatcher((lookups: readonly { participantId: string; environment: string }[]) => companiesHoldingParticipants(deps.knex, lookups));
  return {
    route(xml) {
      return refusable(() => readUblHeader(screenXml(xml, deps.maxXmlBytes)));
    },
    async read(xml) {
      try {
        return { ok: true, checked: await checkReceivedDocument(xml, deps.maxXmlBytes) };
      } catch (err) {
        if (err instanceof ImportRefused) return { ok: false, reason: err.message };
        throw err;
      }
    },
    async receiversOf(receiver, environment) {
      const participant = participantIdText(receiver);
      if (!participant) return [];
      return holding({ participantId: participant, environment });
    },
    async transmit(transmission, receivers) {
      // The one receiving path of every channel (./import.ts), for the companies routed to.
      const out = await receivePurchaseDocument(
        deps,
        {
          bytes: transmission.xml,
          checked: transmission.checked,
          environment: transmission.environment === 'production' ? 'production' : 'sandbox',
          channel: 'peppol_sandbox',
          to: { companies: receivers },
          transmission: {
            accessPoint: 'sandbox-ap',
            messageId: transmission.messageId,
            salesDocumentId: transmission.documentId,
            as4MessageId: transmission.messageId,
            ...(transmission.documentTypeId ? { documentTypeId: transmission.documentTypeId, processId: transmission.processId } : {}),
          },
          fallbackCountry: transmission.country,
        },
        { now: deps.clock.now(), actor: 'peppol-sandbox', correlationId: transmission.documentId },
      );
      return out.purchases;
    },
  };
}

/**
 * The buyer's answer over the sandbox network: handed to the seller's side at once (the sandbox
 * access point receives for every onboarded company), which records it on the sales document it
 * answers or keeps it as unmatched. A response the receiving side cannot read is a failed transmission.
 */
export function sandboxResponseTransport(deps: { store: EventStore; knex: Knex; clock: Clock }): ResponseTransport {
  return {
    async send({ xml, environment, responseId }) {
      const messageId = `sandbox-response-${responseId}`;
      const receipt = await receiveInvoiceResponse(deps, { xml, environment, channel: 'peppol_sandbox', messageId }, {
        now: deps.clock.now(),
        actor: 'peppol-sandbox',
        correlationId: responseId,
      });
      if (receipt.kind === 'refused') return { status: 'failed', messageId, detail: `the receiving access point refused the response: ${receipt.reason}` };
      return { status: 'delivered', messageId, detail: null };
    },
  };
}
