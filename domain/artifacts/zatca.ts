/**
 * Saudi Arabia: ZATCA (FATOORA) UBL 2.1 Invoice, phase 2 shape.
 *
 * - ProfileID `reporting:1.0`; every document is a UBL Invoice: 388 tax invoice, 381 credit note,
 *   383 debit note; `cbc:InvoiceTypeCode/@name` is the 7-position transaction code NNPNESB:
 *   01 standard (B2B) / 02 simplified (B2C), then third-party, nominal, export, summary, self-billed.
 * - AdditionalDocumentReference ICV (invoice counter value) and PIH (previous invoice hash). The
 *   first document of a chain carries ZATCA's initial PIH, the Base64 of the hex SHA-256 of "0".
 * - The invoice hash is the Base64 of the SHA-256 of the canonical XML without ext:UBLExtensions,
 *   cac:Signature and the QR AdditionalDocumentReference. This generator writes neither
 *   UBLExtensions nor Signature and serializes compactly with the namespace declarations in
 *   canonical order, so the hashed bytes are exactly the C14N form of the document minus its QR
 *   reference (the tests check this against libxml2's C14N).
 * - QR: Base64 of the TLV fields 1 seller name, 2 VAT number, 3 timestamp, 4 total with VAT,
 *   5 VAT total, 6 invoice hash, in AdditionalDocumentReference ID QR.
 *
 * This generator writes the unsigned invoice. The cryptographic stamp (the XAdES signature in
 * UBLExtensions, cac:Signature and QR tags 7-9) is added by domain/zatca/stamp.ts with the keys of
 * the seller's EGS unit; it does not change the hash, which excludes those parts by definition.
 */
import { createHash } from 'node:crypto';
import type { CoreDocument, CoreParty } from './core-document.js';
import {
  documentCurrency,
  documentTotals,
  formatAmount,
  formatDecimal,
  isoDate,
  isoTime,
  normalizeLines,
  num,
  registrationOf,
  round2,
  str,
  taxBreakdown,
  taxIdOf,
  uncl5305Category,
  type BreakdownEntry,
  type ResolvedDocumentType,
} from './normalize.js';
import { billingReference, legalMonetaryTotal, partyTaxScheme, priceAmount, taxCategory, taxTotalAmountOnly, taxTotalWithBreakdown, type TaxCategoryOptions } from './ubl-parts.js';
import { amount, branch, branchAfter, insertMarkup, leaf, newXmlDocument, serialize, serializeHeadless, xmlOutput, ublRoot, type XmlNode, type XmlOutput } from './xml.js';

export const ZATCA_PROFILE_ID = 'reporting:1.0';

/** ZATCA's PIH for the first invoice of a chain: Base64 of the hex SHA-256 digest of "0". */
export const ZATCA_INITIAL_PREVIOUS_INVOICE_HASH = Buffer.from(createHash('sha256').update('0').digest('hex'), 'utf8').toString('base64');

export function zatcaTypeCode(dt: ResolvedDocumentType): string {
  return dt.kind === 'credit_note' ? '381' : dt.kind === 'debit_note' ? '383' : '388';
}

/**
 * The `name` attribute: 01/02 then the third-party (`disclosed_agent`), nominal (`deemed_supply`),
 * export, summary and self-billed flags.
 */
export function zatcaTransactionCode(dt: ResolvedDocumentType): string {
  const m = dt.modifiers;
  const flag = (on: boolean) => (on ? '1' : '0');
  return (
    (dt.simplified ? '02' : '01') +
    flag(m.has('third_party') || m.has('disclosed_agent')) +
    flag(m.has('nominal_supply') || m.has('deemed_supply')) +
    flag(m.has('export')) +
    flag(m.has('summary')) +
    flag(dt.selfBilled)
  );
}

export interface ZatcaQrFields {
  sellerName: string;
  vatNumber: string;
  timestamp: string;
  totalWithVat: string;
  vatTotal: string;
  invoiceHash: string;
}

