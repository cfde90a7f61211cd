/**
 * The Peppol delivery connector (corner 2) behind the connector port: production AE, BE and DE
 * documents leave through the service's own AS4 access point.
 *
 * For each document: its Peppol identifiers from the UBL itself (participants, document type from
 * the customization, process from the profile), the receiver's endpoint by SML/SMP discovery, the
 * SBDH envelope, then one AS4 exchange. The AS4 message id and the SBDH instance identifier are
 * derived from the document's UUID, so every attempt of a document carries the same ones and a
 * receiving access point de-duplicates a retry. Outcomes: a verified signed receipt is delivered
 * (final valid: Peppol's transport has no later result); a permanent ebMS error, an unregistered
 * participant or an unsupported document type is refused (final invalid, errors with source
 * `delivery`); transient errors, time-outs and 5xx are failed and retried on the schedule.
 *
 * Corner 5 (UAE): after the buyer's access point received an AE document, its Tax Data Document
 * goes to the configured tax authority participant through the same transport, discovered the same
 * way. The document counts as delivered only when both arrived; a retry sends both again under the
 * same message ids, and each receiving side answers a duplicate without storing it twice.
 */
import { v5 as uuidv5 } from 'uuid';
import { generateTaxDataDocument, type CoreDocument } from '../../domain/artifacts/index.js';
import { TDD_CUSTOMIZATION_ID, TDD_NAMESPACE, TDD_PROFILE_ID } from '../../domain/artifacts/tdd-ae.js';
import type { DocumentErrorItem, FinalResult } from '../../domain/document/document.js';
import { PARTICIPANT_SCHEME, peppolIdentifiersOf, PeppolIdentifierError, type PeppolIdentifiers, type PeppolParticipant } from '../../domain/peppol/identifiers.js';
import { buildSbdh } from '../../domain/peppol/sbdh.js';
import type { Clock } from '../../platform/clock.js';
import type { Connector, DeliveryAnswer, DeliveryRequest } from '../delivery/connector.js';
import { sendAs4, type SendDeps, type SendOutcome } from './as4/send.js';
import { PeppolDiscoveryError, type PeppolDiscovery } from './discovery/index.js';

export interface PeppolConnectorDeps extends Omit<SendDeps, 'now'> {
  clock: Clock;
  discovery: PeppolDiscovery;
  /** UAE corner 5: the tax authority's participant; null when not configured (AE documents are then refused). */
  corner5Participant: PeppolParticipant | null;
  /**
   * How long a delivered document awaits the buyer's answer (Invoice Response) before it is
   * final_valid; 0 (the default): final_valid at the receipt, as before (docs/api/invoice-response.md).
   */
  buyerResponseWindowMs?: number;
}

const MESSAGE_NAMESPACE = '8f0d3c1e-5b7a-4c2e-9a61-3d4f5e6a7b8c';
export const TDD_DOCUMENT_TYPE_ID = `${TDD_NAMESPACE}::TaxData##${TDD_CUSTOMIZATION_ID}::1.0`;

/** The stable identities of one document's transmission (`leg`: the buyer, corner 5, or an Invoice Response to the seller). */
export function transmissionIds(uuid: string, leg: 'c3' | 'c5' | 'ir', accessPoint: string): { messageId: string; instanceId: string; conversationId: string } {
  return {
    messageId: `${uuidv5(`${uuid}:${leg}:as4`, MESSAGE_NAMESPACE)}@${accessPoint}`,
    instanceId: uuidv5(`${uuid}:${leg}:sbdh`, MESSAGE_NAMESPACE),
    conversationId: uuidv5(`${uuid}:conversation`, MESSAGE_NAMESPACE),
  };
}

const deliveryError = (code: string, message: string): DocumentErrorItem => ({ code, message, path: [], source: 'delivery' });

const LOOKUP_CODES = {
  PARTICIPANT_NOT_REGISTERED: 'PEPPOL_PARTICIPANT_NOT_REGISTERED',
  DOCUMENT_TYPE_NOT_SUPPORTED: 'PEPPOL_DOCUMENT_TYPE_NOT_SUPPORTED',
  PROCESS_NOT_SUPPORTED: 'PEPPOL_PROCESS_NOT_SUPPORTED',
  TRANSPORT_NOT_SUPPORTED: 'PEPPOL_TRANSPORT_NOT_SUPPORTED',
} as const;

/** What one exchange needs of the document it carries: its stable id, environment and country. */
interface LegContext {
  uuid: string;
  environment: string;
  country: string;
}
const legOf = (request: DeliveryRequest): LegContext => ({ uuid: request.uuid, environment: request.environment, country: request.country });

type Leg = { kind: 'sent'; record: Record<string, unknown> } | { kind: 'answer'; answer: DeliveryAnswer; record: Record<string, unknown> };

