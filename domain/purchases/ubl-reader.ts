/**
 * Reading a received UBL 2.1 Invoice or CreditNote into the core document shape (docs/api/unify.md,
 * domain/artifacts/core-document.ts): the inverse of the PINT AE and Peppol BIS generators, so a
 * field the sender's generator drops is visibly missing on the receiving side. Pure.
 *
 * The XML is parsed with saxes, a strict, namespace-aware XML parser that rejects any document
 * that is not well-formed in the same pass (fast-xml-parser was measured 4 times slower, and
 * needs a second pass to check well-formedness). A DOCTYPE is refused where the parser meets
 * it, in the prolog (saxes reports it before the root element; a `<!DOCTYPE` inside a comment
 * or a text is no declaration and is not refused), and the parse stops there: no entity is ever
 * declared, expanded or fetched, and the schema validator only sees documents without one. Elements are matched by
 * local name inside the document; the root's namespace must be the UBL 2.1 Invoice or
 * CreditNote namespace, whatever prefix it uses.
 */
import { SaxesParser, type SaxesTag } from 'saxes';
import type { UblRoutingValues } from '../peppol/identifiers.js';
import type { CoreDocument, CoreLineItem, CoreParty, CorePaymentMeans, CoreTaxSubtotal } from '../artifacts/core-document.js';
import { PINT_AE_CUSTOMIZATION_ID, PINT_AE_SELFBILLING_CUSTOMIZATION_ID, UAE_TRANSACTION_FLAG_ORDER } from '../artifacts/pint-ae.js';

export const UBL_NAMESPACES = {
  Invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  CreditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
} as const;

export type UblRoot = keyof typeof UBL_NAMESPACES;

/** Why a received XML document is refused (one clear line each). */
export class UblRefusal extends Error {
  override readonly name = 'UblRefusal';
  constructor(
    readonly code: 'XML_TOO_LARGE' | 'XML_DOCTYPE_REFUSED' | 'XML_NOT_WELL_FORMED' | 'XML_NOT_UBL' | 'XML_SCHEMA_INVALID' | 'XML_INCOMPLETE',
    message: string,
  ) {
    super(message);
  }
}

/** A participant id as the network knows it: `scheme:value`. */
export interface ParticipantId {
  scheme: string | null;
  value: string;
}

export const participantIdText = (p: ParticipantId | null): string | null => (p ? (p.scheme ? `${p.scheme}:${p.value}` : p.value) : null);

export interface ReadUbl {
  root: UblRoot;
  customizationId: string | null;
  documentNumber: string;
  uuid: string | null;
  issueDate: string | null;
  supplierName: string | null;
  buyerReference: string | null;
  sender: ParticipantId | null;
  receiver: ParticipantId | null;
  /** AE for PINT AE documents, else the supplier's country, else null. */
  country: string | null;
  documentType: { base: 'tax_invoice' | 'credit_note' | 'debit_note'; modifiers: string[] };
  coreDocument: CoreDocument;
}

/**
 * Refuses what must never reach a parser: documents over `maxBytes`, empty ones, and bytes that
 * are not UTF-8 (or declare another encoding). The DOCTYPE is refused by the parser itself
 * (`parseTree`), as it meets the prolog.
 */
export function screenXml(bytes: Uint8Array, maxBytes: number): string {
  if (bytes.byteLength > maxBytes) throw new UblRefusal('XML_TOO_LARGE', `the XML is ${bytes.byteLength} bytes; at most ${maxBytes} are accepted`);
  if (bytes.byteLength === 0) throw new UblRefusal('XML_NOT_WELL_FORMED', 'the file is empty');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UblRefusal('XML_NOT_WELL_FORMED', 'the XML is not valid UTF-8');
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const decl = /^<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(text);
  if (decl && !/^utf-?8$/i.test(decl[1]!)) throw new UblRefusal('XML_NOT_UBL', `the XML declares encoding ${decl[1]}; UBL documents are read as UTF-8`);
  return text;
}

type Node = Record<string, unknown>;

