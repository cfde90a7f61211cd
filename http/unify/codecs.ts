/**
 * The request bodies of the new Unify format, as io-ts codecs: the handler decodes with them and
 * the OpenAPI document shows their derived JSON Schema (domain/schema/json-schema.ts), so the two
 * cannot disagree. The envelope is closed: an unknown member is refused with its path. The
 * `payload` is the core document (domain/validation/codec.ts): at run time any object is taken
 * (its problems are the 422's findings, its unknown members the 200's warnings); the document
 * describes the members the service reads.
 */
import * as t from 'io-ts';
import { annotate } from '../../domain/schema/json-schema.js';
import { DOCUMENT_BASES, DOCUMENT_MODIFIERS, DOCUMENT_VARIANTS, supportedCountries } from '../../domain/validation/index.js';
import { JsonObject, NonEmptyObject, NonEmptyString, oneOf } from '../decode.js';

export const DocumentTypeCodec = t.exact(
  t.intersection([
    t.type({
      base: annotate(NonEmptyString, { enum: [...DOCUMENT_BASES] }),
      modifiers: annotate(t.array(t.string), { items: { type: 'string', enum: [...DOCUMENT_MODIFIERS] }, description: 'May be empty.' }),
    }),
    t.partial({ variant: annotate(t.union([t.string, t.null]), { anyOf: [{ type: 'string', enum: [...DOCUMENT_VARIANTS] }, { type: 'null' }], description: 'Absent or null: `standard`.' }) }),
  ]),
);

export const NewSubmission = t.exact(
  t.type({
    country: annotate(NonEmptyString, { enum: [...supportedCountries], description: 'ISO 3166-1 alpha-2 code of a supported country.' }),
    environment: annotate(NonEmptyString, { enum: ['sandbox', 'production'], description: 'Must match the key\'s environment.' }),
    purpose: annotate(NonEmptyString, { const: 'invoicing' }),
    source: annotate(NonEmptyString, { description: '`name:version` of one of the workspace\'s sources.', examples: ['erp:1'] }),
    documentType: DocumentTypeCodec,
    payload: annotate(JsonObject, { $ref: '#/components/schemas/CoreDocument' }),
  }),
);
export type NewSubmission = t.TypeOf<typeof NewSubmission>;

/** Several new-format submissions in one request; each item is answered on its own. */
export const NewBatch = t.exact(t.type({ invoices: annotate(t.array(annotate(JsonObject, { $ref: '#/components/schemas/UnifySubmission' })), { minItems: 1 }) }));

// The earlier, action-based format (no `new-api` header): `action: submit` and `action: list`.
export const EARLIER_ENVIRONMENTS = ['sandbox', 'simulation', 'production', 'prod'] as const;
const ENVIRONMENTS = EARLIER_ENVIRONMENTS;
const EARLIER_COUNTRIES = ['SA', 'MY', 'BE', 'AE', 'SG', 'DE'] as const;

export const LogicalDocumentType = t.union([
  NonEmptyString,
  t.intersection([t.type({ base: NonEmptyString }), t.partial({ modifiers: t.array(t.string), variant: t.union([t.string, t.null]) })]),
]);

export const SubmitRequest = t.intersection([
  t.type({
    action: t.literal('submit'),
    purpose: oneOf(['invoicing', 'MAPPING'] as const, 'purpose'),
    env: oneOf(ENVIRONMENTS, 'env'),
    defaults: t.intersection([
      t.type({
        // SG is a country of the format but has no rule sets: decoded, then refused (not in the document).
        country: annotate(oneOf(EARLIER_COUNTRIES, 'country'), { enum: [...supportedCountries] }),
        logicalDocumentType: LogicalDocumentType,
        source: t.type({ name: NonEmptyString, version: NonEmptyString }),
      }),
      t.partial({ destinations: t.array(t.intersection([t.type({ type: NonEmptyString }), t.UnknownRecord])) }),
    ]),
    invoices: annotate(
      t.array(
        t.intersection([
          t.type({ payload: NonEmptyObject }),
          t.partial({ externalId: t.union([t.string, t.null]), logicalDocumentType: LogicalDocumentType }),
        ]),
      ),
      { minItems: 1, maxItems: 10 },
    ),
  }),
  t.partial({ options: t.partial({ continueOnError: t.boolean, submitToGovernment: t.boolean }) }),
]);

export const ListRequest = t.intersection([
  t.type({
    action: t.literal('list'),
    env: oneOf(ENVIRONMENTS, 'env'),
    filters: t.intersection([t.type({ uuid: NonEmptyString, documentId: NonEmptyString }), t.partial({ country: t.literal('MY') })]),
  }),
  t.partial({ page: annotate(t.number, { type: 'integer', minimum: 1 }), limit: annotate(t.number, { type: 'integer', minimum: 1, maximum: 100 }), sort: annotate(t.string, { enum: ['createdAt:desc', 'createdAt:asc'] }) }),
]);
