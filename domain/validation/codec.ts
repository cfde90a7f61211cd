/**
 * The core document's io-ts codec and JSON Schema, derived from its one description
 * (`coreDocumentSchema` in schema.ts). The same description drives the preflight (the structural
 * layer of the validator), the requirements catalogue, this codec, the OpenAPI document's
 * `payload` schema and the unknown-field warnings: a field added there appears in all of them.
 *
 * `null` means absent everywhere, so every member accepts null. Objects are closed in the JSON
 * Schema (a generated client refuses a misspelt name at compile time); the service itself still
 * accepts an unknown member and answers it with a warning (`unknownFields`).
 */
import * as t from 'io-ts';
import { closest, distance } from 'fastest-levenshtein';
import { annotate, jsonSchemaOf, type JsonSchema } from '../schema/json-schema.js';
import { formatPath, isRecord, type PathSegment } from './paths.js';
import { coreDocumentSchema, type SchemaNode } from './schema.js';

const value = t.union([t.string, t.number, t.boolean]);
const date = annotate(t.string, { format: 'date', description: 'YYYY-MM-DD' });
const code = annotate(t.string, { description: 'a code from the field\'s code list (ISO 3166 country, ISO 4217 currency, emirate, frequency)' });

/** The io-ts codec of a node of the description. */
export function codecOf(node: SchemaNode): t.Mixed {
  switch (node.kind) {
    case 'string':
      return node.label === 'date' ? date : node.label === 'code' ? code : t.string;
    case 'number':
      return t.number;
    case 'boolean':
      return t.boolean;
    case 'scalar':
      return t.union([t.string, t.number]);
    case 'value':
      return value;
    case 'container':
      return t.union([t.UnknownRecord, t.UnknownArray]);
    case 'array':
      return t.array(codecOf(node.of));
    case 'flat':
      return annotate(t.exact(t.partial(Object.fromEntries(node.known.map((name) => [name, t.union([value, t.null])])))), {
        description: 'A flat map of string, number or boolean values; the names listed are the ones the service reads.',
      });
    case 'object':
      return t.exact(t.partial(Object.fromEntries(Object.entries(node.fields).map(([name, child]) => [name, t.union([codecOf(child), t.null])]))));
  }
}

/** The core document (the `payload` of a new-format submission with the identity mapping). */
export const CoreDocumentCodec = codecOf(coreDocumentSchema);
export type CoreDocument = t.TypeOf<typeof CoreDocumentCodec>;

/** The JSON Schema of the core document (OpenAPI 3.1 dialect). */
export function coreDocumentJsonSchema(): JsonSchema {
  const schema = jsonSchemaOf(CoreDocumentCodec);
  // The root itself is an object, never null.
  return { ...schema, type: 'object' };
}

/** A member of the payload that the service does not read. */
export interface UnknownField {
  /** Where it is (`header.buyerReferance`, `lineItems[0].nmae`). */
  path: string;
  segments: PathSegment[];
  /** The known name at the same place closest to it (Levenshtein), or null where nothing is known. */
  closest: string | null;
  distance: number | null;
}

/** At most this many unknown fields are reported (a mistake repeated on every line stays short). */
export const MAX_UNKNOWN_FIELDS = 50;

/** Every member of `document` the description does not name, with the closest known name. */
export function unknownFields(document: unknown, root: SchemaNode = coreDocumentSchema): UnknownField[] {
  const out: UnknownField[] = [];
  // The path as a chain to the parent, made into an array only for an unknown member (most
  // documents have none): no array per visited value.
  const walk = (node: SchemaNode, v: unknown, path: LinkedPath | null) => {
    if (out.length >= MAX_UNKNOWN_FIELDS || v === null || v === undefined) return;
    if (node.kind === 'array') {
      if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(node.of, v[i], { up: path, segment: i });
      return;
    }
    if ((node.kind !== 'object' && node.kind !== 'flat') || !isRecord(v)) return;
    for (const name of Object.keys(v)) {
      if (node.kind === 'object' && Object.hasOwn(node.fields, name)) {
        walk(node.fields[name]!, v[name], { up: path, segment: name });
        continue;
      }
      if (node.kind === 'flat' && node.known.includes(name)) continue;
      if (out.length >= MAX_UNKNOWN_FIELDS) return;
      const known = node.kind === 'object' ? Object.keys(node.fields) : node.known;
      const near = known.length > 0 ? closest(name, known) : null;
      const segments = segmentsOf({ up: path, segment: name });
      out.push({ path: formatPath(segments), segments, closest: near, distance: near === null ? null : distance(name, near) });
    }
  };
  walk(root, document, null);
  return out;
}

interface LinkedPath {
  readonly up: LinkedPath | null;
  readonly segment: PathSegment;
}

function segmentsOf(path: LinkedPath | null): PathSegment[] {
  const segments: PathSegment[] = [];
  for (let at = path; at !== null; at = at.up) segments.push(at.segment);
  return segments.reverse();
}

/** Whether `candidate` is plausibly a misspelling of `name` (a near miss, not just the nearest). */
export function isNearMiss(candidate: string, name: string): boolean {
  const d = distance(candidate.toLowerCase(), name.toLowerCase());
  return d <= Math.max(2, Math.floor(name.length / 4));
}
