/** The sales document decider as given / when / then specifications (no I/O). */
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
});
