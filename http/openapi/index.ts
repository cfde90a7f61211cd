/**
 * The OpenAPI 3.1 document, assembled from one file per API family (`http/<family>/openapi.ts`).
 * Adding a family's operations is one entry in FAMILY_DOCUMENTS. Tests hold it true: every
 * route the routers register is documented and every documented operation exists, every
 * response the HTTP suites receive validates against it, and it passes an OpenAPI 3.1 validator.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { as4Document } from '../as4/openapi.js';
import { connectDocument } from '../connect/openapi.js';
import { creditsDocument } from '../credits/openapi.js';
import { documentsDocument } from '../documents/openapi.js';
import { purchasesDocument } from '../documents/purchases-openapi.js';
import { responsesDocument } from '../documents/responses-openapi.js';
import { queryDocument } from '../query/openapi.js';
import { unifyDocument } from '../unify/openapi.js';
import { participantsDocument } from '../unify/participants-openapi.js';
import { webhooksDocument } from '../webhooks/openapi.js';
import { errorSchemas } from './errors.js';
import type { FamilyDocument, OperationObject, PathItem, ResponseObject, Schema } from './schema.js';
import { systemDocument } from './system.js';
import { webhookSchemas, webhooks } from './webhooks.js';

export const FAMILY_DOCUMENTS: readonly FamilyDocument[] = [
  unifyDocument,
  participantsDocument,
  documentsDocument,
  purchasesDocument,
  responsesDocument,
  queryDocument,
  connectDocument,
  creditsDocument,
  webhooksDocument,
  systemDocument,
  // Last: for other Peppol access points, not for integrators.
  as4Document,
];

let cached: Record<string, unknown> | null = null;

/**
 * Examples recorded from real responses of the HTTP test suites (`examples.json`, keyed
 * `<method> <path> <status>`), attached where a family file gives none. Every example is
 * checked against its schema by the document test.
 */
function attachRecordedExamples(paths: Record<string, PathItem>): void {
  const file = fileURLToPath(new URL('./examples.json', import.meta.url));
  if (!existsSync(file)) return;
  const examples = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  for (const [key, example] of Object.entries(examples)) {
    const [method, path, status] = key.split(' ') as [keyof PathItem, string, string];
    const media = paths[path]?.[method]?.responses[status]?.content?.['application/json'];
    if (media && media.example === undefined) media.example = example;
  }
}

type HeaderObject = NonNullable<ResponseObject['headers']>[string];

/** The response headers the service sends, declared once here for every operation they apply to. */
export const RESPONSE_HEADERS: Record<string, HeaderObject> = {
  'X-Request-Id': { description: 'The request id: the caller\'s `X-Request-Id` when sane, otherwise one the service assigns (also in error bodies).', schema: { type: 'string' }, required: true },
  'Idempotent-Replayed': { description: '`true` when this is the recorded answer of an earlier request with the same `Idempotency-Key` and payload.', schema: { const: 'true' } },
  Location: { description: 'The URL of the created resource.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying (rate limit, write limit, write conflict).', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'WWW-Authenticate': {
    description: 'RFC 6750 challenge: `Bearer realm=\"einvoicing\"`, with `error_description` saying what is expected (e.g. that a Bearer-only API does not read `X-API-Key`).',
    schema: { type: 'string', pattern: '^Bearer ' },
  },
  'X-Environment-Assumed': { description: 'Sent when the request had no `X-Environment` header: it acted on `production` data, the default.', schema: { const: 'production' } },
  ETag: { description: 'The quoted version of the resource (use it in `If-Match`).', schema: { type: 'string' } },
};

/** Attaches the response headers to the responses they appear on (one rule per header). */
function declareResponseHeaders(paths: Record<string, PathItem>): void {
  for (const [path, item] of Object.entries(paths)) {
    for (const op of Object.values(item) as OperationObject[]) {
      const params = new Set((op.parameters ?? []).map((p) => p.name));
      for (const [status, res] of Object.entries(op.responses)) {
        const h: Record<string, HeaderObject> = { ...(res.headers ?? {}), 'X-Request-Id': RESPONSE_HEADERS['X-Request-Id']! };
        if (status === '401') h['WWW-Authenticate'] = RESPONSE_HEADERS['WWW-Authenticate']!;
        if (status === '429' || status === '503' || status === '409') h['Retry-After'] = RESPONSE_HEADERS['Retry-After']!;
        if (params.has('Idempotency-Key')) h['Idempotent-Replayed'] = RESPONSE_HEADERS['Idempotent-Replayed']!;
        if (params.has('X-Environment')) h['X-Environment-Assumed'] = RESPONSE_HEADERS['X-Environment-Assumed']!;
        if (status === '201') h.Location = RESPONSE_HEADERS.Location!;
        if (path.startsWith('/v3/connect/credits') && status.startsWith('2')) h.ETag = RESPONSE_HEADERS.ETag!;
        op.responses[status] = { ...res, headers: h };
      }
    }
  }
}

export function openApiDocument(): Record<string, unknown> {
  if (cached) return cached;
  const paths: Record<string, PathItem> = {};
  const schemas: Record<string, Schema> = { ...errorSchemas, ...webhookSchemas };
  for (const family of FAMILY_DOCUMENTS) {
    for (const [path, item] of Object.entries(family.paths)) {
      if (paths[path]) throw new Error(`path ${path} is documented twice`);
      paths[path] = item;
    }
    for (const [name, schema] of Object.entries(family.schemas ?? {})) {
      if (schemas[name]) throw new Error(`schema ${name} is defined twice`);
      schemas[name] = schema;
    }
  }
  attachRecordedExamples(paths);
  declareResponseHeaders(paths);
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'E-invoicing ledger service',
      version: '3.0.0',
      description:
        'Submission, delivery and status of tax documents; Connect company onboarding; credit allowances (internal sandbox preview). Every error uses its API family\'s envelope. Every response carries `X-Request-Id`. A method a path does not serve is answered 405 in the family\'s error envelope (`components.responses.MethodNotAllowed`). Limits on request sizes: a JSON body larger than the service accepts (`BODY_LIMIT_BYTES`, 5 MB by default) is answered 413 in the family\'s error envelope; the operations that take a body list it.',
    },
    servers: [{ url: '/' }],
    // One tag per name (two files of the Documents family share theirs; the first description wins).
    // Only tags with operations under `paths`: the callbacks are listed under `webhooks`, not as empty tag sections.
    tags: [...new Map(FAMILY_DOCUMENTS.map((f) => [f.tag.name, f.tag] as const)).values()],
    paths,
    webhooks: webhooks(),
    components: {
      schemas,
      responses: {
        MethodNotAllowed: {
          description:
            'The path exists but not with this method: 405 in the family\'s error envelope (code `CONNECT_METHOD_NOT_ALLOWED`, `method_not_allowed` or `METHOD_NOT_ALLOWED`).',
          headers: { 'X-Request-Id': RESPONSE_HEADERS['X-Request-Id'] },
          content: { 'application/json': { schema: { anyOf: ['ConnectError', 'UnifyError', 'EarlierError', 'DocumentsError', 'SystemError'].map((n) => ({ $ref: `#/components/schemas/${n}` })) } } },
        },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API_KEY>` (Unify, Documents; also accepted by Connect and credits).' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: '`X-API-Key: <API_KEY>` (Connect and credits; send one header, not both).' },
      },
    },
  };
  return cached;
}
