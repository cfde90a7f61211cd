/**
 * JSON Schema (2020-12, the dialect of OpenAPI 3.1) derived from io-ts codecs, so that a request
 * body's codec is the one description of it: the handler decodes with the codec and the OpenAPI
 * document shows `jsonSchemaOf(codec)`.
 *
 * The deriver reads io-ts's type tags (`InterfaceType`, `PartialType`, `IntersectionType`,
 * `ExactType`, `UnionType`, `ArrayType`, `LiteralType`, `KeyofType`, `DictionaryType`, the
 * primitives). A hand-made `t.Type` (a refinement written as a class, such as a non-empty string)
 * has no tag: `annotate` gives it its schema. `t.exact` / `t.strict` objects are closed
 * (`additionalProperties: false`); `t.type` / `t.partial` objects are open.
 */
import * as t from 'io-ts';

export type JsonSchema = Record<string, unknown>;

const annotations = new WeakMap<t.Mixed, JsonSchema>();

/**
 * A copy of `codec` (same decoding) whose derived schema is `schema`, merged over what the
 * deriver finds for `codec` (a description, an enum, a format, a length bound).
 */
export function annotate<C extends t.Mixed>(codec: C, schema: JsonSchema): C {
  const copy = Object.create(Object.getPrototypeOf(codec) as object, Object.getOwnPropertyDescriptors(codec)) as C;
  annotations.set(copy, { ...(annotations.get(codec) ?? deriveTagged(codec)), ...schema });
  return copy;
}

/** Gives a hand-made codec (one without an io-ts tag) its schema, in place. */
export function describeCodec<C extends t.Mixed>(codec: C, schema: JsonSchema): C {
  annotations.set(codec, schema);
  return codec;
}

type Tagged = t.Mixed & { _tag?: string };

const isObjectSchema = (s: JsonSchema): boolean => s.type === 'object' && s.properties !== undefined && s.anyOf === undefined && s.allOf === undefined;

/** `X` or null, compactly: `type: [X, "null"]` where X has a single type. */
function orNull(s: JsonSchema): JsonSchema {
  if (typeof s.type === 'string' && s.enum === undefined && s.const === undefined) return { ...s, type: [s.type, 'null'] };
  return { anyOf: [s, { type: 'null' }] };
}

function deriveTagged(codec: Tagged): JsonSchema {
  const c = codec as any;
  switch (codec._tag) {
    case 'StringType':
      return { type: 'string' };
    case 'NumberType':
      return { type: 'number' };
    case 'BooleanType':
      return { type: 'boolean' };
    case 'NullType':
      return { type: 'null' };
    case 'UnknownType':
    case 'AnyType':
      return {};
    case 'UnknownRecordType':
    case 'AnyDictionaryType':
      return { type: 'object' };
    case 'UnknownArrayType':
    case 'AnyArrayType':
      return { type: 'array' };
    case 'LiteralType':
      return { const: c.value };
    case 'KeyofType':
      return { type: 'string', enum: Object.keys(c.keys) };
    case 'ArrayType':
    case 'ReadonlyArrayType':
      return { type: 'array', items: jsonSchemaOf(c.type) };
    case 'ReadonlyType':
    case 'RefinementType':
      return jsonSchemaOf(c.type);
    case 'DictionaryType':
      return { type: 'object', additionalProperties: jsonSchemaOf(c.codomain) };
    case 'InterfaceType':
    case 'PartialType': {
      const properties: JsonSchema = {};
      for (const [name, child] of Object.entries(c.props as Record<string, t.Mixed>)) properties[name] = jsonSchemaOf(child);
      const names = Object.keys(properties);
      return { type: 'object', properties, ...(codec._tag === 'InterfaceType' && names.length > 0 ? { required: names } : {}) };
    }
    case 'ExactType':
      return { ...jsonSchemaOf(c.type), additionalProperties: false };
    case 'IntersectionType': {
      const parts = (c.types as t.Mixed[]).map(jsonSchemaOf);
      if (parts.every(isObjectSchema)) {
        const properties = Object.assign({}, ...parts.map((p) => p.properties as JsonSchema)) as JsonSchema;
        const required = parts.flatMap((p) => (p.required as string[] | undefined) ?? []);
        const closed = parts.every((p) => p.additionalProperties === false);
        return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), ...(closed ? { additionalProperties: false } : {}) };
      }
      return { allOf: parts };
    }
    case 'UnionType': {
      const members = c.types as Tagged[];
      const nonNull = members.filter((m) => m._tag !== 'NullType');
      const hasNull = nonNull.length < members.length;
      let schema: JsonSchema;
      if (nonNull.length > 0 && nonNull.every((m) => m._tag === 'LiteralType' && typeof (m as any).value === 'string')) {
        schema = { type: 'string', enum: nonNull.map((m) => (m as any).value as string) };
      } else if (nonNull.length === 1) {
        schema = jsonSchemaOf(nonNull[0]!);
      } else {
        const parts = nonNull.map(jsonSchemaOf);
        const simple = parts.every((p) => Object.keys(p).length === 1 && typeof p.type === 'string');
        schema = simple ? { type: parts.map((p) => p.type) } : { anyOf: parts };
      }
      if (!hasNull) return schema;
      if (Array.isArray(schema.type)) return { ...schema, type: [...(schema.type as string[]), 'null'] };
      if (schema.enum) return { anyOf: [schema, { type: 'null' }] };
      return orNull(schema);
    }
    default:
      throw new Error(`no JSON Schema for the codec ${codec.name}: give it one with describeCodec or annotate`);
  }
}