/** The QR payload: Base64 of TLV records (1-byte tag, 1-byte UTF-8 length, value). */
export function zatcaQrPayload(fields: ZatcaQrFields): string {
  const values = [fields.sellerName, fields.vatNumber, fields.timestamp, fields.totalWithVat, fields.vatTotal, fields.invoiceHash];
  const parts: Buffer[] = [];
  values.forEach((value, i) => {
    const bytes = Buffer.from(value, 'utf8');
    // A TLV length is one byte; ZATCA's fields are far below 256 bytes except a very long name.
    const clipped = bytes.length > 255 ? bytes.subarray(0, 255) : bytes;
    parts.push(Buffer.from([i + 1, clipped.length]), clipped);
  });
  return Buffer.concat(parts).toString('base64');
}

/** Decodes a TLV QR payload (for tests and the PDF). */
export function decodeZatcaQr(base64: string): Map<number, string> {
  const bytes = Buffer.from(base64, 'base64');
  const out = new Map<number, string>();
  let i = 0;
  while (i + 2 <= bytes.length) {
    const tag = bytes[i]!;
    const len = bytes[i + 1]!;
    out.set(tag, bytes.subarray(i + 2, i + 2 + len).toString('utf8'));
    i += 2 + len;
  }
  return out;
}

export function sha256Base64(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64');
}

const ZATCA_TAX_CATEGORY: TaxCategoryOptions = {
  withPercent: () => true,
  exemption: (entry) =>
    entry.category === 'S' || !(entry.exemptionReasonCode || entry.exemptionReason)
      ? undefined
      : { code: entry.exemptionReasonCode, reason: entry.exemptionReason },
};

function zatcaAddress(parent: XmlNode, party: CoreParty | undefined): void {
  const a = party?.address;
  if (!a) return;
  const el = branch(parent, 'cac:PostalAddress');
  leaf(el, 'cbc:StreetName', a.streetName ?? a.addressLine1);
  leaf(el, 'cbc:AdditionalStreetName', a.streetName ? a.addressLine1 : a.addressLine2);
  leaf(el, 'cbc:BuildingNumber', a.buildingNumber);
  leaf(el, 'cbc:PlotIdentification', a.additionalNumber);
  leaf(el, 'cbc:CitySubdivisionName', a.district);
  leaf(el, 'cbc:CityName', a.city);
  leaf(el, 'cbc:PostalZone', a.postalCode);
  leaf(el, 'cbc:CountrySubentity', a.stateOrProvince);
  const country = str(a.country);
  if (country) leaf(branch(el, 'cac:Country'), 'cbc:IdentificationCode', country.toUpperCase());
}

function zatcaParty(parent: XmlNode, party: CoreParty | undefined): void {
  // A simplified (B2C) document may have no buyer: the mandatory AccountingCustomerParty stays empty.
  if (!party) return;
  const p = branch(parent, 'cac:Party');
  const registration = registrationOf(party, ['CRN', 'MOM', 'MLS', '700', 'SAG', 'OTH', 'TIN', 'NAT', 'IQA', 'PAS', 'GCC']);
  if (registration && str(registration.value)) {
    leaf(branch(p, 'cac:PartyIdentification'), 'cbc:ID', registration.value, { schemeID: str(registration.type)?.toUpperCase() ?? 'CRN' });
  }
  zatcaAddress(p, party);
  partyTaxScheme(p, taxIdOf(party, ['VAT', 'TRN']));
  if (str(party.name)) leaf(branch(p, 'cac:PartyLegalEntity'), 'cbc:RegistrationName', party.name);
}

/**
 * Stamps an invoice given its hash, the QR's tags 1-5 and whether it is simplified: answers the
 * ext:UBLExtensions markup (declaring its own namespaces but cbc) and the QR payload with tags 1-9
 * (see domain/zatca/stamp.ts).
 */
export type ZatcaStamper = (invoiceHash: string, qrTags1to5: readonly string[], simplified: boolean) => { ublExtensions: string; qr: string; signatureValue: string };

export interface ZatcaInput {
  doc: CoreDocument;
  dt: ResolvedDocumentType;
  uuid: string;
  issueTimestamp?: string;
  previousInvoiceHash?: string;
  invoiceCounter?: number;
  stamp?: ZatcaStamper;
}

