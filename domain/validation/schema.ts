/**
 * The shape of the core document (docs/api/unify.md, with the places issue 5 item 7 fixes:
 * `header.invoicePeriod`, `header.precedingInvoiceReference`, `parties.delivery.address`).
 *
 * The preflight walks a document against this shape and reports every value of the wrong
 * type; the requirements catalogue lists every path of it. Fields not named here are ignored.
 * `null` is accepted everywhere and means "absent".
 */

export type SchemaNode =
  | { readonly kind: 'string'; readonly label?: 'date' | 'code' }
  | { readonly kind: 'number' }
  | { readonly kind: 'boolean' }
  /** A string or a number (identifiers and codes that callers send either way). */
  | { readonly kind: 'scalar' }
  /** A string, number or boolean (the values of a flat map). */
  | { readonly kind: 'value' }
  | { readonly kind: 'object'; readonly fields: Readonly<Record<string, SchemaNode>>; readonly open?: SchemaNode }
  | { readonly kind: 'array'; readonly of: SchemaNode }
  /** A flat map: any names, each value a string, number or boolean. */
  | { readonly kind: 'flat'; readonly known: readonly string[] }
  /** An object or an array, not looked into (shape left open by the spec). */
  | { readonly kind: 'container' };

const str: SchemaNode = { kind: 'string' };
const date: SchemaNode = { kind: 'string', label: 'date' };
const code: SchemaNode = { kind: 'string', label: 'code' };
const num: SchemaNode = { kind: 'number' };
const scalar: SchemaNode = { kind: 'scalar' };
const flatValue: SchemaNode = { kind: 'value' };
const obj = (fields: Record<string, SchemaNode>): SchemaNode => ({ kind: 'object', fields });
const arr = (of: SchemaNode): SchemaNode => ({ kind: 'array', of });

const address = obj({
  addressLine1: str,
  addressLine2: str,
  /** Saudi national address: building number (4 digits), additional number, district. */
  buildingNumber: scalar,
  additionalNumber: scalar,
  district: str,
  city: str,
  postalCode: scalar,
  stateOrProvince: code,
  country: code,
});

const identifier = obj({ type: str, value: str });

const party = obj({
  name: str,
  address,
  taxIds: arr(identifier),
  registrationNumbers: arr(identifier),
  peppolId: str,
  /** The party's contact (required for a German seller: XRechnung seller contact). */
  contact: obj({ name: str, phone: str, email: str }),
});

export const DOCUMENT_EXTENSIONS = [
  'peppol_seller_peppolIdScheme',
  'peppol_buyer_peppolIdScheme',
  'peppol_precedingInvoiceIssueDate',
  'peppol_totalTaxAmountInTaxCurrency',
  'ae_buyer_authorityName',
  'ae_seller_authorityName',
  'ae_beneficiaryId',
  'ae_principalTRN',
  'ae_totalAmountIncludingTaxInAED',
  'ae_seller_passportIssuingCountry',
  'ae_buyer_passportCountry',
  'ae_creditNoteReasonCode',
] as const;

export const LINE_EXTENSIONS = ['ae_itemType', 'ae_rcmType', 'ae_serviceAccountingCode', 'ae_sacScheme'] as const;

export const coreDocumentSchema: SchemaNode = obj({
  header: obj({
    documentType: obj({ base: str, modifiers: arr(str), variant: str }),
    documentNumber: str,
    documentId: str,
    issueDate: date,
    dueDate: date,
    currency: code,
    taxCurrency: code,
    exchangeRate: obj({ rate: num }),
    invoicePeriod: obj({ startDate: date, endDate: date, frequency: code }),
    precedingInvoiceReference: obj({ id: str, issueDate: date }),
    creditNoteReason: obj({ code: code, description: str }),
    /** The buyer's reference (Germany: the Leitweg-ID of a public buyer). */
    buyerReference: str,
    purchaseOrderReference: str,
  }),
  parties: obj({
    seller: party,
    buyer: party,
    delivery: obj({
      name: str,
      /** The actual delivery date (Germany: BR-DE-TMP-32 asks for it or the invoice period). */
      deliveryDate: date,
      address: obj({ addressLine1: str, addressLine2: str, city: str, postalCode: scalar, countrySubdivision: code, country: code }),
    }),
  }),
  lineItems: arr(
    obj({
      id: scalar,
      name: str,
      description: str,
      quantity: num,
      unitCode: str,
      taxAmount: num,
      lineTaxableValue: num,
      taxCategory: str,
      taxRate: num,
      commodityClassification: obj({ code: scalar, scheme: str }),
      standardItemId: obj({ id: scalar, scheme: scalar }),
      price: obj({ amount: num, grossPrice: num }),
      taxExemptionReason: str,
      taxExemptionReasonCode: str,
      extensions: { kind: 'flat', known: LINE_EXTENSIONS },
    }),
  ),
  payment: obj({
    paymentMeans: arr(obj({ paymentMeansCode: scalar, creditTransferInfo: obj({ payeeFinancialAccountId: str }) })),
  }),
  taxTotals: { kind: 'container' },
  totals: obj({
    totalAmountExcludingTax: num,
    totalAmountIncludingTax: num,
    amountDue: num,
    totalLineTaxableAmount: num,
    totalTaxAmount: num,
  }),
  extensions: { kind: 'flat', known: DOCUMENT_EXTENSIONS },
});

/** The type name the catalogue and preflight messages use for a node. */
export function typeName(node: SchemaNode): string {
  switch (node.kind) {
    case 'string':
      return node.label ?? 'string';
    case 'scalar':
      return 'string or number';
    case 'value':
      return 'string, number or boolean';
    case 'flat':
      return 'map';
    case 'container':
      return 'object or array';
    default:
      return node.kind;
  }
}

/** Every path of the shape (`lineItems[].taxAmount` form) with its node, parents before children. */
export function schemaPaths(node: SchemaNode = coreDocumentSchema, prefix = ''): Array<{ path: string; node: SchemaNode }> {
  const out: Array<{ path: string; node: SchemaNode }> = [];
  if (node.kind === 'object') {
    for (const [name, child] of Object.entries(node.fields)) {
      const path = prefix ? `${prefix}.${name}` : name;
      out.push({ path, node: child }, ...schemaPaths(child, path));
    }
  } else if (node.kind === 'array') {
    out.push(...schemaPaths(node.of, `${prefix}[]`).filter((p) => p.path !== `${prefix}[]`));
  } else if (node.kind === 'flat') {
    for (const name of node.known) out.push({ path: `${prefix}.${name}`, node: flatValue });
  }
  return out;
}

/** The node at a shape path (`lineItems[].price.amount`), or undefined. */
export function schemaNodeAt(shapePath: string, root: SchemaNode = coreDocumentSchema): SchemaNode | undefined {
  let node: SchemaNode | undefined = root;
  for (const part of shapePath.split('.')) {
    const name = part.replace(/\[\]$/g, '').replace(/\[\]/g, '');
    const arrays = (part.match(/\[\]/g) ?? []).length;
    if (!node) return undefined;
    if (node.kind === 'flat') return flatValue;
    if (node.kind !== 'object') return undefined;
    node = node.fields[name];
    for (let i = 0; i < arrays && node; i++) node = node.kind === 'array' ? node.of : undefined;
  }
  return node;
}