interface Parsed {
  root: { local: string; uri: string };
  tree: Node;
  /** Whether any text came in a CDATA section (the tree holds it as text). */
  cdata: boolean;
}

/** Thrown by the parser's handler to stop reading (see `parseTree`'s `stopAt`). */
const STOP = Symbol('stop');

/**
 * Parses into plain nodes: `{ LocalName: Node[] }`, text under `#text`, attributes under `@name`.
 * Element prefixes are dropped; the root's namespace is resolved from its own declarations (UBL
 * declares it there). Positions are tracked only to describe an error (a second parse). With
 * `stopAt`, reading stops where the first child of the root element with one of those names
 * opens: the tree then holds what came before it, and the rest is not read.
 */
function parseTree(xml: string, positions = false, stopAt?: ReadonlySet<string>): Parsed {
  const parser = new SaxesParser({ position: positions });
  const top: Node = {};
  const stack: Node[] = [top];
  let text = '';
  let root: Parsed['root'] | null = null;
  let cdata = false;
  parser.on('opentag', (tag: SaxesTag) => {
    const colon = tag.name.indexOf(':');
    const local = colon === -1 ? tag.name : tag.name.slice(colon + 1);
    const node: Node = {};
    const attributes = tag.attributes as Record<string, string>;
    for (const name in attributes) {
      if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
      const c = name.indexOf(':');
      node[`@${c === -1 ? name : name.slice(c + 1)}`] = attributes[name];
    }
    if (!root) {
      const uri = attributes[colon === -1 ? 'xmlns' : `xmlns:${tag.name.slice(0, colon)}`];
      root = { local, uri: uri ?? '' };
    }
    if (stopAt && stack.length === 2 && stopAt.has(local)) throw STOP;
    const parent = stack[stack.length - 1]!;
    const list = parent[local] as Node[] | undefined;
    if (list) list.push(node);
    else parent[local] = [node];
    stack.push(node);
    text = '';
  });
  parser.on('text', (t) => {
    text += t;
  });
  parser.on('cdata', (t) => {
    text += t;
    cdata = true;
  });
  parser.on('closetag', () => {
    const node = stack.pop()!;
    if (text !== '') {
      const value = text.trim();
      if (value !== '') node['#text'] = value;
      text = '';
    }
  });
  parser.on('doctype', () => {
    throw new UblRefusal('XML_DOCTYPE_REFUSED', 'the XML has a DOCTYPE declaration; DTDs and entity declarations are refused');
  });
  try {
    parser.write(xml).close();
  } catch (err) {
    if (err === STOP) return { root: root!, tree: top, cdata };
    if (err instanceof UblRefusal) throw err;
    if (!positions) return parseTree(xml, true, stopAt); // again, to say where
    const message = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ');
    throw new UblRefusal('XML_NOT_WELL_FORMED', `the XML is not well-formed: ${message}`);
  }
  if (!root) throw new UblRefusal('XML_NOT_WELL_FORMED', 'the XML has no root element');
  return { root, tree: top, cdata };
}

function kids(node: unknown, name: string): Node[] {
  if (!node || typeof node !== 'object') return [];
  const v = (node as Node)[name];
  return Array.isArray(v) ? (v as Node[]) : [];
}
function child(node: unknown, ...path: string[]): Node | undefined {
  let cur: unknown = node;
  for (const name of path) {
    cur = kids(cur, name)[0];
    if (cur === undefined) return undefined;
  }
  return cur as Node;
}
function textOf(node: unknown): string | undefined {
  if (node === undefined || node === null) return undefined;
  if (typeof node === 'string') return node === '' ? undefined : node;
  if (typeof node === 'object') {
    const t = (node as Node)['#text'];
    if (typeof t === 'string' || typeof t === 'number') return String(t) === '' ? undefined : String(t);
  }
  return undefined;
}
function text(node: unknown, ...path: string[]): string | undefined {
  const last = path.pop()!;
  const parent = path.length ? child(node, ...path) : node;
  return textOf(kids(parent, last)[0]);
}
function attr(node: unknown, ...pathAndAttr: string[]): string | undefined {
  const name = pathAndAttr.pop()!;
  const el = child(node, ...pathAndAttr);
  const v = el ? el[`@${name}`] : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}
function numberOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
const numAt = (node: unknown, ...path: string[]) => numberOf(text(node, ...path));

/** Drops undefined fields and empty objects, so absent data stays absent. */
function compact<T>(value: T): T {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = compact(value[i]);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    let kept = 0;
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      const c = v !== null && typeof v === 'object' ? compact(v) : v;
      if (c === EMPTY) continue;
      out[k] = c;
      kept++;
    }
    return (kept === 0 ? EMPTY : out) as T;
  }
  return value;
}
const EMPTY: Record<string, never> = Object.freeze({}) as Record<string, never>;

/** Well-formedness and the UBL root (Invoice or CreditNote in its UBL 2.1 namespace). */
function ublRootOf(parsed: Parsed): UblRoot {
  const { local, uri } = parsed.root;
  if ((local === 'Invoice' || local === 'CreditNote') && uri === UBL_NAMESPACES[local]) return local;
  throw new UblRefusal('XML_NOT_UBL', `the root element is ${local} in namespace ${uri || '(none)'}; expected a UBL 2.1 Invoice or CreditNote`);
}

/** A screened XML text parsed once, with its UBL root checked: `readUbl` reads it without parsing again. */
export interface ParsedUbl {
  readonly root: UblRoot;
  readonly parsed: Parsed;
}

/** Checks that a screened XML text is well-formed with a UBL Invoice or CreditNote root; keeps the parse. */
export function parseUbl(xml: string): ParsedUbl {
  const parsed = parseTree(xml);
  return { root: ublRootOf(parsed), parsed };
}

/**
 * The values an access point routes a parsed Invoice or CreditNote by (root, CustomizationID,
 * ProfileID, the parties' endpoint ids with their schemeID, the seller's country), read from the
 * tree as `peppolIdentifiersOf` (domain/peppol/identifiers.ts) reads them from the text: the same
 * paths, the same trimmed texts. The tree matches elements and attributes by local name and
 * `peppolIdentifiersOf` by namespace as well, so these are its values only for a document the
 * UBL 2.1 schemas accept (they fix every element's namespace on these paths and allow no other
 * attribute named schemeID); null when a text came in a CDATA section, which it does not read.
 */
export function ublRoutingValuesOf(ubl: ParsedUbl): UblRoutingValues | null {
  const { parsed } = ubl;
  if (parsed.cdata) return null;
  const doc = kids(parsed.tree, parsed.root.local)[0];
  const supplier = child(doc, 'AccountingSupplierParty', 'Party');
  const customer = child(doc, 'AccountingCustomerParty', 'Party');
  const scheme = (party: Node | undefined) => {
    const v = child(party, 'EndpointID')?.['@schemeID'];
    return typeof v === 'string' ? v : null;
  };
  return {
    rootNamespace: parsed.root.uri,
    rootName: parsed.root.local,
    customizationId: text(doc, 'CustomizationID'),
    profileId: text(doc, 'ProfileID'),
    sender: text(supplier, 'EndpointID'),
    senderScheme: scheme(supplier),
    receiver: text(customer, 'EndpointID'),
    receiverScheme: scheme(customer),
    sellerCountry: text(supplier, 'PostalAddress', 'Country', 'IdentificationCode'),
  };
}

/** Checks that a screened XML text is well-formed with a UBL Invoice or CreditNote root. */
export function checkUblRoot(xml: string): UblRoot {
  return parseUbl(xml).root;
}

/** The lines of an Invoice or CreditNote: in UBL's sequence, after both parties. */
const LINE_ELEMENTS: ReadonlySet<string> = new Set(['InvoiceLine', 'CreditNoteLine']);

/**
 * The root's children that UBL 2.1 puts after both parties (AccountingCustomerParty), in an
 * Invoice or a CreditNote, the lines included: the header read stops at the first of them.
 */
