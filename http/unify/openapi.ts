/** Unify in the OpenAPI document: both request formats on one path, selected by `new-api`. */
import { jsonSchemaOf } from '../../domain/schema/json-schema.js';
import { coreDocumentJsonSchema } from '../../domain/validation/codec.js';
import { requirementsCatalogue, supportedCountries } from '../../domain/validation/index.js';
import { errorResponses } from '../openapi/errors.js';
import { ListRequest, LogicalDocumentType, NewBatch, NewSubmission, SubmitRequest } from './codecs.js';

import {
  any,
  arr,
  bool,
  constant,
  describe as described,
  dateTime,
  enumOf,
  exampleFile,
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
const logicalDocumentType: Schema = jsonSchemaOf(LogicalDocumentType);

/** `lineItems[3].name` / `lineItems[].name` → `lineItems[].name`. */
const shape = (path: string) => path.replace(/\[\d*\]/g, '[]');

/**
 * The core document with the tax-invoice requirement of every field per country in its
 * description, from the requirements catalogue (the validator's own rule sets). The exact
 * requirements of any document type: `GET /api/v3/unify/requirements`.
 */
function coreDocumentWithRequirements(): Schema {
  const byPath = new Map<string, { required: string[]; conditional: string[] }>();
  for (const country of supportedCountries) {
    const catalogue = requirementsCatalogue({ country, base: 'tax_invoice', modifiers: [], variant: null });
    if (!catalogue.ok) continue;
    for (const field of catalogue.value.fields) {
      if (field.requirement === 'optional') continue;
      const key = shape(field.path);
      const entry = byPath.get(key) ?? { required: [], conditional: [] };
      if (entry.required.includes(country) || entry.conditional.some((c) => c.startsWith(`${country} `))) continue;
      if (field.requirement === 'required') entry.required.push(country);
      else entry.conditional.push(`${country} (${field.conditions.join('; ')})`);
      byPath.set(key, entry);
    }
  }
  const describeRequirement = ({ required, conditional }: { required: string[]; conditional: string[] }): string => {
    const parts = [];
    if (required.length === supportedCountries.length) parts.push('required in every country');
    else if (required.length > 0) parts.push(`required in ${required.join(', ')}`);
    if (conditional.length > 0) parts.push(`conditional in ${conditional.join(', ')}`);
    if (required.length + conditional.length < supportedCountries.length) parts.push('optional elsewhere');
    return `Tax invoice: ${parts.join('; ')}.`;
  };
  const walk = (node: Schema, path: string): void => {
    const properties = node.properties as Record<string, Schema> | undefined;
    for (const [name, child] of Object.entries(properties ?? {})) {
      const childPath = path ? `${path}.${name}` : name;
      const requirement = byPath.get(childPath);
      if (requirement) child.description = [child.description, describeRequirement(requirement)].filter(Boolean).join(' ');
      walk(child, childPath);
      const items = child.items as Schema | undefined;
      if (items) walk(items, `${childPath}[]`);
    }
  };
  const schema = coreDocumentJsonSchema();
  walk(schema, '');
  schema.description =
    'The core document (the `payload` of a new-format submission with the identity mapping). `null` means absent. ' +
    'Each field says for which countries a tax invoice requires it; other document types and modifiers change this: ' +
    '`GET /api/v3/unify/requirements` gives the exact list. A member the service does not read is accepted with a warning in the answer.';
  return schema;
}

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
const validationWarning = obj(
  { code: str, message: str, field: nullable(str), payloadField: nullable(str) },
  { suggestion: described(nullable(str), 'For `UNKNOWN_FIELD`: the known name closest to the unknown one.') },
  { description: 'A validation warning, or `UNKNOWN_FIELD`: a payload member the service does not read (`payloadField`), with the closest known name.' },
);

const schemas: Record<string, Schema> = {
  CoreDocument: coreDocumentWithRequirements(),
  UnifySubmission: { ...jsonSchemaOf(NewSubmission), description: 'New format (header `new-api: true`). Unknown members are refused (400).' },
  UnifyBatch: { ...jsonSchemaOf(NewBatch), description: 'New format, several documents: each item is answered on its own.' },
  EarlierSubmit: {
    ...jsonSchemaOf(SubmitRequest),
    description: 'Earlier format, `action: submit` (no `new-api` header). `metaConfig` is refused. `defaults.country` SG is part of the format but has no rule sets and is refused.',
  },
  EarlierList: { ...jsonSchemaOf(ListRequest), description: 'Earlier format, `action: list` (Malaysia).' },
  UnifyAccepted: obj({
    kind: constant('document'),
    documentId: str,
    documentNumber: str,
    message: str,
    Base64XML: describe(str, 'Base64 of the e-invoice XML; empty where not produced yet (Saudi)'),
    warnings: describe(arr(ref('UnifyValidationWarning')), 'Payload members the service does not read (`UNKNOWN_FIELD`); empty when there are none.'),
  }),
  UnifyValidationWarning: validationWarning,
  UnifyNewFormatResult: {
    oneOf: [ref('UnifyAccepted'), ref('UnifyBatchResult')],
    discriminator: { propertyName: 'kind', mapping: { document: '#/components/schemas/UnifyAccepted', batch: '#/components/schemas/UnifyBatchResult' } },
    description: 'The 200 of the new format: one document (`kind: document`) or a batch (`kind: batch`).',
  },
  UnifyValidationFailure: obj(
    { documentId: str, documentNumber: nullable(str), message: str, errors: arr(validationError), warnings: arr(ref('UnifyValidationWarning')) },
    {},
    { description: '422: the document failed validation; it is stored as needing correction.' },
  ),
  UnifyDryRunResult: obj(
    {
      kind: constant('dry_run'),
      dryRun: constant(true),
      documentNumber: nullable(str),
      message: str,
      Base64XML: describe(str, 'Base64 of the e-invoice XML the document would get; empty where it is produced on delivery (Saudi)'),
      warnings: describe(arr(ref('UnifyValidationWarning')), 'Validation warnings and payload members the service does not read (`UNKNOWN_FIELD`).'),
    },
    {},
    { description: 'Dry run: the document passed validation. Nothing was stored, no number claimed, no credit reserved.' },
  ),
  UnifyDryRunFailure: obj(
    { documentId: constant(null), documentNumber: nullable(str), dryRun: constant(true), message: str, errors: arr(validationError), warnings: arr(ref('UnifyValidationWarning')) },
    {},
    { description: 'Dry run, 422: the errors and warnings a submission would get (as `UnifyValidationFailure`); nothing was stored, so there is no document id.' },
  ),
  UnifyBatchResult: obj({
    kind: constant('batch'),
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
          warnings: arr(ref('UnifyValidationWarning')),
          kind: constant('document'),
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
          content: {
            'application/json': {
              schema: { oneOf: [ref('UnifySubmission'), ref('UnifyBatch'), ref('EarlierSubmit'), ref('EarlierList')] },
              // Real invoices for the source of examples/connect-company.json (sandbox).
              examples: {
                aeTaxInvoice: { summary: 'UAE tax invoice (new format, new-api: true)', value: exampleFile('ae-tax-invoice.json') },
                aeCreditNote: { summary: 'UAE credit note (new format, new-api: true)', value: exampleFile('ae-credit-note.json') },
                aeExportInvoice: { summary: 'UAE export invoice (new format, new-api: true)', value: exampleFile('ae-export-invoice.json') },
                myEarlierBatch: { summary: 'Two Malaysian invoices (earlier format, without new-api)', value: exampleFile('my-earlier-format-batch.json') },
              },
            },
          },
        },
        responses: {
          200: response('New format: `UnifyNewFormatResult` (discriminated by `kind`). Earlier format: the success envelope of its action.', {
            oneOf: [ref('UnifyNewFormatResult'), ref('EarlierSubmitResult'), ref('EarlierListResult')],
          }),
          422: response('New format: the document failed validation', ref('UnifyValidationFailure')),
          ...errorResponses.unify([400, 403, 404, 409, 413, 415, 500, 503]),
        },
      },
    },
    '/api/v3/unify/dry-run': {
      post: {
        operationId: 'unifyDryRun',
        summary: 'Validate a new-format submission without sending it',
        description:
          'The body of a new-format submission (`UnifySubmission`, one document; no `new-api` header needed). The same request checks, credit check, validation and document-number check as `POST /api/v3/unify`, answered with the same 422 (without a document id) or a 200 with the e-invoice XML and the warnings. Nothing is stored: no event, no number claimed, no credit reserved. Rate limited per workspace (`UNIFY_DRY_RUN_PER_MINUTE`, 60 by default): 429 `resource_exhausted` with `Retry-After`.',
        tags: ['Unify'],
        security: bearer,
        parameters: [headers.correlationId],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('UnifySubmission'), examples: { aeTaxInvoice: { summary: 'UAE tax invoice', value: exampleFile('ae-tax-invoice.json') } } } },
        },
        responses: {
          200: response('The document passed validation (nothing stored)', ref('UnifyDryRunResult')),
          422: response('The document failed validation (nothing stored)', ref('UnifyDryRunFailure')),
          ...errorResponses.unify([400, 403, 404, 413, 415, 429, 500, 503]),
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
