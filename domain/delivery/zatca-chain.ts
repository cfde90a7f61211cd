/**
 * The ZATCA invoice chain of a seller (stream `zatcachain-<hash of workspace, environment and
 * seller VAT number>`): each invoice carries a counter (ICV) and the hash of the seller's
 * previous invoice (PIH). One event per link, holding the whole state of the chain, so the
 * next link needs only the stream's last event; appending it with that event's revision keeps
 * the chain unbroken under concurrent deliveries.
 */
import * as t from 'io-ts';
import { ZATCA_INITIAL_PREVIOUS_INVOICE_HASH } from '../artifacts/index.js';
import { registerAggregate } from '../aggregates.js';
import { decodeEventData, defineEvent } from '../events/envelope.js';

export const ZatcaInvoiceChained = defineEvent({
  type: 'ZatcaInvoiceChained',
  version: 1,
  codec: t.type({ documentId: t.string, counter: t.number, invoiceHash: t.string, previousInvoiceHash: t.string }),
});
export type ZatcaLink = t.TypeOf<typeof ZatcaInvoiceChained.codec>;

/** The counter and previous hash of the next invoice after `last` (null: the seller's first invoice). */
export function nextLink(last: ZatcaLink | null): { counter: number; previousInvoiceHash: string } {
  return last
    ? { counter: last.counter + 1, previousInvoiceHash: last.invoiceHash }
    : { counter: 1, previousInvoiceHash: ZATCA_INITIAL_PREVIOUS_INVOICE_HASH };
}

registerAggregate<ZatcaLink | null>({
  category: 'zatcachain',
  initialState: null,
  evolve: (_state, event) => decodeEventData(ZatcaInvoiceChained, event.schemaVersion, event.data),
});