export class PeppolConnector implements Connector {
  readonly name = 'peppol-as4';
  readonly destination = 'PEPPOL' as const;

  constructor(private readonly deps: PeppolConnectorDeps) {}

  async deliver(request: DeliveryRequest): Promise<DeliveryAnswer> {
    if (!request.xml) return { kind: 'refused', government: null, errors: [deliveryError('PEPPOL_DOCUMENT_MISSING', 'the document has no transmitted XML to send')] };
    let ids: PeppolIdentifiers;
    try {
      ids = peppolIdentifiersOf(request.xml);
    } catch (err) {
      if (err instanceof PeppolIdentifierError) return { kind: 'refused', government: null, errors: [deliveryError(err.code, err.message)] };
      throw err;
    }
    const xml = request.xml.toString('utf8');
    const buyer = await this.leg(legOf(request), 'c3', ids, xml);
    if (buyer.kind === 'answer') return buyer.answer;
    const government: Record<string, unknown> = { ...buyer.record };
    if (request.country === 'AE') {
      const c5 = await this.corner5(request, ids, xml, String(buyer.record.sbdhInstanceId));
      if (c5.kind === 'answer') return c5.answer.kind === 'refused' ? { ...c5.answer, government: { ...government, corner5: c5.record } } : c5.answer;
      government.corner5 = c5.record;
    }
    const window = this.deps.buyerResponseWindowMs ?? 0;
    if (window > 0) {
      // The buyer answers within the window (a rejection ends the document final_invalid); else final_valid when it closes.
      const due = new Date(Date.parse(String(buyer.record.deliveredAt)) + window).toISOString();
      return { kind: 'delivered', government, final: null, finalResultDueAt: due, alreadyReceived: buyer.record.alreadyReceived === true };
    }
    return { kind: 'delivered', government, final: { outcome: 'valid', government, errors: [] }, finalResultDueAt: null, alreadyReceived: buyer.record.alreadyReceived === true };
  }

  /** The Tax Data Document of an AE document to the configured corner-5 participant. */
  private async corner5(request: DeliveryRequest, ids: PeppolIdentifiers, xml: string, buyerInstanceId: string): Promise<Leg> {
    const participant = this.deps.corner5Participant;
    if (!participant) {
      const error = deliveryError('PEPPOL_CORNER5_NOT_CONFIGURED', 'AE documents are reported to the tax authority (corner 5): PEPPOL_CORNER5_PARTICIPANT is not configured');
      return { kind: 'answer', answer: { kind: 'refused', government: null, errors: [error] }, record: {} };
    }
    const reportedAt = this.deps.clock.now().toISOString();
    const tdd = generateTaxDataDocument({
      documentType: request.documentType,
      document: request.coreDocument as CoreDocument,
      uuid: request.uuid,
      reportedAt,
      sourceXml: xml,
      receiverId: participant.value,
      transportHeaderId: buyerInstanceId,
    }).xml;
    const tddIds = { ...ids, receiver: participant, documentTypeId: TDD_DOCUMENT_TYPE_ID, processId: TDD_PROFILE_ID, rootNamespace: TDD_NAMESPACE, rootName: 'TaxData' };
    const leg = await this.leg(legOf(request), 'c5', tddIds, tdd);
    // What deliver() records of the TDD: its time and ids, so the stored TDD is the one sent.
    const extra = { reportedAt, receiverId: participant.value, transportHeaderId: buyerInstanceId };
    return leg.kind === 'sent' ? { kind: 'sent', record: { ...leg.record, ...extra } } : { ...leg, record: { ...leg.record, ...extra } };
  }

  /**
   * A buyer's Invoice Response (docs/api/invoice-response.md) to the seller's access point, found by
   * discovery for the Invoice Response document type: the same exchange as a document's, its AS4
   * message id derived from the response id (a retry carries the same one).
   */
  async sendInvoiceResponse(input: { xml: string; responseId: string; environment: string; countryC1: string }): Promise<{ status: 'delivered' | 'failed'; messageId: string | null; detail: string | null }> {
    let ids: PeppolIdentifiers;
    try {
      ids = peppolIdentifiersOf(input.xml);
    } catch (err) {
      if (err instanceof PeppolIdentifierError) return { status: 'failed', messageId: null, detail: `${err.code}: ${err.message}` };
      throw err;
    }
    const sent = await this.leg({ uuid: input.responseId, environment: input.environment, country: input.countryC1 }, 'ir', ids, input.xml);
    if (sent.kind === 'sent') return { status: 'delivered', messageId: String(sent.record.messageId), detail: null };
    const answer = sent.answer;
    const detail = answer.kind === 'failed' ? `${answer.error.code}: ${answer.error.message}` : answer.kind === 'refused' ? answer.errors.map((e) => `${e.code}: ${e.message}`).join('; ') : null;
    return { status: 'failed', messageId: typeof sent.record.messageId === 'string' ? sent.record.messageId : null, detail };
  }

