/**
 * What the receiving access point does with a checked Peppol message: the receiver participant
 * (the SBDH's) must be held by an active company onboarded in the access point's environment —
 * else the message is refused and nothing is stored — and the UBL payload is stored as a purchase
 * of each such company through the purchases import used by the sandbox network and the file
 * import (commands/purchases/import.ts: the same UBL 2.1 schema check), so list, read, counts, query and the purchase webhook see it
 * unchanged. Storing is idempotent: the same document received again (a retried or replayed
 * message, or the same message at two instances at once) finds its purchase stored, stores
 * nothing, and is answered with a signed receipt again (outcome `duplicate`).
 */
import type { Knex } from 'knex';
import { participantIdText } from '../../domain/purchases/ubl-reader.js';
import type { Clock } from '../../platform/clock.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { ReceivingCompanyLookups } from '../../readmodels/purchases.js';
import { checkReceivedDocument, ImportRefused, receivePurchaseDocument, type CheckedDocument } from '../purchases/import.js';
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
  // Looked up for every message: the answers are kept for a second (a miss is not kept).
  const receivers = new ReceivingCompanyLookups(deps.knex);
  return async (message) => {
    const receiver = message.sbd.facts.receiver.value;
    const companies = await receivers.find(receiver, deps.environment);
    if (companies.length === 0) {
      return { kind: 'refused', error: 'OTHER', description: `PEPPOL:NOT_SERVICED: the receiver participant ${receiver} is not an active company of this access point` };
    }
    // Dispatch by document type: a buyer's Invoice Response answers one of our sales documents.
    if (isInvoiceResponseMessage(message.sbd.facts.documentTypeId)) return acceptInvoiceResponse(deps, message);
    // The one receiving path of every channel (commands/purchases/import.ts): the same checks as an
    // imported file (size, UTF-8, well-formedness, UBL 2.1 schema, number) before anything is stored.
    // The AS4 endpoint may have run them already, with the message's own checks (off the main thread).
    let checked: CheckedDocument;
    if (message.document?.kind === 'refused') return { kind: 'refused', error: 'VALUE_INCONSISTENT', description: `${message.document.code}: ${message.document.message}` };
    if (message.document?.kind === 'checked' && message.document.document.bytes === message.sbd.payload) {
      checked = message.document.document;
    } else {
      try {
        checked = await checkReceivedDocument(message.sbd.payload, deps.maxXmlBytes);
      } catch (err) {
        if (err instanceof ImportRefused) return { kind: 'refused', error: 'VALUE_INCONSISTENT', description: `${err.code}: ${err.message}` };
        throw err;
      }
    }
    const { purchases: stored } = await receivePurchaseDocument(
      deps,
      {
        bytes: message.sbd.payload,
        checked,
        environment: deps.environment === 'production' ? 'production' : 'sandbox',
        channel: 'peppol_as4',
        to: { companies },
        fallbackCountry: message.sbd.facts.countryC1,
        // The AS4 message id and the SBDH instance identifier are identity keys of the purchase:
        // a replayed message, or the same SBDH in a new message, stores nothing (outcome duplicate).
        transmission: {
          as4MessageId: message.messageId,
          sbdhInstanceId: message.sbd.facts.instanceId,
          sbdhSender: message.sbd.facts.sender.value,
          accessPoint: 'as4',
          messageId: message.messageId,
          conversationId: message.conversationId,
          sendingAccessPoint: message.sendingAccessPoint,
          senderParticipantId: message.sbd.facts.sender.value,
          receiverParticipantId: participantIdText(checked.parsed.receiver) ?? receiver,
          documentTypeId: message.sbd.facts.documentTypeId,
          processId: message.sbd.facts.processId,
        },
      },
      { now: deps.clock.now(), actor: 'peppol-as4', correlationId: message.messageId },
    );
    const positions = stored.flatMap((one) => (one.position ? [one.position] : []));
    if (positions.length) deps.onStored?.(positions);
    return { kind: stored.every((s) => s.duplicate) ? 'duplicate' : 'stored', documentIds: stored.map((s) => s.documentId) };
  };
}
