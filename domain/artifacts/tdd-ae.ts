/**
 * UAE Tax Data Document (TDD): the document the sender's access point reports to the FTA (corner 5)
 * for each delivered PINT AE invoice or credit note.
 *
 * Modelling choice: this is the OpenPeppol AE TDD 1.0 envelope, not a UBL Invoice re-labelled. The
 * FTA's corner 5 accepts the document type
 * `urn:peppol:schema:taxdata:1.0::TaxData##urn:peppol:taxdata:ae-1::1.0` with the process
 * `urn:peppol:taxreporting`, so the root is `pxs:TaxData` in `urn:peppol:schema:taxdata:1.0`,
 * CustomizationID `urn:peppol:taxdata:ae-1`, ProfileID `urn:peppol:taxreporting` (the value the AE
 * TDD rule ibr-tdd-02 requires). Everything inside the envelope is UBL 2.1 (cbc/cac/cec): the
 * reporting and receiving parties are `cac:PartyType`, the reported document summary uses UBL basic
 * components, and `pxs:SourceDocument` is a `cec:UBLExtensionType` whose ExtensionContent embeds the
 * full PINT AE Invoice/CreditNote. The tests validate the envelope against the OASIS UBL 2.1 common
 * schemas (through a schema that declares only the envelope's sequence) and the embedded document
 * against the UBL 2.1 Invoice/CreditNote schema.
 *
 * Content follows the AE TDD rules: no cbc:ID on the envelope (ibr-tdd-03), issue date without and
 * issue time with a time zone (ibr-tdd-04/05), exactly one reported transaction, reporting party =
 * the seller's endpoint, receiving party and reporter's representative with scheme 0242 (SPIS),
 * reported supplier with exactly one PartyTaxScheme, one TaxTotal per currency holding only the tax
 * amount, and a MonetaryTotal holding only the total without VAT in the document currency.
 */
import { isUtf8 } from 'node:buffer';
import type { CoreDocument } from './core-document.js';
import { isoDate, isoTime, str, type ResolvedDocumentType } from './normalize.js';
import { aeBuyerEndpoint, aeSellerEndpoint, aeTrn, pintAeContext, writePintAeDocument, type PintAeContext } from './pint-ae.js';
import { partyTaxScheme, taxTotalAmountOnly } from './ubl-parts.js';
import { amount, branch, DECLARATION, leaf, newXmlDocument, serialize, xmlOutput, xmlOutputOfBytes, UBL_NS, type XmlNode, type XmlOutput } from './xml.js';

export const TDD_NAMESPACE = 'urn:peppol:schema:taxdata:1.0';
export const TDD_CUSTOMIZATION_ID = 'urn:peppol:taxdata:ae-1';
export const TDD_PROFILE_ID = 'urn:peppol:taxreporting';
/** SPIS (Peppol service provider id) scheme of the FTA endpoint and of the reporting ASP. */
export const SPIS_SCHEME = '0242';
/**
 * Sandbox defaults for the SPIS identifiers (the FTA test endpoint of the OpenPeppol examples and
 * a placeholder ASP id). Production wiring passes the real ones.
 */
export const SANDBOX_FTA_RECEIVER_ID = '000773';
export const SANDBOX_REPORTERS_REPRESENTATIVE_ID = 'ASP-0001';

/**
 * An SPIS identifier as the value of an element whose schemeID is 0242: the bare id, as in the
 * official examples (`<cbc:EndpointID schemeID="0242">000773</cbc:EndpointID>`); a `0242:` prefix
 * given by a caller is dropped rather than repeated inside the value.
 */
export function bareSpisId(id: string): string {
  return id.startsWith(`${SPIS_SCHEME}:`) ? id.slice(SPIS_SCHEME.length + 1) : id;
}

export type TddDocumentTypeCode = 'S' | 'R' | 'W' | 'F';
export type TddReporterRole = '01' | '02';

export interface TaxDataDocumentOptions {
  /** When the TDD is issued (ISO timestamp); defaults to the invoice issue date at 00:00:00Z. */
  reportedAt?: string;
  /** S submit (default), R resubmit, W withdraw, F failed validation. */
  typeCode?: TddDocumentTypeCode;
  /** 01 the sender (seller side, default), 02 the receiver (buyer side). */
  reporterRole?: TddReporterRole;
  receiverId?: string;
  reportersRepresentativeId?: string;
  /** The SBDH instance identifier of the Peppol transmission, when known. */
  transportHeaderId?: string;
  /**
   * The PINT AE document as it was transmitted (generateInvoiceXml's output for this document), as
   * text or as its UTF-8 bytes: embedded as it is instead of written again from the core document.
   * Written again when it is not a PINT AE Invoice or CreditNote of the root this document has, as
   * generated. Given as bytes, its bytes go into the TDD's without being decoded to text and
   * encoded back (the same bytes as from its text).
   */
  sourceXml?: string | Uint8Array;
}

