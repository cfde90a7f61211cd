/**
 * What the receiving access point does with a checked Peppol message: the receiver participant
 * (the SBDH's) must be held by an active company onboarded in the access point's environment —
 * else the message is refused and nothing is stored — and the UBL payload is stored as a purchase
 * of each such company through the purchases import used by the sandbox network
 * (commands/purchases/receive.ts), so list, read, counts, query and the purchase webhook see it
 * unchanged. Storing is idempotent: the same document received again (a retried or replayed
 * message) finds its purchase stored and is answered as a duplicate.
 */
import type { Knex } from 'knex';
import { participantIdText, readUbl, screenXml, UblRefusal } from '../../domain/purchases/ubl-reader.js';
import type { Clock } from '../../platform/clock.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { companiesHoldingParticipants } from '../../readmodels/purchases.js';
import { storeReceivedPurchase } from '../purchases/receive.js';
import type { Acceptance, InboundMessage } from './as4/receive.js';
import { acceptInvoiceResponse, isInvoiceResponseMessage } from './invoice-response-inbound.js';

export interface InboundDeps {
  store: EventStore;
  knex: Knex;
  clock: Clock;
  /** The environment whose onboarded companies this access point receives for. */
  environment: string;
  maxXmlBytes: number;
  /** Called with the positions of what was stored (tests and the benchmark wait on them). */
  onStored?: (positions: Position[]) => void;
}

export function as4Acceptor(deps: InboundDeps): (message: InboundMessage) => Promise<Acceptance> {
  return async (message) => {
    const receiver = message.sbd.facts.receiver.value;
    const [companies = []] = await companiesHoldingParticipants(deps.knex, [{ participantId: receiver, environment: deps.environment }]);
    if (companies.length === 0) {
      return { kind: 'refused', error: 'OTHER', description: `PEPPOL:NOT_SERVICED: the receiver participant ${receiver} is not an active company of this access point` };
    }
    // Dispatch by document type: a buyer's Invoice Response answers one of our sales documents.
    if (isInvoiceResponseMessage(message.sbd.facts.documentTypeId)) return acceptInvoiceResponse(deps, message);
    let parsed;
    try {
      parsed = readUbl(screenXml(message.sbd.payload, deps.maxXmlBytes));
    } catch (err) {
      if (err instanceof UblRefusal) return { kind: 'refused', error: 'VALUE_INCONSISTENT', description: `${err.code}: ${err.message}` };
      throw err;
    }
    const stored = [];
    const positions: Position[] = [];
    for (const company of companies) {
      const now = deps.clock.now();
      const one = await storeReceivedPurchase(
        deps.store,
        {
          channel: 'peppol_as4',
          environment: deps.environment,
          bytes: message.sbd.payload,
          parsed,
          company,
          fallbackCountry: message.sbd.facts.countryC1,
          // The AS4 message id and the SBDH instance identifier are identity keys of the purchase:
          // a replayed message, or the same SBDH in a new message, is answered as a duplicate.
          identity: {
            as4MessageId: message.messageId,
            sbdhInstanceId: message.sbd.facts.instanceId,
            sbdhSender: message.sbd.facts.sender.value,
          },
          transmission: {
            accessPoint: 'as4',
            messageId: message.messageId,
            sbdhInstanceId: message.sbd.facts.instanceId,
            conversationId: message.conversationId,
            sendingAccessPoint: message.sendingAccessPoint,
            senderParticipantId: message.sbd.facts.sender.value,
            receiverParticipantId: participantIdText(parsed.receiver) ?? receiver,
            documentTypeId: message.sbd.facts.documentTypeId,
            processId: message.sbd.facts.processId,
          },
          receivedAt: now,
          storedAt: deps.clock.now(),
        },
        { now, actor: 'peppol-as4', correlationId: message.messageId },
      );
      stored.push(one);
      if (one.position) positions.push(one.position);
    }
    if (positions.length) deps.onStored?.(positions);
    return { kind: stored.every((s) => s.duplicate) ? 'duplicate' : 'stored', documentIds: stored.map((s) => s.documentId) };
  };
}
