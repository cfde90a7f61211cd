import { expect } from 'chai';
import { DOCUMENT_STATES, TRANSITIONS, type DocumentState } from '../../domain/document/document.js';
import { indexedSalesDocument, indexedSalesState, splitIndexed, statusesOf, withState, type SalesDocumentFacts } from '../../domain/query/indexed-document.js';
import { statusValues, USERFACING_LABELS } from '../../domain/query/statuses.js';

const report = { success: false, errors: [{ code: 'X' }], warnings: [], metadata: { country: 'AE' }, validatedAt: '2026-01-02T00:00:00.000Z' };
const facts = (over: Partial<SalesDocumentFacts> = {}): SalesDocumentFacts => ({
  documentId: 'doc_1',
  workspaceId: 'ws_1',
  environment: 'sandbox',
  country: 'AE',
  documentType: { base: 'tax_invoice', modifiers: [], variant: null },
  source: { name: 'ERP', version: 'v1', companyId: 'c1' },
  coreDocument: { header: { documentNumber: 'INV-1', issueDate: '2026-01-02', currency: 'AED' }, totals: { totalAmountIncludingTax: 10 }, lineItems: [] },
  validation: report,
  transitions: [{ state: 'rejected', at: '2026-01-02T00:00:00.000Z' }],
  ...over,
});
const at = (i: number) => `2026-01-02T00:00:0${i}.000Z`;
const path = (...states: DocumentState[]) => states.map((state, i) => ({ state, at: at(i) }));

