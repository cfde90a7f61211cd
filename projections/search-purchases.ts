/**
 * Received purchase invoices as a source of the search projection: one indexed document
 * (type `purchases`, domain/query/indexed-document.ts) per `PurchaseInvoiceStored` event. The
 * event carries everything the document holds and a purchase never changes afterwards, so
 * this source keeps no facts table; the version is the purchase stream's revision. A purchase
 * is filed under the receiving company's country, whatever its supplier's.
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { PurchaseInvoiceStored } from '../domain/purchases/purchase.js';
import { indexedPurchaseDocument } from '../domain/query/indexed-document.js';
import { receiverCountries } from '../readmodels/purchases.js';
import type { SearchSource, SourceChanges } from './search-source.js';

export const purchasesSearchSource: SearchSource = {
  name: 'purchases',
  eventTypes: new Set([PurchaseInvoiceStored.type]),
  tables: [],
  async apply(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<SourceChanges> {
    const stored = events.filter((e) => e.type === PurchaseInvoiceStored.type).map((e) => ({ e, data: decodeEventData(PurchaseInvoiceStored, e.schemaVersion, e.data) }));
    // Filed under the receiving company's country (older events did not record it: the company's).
    const countries = await receiverCountries(trx, stored.map((s) => s.data));
    const documents = stored.map(({ e, data }, i) => {
        return {
          workspaceId: data.workspaceId,
          environment: data.environment,
          type: 'purchases' as const,
          documentId: data.documentId,
          version: e.revision,
          document: indexedPurchaseDocument(data, countries[i]!),
        };
      });
    return { documents, written: Promise.resolve() };
  },
};
