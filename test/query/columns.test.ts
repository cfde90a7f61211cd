import { expect } from 'chai';
import fc from 'fast-check';
import { columnKeys, parseColumns, shapeDocument, withoutPrivateStatus, type Selector } from '../../domain/query/columns.js';
import { indexedSalesDocument, type SalesDocumentFacts } from '../../domain/query/indexed-document.js';
import type { QueryType } from '../../domain/query/fields.js';

const report = { success: true, errors: [], warnings: [], metadata: { country: 'AE', base: 'tax_invoice', modifiers: [], variant: null, durationMs: 1, totals: {}, ruleSetStats: [] }, validatedAt: '2026-01-02T00:00:00.000Z' };
const core = {
  header: { documentNumber: 'INV-1', issueDate: '2026-01-02', currency: 'AED', invoicePeriod: { startDate: '2026-01-01', endDate: '2026-01-31', frequency: 'MONTHLY' }, custom: 'kept' },
  parties: { seller: { name: 'Seller LLC', address: { city: 'Dubai' } }, buyer: { name: 'Buyer LLC' } },
  lineItems: [
    { id: '1', name: 'A', quantity: 2, price: { amount: 5 }, extensions: { ae_itemType: 'G' } },
    { id: '2', name: 'B', quantity: 1, price: { amount: 7 } },
  ],
  payment: { paymentMeans: [{ paymentMeansCode: '30', creditTransferInfo: { payeeFinancialAccountId: 'AE01' } }] },
  taxTotals: [{ taxAmount: 1 }],
  totals: { totalAmountIncludingTax: 105, totalTaxAmount: 5 },
  extensions: { peppol_seller_peppolIdScheme: '0235' },
};
const facts = (variant: string | null = null): SalesDocumentFacts => ({
  documentId: 'doc_1',
  workspaceId: 'ws_1',
  environment: 'sandbox',
  country: variant === 'receipt' ? 'MY' : 'AE',
  documentType: { base: 'tax_invoice', modifiers: ['export'], variant },
  source: { name: 'ERP', version: 'v1', companyId: null },
  coreDocument: core,
  validation: report,
  transitions: [
    { state: 'submitted', at: '2026-01-02T00:00:00.000Z' },
    { state: 'processing', at: '2026-01-02T00:00:01.000Z' },
  ],
});
const sales = indexedSalesDocument(facts()).document;
const receipt = indexedSalesDocument(facts('receipt')).document;

function selectors(type: QueryType, columns: string[]): Selector[] {
  const r = parseColumns(type, columns);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.selectors;
}
const shape = (type: QueryType, doc: Record<string, unknown>, columns: string[]) => shapeDocument(type, doc, selectors(type, columns), { apiKey: true });

const CURRENT = {
  document: { current: 'VALIDATED' },
  delivery: { current: 'IN_PROGRESS' },
  business: { current: 'NOT_STARTED' },
  userfacing: 'Processing',
};

