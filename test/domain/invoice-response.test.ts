/** The buyer's answer (Peppol Invoice Response): request rules, XML written and read, and the sales document's decider. Pure. */
import { expect } from 'chai';
import { DomainError } from '../../domain/errors.js';
import { documentDecider, type BuyerResponseData, type DocumentCommand, type DocumentEvent, type DocumentStateView } from '../../domain/document/document.js';
import {
  buildInvoiceResponseXml,
  decodeResponseRequest,
  INVOICE_RESPONSE_CUSTOMIZATION_ID,
  isApplicationResponse,
  readInvoiceResponse,
  type InvoiceResponseFacts,
} from '../../domain/peppol/invoice-response.js';
import { responseRefusal } from '../../domain/purchases/purchase.js';

const facts: InvoiceResponseFacts = {
  responseId: 'r-1',
  code: 'RE',
  message: 'Price & quantity <wrong>',
  clarifications: [
    { list: 'OPStatusReason', code: 'PRI', text: null },
    { list: 'OPStatusAction', code: 'NIN', text: 'Send a new invoice' },
  ],
  note: 'see contract 12',
  issueDate: '2026-11-28',
  invoice: { id: 'INV-7', typeCode: '380', issueDate: '2026-11-20' },
  senderParticipantId: '0208:0123456789',
  receiverParticipantId: '0208:9876543210',
};

describe('Peppol Invoice Response: request rules', () => {
  it('accepts each code with what the BIS needs', () => {
    for (const body of [{ code: 'AB' }, { code: 'IP' }, { code: 'AP', reasons: [{ code: 'NON' }] }, { code: 'PD' }, { code: 'UQ', actions: [{ code: 'PIN' }] }, { code: 'CA', reasons: [{ code: 'QTY', text: 'only 9' }] }, { code: 'RE', message: 'no', reasons: [{ code: 'REF' }] }]) {
      expect(decodeResponseRequest(body).ok, JSON.stringify(body)).to.equal(true);
    }
  });
  it('names every problem with its path', () => {
    const r = decodeResponseRequest({ code: 'RE', reasons: [{ code: 'NOPE' }, 'x'], actions: [{ code: 'NIN', extra: 1 }], note: '' });
    expect(r.ok).to.equal(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path)).to.deep.include.members([
      ['body', 'reasons', 0, 'code'],
      ['body', 'reasons', 1],
      ['body', 'actions', 0, 'extra'],
      ['body', 'note'],
      ['body', 'message'],
    ]);
  });
  it('keeps the BIS order of answers: nothing after RE or PD, only PD after AP', () => {
    expect(responseRefusal(['AB', 'UQ'], 'RE')).to.equal(null);
    expect(responseRefusal(['RE'], 'AP')).to.match(/final/);
    expect(responseRefusal(['PD'], 'AB')).to.match(/final/);
    expect(responseRefusal(['AP'], 'RE')).to.match(/only PD/);
    expect(responseRefusal(['AP'], 'PD')).to.equal(null);
  });
});

describe('Peppol Invoice Response: XML', () => {
  it('writes the BIS 3.0 transaction and reads it back (escaped text, both clarification lists)', () => {
    const xml = buildInvoiceResponseXml(facts, { buyer: 'Buyer & Co', seller: 'Seller' });
    expect(xml).to.contain(`<cbc:CustomizationID>${INVOICE_RESPONSE_CUSTOMIZATION_ID}</cbc:CustomizationID>`);
    expect(xml).to.contain('<cbc:ResponseCode listID="UNCL4343OpSubset">RE</cbc:ResponseCode>');
    expect(xml).to.contain('<cbc:StatusReasonCode listID="OPStatusAction">NIN</cbc:StatusReasonCode>');
    expect(isApplicationResponse(xml)).to.equal(true);
    const read = readInvoiceResponse(xml);
    const { names, ...rest } = read;
    expect(names).to.deep.equal({ buyer: 'Buyer & Co', seller: 'Seller' });
    expect(rest).to.deep.equal({ ...facts, clarifications: [{ ...facts.clarifications[0], text: 'Price & quantity <wrong>' }, facts.clarifications[1]] });
  });
  it('keeps a message beside reasons that have texts of their own (a status of its own)', () => {
    const both: InvoiceResponseFacts = { ...facts, message: 'Goods not received', clarifications: [{ list: 'OPStatusReason', code: 'DEL', text: 'Nothing delivered' }] };
    const { names: _n, ...read } = readInvoiceResponse(buildInvoiceResponseXml(both, { buyer: null, seller: null }));
    expect(read).to.deep.equal(both);
  });
  it('refuses what is not an Invoice Response, and a DOCTYPE', () => {
    expect(() => readInvoiceResponse('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>')).to.throw(/ApplicationResponse/);
    expect(() => readInvoiceResponse('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>')).to.throw(/DOCTYPE/);
    expect(() => readInvoiceResponse(buildInvoiceResponseXml(facts, { buyer: null, seller: null }).replace('>RE<', '>ZZ<'))).to.throw(/ResponseCode ZZ/);
    expect(() => readInvoiceResponse('<a')).to.throw(/well-formed/);
  });
});

