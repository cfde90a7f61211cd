/**
 * The contract every search-index adapter passes (readmodels/search/port.ts). Each adapter's
 * test file calls `searchIndexContract` with a factory; writes go through a real PostgreSQL
 * transaction as the search projection makes them. Every test works in workspaces of its own,
 * so the suites need no cleaning between tests.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { QueryType } from '../../domain/query/fields.js';
import type { IndexedDocument, IndexedStateChange, IndexWrite, SearchFilter, SearchIndex, SearchQuery, SearchSort, SearchTerm } from '../../readmodels/search/port.js';
import { testDb } from '../support/db.js';

/** Builds an object from dotted paths: {'a.b': 1, 'a.c': 2} → {a: {b: 1, c: 2}}. */
export function fromPaths(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const segments = path.split('.');
    let at = out;
    for (const s of segments.slice(0, -1)) {
      if (typeof at[s] !== 'object' || at[s] === null) at[s] = {};
      at = at[s] as Record<string, unknown>;
    }
    at[segments[segments.length - 1]!] = value;
  }
  return out;
}

/** The path of a logical field for a type: `coreDocument.`-prefixed for sales and purchases except the root fields. */
export function pathFor(type: QueryType, key: string): string {
  if (type === 'receipts' || key === 'documentId' || key.startsWith('documentType.') || key === 'countryDocumentStatus') return key;
  return `coreDocument.${key}`;
}

export interface DocSpec {
  documentId?: string;
  version?: bigint;
  /** Logical keys (no `coreDocument.` prefix) → values; undefined leaves the field out. */
  fields?: Readonly<Record<string, unknown>>;
}

/** A realistic indexed document of the type with the given fields. */
export function makeDocument(scope: Scope, type: QueryType, spec: DocSpec = {}): IndexedDocument {
  const documentId = spec.documentId ?? randomUUID();
  const base: Record<string, unknown> = {
    documentId,
    'documentType.base': 'tax_invoice',
    'documentType.modifiers': [],
    'documentType.variants': type === 'receipts' ? ['receipt'] : [],
    'header.documentNumber': `INV-${documentId.slice(0, 8)}`,
    'header.issueDate': '2025-03-01',
    'header.currency': 'AED',
    'parties.seller.name': 'Seller LLC',
    'parties.buyer.name': 'Buyer LLC',
    'totals.totalAmountIncludingTax': 105,
    'meta.statuses.document.current': 'COMPLIANT',
    'meta.statuses.delivery.current': 'NOT_STARTED',
    'meta.statuses.business.current': 'NOT_STARTED',
    'meta.statuses.userfacing': 'Compliant',
    'meta.source': { name: 'ERP', version: 'v1' },
    ...(type === 'receipts' ? { countryDocumentStatus: 'ISSUED' } : {}),
    ...spec.fields,
  };
  const byPath: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) byPath[pathFor(type, key)] = value;
  return { workspaceId: scope.workspaceId, environment: scope.environment, type, documentId, version: spec.version ?? 1n, document: fromPaths(byPath) };
}

export interface Scope {
  workspaceId: string;
  environment: string;
}

export const newScope = (environment = 'sandbox'): Scope => ({ workspaceId: `ws_${randomUUID()}`, environment });

export async function writeDocuments(index: SearchIndex, documents: readonly IndexWrite[]): Promise<void> {
  await testDb().knex.transaction((trx) => index.write(trx, documents));
}

export function query(scope: Scope, type: QueryType, parts: Partial<Omit<SearchQuery, 'workspaceId' | 'environment' | 'type'>> = {}): SearchQuery {
  return { ...scope, type, filters: [], searches: [], sort: null, offset: 0, limit: 100, ...parts };
}

export interface Harness {
  index: SearchIndex;
  close(): Promise<void>;
}

/**
 * `open` answers null when the engine is not available; the suite then reports
 * "skipped: <reason>", or fails when `requireEngine` is set (CI).
 */