  private async leg(request: LegContext, leg: 'c3' | 'c5' | 'ir', ids: PeppolIdentifiers, payloadXml: string): Promise<Leg> {
    const who = leg === 'c5' ? 'the tax authority (corner 5)' : leg === 'ir' ? 'the seller' : 'the receiver';
    const record: Record<string, unknown> = {
      network: 'PEPPOL',
      accessPoint: this.deps.identity.commonName,
      environment: request.environment,
      senderParticipantId: ids.sender.value,
      receiverParticipantId: ids.receiver.value,
      documentTypeId: ids.documentTypeId,
      processId: ids.processId,
    };
    let found;
    try {
      found = await this.deps.discovery.lookup({ scheme: ids.receiver.scheme || PARTICIPANT_SCHEME, value: ids.receiver.value }, ids.documentTypeId, ids.processId);
    } catch (err) {
      // A network failure is retried; an SMP whose answer is invalid or untrusted ends the delivery.
      if (err instanceof PeppolDiscoveryError && !err.transient) {
        const error = deliveryError(`PEPPOL_${err.code}`, `${who} ${ids.receiver.value}: ${err.message}`);
        return { kind: 'answer', answer: { kind: 'refused', government: { ...record, status: 'INVALID', failure: error }, errors: [error] }, record };
      }
      const error = deliveryError('PEPPOL_DISCOVERY_FAILED', `the SMP of ${who} ${ids.receiver.value} could not be looked up: ${(err as Error).message}`);
      return { kind: 'answer', answer: { kind: 'failed', outcomeUnknown: false, error }, record };
    }
    if (!found.found) {
      const error = deliveryError(LOOKUP_CODES[found.reason], `${who} ${ids.receiver.value}: ${found.detail}`);
      return { kind: 'answer', answer: { kind: 'refused', government: { ...record, status: 'INVALID', failure: error }, errors: [error] }, record };
    }
    const t = transmissionIds(request.uuid, leg, this.deps.identity.commonName);
    const now = this.deps.clock.now();
    const sbd = buildSbdh(payloadXml, ids, { instanceId: t.instanceId, createdAt: now, countryC1: ids.sellerCountry ?? request.country });
    Object.assign(record, { messageId: t.messageId, sbdhInstanceId: t.instanceId, endpointUrl: found.endpoint.url, sentAt: now.toISOString() });
    const outcome: SendOutcome = await sendAs4(
      { ...this.deps, now: () => this.deps.clock.now() },
      {
        endpointUrl: found.endpoint.url,
        receiverCertificatePem: found.endpoint.certificatePem,
        messageId: t.messageId,
        conversationId: t.conversationId,
        header: { processId: ids.processId, documentTypeId: ids.documentTypeId, originalSender: ids.sender, finalRecipient: ids.receiver },
        payload: Buffer.from(sbd, 'utf8'),
      },
    );
    switch (outcome.kind) {
      case 'receipt':
        return {
          kind: 'sent',
          record: { ...record, status: 'DELIVERED', deliveredAt: this.deps.clock.now().toISOString(), receivingAccessPoint: outcome.receiverCommonName, receiptMessageId: outcome.receiptMessageId, alreadyReceived: outcome.duplicate },
        };
      case 'refused': {
        const errors = outcome.errors.map((e) => deliveryError(e.code, `${who} refused the message: ${e.shortDescription}: ${e.description}`));
        return { kind: 'answer', answer: { kind: 'refused', government: { ...record, status: 'INVALID', ebmsErrors: outcome.errors }, errors }, record };
      }
      case 'retry':
        return { kind: 'answer', answer: { kind: 'failed', outcomeUnknown: outcome.outcomeUnknown, error: deliveryError(outcome.code, `${who}: ${outcome.message}`) }, record };
    }
  }

  async finalResult(request: DeliveryRequest, government: Record<string, unknown>): Promise<FinalResult | null> {
    void request;
    // Without a buyer-response window the answer of deliver() is final. With one, the buyer's answer
    // ends the document when it arrives; here only the window's close does (no answer came).
    const window = this.deps.buyerResponseWindowMs ?? 0;
    if (window <= 0) return null;
    const now = this.deps.clock.now();
    if (now.getTime() < Date.parse(String(government.deliveredAt)) + window) return null;
    const closed = { ...government, status: 'VALID', finalResultAt: now.toISOString(), buyerResponse: null, buyerResponseWindowClosed: true };
    return { outcome: 'valid', government: closed, errors: [] };
  }
}