const AFTER_PARTIES: ReadonlySet<string> = new Set([
  'PayeeParty',
  'BuyerCustomerParty',
  'SellerSupplierParty',
  'TaxRepresentativeParty',
  'Delivery',
  'DeliveryTerms',
  'PaymentMeans',
  'PaymentTerms',
  'PrepaidPayment',
  'AllowanceCharge',
  'TaxExchangeRate',
  'PricingExchangeRate',
  'PaymentExchangeRate',
  'PaymentAlternativeExchangeRate',
  'TaxTotal',
  'WithholdingTaxTotal',
  'LegalMonetaryTotal',
  ...LINE_ELEMENTS,
]);

/** What an access point reads of a message's header: its UBL root, its parties' endpoints, its CustomizationID and ProfileID. */
export interface UblHeader {
  root: UblRoot;
  sender: ParticipantId | null;
  receiver: ParticipantId | null;
  /** The root's own cbc:CustomizationID and cbc:ProfileID (null when absent or empty). */
  customizationId: string | null;
  profileId: string | null;
}

/**
 * The header of a screened UBL Invoice or CreditNote, as an access point routes a message: the
 * sending and receiving participants (the endpoint ids of its supplier and customer), and the
 * customization and profile that name its Peppol document type and process. Read up to the first
 * element UBL's sequence puts after both parties (the payee, delivery, payment means, allowances,
 * totals or the first line), since it puts the customization, profile and parties before them. What
 * is read must be well-formed and UBL; what follows the parties is not looked at.
 */
export function readUblHeader(xml: string): UblHeader {
  const parsed = parseTree(xml, false, AFTER_PARTIES);
  const root = ublRootOf(parsed);
  const doc = child(parsed.tree, root);
  if (!doc) throw new UblRefusal('XML_NOT_UBL', `the ${root} element could not be read`);
  return {
    root,
    sender: participant(child(child(doc, 'AccountingSupplierParty'), 'Party')),
    receiver: participant(child(child(doc, 'AccountingCustomerParty'), 'Party')),
    customizationId: text(doc, 'CustomizationID') ?? null,
    profileId: text(doc, 'ProfileID') ?? null,
  };
}

function participant(party: Node | undefined): ParticipantId | null {
  const value = text(party, 'EndpointID');
  if (!value) return null;
  return { scheme: attr(party, 'EndpointID', 'schemeID') ?? null, value };
}

function address(node: Node | undefined, subdivisionName: 'stateOrProvince' | 'countrySubdivision') {
  if (!node) return undefined;
  return {
    addressLine1: text(node, 'StreetName'),
    addressLine2: text(node, 'AdditionalStreetName'),
    addressLine3: text(node, 'AddressLine', 'Line'),
    city: text(node, 'CityName'),
    postalCode: text(node, 'PostalZone'),
    buildingNumber: text(node, 'BuildingNumber'),
    additionalNumber: text(node, 'PlotIdentification'),
    district: text(node, 'CitySubdivisionName'),
    [subdivisionName]: text(node, 'CountrySubentity'),
    country: text(node, 'Country', 'IdentificationCode'),
  };
}

function party(wrapper: Node | undefined): CoreParty | undefined {
  const p = child(wrapper, 'Party');
  if (!p) return undefined;
  const addr = address(child(p, 'PostalAddress'), 'stateOrProvince');
  const country = addr?.country?.toUpperCase();
  const taxIds = kids(p, 'PartyTaxScheme')
    .map((pts) => ({ scheme: text(pts, 'TaxScheme', 'ID'), value: text(pts, 'CompanyID') }))
    .filter((t) => t.value)
    // The UAE names its VAT registration number TRN.
    .map((t) => ({ type: t.scheme === 'VAT' && country === 'AE' ? 'TRN' : (t.scheme ?? 'VAT'), value: t.value }));
  const legal = child(p, 'PartyLegalEntity');
  const registration = text(legal, 'CompanyID');
  const contact = child(p, 'Contact');
  return {
    name: text(legal, 'RegistrationName'),
    tradeName: text(p, 'PartyName', 'Name'),
    address: addr,
    taxIds: taxIds.length ? taxIds : undefined,
    registrationNumbers: registration
      ? [{ type: attr(legal, 'CompanyID', 'schemeAgencyID') ?? attr(legal, 'CompanyID', 'schemeID'), value: registration, scheme: attr(legal, 'CompanyID', 'schemeID') }]
      : undefined,
    peppolId: text(p, 'EndpointID'),
    contact: contact ? { name: text(contact, 'Name'), phone: text(contact, 'Telephone'), email: text(contact, 'ElectronicMail') } : undefined,
  } as CoreParty;
}