/** The JSON Schema of a codec. */
export function jsonSchemaOf(codec: t.Mixed): JsonSchema {
  const annotated = annotations.get(codec);
  if (annotated) return structuredClone(annotated);
  return deriveTagged(codec as Tagged);
}

/**
 * The members of `value` that a closed object (`t.exact` / `t.strict`) of `codec` does not name,
 * as paths: a request envelope refuses them. Nested codecs are followed through objects,
 * intersections, arrays, refinements and annotations.
 */
export function unknownMembers(codec: t.Mixed, value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const c = codec as any;
  const tag = (codec as Tagged)._tag;
  const out: (string | number)[][] = [];
  const isObj = value !== null && typeof value === 'object' && !Array.isArray(value);
  switch (tag) {
    case 'ExactType': {
      out.push(...unknownMembers(c.type, value, path));
      if (isObj) {
        const known = new Set(propsOf(c.type));
        for (const name of Object.keys(value as object)) if (!known.has(name)) out.push([...path, name]);
      }
      return out;
    }
    case 'InterfaceType':
    case 'PartialType':
      if (isObj) for (const [name, child] of Object.entries(c.props as Record<string, t.Mixed>)) if (name in (value as object)) out.push(...unknownMembers(child, (value as Record<string, unknown>)[name], [...path, name]));
      return out;
    case 'IntersectionType': {
      const types = c.types as t.Mixed[];
      // A closed intersection: every part exact; the names of all parts together are known.
      if (types.every((p) => (p as Tagged)._tag === 'ExactType')) {
        for (const p of types) out.push(...unknownMembers((p as any).type, value, path));
        if (isObj) {
          const known = new Set(types.flatMap((p) => propsOf((p as any).type)));
          for (const name of Object.keys(value as object)) if (!known.has(name)) out.push([...path, name]);
        }
        return out;
      }
      for (const p of types) out.push(...unknownMembers(p, value, path));
      return out;
    }
    case 'ArrayType':
    case 'ReadonlyArrayType':
      if (Array.isArray(value)) value.forEach((item, i) => out.push(...unknownMembers(c.type, item, [...path, i])));
      return out;
    case 'RefinementType':
    case 'ReadonlyType':
      return unknownMembers(c.type, value, path);
    default:
      return out;
  }
}

/** The member names an object codec (or an intersection of them, exact or not) declares. */
export function memberNames(codec: t.Mixed): string[] {
  return propsOf(codec);
}

function propsOf(codec: t.Mixed): string[] {
  const c = codec as any;
  switch ((codec as Tagged)._tag) {
    case 'InterfaceType':
    case 'PartialType':
      return Object.keys(c.props);
    case 'IntersectionType':
      return (c.types as t.Mixed[]).flatMap(propsOf);
    case 'ExactType':
    case 'RefinementType':
    case 'ReadonlyType':
      return propsOf(c.type);
    default:
      return [];
  }
}
