/**
 * The seller's side of a buyer's answer: a Peppol Invoice Response received (over the sandbox
 * network or AS4) is matched to the sales document it answers and recorded on it
 * (`DocumentBuyerResponded`, domain/document/document.ts), with its exact bytes.
 *
 * Matching: the delivered sales documents of the environment whose number is the response's
 * `DocumentReference/ID`, and whose delivery record names the response's receiver as the sending
 * participant and the response's sender as the receiving one (the buyer answers the seller,
 * compared case-insensitively). A response that matches none is kept as unmatched
 * (domain/peppol/unmatched-response.ts) for operators; the carrying message is still accepted.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { Delivered, documentDecider, documentStream, type BuyerResponseData } from '../../domain/document/document.js';
import { decodeEventData } from '../../domain/events/envelope.js';
import { INVOICE_RESPONSE_DOCUMENT_TYPE_ID, InvoiceResponseRefusal, readInvoiceResponse, responseView, type InvoiceResponseFacts } from '../../domain/peppol/invoice-response.js';
import type { Acceptance, InboundMessage } from './as4/receive.js';
import { unmatchedResponseDecider, unmatchedResponseStream } from '../../domain/peppol/unmatched-response.js';
import type { Clock } from '../../platform/clock.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { deliveredDocumentsByNumber } from '../../readmodels/sales-documents.js';
import { execute, type CommandContext } from '../execute.js';

export interface ResponseInboundDeps {
  store: EventStore;
  knex: Knex;
  clock: Clock;
}

export type ResponseReceipt =
  | { kind: 'matched'; documentId: string; workspaceId: string | null; recorded: boolean; position: Position | null }
  | { kind: 'unmatched'; reason: string; position: Position | null }
  | { kind: 'refused'; reason: string };

const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The delivery record of a document (its latest `DocumentDelivered`), or null when none was recorded yet. */
async function deliveryRecord(store: EventStore, documentId: string): Promise<{ record: Record<string, unknown> | null; found: boolean }> {
  const events = await store.readStream(documentStream(documentId));
  if (events.length === 0) return { record: null, found: false };
  const delivered = [...events].reverse().find((e) => e.type === Delivered.type);
  const government = delivered ? decodeEventData(Delivered, delivered.schemaVersion, delivered.data).government : null;
  return { record: isObject(government) ? government : null, found: true };
}

export async function receiveInvoiceResponse(
  deps: ResponseInboundDeps,
  input: { xml: Uint8Array; environment: string; channel: 'peppol_sandbox' | 'peppol_as4'; messageId: string | null },
  ctx: CommandContext,
): Promise<ResponseReceipt> {
  const bytes = Buffer.from(input.xml);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const receivedAt = deps.clock.now().toISOString();
  let facts: InvoiceResponseFacts;
  try {
    const { names: _names, ...read } = readInvoiceResponse(bytes.toString('utf8'));
    facts = read;
  } catch (err) {
    if (err instanceof InvoiceResponseRefusal) return { kind: 'refused', reason: err.message };
    throw err;
  }
  for (const candidate of await deliveredDocumentsByNumber(deps.knex, input.environment, facts.invoice.id)) {
    const { record } = await deliveryRecord(deps.store, candidate.documentId);
    // Before the delivery is recorded (an answer racing it), the document's own parties are unknown here: skip.
    if (!record || !same(record.senderParticipantId, facts.receiverParticipantId) || !same(record.receiverParticipantId, facts.senderParticipantId)) continue;
    const response: BuyerResponseData = {
      ...facts,
      channel: input.channel,
      messageId: input.messageId,
      receivedAt,
      government: { ...record, buyerResponse: responseView(facts, { receivedAt, channel: input.channel }) },
      xml: { sha256 },
    };
    const done = await execute(deps.store, documentDecider, documentStream(candidate.documentId), { type: 'RecordBuyerResponse', response }, { ...ctx, workspaceId: candidate.workspaceId, environment: input.environment }, {
      artifacts: [{ sha256, content: bytes }],
    });
    return { kind: 'matched', documentId: candidate.documentId, workspaceId: candidate.workspaceId, recorded: done.appended !== null, position: done.appended?.position ?? null };
  }
  const reason = `no delivered sales document ${facts.invoice.id} from ${facts.receiverParticipantId} to ${facts.senderParticipantId} in ${input.environment}`;
  const kept = await execute(
    deps.store,
    unmatchedResponseDecider,
    unmatchedResponseStream(sha256),
    {
      type: 'Keep',
      data: {
        environment: input.environment,
        channel: input.channel,
        messageId: input.messageId,
        responseId: facts.responseId,
        code: facts.code,
        invoiceNumber: facts.invoice.id,
        senderParticipantId: facts.senderParticipantId,
        receiverParticipantId: facts.receiverParticipantId,
        reason,
        xml: { sha256 },
        receivedAt,
      },
    },
    { ...ctx, environment: input.environment },
    { artifacts: [{ sha256, content: bytes }] },
  );
  return { kind: 'unmatched', reason, position: kept.appended?.position ?? null };
}

/** Whether an AS4 message's document type (the SBDH's) is the Peppol Invoice Response. */
export const isInvoiceResponseMessage = (documentTypeId: string): boolean => documentTypeId === INVOICE_RESPONSE_DOCUMENT_TYPE_ID;

/**
 * An Invoice Response received over AS4 (commands/peppol/inbound.ts dispatches it here): recorded
 * on the sales document it answers, or kept as unmatched; both are accepted with a receipt. One the
 * service cannot read is refused (ebMS VALUE_INCONSISTENT) and nothing is stored.
 */
export async function acceptInvoiceResponse(
  deps: ResponseInboundDeps & { environment: string; onStored?: (positions: Position[]) => void },
  message: InboundMessage,
): Promise<Acceptance> {
  const receipt = await receiveInvoiceResponse(
    deps,
    { xml: message.sbd.payload, environment: deps.environment, channel: 'peppol_as4', messageId: message.messageId },
    { now: deps.clock.now(), actor: 'peppol-as4', correlationId: message.messageId },
  );
  if (receipt.kind === 'refused') return { kind: 'refused', error: 'VALUE_INCONSISTENT', description: `INVOICE_RESPONSE_UNREADABLE: ${receipt.reason}` };
  if (receipt.position) deps.onStored?.([receipt.position]);
  if (receipt.kind === 'unmatched') return { kind: receipt.position ? 'stored' : 'duplicate', documentIds: [] };
  return { kind: receipt.recorded ? 'stored' : 'duplicate', documentIds: [receipt.documentId] };
}
