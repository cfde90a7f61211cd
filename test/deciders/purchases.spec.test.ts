/** The purchase decider as given / when / then specifications (no I/O). */
import { purchaseDecider, type PurchaseCommand } from '../../domain/purchases/purchase.js';
import { deciderSpecification } from '../support/decider-spec.js';

const given = deciderSpecification(purchaseDecider);
const received = { documentId: 'pur_1' } as Extract<PurchaseCommand, { type: 'ReceivePurchase' }>['received'];
const stored = { documentId: 'pur_1' } as Extract<PurchaseCommand, { type: 'ReceivePurchase' }>['stored'];
const receive: PurchaseCommand = { type: 'ReceivePurchase', received, stored };

describe('decider specification: received purchases', () => {
  it('records a new purchase as received and stored, in one decision', () => {
    given([]).when(receive).then([
      { type: 'PurchaseInvoiceReceived', data: received },
      { type: 'PurchaseInvoiceStored', data: stored },
    ]);
  });

  it('refuses the same purchase again with PURCHASE_ALREADY_STORED', () => {
    given([{ type: 'PurchaseInvoiceReceived', data: received }, { type: 'PurchaseInvoiceStored', data: stored }]).when(receive).thenThrows('PURCHASE_ALREADY_STORED');
  });

  it('refuses a command whose two events name different documents', () => {
    given([]).when({ ...receive, stored: { ...stored, documentId: 'pur_2' } }).thenThrows((err) => {
      if (!(err instanceof Error) || !/different documents/.test(err.message)) throw err;
    });
  });
});
