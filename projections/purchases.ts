/**
 * Projects stored purchase invoices into `purchase_invoices` (the purchase list, the single
 * read's facts and the purchase counts), a batch at a time: one insert for every purchase of the
 * batch and one write of the storage clock (the statements are in readmodels/purchases.ts).
 *
 * The storage clock keeps each list's storedAt (per workspace and environment) strictly
 * increasing in the order purchases become visible: a purchase whose event storedAt is not after
 * the latest one already projected for its list is stored one microsecond after it. Without this, two purchases stored at nearly the same moment
 * could become visible in the opposite order of their timestamps, and a client walking the list
 * with a cursor at that moment would skip one. Deterministic: a rebuild applies the same events
 * in the same log order and gets the same values.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { microsToIso } from '../domain/purchases/list-query.js';
import { PurchaseInvoiceStored } from '../domain/purchases/purchase.js';
import { readStoreClocks, receiverCountries, writeStoredPurchases } from '../readmodels/purchases.js';
import { defineProjection } from './projection.js';

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

async function applyStored(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const stored = events.filter((e) => e.type === PurchaseInvoiceStored.type).map((e) => decodeEventData(PurchaseInvoiceStored, e.schemaVersion, e.data));
  if (stored.length === 0) return;
  // The storage clock of every list (workspace and environment) the batch touches, in one read.
  const scope = (workspaceId: string, environment: string) => `${workspaceId}\n${environment}`;
  const scopes = [...new Map(stored.map((d) => [scope(d.workspaceId, d.environment), [d.workspaceId, d.environment] as const])).values()];
  const last = new Map<string, bigint>((await readStoreClocks(trx, scopes)).map((c) => [scope(c.workspaceId, c.environment), c.lastStoredMicros]));
  const countries = await receiverCountries(trx, stored);
  const rows = stored.map((d, i) => {
    const key = scope(d.workspaceId, d.environment);
    const previous = last.get(key);
    let at = micros(d.storedAt);
    if (previous !== undefined && at <= previous) at = previous + 1n;
    last.set(key, at);
    return {
      document_id: d.documentId,
      workspace_id: d.workspaceId,
      environment: d.environment,
      country: countries[i],
      supplier_country: d.supplierCountry,
      probable_resend_of: JSON.stringify(d.probableResendOf),
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
  await writeStoredPurchases(
    trx,
    rows,
    scopes.map(([workspaceId, environment]) => ({ workspaceId, environment, lastStoredAt: microsToIso(last.get(scope(workspaceId, environment))!) })),
  );
}

export const purchasesProjection = defineProjection({
  name: 'purchases',
  // 2: filed under the receiving company's country, with the supplier's country and the re-send flag.
  version: 2,
  tables: ['purchase_invoices', 'purchase_store_clock'],
  eventTypes: new Set([PurchaseInvoiceStored.type]),
  apply: (trx, event) => applyStored(trx, [event]),
  applyMany: applyStored,
});
