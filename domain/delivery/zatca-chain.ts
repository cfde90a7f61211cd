/**
 * The ZATCA invoice chain: ZATCA counts invoices (ICV) and links their hashes (PIH) per EGS unit,
 * so a seller whose EGS unit holds a production CSID has its stamped invoices chained in the
 * unit's stream `zatcachain-egs_<egsUnitId>`; a seller without one (the sandbox) keeps the chain
 * per seller, `zatcachain-<hash of workspace, environment and seller VAT number>`, as before.
 * Each invoice carries a counter (ICV) and the hash of the seller's
 * previous invoice (PIH). One event per link, holding the whole state of the chain, so the
 * next link needs only the stream's last event; appending it with that event's revision keeps
 * the chain unbroken under concurrent deliveries.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { ZATCA_INITIAL_PREVIOUS_INVOICE_HASH } from '../artifacts/index.js';
import { registerAggregate } from '../aggregates.js';
import { decodeEventData, defineEvent } from '../events/envelope.js';

export const ZatcaInvoiceChained = defineEvent({
  type: 'ZatcaInvoiceChained',
  version: 1,
  codec: t.intersection([
    t.type({ documentId: t.string, counter: t.number, invoiceHash: t.string, previousInvoiceHash: t.string }),
    t.partial({
      /** The EGS unit whose chain this is (a stamped invoice); absent on a seller's unstamped chain. */
      egsUnitId: t.string,
      /** The SHA-256 (hex) of the stamped XML, an artifact appended with the link: a replay sends the same bytes. */
      stampedXml: t.string,
    }),
  ]),
});
export type ZatcaLink = t.TypeOf<typeof ZatcaInvoiceChained.codec>;

/** The counter and previous hash of the next invoice after `last` (null: the seller's first invoice). */
export function nextLink(last: ZatcaLink | null): { counter: number; previousInvoiceHash: string } {
  return last
    ? { counter: last.counter + 1, previousInvoiceHash: last.invoiceHash }
    : { counter: 1, previousInvoiceHash: ZATCA_INITIAL_PREVIOUS_INVOICE_HASH };
}

/** The chain of a seller without an EGS unit (unstamped invoices). */
export const zatcaSellerChainStream = (workspaceId: string | null | undefined, environment: string, sellerVat: string) =>
  `zatcachain-${createHash('sha256').update(`${workspaceId}\n${environment}\n${sellerVat}`).digest('hex')}`;

/** The chain of an EGS unit (stamped invoices). */
export const zatcaUnitChainStream = (egsUnitId: string) => `zatcachain-egs_${egsUnitId}`;

registerAggregate<ZatcaLink | null>({
  category: 'zatcachain',
  initialState: null,
  evolve: (_state, event) => decodeEventData(ZatcaInvoiceChained, event.schemaVersion, event.data),
});