/** D domestic; IP international via Peppol; INP international outside Peppol. */
export function tddScope(ctx: PintAeContext): 'D' | 'IP' | 'INP' {
  const buyerCountry = str(ctx.doc.parties?.buyer?.address?.country)?.toUpperCase();
  const international = ctx.dt.modifiers.has('export') || (buyerCountry !== undefined && buyerCountry !== 'AE');
  if (!international) return 'D';
  return str(ctx.doc.parties?.buyer?.peppolId) ? 'IP' : 'INP';
}

function tddTime(reportedAt: string | undefined): string {
  const s = str(reportedAt);
  const time = isoTime(s) ?? '00:00:00';
  const zone = s ? (/(Z|[+-]\d{2}:\d{2})$/.exec(s)?.[1] ?? 'Z') : 'Z';
  return `${time}${zone}`;
}

export function buildTaxDataDocument(
  doc: CoreDocument,
  dt: ResolvedDocumentType,
  uuid: string,
  options: TaxDataDocumentOptions = {},
): XmlOutput {
  const ctx = pintAeContext(doc, dt, uuid);
  const header = doc.header ?? {};
  const xml = newXmlDocument();
  const root = branch(xml, 'pxs:TaxData', {
    'xmlns:pxs': TDD_NAMESPACE,
    'xmlns:cac': UBL_NS.cac,
    'xmlns:cbc': UBL_NS.cbc,
    'xmlns:cec': UBL_NS.ext,
  });
  leaf(root, 'cbc:CustomizationID', TDD_CUSTOMIZATION_ID);
  leaf(root, 'cbc:ProfileID', TDD_PROFILE_ID);
  leaf(root, 'cbc:IssueDate', isoDate(options.reportedAt) ?? isoDate(header.issueDate));
  leaf(root, 'cbc:IssueTime', tddTime(options.reportedAt));
  leaf(root, 'pxs:DocumentTypeCode', options.typeCode ?? 'S');
  leaf(root, 'pxs:DocumentScope', tddScope(ctx));
  const role = options.reporterRole ?? '01';
  leaf(root, 'pxs:ReporterRole', role);

  const reporter = role === '01' ? aeSellerEndpoint(ctx) : aeBuyerEndpoint(ctx);
  leaf(branch(root, 'pxs:ReportingParty'), 'cbc:EndpointID', reporter.value, { schemeID: reporter.scheme });
  leaf(branch(root, 'pxs:ReceivingParty'), 'cbc:EndpointID', bareSpisId(options.receiverId ?? SANDBOX_FTA_RECEIVER_ID), { schemeID: SPIS_SCHEME });
  leaf(
    branch(branch(root, 'pxs:ReportersRepresentative'), 'cac:PartyIdentification'),
    'cbc:ID',
    bareSpisId(options.reportersRepresentativeId ?? SANDBOX_REPORTERS_REPRESENTATIVE_ID),
    { schemeID: SPIS_SCHEME },
  );

  const transaction = branch(root, 'pxs:ReportedTransaction');
  leaf(transaction, 'pxs:TransportHeaderID', options.transportHeaderId);
  writeReportedDocument(branch(transaction, 'pxs:ReportedDocument'), ctx);
  const content = branch(branch(transaction, 'pxs:SourceDocument'), 'cec:ExtensionContent');
  const source = options.sourceXml;
  if (source !== undefined && typeof source !== 'string') {
    const body = embeddableBytes(source, ctx.root);
    if (body !== null) {
      // The envelope around a mark, and the transmitted bytes spliced in where the mark is.
      content.children.push(SOURCE_MARK);
      const out = serialize(xml);
      const at = out.indexOf(SOURCE_MARK);
      return xmlOutputOfBytes(Buffer.concat([Buffer.from(out.slice(0, at) + body.start, 'utf8'), body.rest, Buffer.from(out.slice(at + SOURCE_MARK.length), 'utf8')]));
    }
  }
  const transmitted = typeof source === 'string' ? embeddable(source, ctx.root) : null;
  if (transmitted !== null) content.children.push(transmitted);
  else writePintAeDocument(content, ctx, true);

  const out = serialize(xml);
  return xmlOutput(out);
}

