/**
 * Projects stored purchase invoices into `purchase_invoices` (the purchase list, the single
 * read's facts and the purchase counts), a batch at a time: one insert for every purchase of the
 * batch and one write of the storage clock.
 *
 * The storage clock keeps the list's storedAt strictly increasing in the order purchases become
 * visible: a purchase whose event storedAt is not after the latest one already projected is
 * stored one microsecond after it. Without this, two purchases stored at nearly the same moment
 * could become visible in the opposite order of their timestamps, and a client walking the list
 * with a cursor at that moment would skip one. Deterministic: a rebuild applies the same events
 * in the same log order and gets the same values.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../commands/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { microsToIso } from '../domain/purchases/list-query.js';
import { PurchaseInvoiceStored } from '../domain/purchases/purchase.js';
import { defineProjection } from './projection.js';

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

async function applyStored(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const stored = events.filter((e) => e.type === PurchaseInvoiceStored.type).map((e) => decodeEventData(PurchaseInvoiceStored, e.schemaVersion, e.data));
  if (stored.length === 0) return;
  const clock = await trx('purchase_store_clock').where({ id: 1 }).first(trx.raw(`(extract(epoch from last_stored_at) * 1000000)::bigint::text as us`));
  let last = clock ? BigInt(clock.us) : -1n;
  const rows = stored.map((d) => {
    let at = micros(d.storedAt);
    if (at <= last) at = last + 1n;
    last = at;
    return {
      document_id: d.documentId,
      workspace_id: d.workspaceId,
      environment: d.environment,
      country: d.country,
      company_id: d.attribution.companyId,
      document_base: d.documentType.base,
      status: d.status,
      invoice_number: d.invoiceNumber,
      supplier_name: d.supplierName,
      issue_date: d.issueDate,
      uuid: d.uuid,
      sender_participant_id: d.senderParticipantId,
      receiver_participant_id: d.receiverParticipantId,
      attribution: JSON.stringify(d.attribution),
      received_at: d.receivedAt,
      stored_at: microsToIso(at),
    };
  });
  await trx('purchase_invoices').insert(rows).onConflict('document_id').ignore();
  await trx('purchase_store_clock').insert({ id: 1, last_stored_at: microsToIso(last) }).onConflict('id').merge();
}

export const purchasesProjection = defineProjection({
  name: 'purchases',
  version: 1,
  tables: ['purchase_invoices', 'purchase_store_clock'],
  eventTypes: new Set([PurchaseInvoiceStored.type]),
  apply: (trx, event) => applyStored(trx, [event]),
  applyMany: applyStored,
});
