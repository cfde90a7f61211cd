/** Connect in the OpenAPI document (the Connect section of the OpenAPI document): companies, sources, branches, onboarding jobs, counts. */
import { BranchBody, BranchBulkBody, CompanyCreationBody, OnboardingJobBody, SourcePatchBody } from '../../domain/connect/codecs.js';
import { jsonSchemaOf } from '../../domain/schema/json-schema.js';
import { errorResponses } from '../openapi/errors.js';
import {
  exampleFile,
  arr,
  bool,
  constant,
  date,
  dateTime,
  enumOf,
  headers,
  int,
  nullable,
  obj,
  openObject,
  ref,
  response,
  str,
  type FamilyDocument,
  type OperationObject,
  type ParameterObject,
  type Schema,
} from '../openapi/schema.js';

export const connectSecurity: Record<string, string[]>[] = [{ apiKeyAuth: [] }, { bearerAuth: [] }];
const text: Schema = { type: 'string', minLength: 1 };
const companyId: ParameterObject = { name: 'companyId', in: 'path', required: true, description: '24 hexadecimal characters', schema: { type: 'string', pattern: '^[0-9a-f]{24}$' } };
const sourceName: ParameterObject = { name: 'sourceName', in: 'path', required: true, description: 'URL-encoded source name', schema: text };
const sourceVersion: ParameterObject = { name: 'sourceVersion', in: 'query', required: true, schema: text };
const environments = enumOf(['sandbox', 'simulation', 'production']);
const readiness: Schema = {
  oneOf: [obj({ status: constant('READY'), templateId: str }), obj({ status: constant('ACTION_REQUIRED'), code: str })],
};
const envelope = (data: Schema, meta: Record<string, Schema> = {}) =>
  obj({ success: constant(true), data, meta: obj({ requestId: str, timestamp: dateTime, workspaceId: str, ...meta }) });

const companyOptional = { contactPersonName: str, contactPersonMobile: { type: 'string', pattern: '^\\+?[0-9]+$' } };

const listItem = {
  companyId: str,
  sourceName: str,
  sourceVersion: str,
  legalName: nullable(str),
  legalIdentifier: nullable(str),
  countryCode: str,
  status: enumOf(['active', 'inactive']),
  onboardingStatus: str,
  peppolId: nullable(str),
  sourceId: str,
  branchId: str,
  branchName: str,
  tin: str,
  vatTrn: nullable(str),
  mappingReadiness: ref('MappingReadiness'),
  readyForInvoicing: bool,
  createdAt: dateTime,
  updatedAt: dateTime,
};

const schemas: Record<string, Schema> = {
  MappingReadiness: readiness,
  // Request bodies: the JSON Schema of the codecs the request rules take their members from.
  CompanyCreation: jsonSchemaOf(CompanyCreationBody),
  CompanyCreated: obj(
    {
      companyId: str,
      sourceId: str,
      branchId: str,
      peppolParticipantId: nullable(str),
      legalName: nullable(str),
      legalNameArabic: nullable(str),
      tin: str,
      vatTrn: nullable(str),
      sourceName: str,
      sourceVersion: str,
      countryCode: str,
      branchName: str,
      contactPersonEmail: str,
      platformEnvironment: environments,
      userGivenBranchId: str,
      readyForInvoicing: bool,
      mappingReadiness: ref('MappingReadiness'),
      createdAt: dateTime,
      updatedAt: dateTime,
    },
    companyOptional,
  ),
  CompanyListItem: obj(listItem),
  CompanySource: obj({
    ...listItem,
    peppolParticipantId: nullable(str),
    legalNameArabic: nullable(str),
    platformEnvironment: environments,
    userGivenBranchId: str,
    contactPersonName: nullable(str),
    contactPersonEmail: str,
    contactPersonMobile: nullable(str),
    metadata: nullable(openObject),
  }),
  Branch: jsonSchemaOf(BranchBody),
  BranchResult: obj(
    {
      companyId: str,
      branchId: str,
      branchName: str,
      userGivenBranchId: str,
      sourceId: str,
      sourceName: str,
      sourceVersion: str,
      platformEnvironment: environments,
      readyForInvoicing: bool,
    },
    { mappingReadiness: ref('MappingReadiness') },
  ),
  RowError: obj({ code: str, message: str, retryable: bool }),
  OnboardingJob: obj({
    id: str,
    workspaceId: str,
    countryCode: str,
    status: str,
    totalRows: int,
    processedRows: int,
    succeededRows: int,
    failedRows: int,
    createdAt: dateTime,
    updatedAt: dateTime,
    completedAt: nullable(dateTime),
    rows: arr(
      obj(
        {
          id: str,
          jobId: str,
          rowIndex: int,
          status: enumOf(['onboarded', 'failed']),
          sourceName: nullable(str),
          sourceVersion: nullable(str),
          countryCode: nullable(str),
          nextAction: nullable(str),
          data: { anyOf: [ref('CompanyCreated'), { type: 'object', additionalProperties: str }] },
        },
        { errorCode: nullable(str), errorMessage: nullable(str) },
      ),
    ),
  }),
  DocumentCounts: obj({
    totalCount: int,
    salesCount: int,
    purchaseCount: int,
    companies: arr(obj({ companyId: str, totalCount: int, salesCount: int, purchaseCount: int })),
  }),
};

const op = (o: Omit<OperationObject, 'tags' | 'security'>): OperationObject => ({ ...o, tags: ['Connect'], security: connectSecurity });
const writeParams = [headers.idempotencyKey(), headers.correlationId];

