/**
 * Purchases (GET /api/v3/documents?type=purchases, docs/api/purchases.md, docs/api/unify.md) in the OpenAPI document; the
 * single purchase read shares `documentRead` (documents/openapi.ts) through `PurchaseInvoice`.
 */
import { errorResponses } from '../openapi/errors.js';
import { arr, bool, constant, date, dateTime, int, nullable, obj, openObject, ref, response, str, type FamilyDocument, type Schema } from '../openapi/schema.js';

const listItem: Record<string, Schema> = {
  documentId: str,
  receivedAt: dateTime,
  storedAt: str,
  status: str,
  country: str,
  environment: str,
  invoiceNumber: nullable(str),
  supplierName: nullable(str),
  issueDate: nullable(str),
};

export const purchasesDocument: FamilyDocument = {
  tag: { name: 'Documents', description: 'Status of submitted sales documents; received purchase invoices. Bearer authentication.' },
  schemas: {
    PurchaseListItem: obj(listItem),
    PurchaseInvoice: obj({
      ...listItem,
      documentType: openObject,
      supplierCountry: nullable(str),
      probableResendOf: { ...arr(str), description: 'Purchases stored earlier with the same supplier, document type and number (a probable re-send of them)' },
      uuid: nullable(str),
      channel: str,
      senderParticipantId: nullable(str),
      receiverParticipantId: nullable(str),
      attribution: { anyOf: [openObject, { type: 'null' }] },
      coreDocument: openObject,
      artifacts: obj({ invoiceXmlBase64: str, invoiceXmlEncoding: constant('base64'), invoiceXmlSha256: str, invoiceXmlBytes: int }),
    }),
  },
  paths: {
    '/api/v3/documents': {
      get: {
        operationId: 'purchaseList',
        summary: 'List received purchase invoices by receipt date (UTC days, inclusive)',
        tags: ['Documents'],
        security: [{ bearerAuth: [] }],
        parameters: [
          { name: 'type', in: 'query', required: true, schema: constant('purchases') },
          { name: 'from', in: 'query', required: true, schema: date },
          { name: 'to', in: 'query', description: 'Last day of the range, inclusive; defaults to `from` (one day).', schema: date },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'cursor', in: 'query', description: 'The previous page\'s nextCursor, unaltered', schema: str },
        ],
        responses: {
          200: response('A page', obj({ success: constant(true), data: obj({ items: arr(ref('PurchaseListItem')), hasMore: bool, nextCursor: nullable(str) }) })),
          ...errorResponses.documents([400, 422, 500, 503]),
        },
      },
    },
  },
};
