/**
 * The response check every HTTP suite runs (through `call` in http.ts): each response is
 * validated with ajv (JSON Schema 2020-12) against the OpenAPI document's schema for its
 * operation, status and content type. An undocumented operation, status, content type or
 * field fails the test that received it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument, RESPONSE_HEADERS } from '../../http/openapi/index.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** Routes mounted only by tests (test/support/test-routes.ts): not part of the service's interface. */
const TEST_ONLY_PREFIXES = ['/v3/connect/test/', '/v3/connect/effect-test/'];

/** Where no operation is documented (unknown route, wrong method), the family's error answers. */
const FAMILY_ERRORS: [string, string[], boolean][] = [
  ['/v3/connect', ['ConnectError', 'AuthFailure'], true],
  ['/api/v3/unify', ['UnifyError', 'EarlierError', 'UnifyUnauthorized'], false],
  ['/api/v3/documents', ['DocumentsError', 'AuthFailure'], true],
  ['/invoices/query', ['DocumentsError', 'AuthFailure'], false],
  ['/', ['SystemError', 'AuthFailure'], false],
];

type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } };

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', 'https://openapi.invalid/components#/$defs/') : rewriteRefs(v);
    }
    return out;
  }
  return value;
}

let state: { ajv: Ajv2020; doc: Doc; templates: { template: string; regex: RegExp; params: number }[] } | null = null;
const compiled = new Map<string, ValidateFunction>();

function setup() {
  if (state) return state;
  const doc = rewriteRefs(openApiDocument()) as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'https://openapi.invalid/components', $defs: doc.components.schemas });
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    params: (template.match(/\{/g) ?? []).length,
  }));
  templates.sort((a, b) => a.params - b.params);
  state = { ajv, doc, templates };
  return state;
}

function validatorFor(key: string, schema: unknown): ValidateFunction {
  let v = compiled.get(key);
  if (!v) {
    v = setup().ajv.compile(schema as object);
    compiled.set(key, v);
  }
  return v;
}