describe('indexed document (docs/api/invoice-query.md)', () => {
  it('a rejected sales document: NEEDS_CORRECTION, delivery and business NOT_STARTED, the report exactly as stored', () => {
    const { type, document } = indexedSalesDocument(facts());
    expect(type).to.equal('sales');
    expect(document).to.deep.equal({
      documentId: 'doc_1',
      documentType: { base: 'tax_invoice', modifiers: [], variants: [] },
      country: 'AE',
      coreDocument: {
        header: { documentNumber: 'INV-1', issueDate: '2026-01-02', currency: 'AED' },
        totals: { totalAmountIncludingTax: 10 },
        lineItems: [],
        meta: {
          source: { name: 'ERP', version: 'v1' },
          coreValidation: report,
          statuses: {
            document: { current: 'NEEDS_CORRECTION', history: [{ value: 'NEEDS_CORRECTION', at: at(0) }] },
            delivery: { current: 'NOT_STARTED', history: [{ value: 'NOT_STARTED', at: at(0) }] },
            business: { current: 'NOT_STARTED', history: [{ value: 'NOT_STARTED', at: at(0) }] },
            userfacing: 'Needs Correction',
            internal: { state: 'rejected', updatedAt: at(0) },
          },
        },
      },
      statusHistory: [{ state: 'rejected', at: at(0) }],
    });
    expect((document.coreDocument as any).meta.coreValidation).to.equal(report);
  });

  it('final_valid is COMPLIANT, final_invalid NON_COMPLIANT; histories collapse repeats', () => {
    const valid = statusesOf(path('submitted', 'processing', 'delivery_success', 'final_valid'));
    expect(valid.document.current).to.equal('COMPLIANT');
    expect(valid.userfacing).to.equal('Compliant');
    expect(valid.document.history.map((h) => h.value)).to.deep.equal(['VALIDATED', 'COMPLIANT']);
    expect(valid.delivery.history.map((h) => h.value)).to.deep.equal(['NOT_STARTED', 'IN_PROGRESS', 'DELIVERED']);
    expect(valid.business.history.map((h) => h.value)).to.deep.equal(['NOT_STARTED', 'PENDING', 'ACCEPTED']);
    const refused = statusesOf(path('submitted', 'processing', 'delivery_success', 'final_invalid'));
    expect([refused.document.current, refused.delivery.current, refused.business.current, refused.userfacing]).to.deep.equal(['NON_COMPLIANT', 'DELIVERED', 'REJECTED', 'Non-Compliant']);
    const exhausted = statusesOf(path('submitted', 'processing', 'delivery_failed', 'final_invalid'));
    expect([exhausted.document.current, exhausted.delivery.current, exhausted.business.current]).to.deep.equal(['NON_COMPLIANT', 'FAILED', 'NOT_STARTED']);
  });

  it('delivery and business stay NOT_STARTED until delivery starts; userfacing = the portal labels', () => {
    expect(statusValues('submitted', null)).to.deep.equal({ document: 'VALIDATED', delivery: 'NOT_STARTED', business: 'NOT_STARTED', userfacing: 'Draft or Ready' });
    expect(USERFACING_LABELS).to.include({ processing: 'Processing', final_valid: 'Compliant', final_invalid: 'Non-Compliant', rejected: 'Needs Correction' });
    // every state reachable by the machine has values
    for (const s of DOCUMENT_STATES) {
      for (const prev of [null, ...DOCUMENT_STATES]) {
        if (prev && !Object.values(TRANSITIONS[prev]).length) continue;
        const v = statusValues(s, prev);
        expect(v.document, s).to.be.a('string');
      }
    }
  });

  it('receipts: type receipts, core at the root, meta, countryDocumentStatus ISSUED', () => {
    const { type, document } = indexedSalesDocument(
      facts({ country: 'MY', documentType: { base: 'tax_invoice', modifiers: [], variant: 'receipt' }, transitions: path('submitted') }),
    );
    expect(type).to.equal('receipts');
    expect(document).to.include.keys('documentId', 'documentType', 'header', 'totals', 'lineItems', 'meta', 'statusHistory', 'countryDocumentStatus');
    expect(document).to.not.have.property('coreDocument');
    expect(document.countryDocumentStatus).to.equal('ISSUED');
    expect(document.country).to.equal('MY');
    expect(document.documentType).to.deep.equal({ base: 'tax_invoice', modifiers: [], variants: ['receipt'] });
    expect((document.meta as any).statuses.document.current).to.equal('VALIDATED');
  });

  it('the core document is indexed as mapped, malformed values included; a missing one is empty', () => {
    const odd = { header: { issueDate: '31/12/2026', documentNumber: 42, note: 'kept' }, parties: { buyer: 'nope' } };
    const { document } = indexedSalesDocument(facts({ coreDocument: odd }));
    const { meta, ...core } = document.coreDocument as any;
    expect(core).to.deep.equal(odd);
    expect(meta).to.include.keys('source', 'coreValidation', 'statuses');
    const none = indexedSalesDocument(facts({ coreDocument: null })).document as any;
    expect(Object.keys(none.coreDocument)).to.deep.equal(['meta']);
  });

  describe('body and state (a status change writes the state alone)', () => {
    const receipt = { country: 'MY', documentType: { base: 'tax_invoice', modifiers: [], variant: 'receipt' } };
    for (const [name, over] of [
      ['sales', {}],
      ['receipts', receipt],
    ] as const) {
      it(`${name}: the document is its body with its state; the state is what its transitions give`, () => {
        const f = facts({ ...over, transitions: path('submitted', 'processing', 'delivery_success', 'final_valid') });
        const { type, document } = indexedSalesDocument(f);
        const { body, state } = splitIndexed(type, document);
        expect(state).to.deep.equal(indexedSalesState(f).state);
        expect(withState(type, body, state)).to.deep.equal(document);
        // The body holds nothing of the state, and no transition changes it.
        const later = indexedSalesDocument({ ...f, transitions: path('submitted') }).document;
        expect(splitIndexed(type, later).body).to.deep.equal(body);
        expect(JSON.stringify(body)).to.not.match(/statusHistory|"statuses"|countryDocumentStatus/);
        // The inputs are left as they were.
        expect(indexedSalesDocument(f).document).to.deep.equal(document);
      });
    }

    it("a receipt's own fields at the state's places give way to the state, as before the split", () => {
      const core = { header: { documentNumber: 'R-1' }, statusHistory: 'payload', countryDocumentStatus: 'payload', meta: { statuses: 'payload' } };
      const { document } = indexedSalesDocument(facts({ ...receipt, coreDocument: core, transitions: path('submitted') }));
      expect(document.statusHistory).to.deep.equal([{ state: 'submitted', at: at(0) }]);
      expect(document.countryDocumentStatus).to.equal('ISSUED');
      expect((document.meta as any).statuses.document.current).to.equal('VALIDATED');
      expect((document.meta as any).source).to.deep.equal({ name: 'ERP', version: 'v1' });
    });

    it('a document without a state path splits and joins again unchanged', () => {
      const bare = { documentId: 'd', coreDocument: { header: {} } };
      const { body, state } = splitIndexed('sales', bare);
      expect(state).to.deep.equal({});
      expect(body).to.deep.equal(bare);
      expect(withState('sales', body, state)).to.deep.equal(bare);
    });
  });
});
