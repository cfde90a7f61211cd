/**
 * The OpenAPI 3.1 document, assembled from one file per API family (`http/<family>/openapi.ts`).
 * Adding a family's operations is one entry in FAMILY_DOCUMENTS. Tests hold it true: every
 * route the routers register is documented and every documented operation exists, every
 * response the HTTP suites receive validates against it, and it passes an OpenAPI 3.1 validator.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { connectDocument } from '../connect/openapi.js';
import { creditsDocument } from '../credits/openapi.js';
import { documentsDocument } from '../documents/openapi.js';
import { purchasesDocument } from '../documents/purchases-openapi.js';
import { queryDocument } from '../query/openapi.js';
import { unifyDocument } from '../unify/openapi.js';
import { webhooksDocument } from '../webhooks/openapi.js';
import { errorSchemas } from './errors.js';
import type { FamilyDocument, PathItem, Schema } from './schema.js';
import { systemDocument } from './system.js';
import { webhookSchemas, webhooks } from './webhooks.js';

export const FAMILY_DOCUMENTS: readonly FamilyDocument[] = [
  unifyDocument,
  documentsDocument,
  purchasesDocument,
  queryDocument,
  connectDocument,
  creditsDocument,
  webhooksDocument,
  systemDocument,
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
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'E-invoicing ledger service',
      version: '3.0.0',
      description:
        'Submission, delivery and status of tax documents; Connect company onboarding; credit allowances (internal sandbox preview). Every error uses its API family\'s envelope (SPEC section 7). Every response carries `X-Request-Id`.',
    },
    servers: [{ url: '/' }],
    // One tag per name (two files of the Documents family share theirs; the first description wins).
    tags: [...new Map(FAMILY_DOCUMENTS.map((f) => [f.tag.name, f.tag] as const)).values(), { name: 'Credit webhooks', description: 'HTTP callbacks for credit activity (SPEC 6.1).' }, { name: 'Purchase webhooks', description: 'The callback announcing a stored purchase invoice (SPEC 6).' }],
    paths,
    webhooks: webhooks(),
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API_KEY>` (Unify, Documents; also accepted by Connect and credits).' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: '`X-API-Key: <API_KEY>` (Connect and credits; send one header, not both).' },
      },
    },
  };
  return cached;
}