export function buildZatcaInvoice(input: ZatcaInput): XmlOutput & { hash: string; qr: string } {
  const { doc, dt } = input;
  const header = doc.header ?? {};
  const parties = doc.parties ?? {};
  const cur = documentCurrency(doc, 'SAR');
  const lines = normalizeLines(doc, 'PCE');
  const categoryOf = (raw: string | undefined, rate: number) => uncl5305Category(raw, rate, dt.modifiers);
  const breakdown: BreakdownEntry[] = taxBreakdown(doc, lines, categoryOf);
  const totals = documentTotals(doc, lines, breakdown);
  const issueDate = isoDate(header.issueDate) ?? isoDate(input.issueTimestamp);
  const issueTime = isoTime(header.issueTime) ?? isoTime(input.issueTimestamp) ?? '00:00:00';
  const exchangeRate = num(header.exchangeRate?.rate as number | string | undefined);
  const taxInSar = cur === 'SAR' ? totals.tax : exchangeRate !== undefined ? round2(totals.tax * exchangeRate) : totals.tax;

  const xmlDoc = newXmlDocument();
  const root = ublRoot(xmlDoc, 'Invoice');
  leaf(root, 'cbc:ProfileID', ZATCA_PROFILE_ID);
  leaf(root, 'cbc:ID', header.documentNumber);
  leaf(root, 'cbc:UUID', input.uuid);
  leaf(root, 'cbc:IssueDate', issueDate);
  leaf(root, 'cbc:IssueTime', issueTime);
  leaf(root, 'cbc:InvoiceTypeCode', zatcaTypeCode(dt), { name: zatcaTransactionCode(dt) });
  leaf(root, 'cbc:Note', header.note);
  leaf(root, 'cbc:DocumentCurrencyCode', cur);
  leaf(root, 'cbc:TaxCurrencyCode', 'SAR');
  if (dt.kind !== 'invoice') {
    const preceding = header.precedingInvoiceReference;
    billingReference(root, { id: preceding?.id });
  }
  const icv = branch(root, 'cac:AdditionalDocumentReference');
  leaf(icv, 'cbc:ID', 'ICV');
  leaf(icv, 'cbc:UUID', String(input.invoiceCounter ?? 1));
  const pih = branch(root, 'cac:AdditionalDocumentReference');
  leaf(pih, 'cbc:ID', 'PIH');
  leaf(branch(pih, 'cac:Attachment'), 'cbc:EmbeddedDocumentBinaryObject', input.previousInvoiceHash ?? ZATCA_INITIAL_PREVIOUS_INVOICE_HASH, {
    mimeCode: 'text/plain',
  });

  zatcaParty(branch(root, 'cac:AccountingSupplierParty'), parties.seller);
  zatcaParty(branch(root, 'cac:AccountingCustomerParty'), parties.buyer);

  // KSA-5 supply date and, for a summary invoice, KSA-24 the supply end date (BR-KSA-72).
  const delivery = branch(root, 'cac:Delivery');
  const summary = dt.modifiers.has('summary');
  const periodStart = summary ? isoDate(header.invoicePeriod?.startDate) : undefined;
  leaf(delivery, 'cbc:ActualDeliveryDate', isoDate(header.supplyDate) ?? periodStart ?? isoDate(parties.delivery?.deliveryDate) ?? issueDate);
  if (summary) leaf(delivery, 'cbc:LatestDeliveryDate', isoDate(header.invoicePeriod?.endDate));

  const means = (doc.payment?.paymentMeans ?? []).filter((pm) => str(pm.paymentMeansCode));
  const reason = str(header.creditNoteReason?.description) ?? str(header.creditNoteReason?.code);
  if (means.length === 0 && dt.kind !== 'invoice' && reason) means.push({ paymentMeansCode: '10' });
  for (const pm of means) {
    const p = branch(root, 'cac:PaymentMeans');
    leaf(p, 'cbc:PaymentMeansCode', str(pm.paymentMeansCode));
    // KSA-10: the reason of a credit or debit note.
    if (dt.kind !== 'invoice') leaf(p, 'cbc:InstructionNote', reason);
    const account = str(pm.creditTransferInfo?.payeeFinancialAccountId);
    if (account) leaf(branch(p, 'cac:PayeeFinancialAccount'), 'cbc:ID', account);
  }

  // ZATCA writes the tax total twice: in the tax currency (SAR) alone, then with the breakdown.
  taxTotalAmountOnly(root, taxInSar, 'SAR');
  taxTotalWithBreakdown(root, totals.tax, breakdown, cur, ZATCA_TAX_CATEGORY);
  legalMonetaryTotal(root, totals, cur, { allowanceTotal: true });

  for (const line of lines) {
    const el = branch(root, 'cac:InvoiceLine');
    leaf(el, 'cbc:ID', line.id);
    leaf(el, 'cbc:InvoicedQuantity', formatDecimal(line.quantity), { unitCode: line.unitCode });
    amount(el, 'cbc:LineExtensionAmount', line.net, cur);
    const tt = branch(el, 'cac:TaxTotal');
    amount(tt, 'cbc:TaxAmount', line.tax, cur);
    amount(tt, 'cbc:RoundingAmount', round2(line.net + line.tax), cur);
    const item = branch(el, 'cac:Item');
    leaf(item, 'cbc:Name', line.name ?? line.description);
    const category = categoryOf(line.rawCategory, line.rate);
    taxCategory(item, 'cac:ClassifiedTaxCategory', { category, rate: line.rate, exemptionReason: undefined, exemptionReasonCode: undefined }, ZATCA_TAX_CATEGORY);
    const price = branch(el, 'cac:Price');
    priceAmount(price, 'cbc:PriceAmount', line.price, cur);
    if (line.grossPrice > line.price) {
      const discount = branch(price, 'cac:AllowanceCharge');
      leaf(discount, 'cbc:ChargeIndicator', 'false');
      leaf(discount, 'cbc:AllowanceChargeReason', 'discount');
      priceAmount(discount, 'cbc:Amount', line.grossPrice - line.price, cur);
      priceAmount(discount, 'cbc:BaseAmount', line.grossPrice, cur);
    }
  }

  // The hash covers the document as it stands: no UBLExtensions, no Signature, no QR yet.
  const hash = sha256Base64(serializeHeadless(xmlDoc));
  const seller = parties.seller;
  const qrFields: ZatcaQrFields = {
    sellerName: str(seller?.name) ?? '',
    vatNumber: taxIdOf(seller, ['VAT', 'TRN']) ?? '',
    timestamp: `${issueDate ?? ''}T${issueTime}`,
    totalWithVat: formatAmount(totals.taxInclusive),
    vatTotal: formatAmount(totals.tax),
    invoiceHash: hash,
  };
  const stamped = input.stamp?.(hash, [qrFields.sellerName, qrFields.vatNumber, qrFields.timestamp, qrFields.totalWithVat, qrFields.vatTotal], dt.simplified) ?? null;
  const qr = stamped ? stamped.qr : zatcaQrPayload(qrFields);
  // The QR reference goes to its place in the XSD sequence, right after PIH.
  const qrRef = branchAfter(root, pih, 'cac:AdditionalDocumentReference');
  leaf(qrRef, 'cbc:ID', 'QR');
  leaf(branch(qrRef, 'cac:Attachment'), 'cbc:EmbeddedDocumentBinaryObject', qr, { mimeCode: 'text/plain' });
  if (stamped) {
    // cac:Signature after the document references, before the parties (the UBL sequence); the
    // signature itself in UBLExtensions, the root's first child.
    const signature = branchAfter(root, qrRef, 'cac:Signature');
    leaf(signature, 'cbc:ID', 'urn:oasis:names:specification:ubl:signature:Invoice');
    leaf(signature, 'cbc:SignatureMethod', 'urn:oasis:names:specification:ubl:dsig:enveloped:xades');
    insertMarkup(root, 0, stamped.ublExtensions);
  }

  const xml = serialize(xmlDoc);
  return Object.assign(xmlOutput(xml), { hash, qr });
}
