/**
 * The sandbox Peppol network between onboarded companies: the sandbox access point hands each
 * delivered sales document (AE, BE, DE) to every active company, in any workspace, onboarded in
 * the same environment whose `peppolParticipantId` is the document's buyer endpoint
 * (`schemeID:EndpointID` of the transmitted XML). Each receiving workspace stores the exact
 * transmitted bytes, parsed, as a purchase invoice.
 */
import type { Knex } from 'knex';
import { screenXml, readUbl, participantIdText, type ReadUbl, UblRefusal } from '../../domain/purchases/ubl-reader.js';
import type { Clock } from '../../platform/clock.js';
import { companiesHoldingParticipant, type ReceivingCompany } from '../../readmodels/purchases.js';
import type { EventStore } from '../eventstore/port.js';
import { storeReceivedPurchase, type StoredPurchase } from './receive.js';

export interface Transmission {
  /** The sales document that was sent, and the message that carried it. */
  documentId: string;
  messageId: string;
  country: string;
  environment: string;
  xml: Uint8Array;
  parsed: ReadUbl;
}

export interface PeppolNetwork {
  /** Reads the transmitted XML (refused: the receiving access point rejects the message). */
  read(xml: Uint8Array): { ok: true; parsed: ReadUbl } | { ok: false; reason: string };
  /** The onboarded companies that receive documents addressed to the buyer endpoint of `parsed`. */
  receiversOf(parsed: ReadUbl, environment: string): Promise<ReceivingCompany[]>;
  /** Stores the transmission in every receiving workspace (idempotent: a retransmission is stored once). */
  transmit(transmission: Transmission, receivers: readonly ReceivingCompany[]): Promise<StoredPurchase[]>;
}

export function sandboxPeppolNetwork(deps: { store: EventStore; knex: Knex; clock: Clock; maxXmlBytes: number }): PeppolNetwork {
  return {
    read(xml) {
      try {
        return { ok: true, parsed: readUbl(screenXml(xml, deps.maxXmlBytes)) };
      } catch (err) {
        if (err instanceof UblRefusal) return { ok: false, reason: err.message };
        throw err;
      }
    },
    async receiversOf(parsed, environment) {
      const participant = participantIdText(parsed.receiver);
      if (!participant) return [];
      return companiesHoldingParticipant(deps.knex, participant, environment);
    },
    async transmit(transmission, receivers) {
      const out: StoredPurchase[] = [];
      for (const company of receivers) {
        const now = deps.clock.now();
        out.push(
          await storeReceivedPurchase(
            deps.store,
            {
              channel: 'peppol_sandbox',
              environment: transmission.environment,
              bytes: transmission.xml,
              parsed: transmission.parsed,
              company,
              fallbackCountry: transmission.country,
              transmission: { accessPoint: 'sandbox-ap', messageId: transmission.messageId, salesDocumentId: transmission.documentId },
              receivedAt: now,
              storedAt: deps.clock.now(),
            },
            { now, actor: 'peppol-sandbox', correlationId: transmission.documentId },
          ),
        );
      }
      return out;
    },
  };
}
