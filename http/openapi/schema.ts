/**
 * Building blocks of the OpenAPI 3.1 document (JSON Schema 2020-12). Response objects are
 * closed (`additionalProperties: false`) so that a field the document does not name fails the
 * response check every HTTP test suite runs; request bodies say what the handlers accept.
 */
import { readFileSync } from 'node:fs';

export type Schema = Record<string, unknown>;

export const str: Schema = { type: 'string' };
export const int: Schema = { type: 'integer' };
export const num: Schema = { type: 'number' };
export const bool: Schema = { type: 'boolean' };
export const dateTime: Schema = { type: 'string', format: 'date-time' };
export const date: Schema = { type: 'string', format: 'date' };
/** Any JSON value. */
export const any: Schema = {};
/** An object whose members the document does not fix (payloads, metadata, country-specific records). */
export const openObject: Schema = { type: 'object' };

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const arr = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
export const enumOf = (values: readonly string[], description?: string): Schema => ({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
export const constant = (value: unknown): Schema => ({ const: value });
export const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
export const describe = (s: Schema, description: string): Schema => ({ ...s, description });

/** A closed object: `required` members must be present, `optional` ones may be. */
export function obj(required: Record<string, Schema>, optional: Record<string, Schema> = {}, extra: Schema = {}): Schema {
  const schema: Schema = {
    type: 'object',
    properties: { ...required, ...optional },
    additionalProperties: false,
    ...extra,
  };
  const names = Object.keys(required);
  if (names.length > 0) schema.required = names;
  return schema;
}

/** An object that accepts members beyond the ones it names (request bodies decoded with io-ts `t.type`). */
export const looseObj = (required: Record<string, Schema>, optional: Record<string, Schema> = {}, extra: Schema = {}): Schema => ({
  ...obj(required, optional, extra),
  additionalProperties: true,
});

export interface ParameterObject {
  name: string;
  in: 'query' | 'header' | 'path';
  required?: boolean;
  description?: string;
  schema: Schema;
  example?: unknown;
}

export interface MediaType {
  schema: Schema;
  example?: unknown;
  examples?: Record<string, { summary: string; description?: string; value: unknown }>;
}

/** A runnable request from the repository's `examples/` folder (the same files the docs use). */
export function exampleFile(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8'));
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, { description?: string; schema: Schema; required?: boolean }>;
  content?: Record<string, MediaType>;
}

export interface OperationObject {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: ParameterObject[];
  requestBody?: { required?: boolean; description?: string; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
}

export type PathItem = Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', OperationObject>>;

/** What one API family contributes to the document: one local file per family. */
export interface FamilyDocument {
  tag: { name: string; description: string };
  paths: Record<string, PathItem>;
  schemas?: Record<string, Schema>;
}

export const json = (schema: Schema, example?: unknown): Record<string, MediaType> => ({
  'application/json': example === undefined ? { schema } : { schema, example },
});

export const response = (description: string, schema: Schema, example?: unknown, headers?: ResponseObject['headers']): ResponseObject => ({
  description,
  content: json(schema, example),
  ...(headers ? { headers } : {}),
});

// Parameters shared by several families (docs/api/http.md).
export const headers = {
  idempotencyKey: (required = false): ParameterObject => ({
    name: 'Idempotency-Key',
    in: 'header',
    required,
    description: 'A retry with the same key and payload returns the original answer (`Idempotent-Replayed: true`); the same key with another payload is 409.',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
  }),
  correlationId: {
    name: 'X-Correlation-Id',
    in: 'header',
    description: 'Caller correlation id recorded with the events of a write (ignored on reads and exports).',
    schema: { type: 'string', maxLength: 200 },
  } as ParameterObject,
  requestId: {
    name: 'X-Request-Id',
    in: 'header',
    description: 'Echoed on the response when sane; otherwise the service assigns one.',
    schema: { type: 'string', maxLength: 200 },
  } as ParameterObject,
  environment: (description: string, values: readonly string[]): ParameterObject => ({
    name: 'X-Environment',
    in: 'header',
    description: `${description}. Without the header the request acts on production data, and the answer carries \`X-Environment-Assumed: production\`.`,
    schema: { type: 'string', enum: [...values] },
  }),
};

export const requestIdHeader = { 'X-Request-Id': { description: 'The request id (also in error bodies).', schema: str, required: true } };
