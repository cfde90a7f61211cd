/**
 * The buyer answers a received purchase invoice (docs/api/invoice-response.md): the Peppol BIS 3.0
 * Invoice Response is built from the purchase's own ids (its number, issue date and type code, the
 * two endpoint ids the purchase travelled between, reversed), checked against the UBL 2.1
 * ApplicationResponse schema, sent back to the seller's access point over the channel the purchase
 * came by, and recorded on the purchase (`PurchaseResponseSent`) with its exact bytes.
 *
 * - A purchase received over the sandbox network is answered over it: the seller's side records the
 *   answer on its sales document (commands/peppol/invoice-response-inbound.ts) at once.
 * - A purchase received over AS4 is answered over AS4 to the access point the SMP names for the
 *   seller's Invoice Response (`ResponseTransport`).
 * - An imported purchase came over no network: there is no access point to answer.
 * A transmission that fails is recorded as failed (and may be given again); the order of the
 * answers delivered follows the BIS (nothing after RE or PD, only PD after AP).
 */
import { createHash, randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { DomainError } from '../../domain/errors.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { buildInvoiceResponseXml, type InvoiceResponseFacts, type ResponseRequest } from '../../domain/peppol/invoice-response.js';
import {
  PurchaseInvoiceReceived,
  PurchaseInvoiceStored,
  PurchaseResponseSent,
  purchaseDecider,
  purchaseStream,
  responseRefusal,
  type PurchaseResponseData,
} from '../../domain/purchases/purchase.js';
import type { Clock } from '../../platform/clock.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { execute, foldRecorded, type CommandContext } from '../execute.js';
import { artifactBytes } from '../submissions.js';
import { ublSchemaErrors } from './xsd.js';

/** How an answer reaches the seller's access point. */
export interface ResponseTransport {
  send(input: { xml: Buffer; facts: InvoiceResponseFacts; environment: string; responseId: string; countryC1: string }): Promise<PurchaseResponseData['transmission']>;
}

export interface RespondDeps {
  store: EventStore;
  clock: Clock;
  /** By channel; a channel without one answers 409 RESPONSE_NOT_ROUTABLE. */
  transports: Partial<Record<'peppol_sandbox' | 'peppol_as4', ResponseTransport>>;
}

const RESPONSE_NAMESPACE = '3b0f6a52-2f0c-4c59-8a7e-5d1b7c9e4a10';

/** The invoice's type code, read from the received XML (380, 381, …), or null. */
function typeCodeOf(xml: string): string | null {
  return /<(?:[\w.-]+:)?(?:InvoiceTypeCode|CreditNoteTypeCode)\b[^>]*>\s*([^<\s]+)\s*</.exec(xml)?.[1] ?? null;
}

const nameOf = (core: unknown, role: 'buyer' | 'seller'): string | null => {
  const n = (core as { parties?: Record<string, { name?: unknown }> } | null)?.parties?.[role]?.name;
  return typeof n === 'string' && n.trim() !== '' ? n.trim() : null;
};

export async function respondToPurchase(
  deps: RespondDeps,
  input: { workspaceId: string; documentId: string; request: ResponseRequest },
  ctx: CommandContext,
): Promise<{ response: PurchaseResponseData; position: Position | null }> {
  const stream = purchaseStream(input.documentId);
  const recorded = await deps.store.readStream(stream);
  const loaded = foldRecorded(purchaseDecider, recorded);
  const receivedEvent = recorded.find((e) => e.type === PurchaseInvoiceReceived.type);
  const storedEvent = recorded.find((e) => e.type === PurchaseInvoiceStored.type);
  if (!receivedEvent || !storedEvent) throw new DomainError('not_found', 'NOT_FOUND', `no received purchase invoice ${input.documentId} in this workspace`);
  const received = decodeEventData(PurchaseInvoiceReceived, receivedEvent.schemaVersion, receivedEvent.data);
  const stored = decodeEventData(PurchaseInvoiceStored, storedEvent.schemaVersion, storedEvent.data);
  if (stored.workspaceId !== input.workspaceId) throw new DomainError('not_found', 'NOT_FOUND', `no received purchase invoice ${input.documentId} in this workspace`);

  const channel = received.channel;
  if (channel === 'ubl_import') {
    throw new DomainError('conflict', 'RESPONSE_NOT_ROUTABLE', 'this purchase was imported, not received over Peppol: there is no access point to send an answer to');
  }
  const transport = deps.transports[channel];
  if (!transport) throw new DomainError('conflict', 'RESPONSE_NOT_ROUTABLE', `answers to purchases received over ${channel} cannot be sent: the access point is not configured`);
  const seller = stored.senderParticipantId;
  const buyer = stored.receiverParticipantId;
  if (!seller || !buyer || !stored.invoiceNumber) {
    throw new DomainError('conflict', 'RESPONSE_NOT_ROUTABLE', 'the purchase names no seller or buyer endpoint, or no number: an answer cannot be addressed');
  }
  const refusal = responseRefusal(loaded.state.answered ?? [], input.request.code);
  if (refusal) throw new DomainError('conflict', 'RESPONSE_NOT_ALLOWED', refusal, ['body', 'code']);

  const now = deps.clock.now();
  // With an Idempotency-Key the answer's id is stable, so a retried request sends the same answer.
  const responseId = ctx.idempotencyKey ? uuidv5(`${input.documentId}:${ctx.idempotencyKey}`, RESPONSE_NAMESPACE) : randomUUID();
  const xmlText = (await artifactBytes(deps.store, received.xml)).toString('utf8');
  const facts: InvoiceResponseFacts = {
    responseId,
    code: input.request.code,
    message: input.request.message,
    clarifications: input.request.clarifications,
    note: input.request.note,
    issueDate: now.toISOString().slice(0, 10),
    invoice: { id: stored.invoiceNumber, typeCode: typeCodeOf(xmlText), issueDate: stored.issueDate },
    senderParticipantId: buyer,
    receiverParticipantId: seller,
  };
  const xml = buildInvoiceResponseXml(facts, { buyer: nameOf(stored.coreDocument, 'buyer'), seller: stored.supplierName ?? nameOf(stored.coreDocument, 'seller') });
  const schemaErrors = await ublSchemaErrors(xml, 'ApplicationResponse');
  // The XML is built here from checked values: a schema error is a defect of this service.
  if (schemaErrors.length > 0) throw new Error(`the Invoice Response built fails the UBL 2.1 schema: ${schemaErrors.join('; ')}`);
  const bytes = Buffer.from(xml, 'utf8');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  // The SBDH's COUNTRY_C1 of an answer: the buyer's (its sender's) country.
  const countryC1 = stored.receiverCountry ?? stored.country;
  const transmission = await transport.send({ xml: bytes, facts, environment: stored.environment, responseId, countryC1 });
  const response: PurchaseResponseData = { ...facts, xml: { sha256 }, channel, sentAt: now.toISOString(), transmission };
  const done = await execute(deps.store, purchaseDecider, stream, { type: 'RecordResponse', response }, ctx, { artifacts: [{ sha256, content: bytes }] });
  return { response, position: done.appended?.position ?? null };
}

/** The answers sent for a purchase, oldest first. */
export async function purchaseResponses(store: EventStore, documentId: string): Promise<PurchaseResponseData[]> {
  return (await store.readStream(purchaseStream(documentId)))
    .filter((e) => e.type === PurchaseResponseSent.type)
    .map((e) => decodeEventData(PurchaseResponseSent, e.schemaVersion, e.data));
}
