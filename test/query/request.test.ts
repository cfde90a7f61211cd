import { expect } from 'chai';
import fc from 'fast-check';
import { isRight } from 'fp-ts/lib/Either.js';
import { checkInvoiceQuery, InvoiceQueryBody, MAX_LIMIT, toSearchQuery, unknownBodyFields, type InvoiceQuery } from '../../domain/query/request.js';
import { MAX_RESULT_WINDOW } from '../../readmodels/search/port.js';

function check(body: Record<string, unknown>) {
  const decoded = InvoiceQueryBody.decode({ country: 'AE', type: 'sales', environment: 'sandbox', ...body });
  if (!isRight(decoded)) return { decoded: false as const };
  return { decoded: true as const, result: checkInvoiceQuery(decoded.right) };
}
function ok(body: Record<string, unknown>): InvoiceQuery {
  const r = check(body);
  if (!r.decoded) throw new Error('did not decode');
  if (!r.result.ok) throw new Error(JSON.stringify(r.result.problems));
  return r.result.query;
}
function problem(body: Record<string, unknown>) {
  const r = check(body);
  if (!r.decoded) throw new Error('did not decode');
  if (r.result.ok) throw new Error('expected a problem');
  return r.result.problems[0]!;
}

describe('invoice query request (docs/api/invoice-query.md)', () => {
  it('defaults: page 1, limit 20, no filters, newest first, unshaped', () => {
    const q = ok({});
    expect(q).to.include({ page: 1, limit: 20, sort: null, columns: null, country: 'AE', type: 'sales', environment: 'sandbox' });
    expect(toSearchQuery(q, 'ws_1')).to.deep.equal({
      workspaceId: 'ws_1',
      environment: 'sandbox',
      type: 'sales',
      // The body's country, always (callers cannot name the field themselves).
      filters: [{ field: 'country', values: ['AE'] }],
      searches: [],
      sort: null,
      offset: 0,
      limit: 20,
    });
    expect(toSearchQuery(ok({ page: 3, limit: 10 }), 'w').offset).to.equal(20);
  });

  it('decodes the shape: wrong types do not decode', () => {
    for (const bad of [
      { country: 'ae' },
      { country: 'ARE' },
      { type: 'invoices' },
      { environment: 'prod' },
      { page: 0 },
      { page: -1 },
      { page: 1.5 },
      { page: '1' },
      { limit: 0 },
      { limit: '20' },
      { filters: {} },
      { filters: ['x'] },
      { searches: [1] },
      { columns: [1] },
      { columns: 'header.*' },
      { sort: 'header.issueDate' },
    ]) {
      expect(check(bad).decoded, JSON.stringify(bad)).to.equal(false);
    }
  });

  it('limit above 100 and paging past the result window are refused', () => {
    expect(problem({ limit: MAX_LIMIT + 1 }).path).to.deep.equal(['limit']);
    expect(ok({ limit: MAX_LIMIT }).limit).to.equal(100);
    expect(ok({ page: MAX_RESULT_WINDOW / 100, limit: 100 }).page).to.equal(100);
    expect(problem({ page: MAX_RESULT_WINDOW / 100 + 1, limit: 100 }).path).to.deep.equal(['page']);
  });

  it('refuses unknown top-level fields by name', () => {
    expect(unknownBodyFields({ country: 'AE', filter: [] })).to.deep.equal(['filter']);
    expect(unknownBodyFields([])).to.deep.equal([]);
  });

  describe('filters', () => {
    it('accepts the three forms with values of the catalogued kind', () => {
      const q = ok({
        filters: [
          { id: 'coreDocument.header.issueDate', range: { gte: '2026-01-01', lte: '2026-01-31' } },
          { id: 'coreDocument.totals.totalAmountIncludingTax', range: { gte: 10 } },
          { id: 'coreDocument.header.currency', value: ['AED', 'USD'] },
          { id: 'coreDocument.meta.statuses.document.current', value: ['NEEDS_CORRECTION'] },
          { id: 'documentType.modifiers', value: [] },
          { id: 'documentType.variants', exists: false },
        ],
      });
      expect(q.filters).to.deep.equal([
        { field: 'coreDocument.header.issueDate', range: { gte: '2026-01-01', lte: '2026-01-31' } },
        { field: 'coreDocument.totals.totalAmountIncludingTax', range: { gte: 10 } },
        { field: 'coreDocument.header.currency', values: ['AED', 'USD'] },
        { field: 'coreDocument.meta.statuses.document.current', values: ['NEEDS_CORRECTION'] },
        { field: 'documentType.variants', exists: false },
      ]);
    });

    it('receipts use flat paths, and countryDocumentStatus', () => {
      const q = ok({ type: 'receipts', filters: [{ id: 'header.issueDate', value: ['2026-02-01'] }, { id: 'countryDocumentStatus', value: ['ISSUED'] }, { id: 'meta.statuses.userfacing', value: ['Compliant'] }] });
      expect(q.filters.map((f) => f.field)).to.deep.equal(['header.issueDate', 'countryDocumentStatus', 'meta.statuses.userfacing']);
    });

    const BAD: [Record<string, unknown>, (string | number)[], RegExp, string?][] = [
      [{ id: 'header.issueDate', value: ['2026-01-01'] }, ['filters', 0, 'id'], /coreDocument\.header\.issueDate/],
      [{ id: 'coreDocument.header.issueDate', value: ['2026-01-01'] }, ['filters', 0, 'id'], /receipts use flat paths/, 'receipts'],
      [{ id: 'countryDocumentStatus', value: ['ISSUED'] }, ['filters', 0, 'id'], /unsupported field/],
      [{ id: 'coreDocument.header.*', value: ['x'] }, ['filters', 0, 'id'], /wildcards are not allowed in filters/],
      [{ id: '*', value: ['x'] }, ['filters', 0, 'id'], /wildcards/],
      [{ id: 'coreDocument.header.dueDate', value: ['2026-01-01'] }, ['filters', 0, 'id'], /unsupported field "coreDocument\.header\.dueDate"/],
      [{ id: 'coreDocument.header.issue', value: ['x'] }, ['filters', 0, 'id'], /unsupported field/],
      // The query layer's own country field: the body's `country` says it; callers cannot name it.
      [{ id: 'country', value: ['DE'] }, ['filters', 0, 'id'], /unsupported field "country"/],
      [{ id: 'country', exists: false }, ['filters', 0, 'id'], /unsupported field "country"/, 'receipts'],
      [{ id: '', value: ['x'] }, ['filters', 0, 'id'], /field name/],
      [{ id: 5, value: ['x'] }, ['filters', 0, 'id'], /field name/],
      [{ value: ['x'] }, ['filters', 0, 'id'], /needs an "id"/],
      [{ id: 'documentId' }, ['filters', 0], /exactly one of/],
      [{ id: 'documentId', value: ['a'], exists: true }, ['filters', 0], /exactly one of/],
      [{ id: 'documentId', value: 'a' }, ['filters', 0, 'value'], /array/],
      [{ id: 'documentId', value: [1] }, ['filters', 0, 'value', 0], /expected a string/],
      [{ id: 'coreDocument.header.issueDate', value: ['2026-02-30'] }, ['filters', 0, 'value', 0], /YYYY-MM-DD/],
      [{ id: 'coreDocument.header.issueDate', range: { gte: '01/01/2026' } }, ['filters', 0, 'range', 'gte'], /YYYY-MM-DD/],
      [{ id: 'coreDocument.totals.totalAmountIncludingTax', range: { lte: '100' } }, ['filters', 0, 'range', 'lte'], /expected a number/],
      [{ id: 'coreDocument.totals.totalAmountIncludingTax', range: {} }, ['filters', 0, 'range'], /gte/],
      [{ id: 'coreDocument.totals.totalAmountIncludingTax', range: { gt: 1 } }, ['filters', 0, 'range', 'gt'], /unknown bound/],
      [{ id: 'coreDocument.header.currency', range: { gte: 'A' } }, ['filters', 0, 'range'], /dates and numbers/],
      [{ id: 'documentId', exists: 'yes' }, ['filters', 0, 'exists'], /true or false/],
      [{ id: 'documentId', value: ['a'], op: 'eq' }, ['filters', 0, 'op'], /unknown member/],
      [{ id: 'documentId', value: Array.from({ length: 101 }, (_, i) => `d${i}`) }, ['filters', 0, 'value'], /at most 100/],
    ];
    for (const [filter, path, message, type] of BAD) {
      it(`400 ${JSON.stringify(filter).slice(0, 80)} (${type ?? 'sales'})`, () => {
        const p = problem({ type: type ?? 'sales', filters: [{ id: 'documentId', value: ['ok'] }, filter] });
        expect(p.path).to.deep.equal([path[0], 1, ...path.slice(2)]);
        expect(p.message).to.match(message);
        expect(p.message).to.contain('filters[1]');
      });
    }
  });

  describe('searches', () => {
    it('accept the text fields, case and wildcard characters kept literally', () => {
      const q = ok({ searches: [{ field: 'coreDocument.parties.seller.name', term: 'ACME*' }, { field: 'coreDocument.header.documentNumber', term: '%_' }] });
      expect(q.searches).to.deep.equal([
        { field: 'coreDocument.parties.seller.name', term: 'ACME*' },
        { field: 'coreDocument.header.documentNumber', term: '%_' },
      ]);
    });
    const BAD: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ field: 'coreDocument.header.currency', term: 'AED' }, ['searches', 0, 'field'], /cannot be used in searches/],
      [{ field: 'parties.seller.name', term: 'x' }, ['searches', 0, 'field'], /coreDocument\.parties\.seller\.name/],
      [{ field: 'coreDocument.parties.*', term: 'x' }, ['searches', 0, 'field'], /wildcards are not allowed in searches/],
      [{ field: 'country', term: 'AE' }, ['searches', 0, 'field'], /unsupported field "country"/],
      [{ field: 'coreDocument.parties.seller.name', term: '' }, ['searches', 0, 'term'], /non-empty/],
      [{ field: 'coreDocument.parties.seller.name', term: 5 }, ['searches', 0, 'term'], /non-empty/],
      [{ field: 'coreDocument.parties.seller.name', term: 'x'.repeat(201) }, ['searches', 0, 'term'], /at most 200/],
      [{ field: 'coreDocument.parties.seller.name', term: 'x', mode: 'prefix' }, ['searches', 0, 'mode'], /unknown member/],
    ];
    for (const [search, path, message] of BAD) {
      it(`400 ${JSON.stringify(search).slice(0, 80)}`, () => {
        const p = problem({ searches: [search] });
        expect(p.path).to.deep.equal(path);
        expect(p.message).to.match(message);
        expect(p.message).to.contain('searches[0]');
      });
    }
  });

  describe('sort', () => {
    it('exact keys, order asc or desc (asc when omitted)', () => {
      expect(ok({ sort: { field: 'coreDocument.totals.totalAmountIncludingTax', order: 'desc' } }).sort).to.deep.equal({ field: 'coreDocument.totals.totalAmountIncludingTax', order: 'desc' });
      expect(ok({ sort: { field: 'documentId' } }).sort).to.deep.equal({ field: 'documentId', order: 'asc' });
      expect(ok({ sort: null }).sort).to.equal(null);
    });
    const BAD: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ field: 'coreDocument.header.*', order: 'asc' }, ['sort', 'field'], /wildcards are not allowed in sort/],
      [{ field: 'coreDocument.header.dueDate', order: 'asc' }, ['sort', 'field'], /unsupported/],
      [{ field: 'documentType.modifiers', order: 'asc' }, ['sort', 'field'], /cannot be used in sort/],
      [{ field: 'country', order: 'asc' }, ['sort', 'field'], /unsupported field "country"/],
      [{ field: 'coreDocument.header.issueDate', order: 'up' }, ['sort', 'order'], /asc/],
      [{ order: 'asc' }, ['sort', 'field'], /field name/],
    ];
    for (const [sort, path, message] of BAD) {
      it(`400 ${JSON.stringify(sort)}`, () => {
        const p = problem({ sort });
        expect(p.path).to.deep.equal(path);
        expect(p.message).to.match(message);
      });
    }
  });

  it('reports every bad entry, not only the first', () => {
    const r = check({ filters: [{ id: 'x', value: [] }], searches: [{ field: 'y', term: 'z' }], columns: ['*'] });
    expect(r.decoded && !r.result.ok && r.result.problems.map((p) => p.path)).to.deep.equal([
      ['filters', 0, 'id'],
      ['searches', 0, 'field'],
      ['columns', 0],
    ]);
  });

  it('property: any catalogued filter field with an empty value list adds nothing; no input throws', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 2 }), (filters, searches, columns) => {
        const decoded = InvoiceQueryBody.decode({ country: 'AE', type: 'sales', environment: 'sandbox', filters, searches, columns });
        if (isRight(decoded)) checkInvoiceQuery(decoded.right);
      }),
      { numRuns: 500 },
    );
  });
});
