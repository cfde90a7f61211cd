/** Unify in the OpenAPI document (SPEC.md 2.1-2.5, 4.1): both request formats on one path, selected by `new-api`. */
import { errorResponses } from '../openapi/errors.js';
import {
  any,
  arr,
  bool,
  constant,
  describe as described,
  dateTime,
  enumOf,
  headers,
  int,
  json,
  looseObj,
  nullable,
  obj,
  openObject,
  ref,
  response,
  str,
  type FamilyDocument,
  type Schema,
} from '../openapi/schema.js';

const bearer = [{ bearerAuth: [] }];
const nonEmpty: Schema = { type: 'string', minLength: 1 };
const documentType = looseObj({ base: nonEmpty, modifiers: arr(str) }, { variant: nullable(str) });
const logicalDocumentType: Schema = { anyOf: [nonEmpty, looseObj({ base: nonEmpty }, { modifiers: arr(str), variant: nullable(str) })] };
const newSubmission = looseObj(
  {
    country: describe(nonEmpty, 'ISO 3166-1 alpha-2; supported: AE, SA, MY, BE, DE'),
    environment: enumOf(['sandbox', 'production'], 'must match the key\'s environment'),
    purpose: constant('invoicing'),
    source: describe(nonEmpty, '`name:version` of one of the workspace\'s sources'),
    documentType,
    payload: openObject,
  },
  {},
  { not: { required: ['action'] } },
);

function describe(s: Schema, description: string): Schema {
  return { ...s, description };
}

const errorItem = obj({ code: str, message: str, path: ref('ErrorPath') }, { field: nullable(str), blockReason: nullable(str) });
const resolvedType = obj({ base: str, modifiers: arr(str), variant: nullable(str) });
const validationError = obj({
  code: str,
  message: str,
  field: nullable(str),
  payloadField: nullable(str),
  path: ref('ErrorPath'),
  rule: obj({ code: str, message: str, severity: str, ruleSet: str }),
});
const validationWarning = obj({ code: str, message: str, field: nullable(str), payloadField: nullable(str) });

const schemas: Record<string, Schema> = {
  UnifySubmission: { ...newSubmission, description: 'New format (header `new-api: true`), SPEC.md 2.1.' },
  UnifyBatch: looseObj({ invoices: arr(ref('UnifySubmission'), { minItems: 1 }) }, {}, { not: { required: ['action'] }, description: 'New format, several documents: each item is answered on its own.' }),
  EarlierSubmit: looseObj(
    {
      action: constant('submit'),
      purpose: enumOf(['invoicing', 'MAPPING']),
      env: enumOf(['sandbox', 'simulation', 'production', 'prod']),
      defaults: looseObj(
        {
          country: enumOf(['SA', 'MY', 'BE', 'AE', 'SG', 'DE']),
          logicalDocumentType,
          source: looseObj({ name: nonEmpty, version: nonEmpty }),
        },
        { destinations: arr(looseObj({ type: nonEmpty })) },
      ),
      invoices: arr(looseObj({ payload: { type: 'object', minProperties: 1 } }, { externalId: nullable(str), logicalDocumentType }), { minItems: 1, maxItems: 10 }),
    },
    { options: looseObj({}, { continueOnError: bool, submitToGovernment: bool }) },
    { description: 'Earlier format, `action: submit` (no `new-api` header), SPEC.md 2.3. `metaConfig` is refused.' },
  ),
  EarlierList: looseObj(
    {
      action: constant('list'),
      env: enumOf(['sandbox', 'simulation', 'production', 'prod']),
      filters: looseObj({ uuid: nonEmpty, documentId: nonEmpty }, { country: constant('MY') }),
    },
    { page: { type: 'integer', minimum: 1 }, limit: { type: 'integer', minimum: 1, maximum: 100 }, sort: enumOf(['createdAt:desc', 'createdAt:asc']) },
    { description: 'Earlier format, `action: list` (Malaysia), SPEC.md 2.3.' },
  ),
  UnifyAccepted: obj({ documentId: str, documentNumber: str, message: str, Base64XML: describe(str, 'Base64 of the e-invoice XML; empty where not produced yet (Saudi)') }),
  UnifyValidationFailure: obj(
    { documentId: str, documentNumber: nullable(str), message: str, errors: arr(validationError), warnings: arr(validationWarning) },
    {},
    { description: '422: the document failed validation; it is stored as needing correction.' },
  ),
  UnifyBatchResult: obj({
    summary: obj({ total: int, success: int, failed: int }),
    results: arr(
      obj(
        { index: int, status: int },
        {
          documentId: nullable(str),
          documentNumber: nullable(str),
          message: str,
          Base64XML: str,
          errors: arr(any),
          warnings: arr(validationWarning),
          code: str,
          path: ref('ErrorPath'),
          requestId: str,
          blockReason: nullable(str),
        },
      ),
    ),
  }),
  EarlierSubmitResult: obj({
    status: constant('success'),
    code: constant('OK'),
    message: str,
    requestId: str,
    timestamp: dateTime,
    data: obj({
      summary: obj({ total: int, success: int, failed: int }),
      results: arr(
        obj({
          index: int,
          externalId: nullable(str),
          status: enumOf(['success', 'failed', 'stored', 'not_processed']),
          country: str,
          inputLogicalDocumentType: logicalDocumentType,
          resolvedDocumentType: nullable(resolvedType),
          derivedFlags: { type: 'object', additionalProperties: bool },
          payloadId: nullable(str),
          documentId: nullable(str),
          validation: obj({ success: bool, errors: arr(errorItem) }),
          submission: obj({ success: bool, errors: arr(errorItem), governmentResponse: any, submittedAt: nullable(dateTime) }),
          errors: arr(errorItem),
        }),
      ),
    }),
    errors: arr(any, { maxItems: 0 }),
  }),
  EarlierListResult: obj({
    status: constant('success'),
    code: constant('OK'),
    message: str,
    requestId: str,
    timestamp: dateTime,
    data: obj({
      summary: obj({ total: int, returned: int, page: int, limit: int }),
      results: arr(obj({ index: int, documentId: str, uuid: nullable(str), country: str, environment: str, documentDetails: any })),
    }),
    errors: arr(any, { maxItems: 0 }),
  }),
  RequirementsCatalogue: obj({
    country: str,
    base: str,
    modifiers: arr(str),
    variant: nullable(str),
    ruleSets: arr(str),
    fields: arr(
      obj({
        path: str,
        type: nullable(str),
        requirement: enumOf(['required', 'conditional', 'optional']),
        conditions: arr(str),
        alternatives: arr(str),
        acceptedValues: nullable(arr(str)),
        formats: arr(str),
        constraints: arr(
          obj({ rule: str, officialRule: described(nullable(str), 'The official rule it enforces (e.g. PINT AE `ibr-174-ae`), or null'), severity: str, kind: enumOf(['format', 'check']), description: str, values: nullable(arr(str)), when: nullable(str) }),
        ),
        rules: arr(str),
        officialRules: described(arr(str), 'The official rules behind `rules`'),
        notApplicable: arr(obj({ rule: str, appliesWhen: str })),
      }),
    ),
  }),
};

