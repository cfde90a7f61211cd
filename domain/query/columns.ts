/**
 * Column selection of the invoice query (docs/api/invoice-query.md `columns`, rules 5–7) and the
 * shaping of returned documents.
 *
 * A column is an accessor key without the `coreDocument.` prefix (for every type): a field of
 * the core document (docs/api/unify.md and the payload reference in docs/api/unify.md), a metadata field under
 * `meta.`, a document field (`documentId`, `documentType.*`, receipts' `countryDocumentStatus`),
 * one of the section wildcards docs/api/invoice-query.md lists, or `meta.coreValidation` /
 * `meta.coreValidation.*` (the whole stored report). Anything else is refused with the entry
 * named: a bare `*`, partial names, embedded wildcards, unknown sections, sub-fields of the
 * report and `meta.xmlValidation.*`.
 */
import type { QueryType } from './fields.js';

export interface ColumnProblem {
  index: number;
  value: unknown;
  message: string;
}

/** Copy the value at `path` (document-space, from the document root). */
interface WholeSelector {
  kind: 'whole';
  path: readonly string[];
}
/** For every element of the array at `array`, copy the value at `item`. */
interface ItemSelector {
  kind: 'item';
  array: readonly string[];
  item: readonly string[];
}
/** Copy the object at `path` without the named keys. */
interface ExceptSelector {
  kind: 'except';
  path: readonly string[];
  without: readonly string[];
}
export type Selector = WholeSelector | ItemSelector | ExceptSelector;

/** The section wildcards of docs/api/invoice-query.md, exactly (meta.* and the report are handled apart). */
const CORE_WILDCARDS: Readonly<Record<string, string>> = {
  'header.*': 'header',
  'parties.*': 'parties',
  'parties.seller.*': 'parties.seller',
  'parties.buyer.*': 'parties.buyer',
  'header.invoicePeriod.*': 'header.invoicePeriod',
  'lineItems.*': 'lineItems',
  'lineItems[].*': 'lineItems',
  'totals.*': 'totals',
  'payment.*': 'payment',
};

const PARTY_FIELDS = [
  'name',
  'address.addressLine1',
  'address.addressLine2',
  'address.city',
  'address.postalCode',
  'address.stateOrProvince',
  'address.country',
  'address.countrySubdivision',
  'taxIds',
  'registrationNumbers',
  'peppolId',
];
const LINE_FIELDS = [
  'id',
  'name',
  'description',
  'quantity',
  'unitCode',
  'taxAmount',
  'lineTaxableValue',
  'taxCategory',
  'taxRate',
  'commodityClassification.code',
  'commodityClassification.scheme',
  'price.amount',
  'price.grossPrice',
  'taxExemptionReason',
  'taxExemptionReasonCode',
  'extensions',
];

/** Whole-value accessor keys of the core document. */
const CORE_KEYS: ReadonlySet<string> = new Set([
  'header.documentType.base',
  'header.documentNumber',
  'header.documentId',
  'header.issueDate',
  'header.dueDate',
  'header.currency',
  'header.taxCurrency',
  'header.exchangeRate.rate',
  'header.invoicePeriod.startDate',
  'header.invoicePeriod.endDate',
  'header.invoicePeriod.frequency',
  'header.precedingInvoiceReference.id',
  'header.precedingInvoiceReference.issueDate',
  ...['seller', 'buyer'].flatMap((p) => PARTY_FIELDS.map((f) => `parties.${p}.${f}`)),
  'parties.delivery.name',
  ...['addressLine1', 'addressLine2', 'city', 'postalCode', 'countrySubdivision', 'country'].map((f) => `parties.delivery.address.${f}`),
  'lineItems',
  'payment.paymentMeans',
  'taxTotals',
  'totals.totalAmountExcludingTax',
  'totals.totalAmountIncludingTax',
  'totals.amountDue',
  'totals.totalLineTaxableAmount',
  'totals.totalTaxAmount',
  'extensions',
]);

/** Per-element accessor keys: array path → fields of each element. */
const ITEM_KEYS: Readonly<Record<string, readonly string[]>> = {
  lineItems: LINE_FIELDS,
  'payment.paymentMeans': ['paymentMeansCode', 'creditTransferInfo.payeeFinancialAccountId'],
};

/** Metadata accessor keys (under `coreDocument.meta` for sales and purchases, `meta` for receipts). */
const META_KEYS: ReadonlySet<string> = new Set([
  'meta.source',
  'meta.source.name',
  'meta.source.version',
  'meta.statuses',
  'meta.statuses.document',
  'meta.statuses.document.current',
  'meta.statuses.document.history',
  'meta.statuses.delivery',
  'meta.statuses.delivery.current',
  'meta.statuses.delivery.history',
  'meta.statuses.business',
  'meta.statuses.business.current',
  'meta.statuses.business.history',
  'meta.statuses.userfacing',
  'meta.statuses.internal',
]);

