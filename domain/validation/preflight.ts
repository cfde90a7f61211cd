/**
 * The preflight: a walk of the document against the core shape (schema.ts) that reports every
 * value of the wrong type, before any rule runs. Absent and null values are not checked
 * (rules decide whether they are required), except array elements, which must be present.
 *
 * The shape is compiled once, at module load, into a specialised walk (see `generate`).
 */
import { isRecord, type PathSegment } from './paths.js';
import { coreDocumentSchema, type SchemaNode } from './schema.js';

const K_STRING = 0;
const K_NUMBER = 1;
const K_BOOLEAN = 2;
const K_SCALAR = 3;
const K_VALUE = 4;
const K_CONTAINER = 5;
const K_OBJECT = 6;
const K_ARRAY = 7;
const K_FLAT = 8;
const LAST_LEAF = K_CONTAINER;

interface PNode {
  readonly kind: number;
  /** What the value must be, in words ("a string", "an array"). */
  readonly expected: string;
  readonly names: readonly string[];
  readonly children: readonly PNode[];
  readonly of: PNode | null;
}

const KINDS: Record<SchemaNode['kind'], number> = {
  string: K_STRING,
  number: K_NUMBER,
  boolean: K_BOOLEAN,
  scalar: K_SCALAR,
  value: K_VALUE,
  container: K_CONTAINER,
  object: K_OBJECT,
  array: K_ARRAY,
  flat: K_FLAT,
};

const EXPECTED: Record<string, string> = {
  string: 'a string',
  date: 'a date string (YYYY-MM-DD)',
  number: 'a finite number',
  boolean: 'a boolean',
  scalar: 'a string or a number',
  value: 'a string, number or boolean',
  object: 'an object',
  array: 'an array',
  flat: 'an object of string, number or boolean values',
  container: 'an object or an array',
};

function compile(node: SchemaNode): PNode {
  const entries = node.kind === 'object' ? Object.entries(node.fields) : [];
  return {
    kind: KINDS[node.kind],
    expected: EXPECTED[node.kind === 'string' && node.label === 'date' ? 'date' : node.kind]!,
    names: entries.map(([name]) => name),
    children: entries.map(([, child]) => compile(child)),
    of: node.kind === 'array' ? compile(node.of) : null,
  };
}

const DOCUMENT = compile(coreDocumentSchema);

/** Where the walk reports: a counter, the current path, and the type errors. */
export interface PreflightSink {
  preflightChecks: number;
  readonly stack: PathSegment[];
  /** The value at `stack` is not `expected`. */
  typeError(expected: string, value: unknown): void;
}

/** How a value is described in a type error ("a number", "an array", "null", "NaN"). */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'absent';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Walks a document (an object) against the core shape. */
export function preflight(document: Record<string, unknown>, sink: PreflightSink): void {
  ROOT(document, sink);
}

// The walk is generated once, at module load, from the compiled shape: one function per object
// and array node with every property name a constant. Named property loads keep V8's inline
// caches monomorphic, which a generic walk (value[name] with a varying name) cannot; this makes
// the preflight several times faster. The generated code only reads properties and calls the sink.

type Walker = (value: unknown, sink: PreflightSink) => void;

const LEAF_TEST: Record<number, (x: string) => string> = {
  [K_STRING]: (x) => `typeof ${x} === "string"`,
  [K_NUMBER]: (x) => `(typeof ${x} === "number" && ${x} - ${x} === 0)`,
  [K_BOOLEAN]: (x) => `typeof ${x} === "boolean"`,
  [K_SCALAR]: (x) => `(typeof ${x} === "string" || (typeof ${x} === "number" && ${x} - ${x} === 0))`,
  [K_VALUE]: (x) => `(typeof ${x} === "string" || typeof ${x} === "boolean" || (typeof ${x} === "number" && ${x} - ${x} === 0))`,
  [K_CONTAINER]: (x) => `(typeof ${x} === "object" && ${x} !== null)`,
};

function generate(root: PNode): Walker {
  const functions: string[] = [];
  const expected: string[] = [];
  const exp = (text: string) => {
    let i = expected.indexOf(text);
    if (i < 0) i = expected.push(text) - 1;
    return `E[${i}]`;
  };
  /** Code checking the value in variable `x` against `node`; `key` is its name or index (code). */
  const check = (node: PNode, x: string, key: string): string => {
    if (node.kind <= LAST_LEAF) return `s.preflightChecks++; if (!(${LEAF_TEST[node.kind]!(x)})) { s.stack.push(${key}); s.typeError(${exp(node.expected)}, ${x}); s.stack.pop(); }`;
    const walk = node.kind === K_FLAT ? `walkFlat(${x}, s);` : `F[${fn(node)}](${x}, s);`;
    return `s.stack.push(${key}); ${walk} s.stack.pop();`;
  };
  /** A function walking an object or array node; returns its index in F. */
  const fn = (node: PNode): number => {
    const index = functions.push('') - 1;
    let body = 's.preflightChecks++;\n';
    if (node.kind === K_OBJECT) {
      body += `if (typeof v !== "object" || v === null || isArray(v)) { s.typeError(${exp(node.expected)}, v); return; }\nvar x;\n`;
      node.names.forEach((name, i) => {
        const key = JSON.stringify(name);
        body += `x = v[${key}];\nif (x !== undefined && x !== null) { ${check(node.children[i]!, 'x', key)} }\n`;
      });
    } else {
      const of = node.of!;
      body +=
        `if (!isArray(v)) { s.typeError(${exp(node.expected)}, v); return; }\n` +
        `for (var i = 0; i < v.length; i++) {\n  var y = v[i];\n` +
        `  if (y === undefined || y === null) { s.preflightChecks++; s.stack.push(i); s.typeError(${exp(of.expected)}, y); s.stack.pop(); }\n` +
        `  else { ${check(of, 'y', 'i')} }\n}\n`;
    }
    functions[index] = `function (v, s) {\n${body}}`;
    return index;
  };
  const rootIndex = fn(root);
  const source = `"use strict";\nvar F = [\n${functions.join(',\n')}\n];\nreturn F[${rootIndex}];`;
  return new Function('E', 'isArray', 'walkFlat', source)(expected, Array.isArray, walkFlat) as Walker;
}

/** The walk of a flat map (extensions): any names, scalar values. */
function walkFlat(v: unknown, sink: PreflightSink): void {
  sink.preflightChecks++;
  if (!isRecord(v)) {
    sink.typeError(EXPECTED['flat']!, v);
    return;
  }
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const x = v[key];
    if (x === undefined || x === null) continue;
    sink.preflightChecks++;
    const t = typeof x;
    if (t === 'string' || t === 'boolean' || (t === 'number' && Number.isFinite(x))) continue;
    sink.stack.push(key);
    sink.typeError(EXPECTED['value']!, x);
    sink.stack.pop();
  }
}

const ROOT = generate(DOCUMENT);
