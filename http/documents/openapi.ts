/** Documents in the OpenAPI document (docs/api/unify.md): the status of a submitted sales document. */
import { errorResponses } from '../openapi/errors.js';
import { arr, bool, constant, dateTime, enumOf, nullable, obj, ref, response, str, type FamilyDocument, type Schema } from '../openapi/schema.js';

const bearer = [{ bearerAuth: [] }];
const documentId = { name: 'documentId', in: 'path' as const, required: true, schema: { type: 'string', minLength: 1 } };
const stepStatus = nullable(enumOf(['Valid', 'Invalid', 'Pending']));

const statusFields: Record<string, Schema> = {
  documentId: str,
  documentNumber: nullable(str),
  country: str,
  environment: enumOf(['sandbox', 'production', 'simulation']),
  state: enumOf(['submitted', 'rejected', 'processing', 'delivery_success', 'delivery_failed', 'final_valid', 'final_invalid']),
  isTerminal: bool,
  lastUpdatedAt: dateTime,
  errors: arr(
    obj({ code: str, message: str, path: ref('ErrorPath'), source: enumOf(['validation', 'delivery', 'government']) }),
    { description: 'A buyer\'s rejection (Peppol Invoice Response `RE`) is `BUYER_REJECTED`, source `delivery`, with the buyer\'s reason codes and text in `message`. The seller\'s cancellation at the authority (MyInvois, within 72 hours of validation) is `DOCUMENT_CANCELLED`, source `government`: the one way a `final_valid` document becomes `final_invalid`. The delivery codes (`DESTINATION_NOT_CONFIGURED`, `ZATCA_*`, `MYINVOIS_*`, `PEPPOL_*`) are listed in docs/api/unify.md and the operations guides.' },
  ),
  government: { description: 'The authority\'s or network\'s record; varies by country; informational.', anyOf: [{ type: 'object' }, { type: 'null' }] },
  artifacts: nullable(obj({ invoiceXmlBase64: str, invoiceXmlEncoding: constant('base64') }, { tddXmlBase64: str })),
  validationResults: obj({
    status: enumOf(['Valid', 'Invalid', 'Pending']),
    validationSteps: arr(obj({ name: str, status: stepStatus, error: nullable(obj({ code: str, message: str })) })),
  }),
};
const compliance = obj({
  ftaApprovedStatus: enumOf(['APPROVED', 'REJECTED', 'PENDING']),
  uuid: nullable(str),
  businessProcessIdentifier: nullable(str),
  specificationIdentifier: nullable(str),
});
const required = Object.keys(statusFields);
const buyerResponse = ref('BuyerResponse');

const schemas: Record<string, Schema> = {
  DocumentStatus: obj(statusFields, { compliance, buyerResponse }, { description: 'The status of a submitted sales document; `compliance` for UAE, Belgium and Germany only; `buyerResponse` once the buyer answered it (docs/api/invoice-response.md).' }),
  DocumentStatusWithPdf: {
    ...obj({ ...statusFields, pdfBase64: nullable(str) }, { compliance, buyerResponse }),
    required: [...required, 'pdfBase64'],
    description: 'The status object plus `pdfBase64` (null unless compliant, or when the PDF could not be produced).',
  },
};



export const documentsDocument: FamilyDocument = {
  tag: { name: 'Documents', description: 'Status of submitted sales documents; received purchase invoices. Bearer authentication.' },
  schemas,
  paths: {
    '/api/v3/documents/{documentId}': {
      get: {
        operationId: 'documentRead',
        summary: 'Read a document',
        description: '`type=sales`: the status object of a submitted sales document. `type=purchases`: a received purchase invoice.',
        tags: ['Documents'],
        security: bearer,
        parameters: [documentId, { name: 'type', in: 'query', required: true, schema: enumOf(['sales', 'purchases']) }],
        responses: {
          200: response('The document', obj({ success: constant(true), data: { oneOf: [ref('DocumentStatus'), ref('PurchaseInvoice')] } })),
          ...errorResponses.documents([400, 404, 422, 500, 503]),
        },
      },
    },
    '/api/v3/documents/{documentId}/status': {
      get: {
        operationId: 'documentStatus',
        summary: 'Read a sales document\'s status with its PDF',
        tags: ['Documents'],
        security: bearer,
        parameters: [documentId],
        responses: {
          200: response('The status object plus pdfBase64', obj({ success: constant(true), data: ref('DocumentStatusWithPdf') })),
          ...errorResponses.documents([400, 404, 500, 503], { plainMissingKey: true }),
        },
      },
    },
  },
};