/** Document fields at the root for every type. */
const DOCUMENT_KEYS: ReadonlySet<string> = new Set(['documentId', 'documentType', 'documentType.base', 'documentType.modifiers', 'documentType.variants', 'statusHistory']);

const EXTENSION_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Every name a caller may select for `type` (wildcards and extension names aside): for messages and tests. */
export function columnKeys(type: QueryType): string[] {
  const keys = [
    ...DOCUMENT_KEYS,
    ...CORE_KEYS,
    ...Object.entries(ITEM_KEYS).flatMap(([array, fields]) => fields.map((f) => `${array}[].${f}`)),
    ...META_KEYS,
    'meta.coreValidation',
  ];
  if (type === 'receipts') keys.push('countryDocumentStatus');
  return keys;
}

export const COLUMN_WILDCARDS = [...Object.keys(CORE_WILDCARDS), 'meta.*', 'meta.coreValidation.*'];

function isPartialName(type: QueryType, name: string): boolean {
  return columnKeys(type).some((k) => k.startsWith(name) && k !== name);
}

/**
 * Resolves the columns of a query into selectors, or the problems of the entries refused.
 * An empty list (or none) means: the stored documents unshaped.
 */
export function parseColumns(type: QueryType, columns: readonly unknown[]): { ok: true; selectors: Selector[] } | { ok: false; problems: ColumnProblem[] } {
  const core: string[] = type === 'receipts' ? [] : ['coreDocument'];
  const meta: string[] = [...core, 'meta'];
  const selectors: Selector[] = [];
  const problems: ColumnProblem[] = [];
  columns.forEach((value, index) => {
    const refuse = (message: string) => problems.push({ index, value, message });
    if (typeof value !== 'string' || value.trim() === '') return refuse('a column is a non-empty string');
    if (value.length > 200) return refuse('a column name is at most 200 characters');
    if (value === '*') return refuse('a bare "*" is not supported; name a section wildcard such as "header.*"');
    if (value.startsWith('coreDocument.')) {
      return refuse(`columns are accessor keys without the "coreDocument." prefix: use "${value.slice('coreDocument.'.length)}"`);
    }
    if (value.endsWith('.*')) {
      const head = value.slice(0, -2);
      if (head.includes('*')) return refuse('embedded wildcards are not supported; a wildcard is a whole section ending ".*"');
      if (value in CORE_WILDCARDS) return selectors.push({ kind: 'whole', path: [...core, ...CORE_WILDCARDS[value]!.split('.')] });
      if (value === 'meta.*') return selectors.push({ kind: 'except', path: meta, without: ['coreValidation', 'xmlValidation'] });
      if (value === 'meta.coreValidation.*') return selectors.push({ kind: 'whole', path: [...meta, 'coreValidation'] });
      if (value === 'meta.xmlValidation.*' || head === 'meta.xmlValidation') return refuse('"meta.xmlValidation.*" is not supported');
      if (head.startsWith('meta.coreValidation.')) return refuse('wildcards inside the validation report are not supported; select "meta.coreValidation" for the whole report');
      return refuse(`unknown section "${head}"; the section wildcards are ${COLUMN_WILDCARDS.join(', ')}`);
    }
    if (value.includes('*')) return refuse('embedded wildcards are not supported; a wildcard is a whole section ending ".*"');
    if (value === 'meta.coreValidation') return selectors.push({ kind: 'whole', path: [...meta, 'coreValidation'] });
    if (value.startsWith('meta.coreValidation.')) return refuse('sub-fields of the validation report are not supported; select "meta.coreValidation" for the whole report');
    if (value === 'meta.xmlValidation' || value.startsWith('meta.xmlValidation.')) return refuse(`"${value}" is not supported`);
    if (DOCUMENT_KEYS.has(value) || (type === 'receipts' && value === 'countryDocumentStatus')) {
      return selectors.push({ kind: 'whole', path: value.split('.') });
    }
    if (META_KEYS.has(value)) return selectors.push({ kind: 'whole', path: [...core, ...value.split('.')] });
    if (CORE_KEYS.has(value)) return selectors.push({ kind: 'whole', path: [...core, ...value.split('.')] });
    // Extension values: `extensions.<name>`; per element: `lineItems[].extensions.<name>`.
    const ext = /^extensions\.(.+)$/.exec(value);
    if (ext && EXTENSION_NAME.test(ext[1]!)) return selectors.push({ kind: 'whole', path: [...core, 'extensions', ext[1]!] });
    // Per-element keys: `lineItems[].name` (also `lineItems.name`, as `lineItems.*` = `lineItems[].*`).
    for (const [array, fields] of Object.entries(ITEM_KEYS)) {
      for (const sep of ['[].', '.']) {
        if (!value.startsWith(array + sep)) continue;
        const rest = value.slice(array.length + sep.length);
        const lineExt = /^extensions\.(.+)$/.exec(rest);
        if (fields.includes(rest) || (array === 'lineItems' && lineExt && EXTENSION_NAME.test(lineExt[1]!))) {
          return selectors.push({ kind: 'item', array: [...core, ...array.split('.')], item: rest.split('.') });
        }
      }
    }
    if (type !== 'receipts' && value === 'countryDocumentStatus') return refuse('"countryDocumentStatus" exists on receipts only');
    if (isPartialName(type, value)) return refuse(`"${value}" is a partial name; name a whole field or a section wildcard ending ".*"`);
    return refuse(`unsupported column "${value}"`);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, selectors };
}

// ---------------------------------------------------------------------------------------------
// Shaping

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function get(root: unknown, path: readonly string[]): unknown {
  let v = root;
  for (const k of path) {
    if (!isObject(v)) return undefined;
    v = v[k];
  }
  return v;
}

/** Deep merge of projections of one document: objects by key, arrays element by element. */
function merge(a: unknown, b: unknown): unknown {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (isObject(a) && isObject(b)) {
    const out: Record<string, unknown> = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    return Array.from({ length: n }, (_, i) => merge(a[i], b[i]));
  }
  return b;
}

function nest(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

function select(doc: unknown, s: Selector): unknown {
  switch (s.kind) {
    case 'whole': {
      const v = get(doc, s.path);
      return v === undefined ? undefined : nest(s.path, v);
    }
    case 'except': {
      const v = get(doc, s.path);
      if (!isObject(v)) return v === undefined ? undefined : nest(s.path, v);
      const copy = { ...v };
      for (const k of s.without) delete copy[k];
      return nest(s.path, copy);
    }
    case 'item': {
      const arr = get(doc, s.array);
      if (!Array.isArray(arr)) return undefined;
      return nest(
        s.array,
        arr.map((el) => {
          const v = get(el, s.item);
          return v === undefined ? {} : nest(s.item, v);
        }),
      );
    }
  }
}

/** Removes what API-key queries never see: `statusHistory`, `meta.statuses.internal`, the three `history` arrays. */
export function withoutPrivateStatus(type: QueryType, doc: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...doc };
  delete out.statusHistory;
  const metaPath = type === 'receipts' ? ['meta'] : ['coreDocument', 'meta'];
  const statuses = get(out, [...metaPath, 'statuses']);
  if (!isObject(statuses)) return out;
  const cleaned: Record<string, unknown> = { ...statuses };
  delete cleaned.internal;
  for (const k of ['document', 'delivery', 'business']) {
    const s = cleaned[k];
    if (isObject(s)) {
      const c = { ...s };
      delete c.history;
      cleaned[k] = c;
    }
  }
  // Rebuild the path to statuses with copies (the stored document is never modified).
  const rebuild = (node: unknown, path: readonly string[]): unknown => {
    if (path.length === 0) return cleaned;
    const [head, ...rest] = path;
    const obj = isObject(node) ? node : {};
    return { ...obj, [head!]: rebuild(obj[head!], rest) };
  };
  return rebuild(out, [...metaPath, 'statuses']) as Record<string, unknown>;
}

/**
 * A returned document: unshaped without selectors; otherwise the selected fields plus
 * `documentId`, `documentType` {base, modifiers}, `meta.source` and the current status
 * metadata (receipts also `countryDocumentStatus`); purchases also their attribution when
 * present. `apiKey` removes the private status fields (every query of this service is made
 * with an API key).
 */
export function shapeDocument(type: QueryType, doc: Readonly<Record<string, unknown>>, selectors: readonly Selector[] | null, options: { apiKey: boolean }): Record<string, unknown> {
  if (!selectors || selectors.length === 0) return options.apiKey ? withoutPrivateStatus(type, doc) : { ...doc };
  const meta = type === 'receipts' ? ['meta'] : ['coreDocument', 'meta'];
  const always: Selector[] = [
    { kind: 'whole', path: ['documentId'] },
    { kind: 'whole', path: ['documentType', 'base'] },
    { kind: 'whole', path: ['documentType', 'modifiers'] },
    { kind: 'whole', path: [...meta, 'source'] },
    ...(['document', 'delivery', 'business'] as const).map((k): Selector => ({ kind: 'whole', path: [...meta, 'statuses', k, 'current'] })),
    { kind: 'whole', path: [...meta, 'statuses', 'userfacing'] },
  ];
  if (type === 'receipts') always.push({ kind: 'whole', path: ['countryDocumentStatus'] });
  if (type === 'purchases') always.push({ kind: 'whole', path: ['attribution'] });
  let out: unknown = {};
  for (const s of [...always, ...selectors]) out = merge(out, select(doc, s));
  const shaped = (isObject(out) ? out : {}) as Record<string, unknown>;
  return options.apiKey ? withoutPrivateStatus(type, shaped) : shaped;
}