describe('sales document decider: the buyer\'s answer', () => {
  const submitted: DocumentEvent = {
    type: 'DocumentSubmitted',
    data: {
      documentId: 'doc_1', uuid: 'u-1', documentNumber: 'INV-7', country: 'BE', environment: 'sandbox',
      documentType: { base: 'tax_invoice', modifiers: [] }, source: { name: 's', version: '1', companyId: null },
      format: 'new', externalId: null, destinations: ['PEPPOL'], coreDocument: {}, validation: {}, xml: null,
    },
  };
  const answer = (code: BuyerResponseData['code'], responseId = `r-${code}`): DocumentCommand => ({
    type: 'RecordBuyerResponse',
    response: { ...facts, code, responseId, channel: 'peppol_sandbox', messageId: null, receivedAt: '2026-11-28T10:00:00Z', government: { buyerResponse: { code } }, xml: null },
  });
  const submit: DocumentCommand = { type: 'Receive', event: submitted as any };
  const start: DocumentCommand = { type: 'StartDelivery', destination: 'PEPPOL' };
  const awaiting: DocumentCommand = { type: 'RecordDelivered', government: { status: 'DELIVERED' }, finalResultDueAt: '2026-11-29T00:00:00Z', final: null };
  const atOnce: DocumentCommand = { type: 'RecordDelivered', government: { status: 'DELIVERED' }, final: { outcome: 'valid', government: {}, errors: [] } };
  function run(commands: DocumentCommand[]): { state: DocumentStateView; events: DocumentEvent[] } {
    let state = documentDecider.initialState;
    let last: DocumentEvent[] = [];
    for (const c of commands) {
      last = documentDecider.decide(c, state);
      state = last.reduce((s, e) => documentDecider.evolve(s, e), state);
    }
    return { state, events: last };
  }

  it('a rejection ends a document awaiting its final result final_invalid with BUYER_REJECTED, in the same append', () => {
    const { state, events } = run([submit, start, awaiting, answer('RE')]);
    expect(state.state).to.equal('final_invalid');
    expect(events.map((e) => e.type)).to.deep.equal(['DocumentBuyerResponded', 'DocumentFinalized']);
    const finalized = events[1] as DocumentEvent & { type: 'DocumentFinalized' };
    expect(finalized.data.errors[0]).to.include({ code: 'BUYER_REJECTED', source: 'delivery' });
    expect(finalized.data.errors[0]!.message).to.contain('PRI').and.contain('Price & quantity');
  });
  it('AP and PD end it final_valid; AB, IP, UQ and CA leave it awaiting', () => {
    expect(run([submit, start, awaiting, answer('AP')]).state.state).to.equal('final_valid');
    expect(run([submit, start, awaiting, answer('PD')]).state.state).to.equal('final_valid');
    for (const code of ['AB', 'IP', 'UQ', 'CA'] as const) {
      const { state, events } = run([submit, start, awaiting, answer(code)]);
      expect(state.state, code).to.equal('delivery_success');
      expect(events.map((e) => e.type)).to.deep.equal(['DocumentBuyerResponded']);
    }
  });
  it('never moves a terminal state: the answer is recorded alone', () => {
    const { state, events } = run([submit, start, atOnce, answer('RE')]);
    expect(state.state).to.equal('final_valid');
    expect(events.map((e) => e.type)).to.deep.equal(['DocumentBuyerResponded']);
  });
  it('an answer that raced the delivery record is applied when the delivery is recorded', () => {
    const { state, events } = run([submit, start, answer('RE'), awaiting]);
    expect(state.state).to.equal('final_invalid');
    expect(events.map((e) => e.type)).to.deep.equal(['DocumentDelivered', 'DocumentFinalized']);
    const finalized = events[1] as DocumentEvent & { type: 'DocumentFinalized' };
    expect(finalized.data.government).to.deep.include({ status: 'DELIVERED', buyerResponse: { code: 'RE' } });
  });
  it('a final result that comes later (the window closing) keeps the buyer\'s last answer on record', () => {
    const closed: DocumentCommand = { type: 'Finalize', outcome: 'valid', government: { status: 'VALID', buyerResponse: null, buyerResponseWindowClosed: true }, errors: [] };
    const { state, events } = run([submit, start, awaiting, answer('UQ'), closed]);
    expect(state.state).to.equal('final_valid');
    expect((events[0] as DocumentEvent & { type: 'DocumentFinalized' }).data.government).to.deep.equal({ status: 'VALID', buyerResponse: { code: 'UQ' }, buyerResponseWindowClosed: true });
  });
  it('records an answer once, and refuses one for a document never delivered', () => {
    expect(run([submit, start, awaiting, answer('UQ', 'same'), answer('UQ', 'same')]).events).to.deep.equal([]);
    expect(() => run([submit, answer('AP')])).to.throw(DomainError, /never delivered/);
  });
});
