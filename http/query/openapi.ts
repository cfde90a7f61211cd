/** The invoice query (POST /invoices/query, docs/api/invoice-query.md) in the OpenAPI document; errors in the documents shape. */
import { InvoiceQueryBody } from '../../domain/query/request.js';
import { jsonSchemaOf } from '../../domain/schema/json-schema.js';
import { errorResponses } from '../openapi/errors.js';
import { arr, constant, int, json, obj, openObject, ref, response, type FamilyDocument } from '../openapi/schema.js';

export const queryDocument: FamilyDocument = {
  tag: { name: 'Invoice query', description: 'Search stored sales, purchase and receipt documents. Bearer token or X-API-Key.' },
  schemas: {
    // The request body's codec is its one description: the handler decodes with it.
    InvoiceQuery: jsonSchemaOf(InvoiceQueryBody),
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
