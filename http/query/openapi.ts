/** The invoice query (POST /invoices/query, docs/api/invoice-query.md) in the OpenAPI document; errors in the documents shape. */
import { errorResponses } from '../openapi/errors.js';
import { arr, constant, enumOf, int, json, obj, openObject, ref, response, str, type FamilyDocument, type Schema } from '../openapi/schema.js';

const filter: Schema = {
  oneOf: [
    obj({ id: str, value: arr({ type: ['string', 'number', 'boolean'] }) }),
    obj({ id: str, range: obj({}, { gte: { type: ['string', 'number'] }, lte: { type: ['string', 'number'] } }) }),
    obj({ id: str, exists: { type: 'boolean' } }),
  ],
};

export const queryDocument: FamilyDocument = {
  tag: { name: 'Invoice query', description: 'Search stored sales, purchase and receipt documents. Bearer token or X-API-Key.' },
  schemas: {
    InvoiceQuery: obj(
      { country: { type: 'string', pattern: '^[A-Z]{2}$' }, type: enumOf(['sales', 'purchases', 'receipts']), environment: str },
      {
        page: { type: 'integer', minimum: 1 },
        limit: { type: 'integer', minimum: 1 },
        filters: arr(filter),
        searches: arr(obj({ field: str, term: str })),
        columns: arr(str),
        sort: obj({ field: str, order: enumOf(['asc', 'desc']) }),
      },
    ),
    InvoiceQueryResult: obj({
      status: constant('success'),
      data: obj({ documents: arr(openObject) }),
      pagination: obj({ page: int, perPage: int, total: int, totalPages: int }),
    }),
  },
  paths: {
    '/invoices/query': {
      post: {
        operationId: 'invoiceQuery',
        summary: 'Search documents with filters, text searches, columns, sorting and paging',
        tags: ['Invoice query'],
        security: [{ bearerAuth: [] }, { apiKeyAuth: [] }],
        requestBody: { required: true, content: json(ref('InvoiceQuery')) },
        responses: {
          200: response('A page of documents (shaped by `columns`)', ref('InvoiceQueryResult')),
          ...errorResponses.documents([400, 403, 413, 415, 500, 503]),
        },
      },
    },
  },
};