export const unifyDocument: FamilyDocument = {
  tag: { name: 'Unify', description: 'Submit documents (new format with `new-api: true`, or the earlier action-based format) and read field requirements. Bearer authentication.' },
  schemas,
  paths: {
    '/api/v3/unify': {
      post: {
        operationId: 'unifySubmit',
        summary: 'Submit documents (both request formats)',
        description:
          'One path, two request formats. With the header `new-api: true` the body is the new format (`UnifySubmission`, or `UnifyBatch` for several) and the answer is `UnifyAccepted` / `UnifyBatchResult` / 422 `UnifyValidationFailure`. Without it the body is the earlier action-based format (`EarlierSubmit` or `EarlierList`) and every answer uses the earlier envelope. The request and response bodies are therefore `oneOf` the two formats\' schemas, selected by that header.',
        tags: ['Unify'],
        security: bearer,
        parameters: [
          { name: 'new-api', in: 'header', description: '`true` selects the new request format; absent (or anything else) selects the earlier format.', schema: enumOf(['true', 'false']) },
          { ...headers.idempotencyKey(), description: 'New format only: a retry with the same key and payload returns the original answer.' },
          headers.correlationId,
        ],
        requestBody: {
          required: true,
          content: json({ oneOf: [ref('UnifySubmission'), ref('UnifyBatch'), ref('EarlierSubmit'), ref('EarlierList')] }),
        },
        responses: {
          200: response('New format: accepted document or batch result. Earlier format: the success envelope.', {
            oneOf: [ref('UnifyAccepted'), ref('UnifyBatchResult'), ref('EarlierSubmitResult'), ref('EarlierListResult')],
          }),
          422: response('New format: the document failed validation', ref('UnifyValidationFailure')),
          ...errorResponses.unify([400, 403, 404, 409, 413, 415, 500, 503]),
        },
      },
    },
    '/api/v3/unify/requirements': {
      get: {
        operationId: 'unifyRequirements',
        summary: 'Field requirements of a country and document type',
        description: 'Which payload fields are required, conditional (with the condition) or optional, and their accepted values, generated from the validator\'s rule sets.',
        tags: ['Unify'],
        security: bearer,
        parameters: [
          { name: 'country', in: 'query', required: true, schema: nonEmpty, example: 'AE' },
          { name: 'base', in: 'query', required: true, schema: nonEmpty, example: 'tax_invoice' },
          { name: 'modifiers', in: 'query', description: 'Comma-separated modifiers', schema: str, example: 'export' },
          { name: 'variant', in: 'query', schema: str },
        ],
        responses: {
          200: response('The catalogue', ref('RequirementsCatalogue')),
          ...errorResponses.unifyNewOnly([400, 500, 503]),
        },
      },
    },
  },
};
