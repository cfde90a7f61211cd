/**
 * The identity rule of a received document (domain/purchases/identity.ts), pure: its identity
 * keys, the supplier's identity and its fallbacks, and the decision.
 */
import { expect } from 'chai';
import {
  decideReceipt,
  documentNumberStream,
  identityKeys,
  identityStream,
  purchaseDocumentIdFor,
  supplierIdentity,
} from '../../domain/purchases/identity.js';

const SHA = 'ab'.repeat(32);
const scope = { workspaceId: 'ws_1', environment: 'production' };

describe('purchases: the identity of a received document', () => {
  it('is its bytes, plus the AS4 message id and the SBDH instance identifier (per sender) when a network gives them', () => {
    expect(identityKeys({ xmlSha256: SHA, senderParticipantId: '0088:1' })).to.deep.equal([`sha256:${SHA}`]);
    expect(identityKeys({ xmlSha256: SHA, senderParticipantId: '0088:1', transmission: { as4MessageId: ' m-1@ap ', sbdhInstanceId: 'i-1' } })).to.deep.equal([
      `sha256:${SHA}`,
      'as4:m-1@ap',
      'sbdh:0088:1:i-1',
    ]);
    // The SBDH sender as the envelope writes it, in any case, is the same sender.
    expect(identityKeys({ xmlSha256: SHA, senderParticipantId: null, transmission: { sbdhInstanceId: 'i-1', sbdhSender: 'iso6523-actorid-upis::0088:ABC' } })[1]).to.equal('sbdh:0088:abc:i-1');
    expect(() => identityKeys({ xmlSha256: 'not a hash', senderParticipantId: null })).to.throw();
  });

  it('keeps its ids and stream names (those stored before are found again), for ASCII and non-ASCII names', () => {
    // Pinned: the values these functions gave before the namespace was parsed once and the name passed as bytes.
    expect(identityStream(scope, 'as4:m-1@ap')).to.equal('purchaseid-a871687a50ce5e669fa38516c4ec6c8b');
    expect(purchaseDocumentIdFor(scope, SHA)).to.equal('pur_283cdd3b2b9b5e889f5616423befd66f');
    expect(documentNumberStream({ workspaceId: 'ws_é', environment: 'sandbox' }, 'endpoint:0088:ü€𝄞', 'tax_invoice', ' INV-1 ')).to.equal('purchasenumber-bde47494a15d5629aa0fdb63114b35d0');
    expect(identityStream(scope, 'sbdh:0088:1:i-1')).to.equal('purchaseid-d9504b80dfbc5299b9e5ed575d4c6848');
    expect(documentNumberStream(scope, '0088:ÅBC', 'invoice', ' INV-1 ')).to.equal('purchasenumber-77cd757f485155ed84d77a565df9abb7');
  });

  it('scopes ids and streams by workspace and environment', () => {
    const other = { ...scope, environment: 'sandbox' };
    expect(purchaseDocumentIdFor(scope, SHA)).to.match(/^pur_[0-9a-f]{32}$/);
    expect(purchaseDocumentIdFor(scope, SHA)).to.equal(purchaseDocumentIdFor({ ...scope }, SHA));
    expect(purchaseDocumentIdFor(scope, SHA)).to.not.equal(purchaseDocumentIdFor(other, SHA));
    expect(identityStream(scope, 'as4:x')).to.match(/^purchaseid-[0-9a-f]{32}$/);
    expect(identityStream(scope, 'as4:x')).to.not.equal(identityStream(other, 'as4:x'));
  });

  it('identifies the supplier by endpoint, else tax id, else legal registration, else name and address', () => {
    const seller = {
      name: 'Fjord Konsult AS',
      taxIds: [{ type: 'VAT', value: 'NO 987.654.321 MVA' }],
      registrationNumbers: [{ scheme: '0192', value: '987654321' }],
      address: { addressLine1: 'Karl Johans gate 1', city: 'Oslo', country: 'NO' },
    };
    expect(supplierIdentity('0192:987654321', seller)).to.equal('endpoint:0192:987654321');
    expect(supplierIdentity(null, seller)).to.equal('tax:NO987654321MVA');
    expect(supplierIdentity(null, { ...seller, taxIds: undefined })).to.equal('registration:0192:987654321');
    expect(supplierIdentity(null, { ...seller, taxIds: undefined, registrationNumbers: undefined })).to.equal('name:fjord konsult as|karl johans gate 1||||oslo|no');
    expect(supplierIdentity(null, {})).to.equal(null);
    // Two suppliers with one number are two streams; so are an invoice and a credit note.
    expect(documentNumberStream(scope, 'tax:A', 'tax_invoice', 'N-1')).to.not.equal(documentNumberStream(scope, 'tax:B', 'tax_invoice', 'N-1'));
    expect(documentNumberStream(scope, 'tax:A', 'tax_invoice', 'N-1')).to.not.equal(documentNumberStream(scope, 'tax:A', 'credit_note', 'N-1'));
  });

  it('answers a held key with its purchase, and stores anything else, flagged with the purchases sharing its number', () => {
    expect(decideReceipt('pur_new', { claims: [{ key: 'sha256:x', documentId: null }, { key: 'as4:m', documentId: 'pur_old' }], sameNumber: [] })).to.deep.equal({
      kind: 'duplicate',
      documentId: 'pur_old',
      key: 'as4:m',
    });
    expect(decideReceipt('pur_new', { claims: [{ key: 'sha256:x', documentId: null }], sameNumber: ['pur_a', 'pur_b'] })).to.deep.equal({ kind: 'store', probableResendOf: ['pur_a', 'pur_b'] });
    expect(decideReceipt('pur_new', { claims: [{ key: 'sha256:x', documentId: null }], sameNumber: [] })).to.deep.equal({ kind: 'store', probableResendOf: [] });
  });
});