export function searchIndexContract(adapterName: string, open: () => Promise<Harness | null>, options: { skipReason: string; requireEngine?: boolean }) {
  describe(`search index contract: ${adapterName}`, function () {
    this.timeout(60_000);
    let harness: Harness;
    let index: SearchIndex;

    before(async function () {
      const made = await open();
      if (!made) {
        if (options.requireEngine) throw new Error(`${adapterName} is required here but not reachable: ${options.skipReason}`);
        console.log(`      skipped: ${options.skipReason}`);
        this.skip();
      }
      harness = made!;
      index = harness.index;
    });
    after(async () => {
      await harness?.close();
    });

    const ids = async (q: SearchQuery) => (await index.search(q)).documents.map((d) => d.documentId as string);
    const filtered = (scope: Scope, type: QueryType, ...filters: SearchFilter[]) => ids(query(scope, type, { filters, sort: { field: 'documentId', order: 'asc' } }));
    const searched = (scope: Scope, type: QueryType, ...searches: SearchTerm[]) => ids(query(scope, type, { searches, sort: { field: 'documentId', order: 'asc' } }));
    const sorted = (scope: Scope, type: QueryType, sort: SearchSort | null) => ids(query(scope, type, { sort }));

    it('returns the stored document whole, unknown payload fields included', async () => {
      const scope = newScope();
      const doc = makeDocument(scope, 'sales', {
        fields: { 'extensions.custom_field': 'x', 'lineItems': [{ id: '1', name: 'Widget', extensions: { colour: 'red' } }] },
      });
      (doc.document as Record<string, unknown>).somethingElse = { nested: [1, 'two', null, true] };
      await writeDocuments(index, [doc]);
      const result = await index.search(query(scope, 'sales'));
      expect(result.total).to.equal(1);
      expect(result.documents).to.deep.equal([doc.document]);
    });

    it('scopes every query to its workspace, environment and type', async () => {
      const a = newScope('sandbox');
      const otherEnv = { ...a, environment: 'production' };
      const otherWs = newScope('sandbox');
      const docs = [
        makeDocument(a, 'sales', { documentId: 'same-id' }),
        makeDocument(otherEnv, 'sales', { documentId: 'same-id' }),
        makeDocument(otherWs, 'sales', { documentId: 'same-id' }),
        makeDocument(a, 'purchases', { documentId: 'purchase-1' }),
        makeDocument(a, 'receipts', { documentId: 'receipt-1' }),
      ];
      await writeDocuments(index, docs);
      for (const [scope, type, expected] of [
        [a, 'sales', docs[0]],
        [otherEnv, 'sales', docs[1]],
        [otherWs, 'sales', docs[2]],
        [a, 'purchases', docs[3]],
        [a, 'receipts', docs[4]],
      ] as const) {
        const r = await index.search(query(scope, type));
        expect(r.total, `${scope.workspaceId} ${scope.environment} ${type}`).to.equal(1);
        expect(r.documents[0]).to.deep.equal(expected!.document);
      }
      expect((await index.search(query(otherWs, 'receipts'))).total).to.equal(0);
      expect((await index.search(query({ ...a, environment: 'simulation' }, 'sales'))).total).to.equal(0);
    });

    it('ignores a write whose version is not above the stored one, also within one batch', async () => {
      const scope = newScope();
      const v = (version: bigint, status: string) =>
        makeDocument(scope, 'sales', { documentId: 'doc-1', version, fields: { 'meta.statuses.document.current': status } });
      const status = async () => {
        const r = await index.search(query(scope, 'sales'));
        expect(r.total).to.equal(1);
        return ((r.documents[0]!.coreDocument as any).meta.statuses.document.current as string);
      };
      await writeDocuments(index, [v(3n, 'THIRD')]);
      expect(await status()).to.equal('THIRD');
      await writeDocuments(index, [v(2n, 'SECOND')]);
      expect(await status()).to.equal('THIRD');
      await writeDocuments(index, [v(3n, 'THIRD-AGAIN')]);
      expect(await status()).to.equal('THIRD');
      await writeDocuments(index, [v(5n, 'FIFTH'), v(4n, 'FOURTH'), v(6n, 'SIXTH'), v(6n, 'SIXTH-LATE')]);
      expect(await status()).to.equal('SIXTH');
      // A batch whose every write is stale changes nothing and does not fail.
      await writeDocuments(index, [v(1n, 'FIRST'), v(6n, 'SIXTH-REPLAY')]);
      expect(await status()).to.equal('SIXTH');
      // Other documents of a batch with stale writes are still written.
      await writeDocuments(index, [v(2n, 'STALE'), makeDocument(scope, 'sales', { documentId: 'doc-2' })]);
      expect((await index.search(query(scope, 'sales'))).total).to.equal(2);
    });

    it('applies a state change to a document written whole: its statuses replaced, its body kept, ordered by version', async () => {
      const scope = newScope();
      const sales = makeDocument(scope, 'sales', { documentId: 's-1' });
      const receipt = makeDocument(scope, 'receipts', { documentId: 'r-1' });
      const untouched = makeDocument(scope, 'sales', { documentId: 's-2' });
      await writeDocuments(index, [sales, receipt, untouched]);
      const statuses = (document: string, userfacing: string) => ({
        document: { current: document, history: [{ value: 'VALIDATED', at: '2026-03-01T00:00:00.000Z' }, { value: document, at: '2026-03-01T00:00:09.000Z' }] },
        delivery: { current: 'COMPLETED', history: [] },
        business: { current: 'NOT_STARTED', history: [] },
        userfacing,
        internal: { state: 'final_invalid', updatedAt: '2026-03-01T00:00:09.000Z' },
      });
      const statusHistory = [{ state: 'submitted', at: '2026-03-01T00:00:00.000Z' }, { state: 'final_invalid', at: '2026-03-01T00:00:09.000Z' }];
      const change = (d: IndexedDocument, version: bigint, state: Record<string, unknown>): IndexedStateChange => {
        const { document: _whole, ...key } = d;
        return { ...key, version, state };
      };
      const salesState = { coreDocument: { meta: { statuses: statuses('REJECTED', 'Rejected') } }, statusHistory };
      const receiptState = { meta: { statuses: statuses('CANCELLED', 'Cancelled') }, statusHistory, countryDocumentStatus: 'CANCELLED' };
      // Besides, a change of a document the index does not hold (its body was never written).
      const absent = change(makeDocument(scope, 'sales', { documentId: 's-absent' }), 2n, salesState);
      await writeDocuments(index, [change(sales, 2n, salesState), change(receipt, 2n, receiptState), absent]);
      // A batch of such changes alone writes nothing and does not fail.
      await writeDocuments(index, [change(makeDocument(scope, 'receipts', { documentId: 'r-absent' }), 1n, receiptState)]);

      const one = async (type: QueryType, id: string) => (await index.search(query(scope, type, { filters: [{ field: 'documentId', values: [id] }] }))).documents[0] as any;
      const changed = await one('sales', 's-1');
      expect(changed.coreDocument.meta.statuses).to.deep.equal(salesState.coreDocument.meta.statuses);
      expect(changed.statusHistory).to.deep.equal(statusHistory);
      // The body is the one written whole: everything but the state is as it was.
      const { meta: _meta, ...core } = changed.coreDocument;
      const { meta: _before, ...coreBefore } = sales.document.coreDocument as Record<string, unknown>;
      expect(core).to.deep.equal(coreBefore);
      expect(changed.coreDocument.meta.source).to.deep.equal({ name: 'ERP', version: 'v1' });
      expect(changed.documentType).to.deep.equal(sales.document.documentType);
      const changedReceipt = await one('receipts', 'r-1');
      expect(changedReceipt.countryDocumentStatus).to.equal('CANCELLED');
      expect(changedReceipt.meta.statuses).to.deep.equal(receiptState.meta.statuses);
      expect(changedReceipt.header).to.deep.equal((receipt.document as any).header);

      // Filters and sorts read the new state; the untouched document keeps its own.
      const current = 'coreDocument.meta.statuses.document.current';
      expect(await filtered(scope, 'sales', { field: current, values: ['rejected'] })).to.deep.equal(['s-1']);
      expect(await filtered(scope, 'sales', { field: current, values: ['compliant'] })).to.deep.equal(['s-2']);
      expect(await filtered(scope, 'receipts', { field: 'countryDocumentStatus', values: ['cancelled'] })).to.deep.equal(['r-1']);
      expect(await sorted(scope, 'sales', { field: current, order: 'asc' })).to.deep.equal(['s-2', 's-1']);
      expect(await filtered(scope, 'sales', { field: current, values: ['rejected'] }, { field: 'coreDocument.parties.seller.name', values: ['seller llc'] })).to.deep.equal(['s-1']);
      expect((await index.search(query(scope, 'sales'))).total).to.equal(2);

      // Not newer than the stored state: ignored, as a state change or written whole.
      await writeDocuments(index, [change(sales, 2n, { coreDocument: { meta: { statuses: statuses('LATE', 'Late') } }, statusHistory: [] }), { ...sales, version: 1n }]);
      expect(await one('sales', 's-1')).to.deep.equal(changed);
      // A newer whole document replaces body and state.
      const renamed = makeDocument(scope, 'sales', { documentId: 's-1', version: 3n, fields: { 'parties.seller.name': 'Renamed Seller' } });
      await writeDocuments(index, [renamed]);
      expect(await one('sales', 's-1')).to.deep.equal(renamed.document);
      // A document written whole and changed again in one batch: the newest state on that body.
      const fresh = makeDocument(scope, 'sales', { documentId: 's-3', version: 0n });
      await writeDocuments(index, [fresh, change(fresh, 1n, salesState)]);
      expect((await one('sales', 's-3')).coreDocument.meta.statuses).to.deep.equal(salesState.coreDocument.meta.statuses);
      expect((await one('sales', 's-3')).coreDocument.header).to.deep.equal((fresh.document.coreDocument as any).header);
    });

    it('writes an empty batch as a no-op', async () => {
      await writeDocuments(index, []);
    });

    it('filters keywords by any of the values, case-insensitively; an empty list adds nothing', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'sales', { documentId: 'a', fields: { 'header.currency': 'AED', 'meta.statuses.document.current': 'COMPLIANT' } }),
        makeDocument(scope, 'sales', { documentId: 'b', fields: { 'header.currency': 'usd', 'meta.statuses.document.current': 'NEEDS_CORRECTION' } }),
        makeDocument(scope, 'sales', { documentId: 'c', fields: { 'header.currency': 'Eur', 'meta.statuses.document.current': 'NON_COMPLIANT' } }),
        makeDocument(scope, 'sales', { documentId: 'd', fields: { 'header.currency': undefined } }),
      ]);
      expect(await filtered(scope, 'sales', { field: 'coreDocument.header.currency', values: ['aed'] })).to.deep.equal(['a']);
      expect(await filtered(scope, 'sales', { field: 'coreDocument.header.currency', values: ['USD', 'eUR'] })).to.deep.equal(['b', 'c']);
      expect(await filtered(scope, 'sales', { field: 'coreDocument.header.currency', values: [] })).to.deep.equal(['a', 'b', 'c', 'd']);
      expect(await filtered(scope, 'sales', { field: 'coreDocument.header.currency', values: ['AE'] })).to.deep.equal([]);
      expect(
        await filtered(
          scope,
          'sales',
          { field: 'coreDocument.meta.statuses.document.current', values: ['needs_correction', 'non_compliant'] },
          { field: 'coreDocument.header.currency', values: ['EUR'] },
        ),
      ).to.deep.equal(['c']);
      expect(await filtered(scope, 'sales', { field: 'documentId', values: ['A', 'd'] })).to.deep.equal(['a', 'd']);
    });

    it('matches a multi-valued field when any element does; exists needs a non-empty array', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'sales', { documentId: 'a', fields: { 'documentType.modifiers': ['export', 'self_billed'] } }),
        makeDocument(scope, 'sales', { documentId: 'b', fields: { 'documentType.modifiers': ['Export'] } }),
        makeDocument(scope, 'sales', { documentId: 'c', fields: { 'documentType.modifiers': [] } }),
        makeDocument(scope, 'sales', { documentId: 'd', fields: { 'documentType.modifiers': undefined } }),
        makeDocument(scope, 'sales', { documentId: 'e', fields: { 'documentType.modifiers': 'self_billed' } }),
        makeDocument(scope, 'sales', { documentId: 'f', fields: { 'documentType.modifiers': [7, null, { a: 1 }] } }),
      ]);
      const m = 'documentType.modifiers';
      expect(await filtered(scope, 'sales', { field: m, values: ['export'] })).to.deep.equal(['a', 'b']);
      expect(await filtered(scope, 'sales', { field: m, values: ['SELF_BILLED', 'nothing'] })).to.deep.equal(['a', 'e']);
      expect(await filtered(scope, 'sales', { field: m, values: [] })).to.deep.equal(['a', 'b', 'c', 'd', 'e', 'f']);
      expect(await filtered(scope, 'sales', { field: m, exists: true })).to.deep.equal(['a', 'b', 'e']);
      expect(await filtered(scope, 'sales', { field: m, exists: false })).to.deep.equal(['c', 'd', 'f']);
    });

    it('filters dates and amounts by inclusive ranges; a document without the field never matches', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'sales', { documentId: 'a', fields: { 'header.issueDate': '2025-01-31', 'totals.totalAmountIncludingTax': 99.99 } }),
        makeDocument(scope, 'sales', { documentId: 'b', fields: { 'header.issueDate': '2025-02-01', 'totals.totalAmountIncludingTax': 100 } }),
        makeDocument(scope, 'sales', { documentId: 'c', fields: { 'header.issueDate': '2025-02-28', 'totals.totalAmountIncludingTax': 250.5 } }),
        makeDocument(scope, 'sales', { documentId: 'd', fields: { 'header.issueDate': '2025-03-01', 'totals.totalAmountIncludingTax': -5 } }),
        makeDocument(scope, 'sales', { documentId: 'e', fields: { 'header.issueDate': undefined, 'totals.totalAmountIncludingTax': undefined } }),
        makeDocument(scope, 'sales', { documentId: 'f', fields: { 'header.issueDate': '2025-02-30', 'totals.totalAmountIncludingTax': '150' } }),
        makeDocument(scope, 'sales', { documentId: 'g', fields: { 'header.issueDate': null, 'totals.totalAmountIncludingTax': null } }),
      ]);
      const date = 'coreDocument.header.issueDate';
      const total = 'coreDocument.totals.totalAmountIncludingTax';
      expect(await filtered(scope, 'sales', { field: date, range: { gte: '2025-02-01', lte: '2025-02-28' } })).to.deep.equal(['b', 'c']);
      expect(await filtered(scope, 'sales', { field: date, range: { gte: '2025-02-01' } })).to.deep.equal(['b', 'c', 'd']);
      expect(await filtered(scope, 'sales', { field: date, range: { lte: '2025-01-31' } })).to.deep.equal(['a']);
      expect(await filtered(scope, 'sales', { field: date, range: {} })).to.deep.equal(['a', 'b', 'c', 'd']);
      expect(await filtered(scope, 'sales', { field: date, values: ['2025-03-01', '2025-01-31'] })).to.deep.equal(['a', 'd']);
      expect(await filtered(scope, 'sales', { field: total, range: { gte: 100, lte: 250.5 } })).to.deep.equal(['b', 'c']);
      expect(await filtered(scope, 'sales', { field: total, range: { lte: 0 } })).to.deep.equal(['d']);
      expect(await filtered(scope, 'sales', { field: total, range: { gte: 99.99 } })).to.deep.equal(['a', 'b', 'c']);
      expect(await filtered(scope, 'sales', { field: total, values: [100, 250.5] })).to.deep.equal(['b', 'c']);
    });

    it('treats null, absent and malformed values as no value (exists false)', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'sales', { documentId: 'a' }),
        makeDocument(scope, 'sales', { documentId: 'b', fields: { 'header.issueDate': null, 'header.currency': null, 'totals.totalAmountIncludingTax': null } }),
        makeDocument(scope, 'sales', { documentId: 'c', fields: { 'header.issueDate': undefined, 'header.currency': undefined, 'totals.totalAmountIncludingTax': undefined } }),
        makeDocument(scope, 'sales', { documentId: 'd', fields: { 'header.issueDate': '1.2.2025', 'header.currency': { code: 'AED' }, 'totals.totalAmountIncludingTax': '105' } }),
        makeDocument(scope, 'sales', { documentId: 'e', fields: { 'header.issueDate': 20250101, 'header.currency': 42, 'totals.totalAmountIncludingTax': [105] } }),
        makeDocument(scope, 'sales', { documentId: 'f', fields: { 'header.issueDate': '2024-02-29', 'header.currency': '', 'totals.totalAmountIncludingTax': 0 } }),
        makeDocument(scope, 'sales', { documentId: 'g', fields: { 'header.issueDate': '2023-02-29', 'header.currency': 'x'.repeat(1025), 'totals.totalAmountIncludingTax': false } }),
        makeDocument(scope, 'sales', { documentId: 'h', fields: { header: 'not an object', 'totals': [1, 2] } }),
      ]);
      for (const field of ['coreDocument.header.issueDate', 'coreDocument.header.currency', 'coreDocument.totals.totalAmountIncludingTax']) {
        expect(await filtered(scope, 'sales', { field, exists: true }), field).to.deep.equal(['a', 'f']);
        expect(await filtered(scope, 'sales', { field, exists: false }), field).to.deep.equal(['b', 'c', 'd', 'e', 'g', 'h']);
      }
    });

    it('searches case-insensitive substrings; every search must match; wildcard characters are literal', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'sales', { documentId: 'a', fields: { 'parties.seller.name': 'ACME Trading LLC', 'header.documentNumber': 'INV-2025-0001' } }),
        makeDocument(scope, 'sales', { documentId: 'b', fields: { 'parties.seller.name': 'Acme 100% Pure_Goods', 'header.documentNumber': 'INV-2025-0002' } }),
        makeDocument(scope, 'sales', { documentId: 'c', fields: { 'parties.seller.name': 'Café Société *Star?* \\Back', 'header.documentNumber': 'inv-2024-0003' } }),
        makeDocument(scope, 'sales', { documentId: 'd', fields: { 'parties.seller.name': 'Acme1000 PureXGoods', 'header.documentNumber': undefined } }),
        makeDocument(scope, 'sales', { documentId: 'e', fields: { 'parties.seller.name': 12345, 'header.documentNumber': ['INV-2025-0005'] } }),
      ]);
      const seller = (term: string) => ({ field: 'coreDocument.parties.seller.name', term });
      const number = (term: string) => ({ field: 'coreDocument.header.documentNumber', term });
      expect(await searched(scope, 'sales', seller('acme'))).to.deep.equal(['a', 'b', 'd']);
      expect(await searched(scope, 'sales', seller('TRADING'))).to.deep.equal(['a']);
      expect(await searched(scope, 'sales', seller('100%'))).to.deep.equal(['b']);
      expect(await searched(scope, 'sales', seller('e_g'))).to.deep.equal(['b']);
      expect(await searched(scope, 'sales', seller('%'))).to.deep.equal(['b']);
      expect(await searched(scope, 'sales', seller('_'))).to.deep.equal(['b']);
      expect(await searched(scope, 'sales', seller('*'))).to.deep.equal(['c']);
      expect(await searched(scope, 'sales', seller('?*'))).to.deep.equal(['c']);
      expect(await searched(scope, 'sales', seller('\\b'))).to.deep.equal(['c']);
      expect(await searched(scope, 'sales', seller('CAFÉ SOCIÉTÉ'))).to.deep.equal(['c']);
      expect(await searched(scope, 'sales', seller('123'))).to.deep.equal([]);
      expect(await searched(scope, 'sales', number('2025'))).to.deep.equal(['a', 'b']);
      expect(await searched(scope, 'sales', number('INV-2024'))).to.deep.equal(['c']);
      expect(await searched(scope, 'sales', seller('acme'), number('0002'))).to.deep.equal(['b']);
      expect(await searched(scope, 'sales', seller('acme'), number('0003'))).to.deep.equal([]);
      expect(await searched(scope, 'sales', { field: 'coreDocument.parties.buyer.name', term: 'buyer l' })).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    });

    it('orders by newest issue date first by default, ties by documentId ascending, documents without a date last', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'sales', { documentId: 'b', fields: { 'header.issueDate': '2025-01-02' } }),
        makeDocument(scope, 'sales', { documentId: 'a', fields: { 'header.issueDate': '2025-01-02' } }),
        makeDocument(scope, 'sales', { documentId: 'c', fields: { 'header.issueDate': '2025-06-30' } }),
        makeDocument(scope, 'sales', { documentId: 'n2', fields: { 'header.issueDate': undefined } }),
        makeDocument(scope, 'sales', { documentId: 'n1', fields: { 'header.issueDate': 'garbage' } }),
        makeDocument(scope, 'sales', { documentId: 'd', fields: { 'header.issueDate': '1999-12-31' } }),
      ]);
      expect(await sorted(scope, 'sales', null)).to.deep.equal(['c', 'a', 'b', 'd', 'n1', 'n2']);
      expect(await sorted(scope, 'sales', { field: 'coreDocument.header.issueDate', order: 'asc' })).to.deep.equal(['d', 'a', 'b', 'c', 'n1', 'n2']);
    });

    it('sorts keywords by their lowercased value in byte order and numbers numerically, missing values last', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'sales', { documentId: '1', fields: { 'parties.buyer.name': 'beta', 'totals.totalAmountIncludingTax': 10 } }),
        makeDocument(scope, 'sales', { documentId: '2', fields: { 'parties.buyer.name': 'Alpha', 'totals.totalAmountIncludingTax': 9.5 } }),
        makeDocument(scope, 'sales', { documentId: '3', fields: { 'parties.buyer.name': 'ÉCLAIR', 'totals.totalAmountIncludingTax': 100 } }),
        makeDocument(scope, 'sales', { documentId: '4', fields: { 'parties.buyer.name': 'zulu', 'totals.totalAmountIncludingTax': -1 } }),
        makeDocument(scope, 'sales', { documentId: '5', fields: { 'parties.buyer.name': 'ALPHA', 'totals.totalAmountIncludingTax': 10 } }),
        makeDocument(scope, 'sales', { documentId: '6', fields: { 'parties.buyer.name': undefined, 'totals.totalAmountIncludingTax': undefined } }),
        makeDocument(scope, 'sales', { documentId: '7', fields: { 'parties.buyer.name': '_under', 'totals.totalAmountIncludingTax': 1e6 } }),
      ]);
      const buyer = 'coreDocument.parties.buyer.name';
      const total = 'coreDocument.totals.totalAmountIncludingTax';
      // '_' (0x5F) sorts before the lowercase letters; 'é' (0xC3 0xA9) after them.
      expect(await sorted(scope, 'sales', { field: buyer, order: 'asc' })).to.deep.equal(['7', '2', '5', '1', '4', '3', '6']);
      expect(await sorted(scope, 'sales', { field: buyer, order: 'desc' })).to.deep.equal(['3', '4', '1', '2', '5', '7', '6']);
      expect(await sorted(scope, 'sales', { field: total, order: 'asc' })).to.deep.equal(['4', '2', '1', '5', '3', '7', '6']);
      expect(await sorted(scope, 'sales', { field: total, order: 'desc' })).to.deep.equal(['7', '3', '1', '5', '2', '4', '6']);
    });

    it('pages with offset and limit and counts every match', async () => {
      const scope = newScope();
      const docs = Array.from({ length: 25 }, (_, i) =>
        makeDocument(scope, 'purchases', { documentId: `p${String(i).padStart(2, '0')}`, fields: { 'header.issueDate': `2025-01-${String((i % 5) + 1).padStart(2, '0')}` } }),
      );
      await writeDocuments(index, docs);
      const all = await ids(query(scope, 'purchases', { limit: 25 }));
      expect(all).to.have.length(25);
      const pages: string[] = [];
      for (let offset = 0; offset < 25; offset += 10) {
        const r = await index.search(query(scope, 'purchases', { offset, limit: 10 }));
        expect(r.total).to.equal(25);
        pages.push(...r.documents.map((d) => d.documentId as string));
      }
      expect(pages).to.deep.equal(all);
      const beyond = await index.search(query(scope, 'purchases', { offset: 30, limit: 10 }));
      expect(beyond).to.deep.equal({ total: 25, documents: [] });
      const none = await index.search(query(scope, 'purchases', { limit: 0 }));
      expect(none).to.deep.equal({ total: 25, documents: [] });
    });

    it('reads receipts at flat paths, with countryDocumentStatus', async () => {
      const scope = newScope();
      await writeDocuments(index, [
        makeDocument(scope, 'receipts', { documentId: 'r1', fields: { 'header.issueDate': '2025-05-05', 'parties.seller.name': 'Kedai Runcit', 'meta.statuses.userfacing': 'Compliant' } }),
        makeDocument(scope, 'receipts', { documentId: 'r2', fields: { 'header.issueDate': '2025-05-06', countryDocumentStatus: 'CANCELLED', 'meta.statuses.userfacing': 'Processing' } }),
      ]);
      expect(await filtered(scope, 'receipts', { field: 'countryDocumentStatus', values: ['issued'] })).to.deep.equal(['r1']);
      expect(await filtered(scope, 'receipts', { field: 'meta.statuses.userfacing', values: ['processing'] })).to.deep.equal(['r2']);
      expect(await filtered(scope, 'receipts', { field: 'header.issueDate', range: { gte: '2025-05-06' } })).to.deep.equal(['r2']);
      expect(await searched(scope, 'receipts', { field: 'parties.seller.name', term: 'RUNCIT' })).to.deep.equal(['r1']);
      expect(await sorted(scope, 'receipts', null)).to.deep.equal(['r2', 'r1']);
    });

    it('finds a write in the next query (read-your-writes)', async () => {
      const scope = newScope();
      for (let i = 0; i < 5; i++) {
        await writeDocuments(index, [makeDocument(scope, 'sales', { documentId: `d${i}` })]);
        expect((await index.search(query(scope, 'sales'))).total).to.equal(i + 1);
      }
    });
  });
}