/**
 * Where the transmitted document goes in the serialized envelope: markup no element, attribute or
 * text of the envelope can produce (their `<` is a tag's, and no tag name holds U+0001).
 */
const SOURCE_MARK = '<\u0001>';

/** The head a generated PINT AE document starts with (see `embeddable`). */
const generatedHead = (root: PintAeContext['root'], xmlns: string) => `${DECLARATION}<${root} xmlns="${xmlns}" xmlns:cac="${UBL_NS.cac}" xmlns:cbc="${UBL_NS.cbc}">`;

/**
 * A generated PINT AE document's markup as the envelope embeds it: without the XML declaration and
 * without the root's cac and cbc declarations, which the envelope's root has in scope (exactly
 * what writePintAeDocument writes there); null when the text does not start as generated.
 */
function embeddable(xml: string, root: PintAeContext['root']): string | null {
  const xmlns = root === 'Invoice' ? UBL_NS.invoice : UBL_NS.creditNote;
  const head = generatedHead(root, xmlns);
  return xml.startsWith(head) ? `<${root} xmlns="${xmlns}">${xml.slice(head.length)}` : null;
}

/**
 * `embeddable` for the document's UTF-8 bytes: the start tag that replaces the head, and the bytes
 * after the head; null when they do not start as generated or are not UTF-8 (their text is then
 * embedded as `embeddable` has it, or the document written again).
 */
function embeddableBytes(bytes: Uint8Array, root: PintAeContext['root']): { start: string; rest: Uint8Array } | null {
  const xmlns = root === 'Invoice' ? UBL_NS.invoice : UBL_NS.creditNote;
  const head = generatedHead(root, xmlns); // ASCII: as many bytes as characters
  if (bytes.byteLength < head.length || !isUtf8(bytes)) return null;
  for (let i = 0; i < head.length; i++) if (bytes[i] !== head.charCodeAt(i)) return null;
  return { start: `<${root} xmlns="${xmlns}">`, rest: bytes.subarray(head.length) };
}

function writeReportedDocument(rd: XmlNode, ctx: PintAeContext): void {
  const header = ctx.doc.header ?? {};
  leaf(rd, 'cbc:CustomizationID', ctx.ids.customizationId);
  leaf(rd, 'cbc:ProfileID', ctx.ids.profileId);
  leaf(rd, 'cbc:ID', header.documentNumber);
  leaf(rd, 'cbc:UUID', ctx.uuid);
  leaf(rd, 'cbc:IssueDate', isoDate(header.issueDate));
  leaf(rd, 'cbc:IssueTime', isoTime(header.issueTime));
  leaf(rd, 'pxs:DocumentTypeCode', ctx.typeCode);
  leaf(rd, 'cbc:DocumentCurrencyCode', ctx.currency);
  if (ctx.foreignCurrency) leaf(rd, 'cbc:TaxCurrencyCode', 'AED');

  const seller = ctx.doc.parties?.seller;
  const sellerParty = branch(branch(rd, 'cac:AccountingSupplierParty'), 'cac:Party');
  const trn = aeTrn(seller);
  if (trn) partyTaxScheme(sellerParty, trn);
  else {
    // Out-of-scope seller without a TRN: its tax registration (TIN) under a non-VAT scheme (ibt-032).
    partyTaxScheme(sellerParty, aeSellerEndpoint(ctx).value, 'TIN');
  }

  const buyer = ctx.doc.parties?.buyer;
  const buyerParty = branch(branch(rd, 'cac:AccountingCustomerParty'), 'cac:Party');
  const buyerEndpoint = aeBuyerEndpoint(ctx);
  leaf(branch(buyerParty, 'cac:PartyIdentification'), 'cbc:ID', buyerEndpoint.value, { schemeID: buyerEndpoint.scheme });
  partyTaxScheme(buyerParty, aeTrn(buyer));

  taxTotalAmountOnly(rd, ctx.totals.tax, ctx.currency);
  if (ctx.foreignCurrency && ctx.taxInAed !== undefined) taxTotalAmountOnly(rd, ctx.taxInAed, 'AED');
  amount(branch(rd, 'pxs:MonetaryTotal'), 'cbc:TaxExclusiveAmount', ctx.totals.taxExclusive, ctx.currency);
}
