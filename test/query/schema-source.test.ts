/**
 * The invoice query's request body has one description: the OpenAPI document's `InvoiceQuery`
 * is the JSON Schema of the codec the handler decodes with, and the schema and the service's
 * rules agree on bodies either side of each limit.
 */
import { expect } from 'chai';
import { isRight } from 'fp-ts/lib/Either.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../http/openapi/index.js';
import { BODY_FIELDS, checkInvoiceQuery, InvoiceQueryBody, MAX_FILTERS, MAX_LIMIT, MAX_TERM_LENGTH } from '../../domain/query/request.js';
import { jsonSchemaOf, unknownMembers } from '../../domain/schema/json-schema.js';

type Schema = { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };

const ISSUE_DATE = 'coreDocument.header.issueDate';
const BUYER = 'coreDocument.parties.buyer.name';

const documented = () => (openApiDocument() as { components: { schemas: Record<string, Schema> } }).components.schemas['InvoiceQuery']!;

/** Whether the service takes the body (the codec and its closed members, as the handler decodes, then the rules of each entry). */
function serviceAccepts(body: unknown): boolean {
  const decoded = InvoiceQueryBody.decode(body);
  return isRight(decoded) && unknownMembers(InvoiceQueryBody, body).length === 0 && checkInvoiceQuery(decoded.right).ok;
}

describe('the invoice query body has one schema source', () => {
  it('the OpenAPI InvoiceQuery is the codec\'s JSON Schema, closed, with every body field', () => {
    const schema = documented();
    expect(schema).to.deep.equal(jsonSchemaOf(InvoiceQueryBody));
    expect(Object.keys(schema.properties)).to.have.members([...BODY_FIELDS]);
    expect(schema.required).to.have.members(['country', 'type', 'environment']);
    expect(schema.additionalProperties).to.equal(false);
  });

  it('the schema and the service agree on bodies either side of the limits', () => {
    const validate = new Ajv2020({ strict: false }).compile(documented());
    const base = { country: 'AE', type: 'sales', environment: 'sandbox' };
    const filter = { id: 'documentType.base', value: ['tax_invoice'] };
    const cases: [string, unknown, boolean][] = [
      ['the least body', base, true],
      ['every member', { ...base, page: 2, limit: MAX_LIMIT, filters: [filter, { id: ISSUE_DATE, range: { gte: '2026-01-01' } }, { id: BUYER, exists: true }], searches: [{ field: BUYER, term: 'acme' }], columns: ['header.documentNumber'], sort: { field: ISSUE_DATE, order: 'desc' } }, true],
      ['sort without an order', { ...base, sort: { field: ISSUE_DATE } }, true],
      ['sort null', { ...base, sort: null }, true],
      ['an unknown member', { ...base, filter: [filter] }, false],
      ['a lower-case country', { ...base, country: 'ae' }, false],
      ['an unknown type', { ...base, type: 'orders' }, false],
      ['limit above the maximum', { ...base, limit: MAX_LIMIT + 1 }, false],
      ['page 0', { ...base, page: 0 }, false],
      ['too many filters', { ...base, filters: Array.from({ length: MAX_FILTERS + 1 }, () => filter) }, false],
      ['a filter with two forms', { ...base, filters: [{ id: BUYER, value: ['a'], exists: true }] }, false],
      ['a filter member the service does not know', { ...base, filters: [{ ...filter, match: 'all' }] }, false],
      ['an empty range', { ...base, filters: [{ id: ISSUE_DATE, range: {} }] }, false],
      ['an empty search term', { ...base, searches: [{ field: BUYER, term: '' }] }, false],
      ['a search term too long', { ...base, searches: [{ field: BUYER, term: 'x'.repeat(MAX_TERM_LENGTH + 1) }] }, false],
      ['an unknown sort order', { ...base, sort: { field: ISSUE_DATE, order: 'up' } }, false],
    ];
    for (const [what, body, accepted] of cases) {
      expect(validate(body), `schema: ${what}`).to.equal(accepted);
      expect(serviceAccepts(body), `service: ${what}`).to.equal(accepted);
    }
  });
});
