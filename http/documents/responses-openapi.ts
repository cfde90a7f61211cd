/**
 * The buyer's answer to a received purchase invoice (a Peppol BIS 3.0 Invoice Response,
 * docs/api/invoice-response.md) in the OpenAPI document, and the seller's view of it
 * (`buyerResponse` of the status object).
 */
import { BUSINESS_STATUS_OF, RESPONSE_CODES, STATUS_ACTION_CODES, STATUS_REASON_CODES } from '../../domain/peppol/invoice-response.js';
import { errorResponses } from '../openapi/errors.js';
import { arr, constant, date, dateTime, enumOf, nullable, obj, ref, response, str, type FamilyDocument, type Schema } from '../openapi/schema.js';

const bearer = [{ bearerAuth: [] }];
const documentId = { name: 'documentId', in: 'path' as const, required: true, description: 'A received purchase invoice (`pur_…`)', schema: { type: 'string', minLength: 1 } };
const codes = (list: Record<string, string>) => Object.entries(list).map(([k, v]) => `\`${k}\` ${v}`).join('; ');
const responseCode = enumOf(Object.keys(RESPONSE_CODES), codes(RESPONSE_CODES));
const clarification = (list: Record<string, string>) => obj({ code: enumOf(Object.keys(list), codes(list)), text: nullable(str) });

/** The answer as both sides show it. */
export const buyerResponseFields: Record<string, Schema> = {
  responseId: str,
  code: responseCode,
  meaning: str,
  businessStatus: enumOf([...new Set(Object.values(BUSINESS_STATUS_OF))], 'The value the answer gives `meta.statuses.business.current`'),
  message: nullable(str),
  reasons: arr(clarification(STATUS_REASON_CODES)),
  actions: arr(clarification(STATUS_ACTION_CODES)),
  note: nullable(str),
  issueDate: date,
  invoiceNumber: str,
  senderParticipantId: { ...str, description: 'The buyer\'s endpoint id (`scheme:value`)' },
  receiverParticipantId: { ...str, description: 'The seller\'s endpoint id (`scheme:value`)' },
  channel: enumOf(['peppol_sandbox', 'peppol_as4']),
};

const sent = {
  ...buyerResponseFields,
  sentAt: dateTime,
  responseXmlSha256: str,
  transmission: obj({
    status: enumOf(['delivered', 'failed'], '`delivered`: the seller\'s access point received it; `failed`: it did not (the answer may be given again)'),
    messageId: nullable(str),
    detail: nullable(str),
  }),
};

export const responsesDocument: FamilyDocument = {
  tag: { name: 'Documents', description: 'Status of submitted sales documents; received purchase invoices. Bearer authentication.' },
  schemas: {
    BuyerResponse: obj({ ...buyerResponseFields, receivedAt: dateTime }, {}, { description: 'The buyer\'s latest answer to a sales document (Peppol Invoice Response), as received.' }),
    PurchaseResponse: obj(sent, { responseXmlBase64: nullable(str) }, { description: 'An answer the buyer sent for a received purchase invoice.' }),
    PurchaseResponseRequest: obj(
      { code: responseCode },
      {
        message: { ...str, maxLength: 1000, description: 'Required for `RE`: the reason the seller sees (in `errors[]` of its document)' },
        reasons: { ...arr(obj({ code: enumOf(Object.keys(STATUS_REASON_CODES)) }, { text: { ...str, maxLength: 1000 } })), maxItems: 20, description: 'OPStatusReason codes. `RE`, `UQ` and `CA` need at least one reason or action; `AB`, `IP`, `AP`, `PD` allow only `NON`.' },
        actions: { ...arr(obj({ code: enumOf(Object.keys(STATUS_ACTION_CODES)) }, { text: { ...str, maxLength: 1000 } })), maxItems: 20, description: 'OPStatusAction codes: what the seller is asked to do' },
        note: { ...str, maxLength: 1000 },
      },
    ),
  },
  paths: {
    '/api/v3/documents/{documentId}/responses': {
      post: {
        operationId: 'purchaseRespond',
        summary: 'Answer a received purchase invoice (accept, reject, query, …) with a Peppol Invoice Response',
        description:
          'Sends a Peppol BIS 3.0 Invoice Response back to the seller\'s access point over the network the purchase came by (the sandbox network, or AS4). ' +
          'Answers follow the BIS order: nothing after `RE` or `PD`, only `PD` after `AP`. Idempotent with `Idempotency-Key`. ' +
          'Errors: 400 (`INVALID_RESPONSE_CODE`, `INVALID_STATUS_REASON`, `STATUS_REASON_REQUIRED`, `VALIDATION_ERROR`), 403 read-only key, 404 unknown purchase, ' +
          '409 `RESPONSE_NOT_ALLOWED` (order of answers), `RESPONSE_NOT_ROUTABLE` (an imported purchase, or no access point for its channel), or an Idempotency-Key reused with another body.',
        tags: ['Documents'],
        security: bearer,
        parameters: [documentId, { name: 'Idempotency-Key', in: 'header', schema: { type: 'string', minLength: 1, maxLength: 255 } }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('PurchaseResponseRequest') } } },
        responses: {
          201: response('The answer, as sent', obj({ success: constant(true), data: ref('PurchaseResponse') })),
          ...errorResponses.documents([400, 403, 404, 409, 413, 415, 500, 503]),
        },
      },
      get: {
        operationId: 'purchaseResponses',
        summary: 'The answers sent for a received purchase invoice, oldest first',
        tags: ['Documents'],
        security: bearer,
        parameters: [documentId],
        responses: {
          200: response('The answers', obj({ success: constant(true), data: obj({ items: arr(ref('PurchaseResponse')) }) })),
          ...errorResponses.documents([400, 404, 500, 503]),
        },
      },
    },
    '/api/v3/documents/{documentId}/responses/{responseId}': {
      get: {
        operationId: 'purchaseResponse',
        summary: 'One answer sent, with its Invoice Response XML',
        tags: ['Documents'],
        security: bearer,
        parameters: [documentId, { name: 'responseId', in: 'path', required: true, schema: str }],
        responses: {
          200: response('The answer', obj({ success: constant(true), data: ref('PurchaseResponse') })),
          ...errorResponses.documents([400, 404, 500, 503]),
        },
      },
    },
  },
};
