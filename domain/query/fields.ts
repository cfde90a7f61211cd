/**
 * The fields of the invoice query (docs/api/invoice-query.md, rules 1–4): which accessor paths of an indexed
 * document may be filtered, searched and sorted on, and what kind of value each holds. Both
 * search-index adapters build their mappings and indexes from this one catalogue, and the query
 * decoder refuses any other field.
 *
 * Paths are the accessor keys a caller sends: `coreDocument.`-prefixed for sales and purchases,
 * flat for receipts (rule 1). They are also the paths inside the stored document.
 *
 * A field that is not `public` is indexed and filtered on by the service itself but is not a
 * caller's field: `country` (the document's country code, at the root of every type) narrows
 * every query to the body's `country`, and naming it in `filters`, `searches` or `sort` is
 * refused like any unknown field.
 */
export const QUERY_TYPES = ['sales', 'purchases', 'receipts'] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

/**
 * - `date`: a `YYYY-MM-DD` string; range filters compare calendar days.
 * - `number`: a JSON number; range filters compare numerically.
 * - `keyword`: a string (or an array of strings); exact filters compare case-insensitively.
 * - `text`: a keyword that may also be searched (case-insensitive substring).
 */
export type FieldKind = 'date' | 'number' | 'keyword' | 'text';

export interface QueryField {
  /** The accessor key, and the path inside the stored document. */
  readonly path: string;
  readonly kind: FieldKind;
  /** May appear in `filters` (every catalogued field may). */
  readonly filter: true;
  /** May appear in `searches` (rule 3: the text fields). */
  readonly search: boolean;
  /** May be the `sort` field. */
  readonly sort: boolean;
  /** A caller may name it (false: the query layer's own filter, e.g. `country`). */
  readonly public: boolean;
}

const field = (path: string, kind: FieldKind, sort = true): QueryField => ({ path, kind, filter: true, search: kind === 'text', sort, public: true });

/** The root field holding the document's country code; every query filters on the body's `country`. */
export const COUNTRY_FIELD = 'country';

function catalogue(type: QueryType): QueryField[] {
  const core = type === 'receipts' ? '' : 'coreDocument.';
  const meta = type === 'receipts' ? 'meta.' : 'coreDocument.meta.';
  const fields: QueryField[] = [
    // rule 2: date, amount and currency
    field(`${core}header.issueDate`, 'date'),
    field(`${core}header.currency`, 'keyword'),
    field(`${core}totals.totalAmountIncludingTax`, 'number'),
    // rule 3: text searches
    field(`${core}header.documentNumber`, 'text'),
    field(`${core}parties.seller.name`, 'text'),
    field(`${core}parties.buyer.name`, 'text'),
    // rule 4: every type
    field('documentId', 'keyword'),
    field('documentType.base', 'keyword'),
    field('documentType.modifiers', 'keyword', false),
    field('documentType.variants', 'keyword', false),
    field(`${meta}statuses.document.current`, 'keyword'),
    field(`${meta}statuses.delivery.current`, 'keyword'),
    field(`${meta}statuses.business.current`, 'keyword'),
    field(`${meta}statuses.userfacing`, 'keyword'),
  ];
  if (type === 'receipts') fields.push(field('countryDocumentStatus', 'keyword'));
  // A purchase is filed under the receiving company's country (`country`); its supplier's
  // country is a field of its own (not sortable: one GIN index serves its filters).
  if (type === 'purchases') fields.push(field('coreDocument.parties.seller.address.country', 'keyword', false));
  // Scalar (sortable in the adapters' terms, so single-valued), but never named by a caller.
  fields.push({ ...field(COUNTRY_FIELD, 'keyword'), public: false });
  return fields;
}

const CATALOGUES: Readonly<Record<QueryType, ReadonlyMap<string, QueryField>>> = {
  sales: new Map(catalogue('sales').map((f) => [f.path, f])),
  purchases: new Map(catalogue('purchases').map((f) => [f.path, f])),
  receipts: new Map(catalogue('receipts').map((f) => [f.path, f])),
};

/** Every field of a type's index, the query layer's own (`public: false`) included. */
export function queryFields(type: QueryType): readonly QueryField[] {
  return [...CATALOGUES[type].values()];
}

export function queryField(type: QueryType, path: string): QueryField | undefined {
  return CATALOGUES[type].get(path);
}

/** The fields a caller may name in filters, searches and sort. */
export function publicQueryFields(type: QueryType): readonly QueryField[] {
  return queryFields(type).filter((f) => f.public);
}

/** The field a caller names, or undefined when it is not a caller's field of the type. */
export function publicQueryField(type: QueryType, path: string): QueryField | undefined {
  const f = CATALOGUES[type].get(path);
  return f?.public ? f : undefined;
}

/** The field of the default order (newest issue date first, then `documentId` ascending). */
export const issueDateField = (type: QueryType) => (type === 'receipts' ? 'header.issueDate' : 'coreDocument.header.issueDate');