export const connectDocument: FamilyDocument = {
  tag: { name: 'Connect', description: 'Onboard UAE companies, manage sources and branches, read document counts. `X-API-Key` (or Bearer, not both).' },
  schemas,
  paths: {
    '/v3/connect/companies': {
      post: op({
        operationId: 'connectCreateCompany',
        summary: 'Onboard a UAE company',
        parameters: writeParams,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('CompanyCreation'), examples: { acmeErp: { summary: 'A UAE company with its source "Acme ERP" v1 (sandbox)', value: exampleFile('connect-company.json') } } } },
        },
        responses: {
          201: response('Created', envelope(ref('CompanyCreated'))),
          ...errorResponses.connect([400, 403, 404, 409, 413, 415, 500, 503, 504]),
        },
      }),
      get: op({
        operationId: 'connectListCompanies',
        summary: 'List company sources (one item per branch)',
        parameters: [
          { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1 } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'countryCode', in: 'query', schema: { type: 'string', pattern: '^[A-Za-z]{2}$' } },
          { name: 'sourceVersion', in: 'query', schema: text },
          { name: 'status', in: 'query', schema: enumOf(['active', 'inactive']) },
          { name: 'search', in: 'query', schema: text },
        ],
        responses: {
          200: response(
            'A page of sources',
            envelope(arr(ref('CompanyListItem')), {
              pagination: obj({ page: int, limit: int, total: int, totalPages: int, hasMore: bool }),
              filters: obj({ countryCode: nullable(str), sourceVersion: nullable(str), status: nullable(str), search: nullable(str) }),
              sort: obj({ field: constant('updatedAt'), order: constant('desc') }),
            }),
          ),
          ...errorResponses.connect([400, 500, 503]),
        },
      }),
    },
    '/v3/connect/companies/onboarding-jobs': {
      post: op({
        operationId: 'connectOnboardingJob',
        summary: 'Onboard 1 to 500 companies synchronously',
        parameters: writeParams,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: jsonSchemaOf(OnboardingJobBody),
            },
          },
        },
        responses: { 200: response('The job with every row', envelope(ref('OnboardingJob'))), ...errorResponses.connect([400, 403, 409, 413, 415, 500, 503]) },
      }),
    },
    '/v3/connect/companies/{companyId}/branches': {
      post: op({
        operationId: 'connectAddBranch',
        summary: 'Add one branch',
        parameters: [companyId, ...writeParams],
        requestBody: { required: true, content: { 'application/json': { schema: ref('Branch') } } },
        responses: { 201: response('Created', envelope(ref('BranchResult'))), ...errorResponses.connect([400, 403, 404, 409, 413, 415, 500, 503]) },
      }),
    },
    '/v3/connect/companies/{companyId}/branches/bulk': {
      post: op({
        operationId: 'connectAddBranches',
        summary: 'Add 1 to 100 branches (each processed on its own)',
        parameters: [companyId, ...writeParams],
        requestBody: { required: true, content: { 'application/json': { schema: jsonSchemaOf(BranchBulkBody) } } },
        responses: {
          200: response(
            'Mixed results in request order',
            envelope(
              obj({
                companyId: str,
                processed: int,
                succeeded: int,
                failed: int,
                results: arr(
                  obj(
                    { branchName: nullable(str), sourceName: nullable(str), sourceVersion: nullable(str), success: bool },
                    { data: ref('BranchResult'), error: ref('RowError') },
                  ),
                ),
              }),
            ),
          ),
          ...errorResponses.connect([400, 403, 404, 409, 413, 415, 500, 503]),
        },
      }),
    },
    '/v3/connect/companies/{sourceName}': {
      get: op({
        operationId: 'connectGetSource',
        summary: 'Retrieve one source',
        parameters: [sourceName, sourceVersion],
        responses: { 200: response('The source', envelope(ref('CompanySource'))), ...errorResponses.connect([400, 404, 500, 503]) },
      }),
      patch: op({
        operationId: 'connectUpdateSource',
        summary: 'Update a source (send only changes)',
        parameters: [sourceName, sourceVersion, ...writeParams],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: jsonSchemaOf(SourcePatchBody),
            },
          },
        },
        responses: { 200: response('The updated source', envelope(ref('CompanySource'))), ...errorResponses.connect([400, 403, 404, 409, 413, 415, 500, 503]) },
      }),
      delete: op({
        operationId: 'connectArchiveSource',
        summary: 'Archive a source',
        parameters: [sourceName, sourceVersion, ...writeParams],
        responses: {
          200: response('Archived', envelope(obj({ archived: constant(true), companyId: str, sourceName: str }))),
          ...errorResponses.connect([400, 403, 404, 409, 413, 415, 500, 503]),
        },
      }),
    },
    '/v3/connect/invoices/counts': {
      get: op({
        operationId: 'connectDocumentCounts',
        summary: 'Document counts',
        parameters: [
          headers.environment('Data environment; default production', ['sandbox', 'production']),
          { name: 'countryCode', in: 'query', schema: enumOf(['AE', 'SA', 'MY', 'BE', 'DE']) },
          { name: 'companyId', in: 'query', schema: { type: 'string', pattern: '^[0-9a-f]{24}$' } },
          { name: 'documentType', in: 'query', schema: enumOf(['sales', 'purchase', 'purchases', 'tax_invoice', 'credit_note', 'debit_note']) },
          { name: 'from', in: 'query', schema: date },
          { name: 'to', in: 'query', schema: date },
        ],
        responses: {
          200: response(
            'Counts per company',
            envelope(ref('DocumentCounts'), {
              filters: obj({ countryCode: nullable(str), environment: str, companyId: nullable(str), documentType: nullable(str), from: nullable(str), to: nullable(str) }),
            }),
          ),
          ...errorResponses.connect([400, 404, 500, 503]),
        },
      }),
    },
  },
};