export interface ObservedResponse {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** The documented operation of a request, or null. */
export function findOperation(method: string, pathname: string): { template: string; operation: any } | null {
  const { doc, templates } = setup();
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  for (const t of templates) {
    const operation = doc.paths[t.template]![method.toLowerCase()];
    if (operation && t.regex.test(path)) return { template: t.template, operation };
  }
  return null;
}

function mediaTypeOf(response: ObservedResponse): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

function check(where: string, key: string, schema: unknown, response: ObservedResponse, mediaType: string): void {
  if (mediaType !== 'application/json') {
    // Non-JSON bodies (text/plain, text/csv, text/html): a string schema, or an exact constant.
    const s = schema as { const?: unknown } | undefined;
    if (s && 'const' in s && s.const !== response.text) throw new Error(`${where}: body ${JSON.stringify(response.text.slice(0, 200))} is not the documented ${JSON.stringify(s.const)}`);
    return;
  }
  const validate = validatorFor(key, schema);
  if (!validate(response.json)) {
    const errors = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
    throw new Error(`${where}: the response does not match the OpenAPI document:\n  ${errors.join('\n  ')}\n  body: ${response.text.slice(0, 600)}`);
  }
}

/** The response headers the document declares: one present must be declared for its response, one required must be present. */
const WATCHED_HEADERS = Object.keys(RESPONSE_HEADERS);

function checkHeaders(where: string, key: string, declared: Record<string, { required?: boolean; schema: unknown }>, received: Headers): void {
  const byLower = new Map(Object.entries(declared).map(([name, h]) => [name.toLowerCase(), { name, ...h }]));
  for (const name of WATCHED_HEADERS) {
    const value = received.get(name);
    const d = byLower.get(name.toLowerCase());
    if (value === null) {
      if (d?.required) throw new Error(`${where}: the required response header ${name} is missing`);
      continue;
    }
    if (!d) throw new Error(`${where}: the response header ${name} is not declared for this response`);
    const validate = validatorFor(`header ${key} ${name}`, d.schema);
    if (!validate(value)) throw new Error(`${where}: the response header ${name}: ${JSON.stringify(value)} does not match the document`);
  }
}

/** Throws when the response is not what the OpenAPI document promises for this request. */
export function checkResponseAgainstDocument(method: string, url: string, response: ObservedResponse): void {
  const { pathname } = new URL(url);
  if (TEST_ONLY_PREFIXES.some((p) => pathname.startsWith(p))) return;
  const where = `${method} ${pathname} → ${response.status}`;
  const mediaType = mediaTypeOf(response);
  const found = findOperation(method, pathname);
  if (!found) {
    const [prefix, names, plain] = FAMILY_ERRORS.find(([p]) => pathname === p || pathname.startsWith(p === '/' ? p : `${p}/`))!;
    if (response.status < 400) throw new Error(`${where}: ${method} ${pathname} is not a documented operation`);
    if (plain && response.status === 401 && mediaType === 'text/plain') {
      if (response.text !== 'Authentication required') throw new Error(`${where}: unexpected plain-text body`);
      return;
    }
    if (mediaType !== 'application/json') throw new Error(`${where}: undocumented content type ${mediaType} for ${prefix}`);
    check(where, `fallback ${prefix}`, { anyOf: names.map((n) => ({ $ref: `https://openapi.invalid/components#/$defs/${n}` })) }, response, mediaType);
    return;
  }
  const responses = found.operation.responses as Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, { required?: boolean; schema: unknown }> }>;
  const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => responses[k]);
  if (!statusKey) throw new Error(`${where}: status ${response.status} is not documented for ${method} ${found.template} (documented: ${Object.keys(responses).join(', ')})`);
  const content = responses[statusKey]!.content;
  const headersOf = () => checkHeaders(where, `${method} ${found.template} ${statusKey}`, responses[statusKey]!.headers ?? {}, response.headers);
  if (!content) {
    if (response.text !== '') throw new Error(`${where}: a body where the document has none`);
    headersOf();
    return;
  }
  const media = content[mediaType];
  if (!media) throw new Error(`${where}: content type ${mediaType || '(none)'} is not documented (documented: ${Object.keys(content).join(', ')})`);
  check(where, `${method} ${found.template} ${statusKey} ${mediaType}`, media.schema, response, mediaType);
  headersOf();
  // Not the document itself as an example of the document.
  if (RECORD_TO && mediaType === 'application/json' && found.template !== '/openapi.json') {
    const key = `${method.toLowerCase()} ${found.template} ${response.status}`;
    if (!(key in recorded)) recorded[key] = shorten(response.json);
  }
}

/**
 * With OPENAPI_RECORD_EXAMPLES=<file>, the first valid JSON response of each operation and
 * status is written there (long strings and arrays shortened): `npm run openapi:examples`
 * turns them into the document's examples (http/openapi/examples.json).
 */
const RECORD_TO = process.env.OPENAPI_RECORD_EXAMPLES;
const recorded: Record<string, unknown> = {};
if (RECORD_TO) {
  // Child processes of the suites record too: merge with what is there, first response wins.
  process.on('exit', () => {
    if (Object.keys(recorded).length === 0) return;
    const before = existsSync(RECORD_TO) ? (JSON.parse(readFileSync(RECORD_TO, 'utf8')) as Record<string, unknown>) : {};
    const merged = { ...recorded, ...before };
    writeFileSync(RECORD_TO, `${JSON.stringify(Object.fromEntries(Object.keys(merged).sort().map((k) => [k, merged[k]])), null, 2)}\n`);
  });
}

function shorten(value: unknown): unknown {
  if (typeof value === 'string') return value.length > 120 ? `${value.slice(0, 117)}...` : value;
  if (Array.isArray(value)) return value.slice(0, 3).map(shorten);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]));
  return value;
}

/** Errors of `value` against a schema of the document (refs into components resolved), or []. */
export function schemaErrors(schema: unknown, value: unknown): string[] {
  setup();
  const validate = setup().ajv.compile(rewriteRefs(schema) as object);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
}