function subtotal(node: Node): CoreTaxSubtotal {
  const category = child(node, 'TaxCategory');
  return {
    taxCategory: text(category, 'ID'),
    taxRate: numAt(category, 'Percent'),
    taxableAmount: numAt(node, 'TaxableAmount'),
    taxAmount: numAt(node, 'TaxAmount'),
    taxExemptionReasonCode: text(category, 'TaxExemptionReasonCode'),
    taxExemptionReason: text(category, 'TaxExemptionReason'),
  };
}

function line(node: Node, credit: boolean): CoreLineItem {
  const item = child(node, 'Item');
  const quantityName = credit ? 'CreditedQuantity' : 'InvoicedQuantity';
  const category = child(item, 'ClassifiedTaxCategory');
  const classified = kids(item, 'CommodityClassification');
  const itemClass = classified.find((c) => text(c, 'ItemClassificationCode'));
  const natureOrType = classified.find((c) => text(c, 'CommodityCode') || text(c, 'NatureCode'));
  const price = child(node, 'Price');
  const discount = child(price, 'AllowanceCharge');
  const extension = child(node, 'ItemPriceExtension');
  const sac = child(item, 'AdditionalItemIdentification');
  const extensions = {
    ae_itemType: text(natureOrType, 'CommodityCode'),
    ae_rcmType: text(natureOrType, 'NatureCode'),
    ae_serviceAccountingCode: text(sac, 'ID'),
    ae_sacScheme: sac ? attr(sac, 'ID', 'schemeID') : undefined,
    ae_lineAmountIncludingTax: numAt(extension, 'Amount'),
  };
  return {
    id: text(node, 'ID'),
    name: text(item, 'Name'),
    description: text(item, 'Description'),
    quantity: numAt(node, quantityName),
    unitCode: attr(node, quantityName, 'unitCode'),
    taxAmount: numAt(extension, 'TaxTotal', 'TaxAmount'),
    lineTaxableValue: numAt(node, 'LineExtensionAmount'),
    taxCategory: text(category, 'ID'),
    taxRate: numAt(category, 'Percent'),
    commodityClassification: itemClass
      ? { code: text(itemClass, 'ItemClassificationCode'), scheme: attr(itemClass, 'ItemClassificationCode', 'listID') }
      : undefined,
    price: price
      ? { amount: numAt(price, 'PriceAmount'), grossPrice: numAt(discount, 'BaseAmount'), baseQuantity: numAt(price, 'BaseQuantity') }
      : undefined,
    taxExemptionReason: text(category, 'TaxExemptionReason'),
    taxExemptionReasonCode: text(category, 'TaxExemptionReasonCode'),
    sellerItemId: text(item, 'SellersItemIdentification', 'ID'),
    standardItemId: text(item, 'StandardItemIdentification', 'ID')
      ? { id: text(item, 'StandardItemIdentification', 'ID'), scheme: attr(item, 'StandardItemIdentification', 'ID', 'schemeID') }
      : undefined,
    buyerItemId: text(item, 'BuyersItemIdentification', 'ID'),
    note: text(node, 'Note'),
    extensions,
  };
}

function paymentMeans(node: Node): CorePaymentMeans {
  const account = child(node, 'PayeeFinancialAccount');
  return {
    paymentMeansCode: text(node, 'PaymentMeansCode'),
    paymentId: text(node, 'PaymentID'),
    creditTransferInfo: account
      ? { payeeFinancialAccountId: text(account, 'ID'), payeeFinancialAccountName: text(account, 'Name'), financialInstitutionId: text(account, 'FinancialInstitutionBranch', 'ID') }
      : undefined,
  };
}

