/** The sales document decider as given / when / then specifications (no I/O). */
import { expect } from 'chai';
import { documentDecider, type DocumentEvent } from '../../domain/document/document.js';
import { deciderSpecification } from '../support/decider-spec.js';

const given = deciderSpecification(documentDecider);

const base = {
  documentId: 'doc_1',
  uuid: 'u-1',
  documentNumber: 'INV-1',
  country: 'AE',
  environment: 'sandbox',
  documentType: { base: 'tax_invoice', modifiers: [] },
  source: { name: 's', version: '1', companyId: null },
  format: 'new' as const,
  externalId: null,
  destinations: ['TAX_AUTHORITY'],
  coreDocument: {},
  validation: {},
};
const submitted = { type: 'DocumentSubmitted', data: { ...base, xml: null } } as unknown as DocumentEvent;
const rejected = { type: 'DocumentRejected', data: { ...base, errors: [] } } as unknown as DocumentEvent;
const started = (attempt: number) => ({ type: 'DocumentDeliveryStarted', data: { attempt, destination: 'TAX_AUTHORITY' } }) as DocumentEvent;

describe('decider specification: sales documents', () => {
  it('receives a submitted document once', () => {
    given([]).when({ type: 'Receive', event: submitted as never }).then([submitted]);
  });

  it('starts delivery attempt 1 of a submitted document, and refuses a second start while it is processing', () => {
    given([submitted]).when({ type: 'StartDelivery', destination: 'TAX_AUTHORITY' }).then([started(1)]);
    given([submitted, started(1)]).when({ type: 'StartDelivery', destination: 'TAX_AUTHORITY' }).thenThrows((err) => {
      if (!(err instanceof Error) || !/processing document cannot take DocumentDeliveryStarted/.test(err.message)) throw err;
    });
  });

  it('refuses to deliver a rejected document', () => {
    given([rejected]).when({ type: 'StartDelivery', destination: 'TAX_AUTHORITY' }).thenThrows((err) => {
      if (!(err instanceof Error)) throw new Error('expected an error');
    });
  });

  describe("the seller's cancellation at the authority", () => {
    const government = { authority: 'MyInvois', uuid: 'MY-UUID-1' };
    const delivered = { type: 'DocumentDelivered', data: { attempt: 1, government, xml: null, tdd: null, finalResultDueAt: null } } as unknown as DocumentEvent;
    const valid = { type: 'DocumentFinalized', data: { outcome: 'valid', government, errors: [] } } as DocumentEvent;
    const invalid = { type: 'DocumentFinalized', data: { outcome: 'invalid', government, errors: [] } } as DocumentEvent;
    const cancel = {
      type: 'RecordCancellation',
      reason: ' wrong buyer ',
      cancelledAt: '2026-01-02T03:04:05.000Z',
      authority: 'MyInvois',
      authorityUuid: 'MY-UUID-1',
      government: { ...government, cancellation: { status: 'cancelled' } },
    } as const;
    const cancelled: DocumentEvent = {
      type: 'DocumentCancelled',
      data: {
        reason: 'wrong buyer',
        cancelledAt: '2026-01-02T03:04:05.000Z',
        by: 'seller',
        authority: 'MyInvois',
        authorityUuid: 'MY-UUID-1',
        error: { code: 'DOCUMENT_CANCELLED', message: 'cancelled by the seller at MyInvois on 2026-01-02T03:04:05.000Z: wrong buyer', path: [], source: 'government' },
        government: cancel.government,
      },
    };
    const life = [submitted, started(1), delivered, valid];

    it('moves a final_valid document to final_invalid with one DOCUMENT_CANCELLED error item', () => {
      given(life)
        .when(cancel)
        .then((events, state) => {
          expect(events).to.deep.equal([cancelled]);
          expect(state.state).to.equal('final_invalid');
        });
    });

    it('records it once: a second cancellation is no change', () => {
      given([...life, cancelled]).when(cancel).thenNothingHappened();
    });

    it('refuses to cancel a document that is not final_valid', () => {
      given([submitted, started(1), delivered, invalid]).when(cancel).thenThrows('INVALID_TRANSITION');
      given([submitted, started(1), delivered]).when(cancel).thenThrows('INVALID_TRANSITION');
      given([rejected]).when(cancel).thenThrows('INVALID_TRANSITION');
      given([]).when(cancel).thenThrows('INVALID_TRANSITION');
    });

    it('needs a reason', () => {
      given(life).when({ ...cancel, reason: '  ' }).thenThrows('CANCELLATION_REASON_REQUIRED');
    });
  });
});