describe('invoice query columns (docs/api/invoice-query.md shaping)', () => {
  it('no columns: the stored document minus statusHistory, internal and the history arrays', () => {
    const out = shapeDocument('sales', sales, null, { apiKey: true });
    expect(out).to.not.have.property('statusHistory');
    const statuses = (out.coreDocument as any).meta.statuses;
    expect(statuses).to.deep.equal(CURRENT);
    expect((out.coreDocument as any).meta.coreValidation).to.deep.equal(report);
    expect((out.coreDocument as any).header.custom).to.equal('kept');
    // the stored document is untouched
    expect(sales).to.have.property('statusHistory');
    expect((sales.coreDocument as any).meta.statuses.internal).to.deep.equal({ state: 'processing', updatedAt: '2026-01-02T00:00:01.000Z' });
    expect(withoutPrivateStatus('receipts', receipt)).to.not.have.property('statusHistory');
  });

  it('selected fields plus documentId, documentType {base, modifiers}, meta.source and current statuses', () => {
    expect(shape('sales', sales, ['header.documentNumber', 'totals.totalAmountIncludingTax'])).to.deep.equal({
      documentId: 'doc_1',
      documentType: { base: 'tax_invoice', modifiers: ['export'] },
      coreDocument: {
        header: { documentNumber: 'INV-1' },
        totals: { totalAmountIncludingTax: 105 },
        meta: { source: { name: 'ERP', version: 'v1' }, statuses: CURRENT },
      },
    });
  });

  it('receipts: selected fields at the root, meta and countryDocumentStatus', () => {
    expect(shape('receipts', receipt, ['parties.seller.name'])).to.deep.equal({
      documentId: 'doc_1',
      documentType: { base: 'tax_invoice', modifiers: ['export'] },
      parties: { seller: { name: 'Seller LLC' } },
      meta: { source: { name: 'ERP', version: 'v1' }, statuses: CURRENT },
      countryDocumentStatus: 'ISSUED',
    });
  });

  it('section wildcards select whole sections, stored unknown fields included', () => {
    const out = shape('sales', sales, ['header.*']) as any;
    expect(out.coreDocument.header).to.deep.equal(core.header);
    expect(shape('sales', sales, ['parties.seller.*']).coreDocument).to.deep.include({ parties: { seller: core.parties.seller } });
    expect((shape('sales', sales, ['header.invoicePeriod.*']) as any).coreDocument.header).to.deep.equal({ invoicePeriod: core.header.invoicePeriod });
    for (const w of ['lineItems.*', 'lineItems[].*']) expect((shape('sales', sales, [w]) as any).coreDocument.lineItems).to.deep.equal(core.lineItems);
    expect((shape('sales', sales, ['totals.*']) as any).coreDocument.totals).to.deep.equal(core.totals);
    expect((shape('sales', sales, ['payment.*']) as any).coreDocument.payment).to.deep.equal(core.payment);
    expect((shape('sales', sales, ['parties.*']) as any).coreDocument.parties).to.deep.equal(core.parties);
  });

  it('per-element line columns', () => {
    expect((shape('sales', sales, ['lineItems[].name', 'lineItems.price.amount']) as any).coreDocument.lineItems).to.deep.equal([
      { name: 'A', price: { amount: 5 } },
      { name: 'B', price: { amount: 7 } },
    ]);
    expect((shape('sales', sales, ['lineItems[].extensions.ae_itemType']) as any).coreDocument.lineItems).to.deep.equal([{ extensions: { ae_itemType: 'G' } }, {}]);
  });

  it('meta.* is the registered metadata without the report; meta.coreValidation(.*) is the whole report', () => {
    const meta = (shape('sales', sales, ['meta.*']) as any).coreDocument.meta;
    expect(meta).to.not.have.property('coreValidation');
    expect(meta.statuses).to.deep.equal(CURRENT);
    for (const c of ['meta.coreValidation', 'meta.coreValidation.*']) {
      expect((shape('sales', sales, [c]) as any).coreDocument.meta.coreValidation).to.deep.equal(report);
    }
    expect((shape('receipts', receipt, ['meta.coreValidation']) as any).meta.coreValidation).to.deep.equal(report);
  });

  it('API keys never see statusHistory, internal or history even when selected', () => {
    const out = shape('sales', sales, ['statusHistory', 'meta.statuses.internal', 'meta.statuses.document.history']) as any;
    expect(out).to.not.have.property('statusHistory');
    expect(out.coreDocument.meta.statuses).to.deep.equal(CURRENT);
  });

  it('a document without a stored report lacks meta.coreValidation', () => {
    const doc = indexedSalesDocument({ ...facts(), validation: null }).document;
    expect((shape('sales', doc, ['meta.coreValidation']) as any).coreDocument.meta).to.not.have.property('coreValidation');
  });

  const BAD: [string, RegExp, QueryType?][] = [
    ['*', /bare "\*"/],
    ['header', /partial name/],
    ['header.issue', /partial name/],
    ['parties.seller.address', /partial name/],
    ['head*', /embedded wildcards/],
    ['header.*.x', /embedded wildcards/],
    ['header*.*', /embedded wildcards/],
    ['lineItems[].*.name', /embedded wildcards/],
    ['foo.*', /unknown section "foo"/],
    ['taxTotals.*', /unknown section/],
    ['parties.delivery.*', /unknown section/],
    ['meta.xmlValidation.*', /xmlValidation/],
    ['meta.xmlValidation', /xmlValidation/],
    ['meta.coreValidation.errors', /sub-fields of the validation report/],
    ['meta.coreValidation.metadata.*', /inside the validation report/],
    ['coreDocument.header.issueDate', /without the "coreDocument\." prefix/],
    ['header.nonsense', /unsupported column/],
    ['countryDocumentStatus', /receipts only/],
    ['', /non-empty/],
  ];
  for (const [column, message, type] of BAD) {
    it(`400 column ${JSON.stringify(column)}`, () => {
      const r = parseColumns(type ?? 'sales', ['header.documentNumber', column]);
      expect(r.ok).to.equal(false);
      if (r.ok) return;
      expect(r.problems).to.have.length(1);
      expect(r.problems[0]).to.include({ index: 1, value: column });
      expect(r.problems[0]!.message).to.match(message);
    });
  }

  it('every listed key and wildcard is accepted for every type', () => {
    for (const type of ['sales', 'purchases', 'receipts'] as const) {
      const r = parseColumns(type, [...columnKeys(type), 'header.*', 'parties.*', 'parties.seller.*', 'parties.buyer.*', 'header.invoicePeriod.*', 'lineItems.*', 'lineItems[].*', 'totals.*', 'payment.*', 'meta.*', 'meta.coreValidation', 'meta.coreValidation.*', 'extensions.ae_beneficiaryId']);
      expect(r.ok, type).to.equal(true);
    }
  });
});

describe('invoice query columns: properties', () => {

  it('any columns list either names a problem per bad entry or shapes without throwing; API keys never see private status fields', async () => {

    const names = [...columnKeys('sales'), 'header.*', 'meta.*', 'lineItems[].*', 'meta.coreValidation', '*', 'foo.*', 'header', 'a*b'];
    fc.assert(
      fc.property(
        fc.constantFrom<QueryType>('sales', 'purchases', 'receipts'),
        fc.array(fc.oneof(fc.constantFrom(...names), fc.string()), { maxLength: 8 }),
        (type, columns) => {
          const r = parseColumns(type, columns);
          if (!r.ok) {
            for (const p of r.problems) expect(columns[p.index]).to.equal(p.value);
            return;
          }
          const doc = type === 'receipts' ? receipt : sales;
          const out = shapeDocument(type, doc, r.selectors, { apiKey: true }) as any;
          expect(out).to.not.have.property('statusHistory');
          const statuses = type === 'receipts' ? out.meta?.statuses : out.coreDocument?.meta?.statuses;
          expect(statuses ?? {}).to.not.have.property('internal');
          for (const k of ['document', 'delivery', 'business']) expect(statuses?.[k] ?? {}).to.not.have.property('history');
          expect(out.documentId).to.equal('doc_1');
        },
      ),
      { numRuns: 300 },
    );
  });
});