function documentTypeOf(root: UblRoot, typeCode: string | undefined, customizationId: string | null, flags: string | undefined): ReadUbl['documentType'] {
  const modifiers: string[] = [];
  const pintAe = customizationId === PINT_AE_CUSTOMIZATION_ID || customizationId === PINT_AE_SELFBILLING_CUSTOMIZATION_ID;
  if (pintAe && flags && /^[01]{8}$/.test(flags)) {
    UAE_TRANSACTION_FLAG_ORDER.forEach((m, i) => {
      if (flags[i] === '1') modifiers.push(m);
    });
  }
  if (typeCode === '480' || typeCode === '81') modifiers.push('out_of_scope');
  if (customizationId === PINT_AE_SELFBILLING_CUSTOMIZATION_ID || typeCode === '389' || typeCode === '261') modifiers.push('self_billed');
  const base = root === 'CreditNote' ? 'credit_note' : typeCode === '383' ? 'debit_note' : 'tax_invoice';
  return { base, modifiers };
}

/**
 * Parses a screened XML text (see `screenXml`) holding a UBL Invoice or CreditNote into the
 * core document and the envelope facts a receiver needs (or reads what `parseUbl` parsed).
 */
export function readUbl(xml: string | ParsedUbl): ReadUbl {
  const { parsed, root } = typeof xml === 'string' ? parseUbl(xml) : xml;
  const credit = root === 'CreditNote';
  const doc = child(parsed.tree, root);
  if (!doc) throw new UblRefusal('XML_NOT_UBL', `the ${root} element could not be read`);
  const documentNumber = text(doc, 'ID');
  if (!documentNumber) throw new UblRefusal('XML_INCOMPLETE', `the ${root} has no cbc:ID (document number)`);
  const customizationId = text(doc, 'CustomizationID') ?? null;
  const typeCode = text(doc, credit ? 'CreditNoteTypeCode' : 'InvoiceTypeCode');
  const currency = text(doc, 'DocumentCurrencyCode');
  const supplierWrapper = child(doc, 'AccountingSupplierParty');
  const customerWrapper = child(doc, 'AccountingCustomerParty');
  const seller = party(supplierWrapper);
  const buyer = party(customerWrapper);
  const sender = participant(child(supplierWrapper, 'Party'));
  const receiver = participant(child(customerWrapper, 'Party'));

  // The tax total in the document currency carries the breakdown; one in another currency is the tax-currency total.
  const taxTotals = kids(doc, 'TaxTotal');
  const inDocumentCurrency = taxTotals.find((t) => !currency || attr(t, 'TaxAmount', 'currencyID') === currency) ?? taxTotals[0];
  const inTaxCurrency = taxTotals.find((t) => t !== inDocumentCurrency);
  const monetary = child(doc, 'LegalMonetaryTotal');
  const period = child(doc, 'InvoicePeriod');
  const billing = child(doc, 'BillingReference', 'InvoiceDocumentReference');
  const discrepancy = child(doc, 'DiscrepancyResponse');
  const exchange = child(doc, 'TaxExchangeRate');
  const delivery = child(doc, 'Delivery');
  const aedTotal = kids(doc, 'AdditionalDocumentReference').find((r) => text(r, 'ID') === 'aedtotal-incl-vat');
  const means = kids(doc, 'PaymentMeans');
  const pintAe = customizationId === PINT_AE_CUSTOMIZATION_ID || customizationId === PINT_AE_SELFBILLING_CUSTOMIZATION_ID;
  const dueDate = credit ? means.map((m) => text(m, 'PaymentDueDate')).find(Boolean) : text(doc, 'DueDate');
  const documentType = documentTypeOf(root, typeCode, customizationId, text(doc, 'ProfileExecutionID'));
  // Every cbc:Note, in document order (the first alone would lose the others).
  const notes = kids(doc, 'Note').map(textOf).filter((n): n is string => n !== undefined);

  const coreDocument: CoreDocument = compact({
    header: {
      documentType: { base: documentType.base, modifiers: documentType.modifiers },
      documentNumber,
      issueDate: text(doc, 'IssueDate'),
      issueTime: text(doc, 'IssueTime'),
      dueDate,
      currency,
      taxCurrency: text(doc, 'TaxCurrencyCode'),
      exchangeRate: exchange ? { rate: numAt(exchange, 'CalculationRate'), date: text(exchange, 'Date') } : undefined,
      invoicePeriod: period ? { startDate: text(period, 'StartDate'), endDate: text(period, 'EndDate'), frequency: text(period, 'Description') } : undefined,
      precedingInvoiceReference: billing ? { id: text(billing, 'ID'), uuid: text(billing, 'UUID'), issueDate: text(billing, 'IssueDate') } : undefined,
      buyerReference: text(doc, 'BuyerReference'),
      purchaseOrderReference: text(doc, 'OrderReference', 'ID'),
      note: notes.length ? notes.join('\n') : undefined,
      notes: notes.length ? notes : undefined,
      creditNoteReason: discrepancy ? { code: text(discrepancy, 'ResponseCode'), description: text(discrepancy, 'Description') } : undefined,
    },
    parties: {
      seller,
      buyer,
      delivery: delivery
        ? {
            name: text(delivery, 'DeliveryParty', 'PartyName', 'Name'),
            address: address(child(delivery, 'DeliveryLocation', 'Address'), 'countrySubdivision'),
            deliveryDate: text(delivery, 'ActualDeliveryDate'),
          }
        : undefined,
    },
    lineItems: kids(doc, credit ? 'CreditNoteLine' : 'InvoiceLine').map((l) => line(l, credit)),
    payment: {
      paymentMeans: means.length ? means.map(paymentMeans) : undefined,
      paymentTerms: text(doc, 'PaymentTerms', 'Note'),
    },
    taxTotals: inDocumentCurrency ? kids(inDocumentCurrency, 'TaxSubtotal').map(subtotal) : undefined,
    totals: {
      totalLineTaxableAmount: numAt(monetary, 'LineExtensionAmount'),
      totalAmountExcludingTax: numAt(monetary, 'TaxExclusiveAmount'),
      totalTaxAmount: numAt(inDocumentCurrency, 'TaxAmount'),
      totalAmountIncludingTax: numAt(monetary, 'TaxInclusiveAmount'),
      allowanceTotalAmount: numAt(monetary, 'AllowanceTotalAmount'),
      chargeTotalAmount: numAt(monetary, 'ChargeTotalAmount'),
      prepaidAmount: numAt(monetary, 'PrepaidAmount'),
      roundingAmount: numAt(monetary, 'PayableRoundingAmount'),
      amountDue: numAt(monetary, 'PayableAmount'),
    },
    extensions: {
      peppol_seller_peppolIdScheme: sender?.scheme ?? undefined,
      peppol_buyer_peppolIdScheme: receiver?.scheme ?? undefined,
      peppol_totalTaxAmountInTaxCurrency: numAt(inTaxCurrency, 'TaxAmount'),
      ae_totalAmountIncludingTaxInAED: numberOf(text(aedTotal, 'DocumentDescription')),
      ae_beneficiaryId: text(doc, 'BuyerCustomerParty', 'Party', 'PartyIdentification', 'ID'),
      ae_principalTRN: text(doc, 'SellerSupplierParty', 'Party', 'PartyIdentification', 'ID'),
      ubl_customizationId: customizationId ?? undefined,
      ubl_profileId: text(doc, 'ProfileID'),
      ubl_typeCode: typeCode,
    },
  });
  if (coreDocument.lineItems && coreDocument.lineItems.length === 0) delete coreDocument.lineItems;

  const sellerCountry = seller?.address?.country?.toUpperCase();
  return {
    root,
    customizationId,
    documentNumber,
    uuid: text(doc, 'UUID') ?? null,
    issueDate: text(doc, 'IssueDate') ?? null,
    supplierName: seller?.name ?? seller?.tradeName ?? null,
    buyerReference: text(doc, 'BuyerReference') ?? null,
    sender,
    receiver,
    country: pintAe ? 'AE' : (sellerCountry ?? null),
    documentType,
    coreDocument,
  };
}
