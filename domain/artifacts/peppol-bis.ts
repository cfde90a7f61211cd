/**
 * Belgium and Germany: Peppol BIS Billing 3.0 (EN 16931 CIUS), UBL 2.1 Invoice / CreditNote.
 *
 * - CustomizationID `urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0`,
 *   ProfileID `urn:fdc:peppol.eu:2017:poacc:billing:01:1.0`. Germany: the XRechnung 3.0 CIUS
 *   identifier `urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0` (BR-DE-21)
 *   with the same ProfileID.
 * - 380 invoice; 381 credit note (a UBL CreditNote, BillingReference to the invoice); 383 debit
 *   note (an Invoice with BillingReference).
 * - Self-billed (`self_billed`): Peppol BIS Self-Billing 3.0 (CustomizationID
 *   `urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0`, ProfileID
 *   `urn:fdc:peppol.eu:2017:poacc:selfbilling:01:1.0`), codes 389 invoice, 261 credit note, 527
 *   debit note.
 * - Endpoint ids with their EAS scheme: the payload's scheme extension, else the country default
 *   (0208 Belgian enterprise number, 9930 German VAT).
 * - Seller VAT in PartyTaxScheme with the country prefix (BR-CO-09); VAT categories of UNCL 5305
 *   with the VATEX reason where the category needs one; no rate on category O.
 * - A buyer reference or an order reference is mandatory (PEPPOL-EN16931-R003): when the payload
 *   has neither, the document number is written as the buyer reference. A German document always
 *   has one (BR-DE-15): the payload's buyer reference (a public buyer's Leitweg-ID), else the
 *   order reference, else the document number.
 * - A second TaxTotal in the tax currency when it differs from the document currency (BT-111).
 */
import type { CoreDocument, CoreParty } from './core-document.js';
import { DEFAULT_VATEX, defaultEndpointScheme } from './codes.js';
import {
  documentCurrency,
  documentTotals,
  formatDecimal,
  isoDate,
  normalizeLines,
  num,
  registrationOf,
  round2,
  splitParticipantId,
  str,
  taxBreakdown,
  taxIdOf,
  uncl5305Category,
  type ResolvedDocumentType,
} from './normalize.js';
import {
  billingReference,
  legalMonetaryTotal,
  partyTaxScheme,
  peppolAddress,
  priceAmount,
  taxCategory,
  taxTotalAmountOnly,
  taxTotalWithBreakdown,
  type TaxCategoryOptions,
} from './ubl-parts.js';
import { amount, branch, leaf, newXmlDocument, serialize, xmlOutput, ublRoot, type XmlNode, type XmlOutput } from './xml.js';

export const PEPPOL_BIS_CUSTOMIZATION_ID = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
export const PEPPOL_BIS_PROFILE_ID = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
export const XRECHNUNG_CUSTOMIZATION_ID = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
export const PEPPOL_SELF_BILLING_CUSTOMIZATION_ID = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0';
export const PEPPOL_SELF_BILLING_PROFILE_ID = 'urn:fdc:peppol.eu:2017:poacc:selfbilling:01:1.0';

export function peppolBisTypeCode(dt: ResolvedDocumentType): string {
  if (dt.selfBilled) return dt.kind === 'credit_note' ? '261' : dt.kind === 'debit_note' ? '527' : '389';
  return dt.kind === 'credit_note' ? '381' : dt.kind === 'debit_note' ? '383' : '380';
}

/** CustomizationID and ProfileID: self-billing, XRechnung (Germany) or BIS Billing. */
export function peppolBisSpecification(country: string, dt: ResolvedDocumentType): { customizationId: string; profileId: string } {
  if (dt.selfBilled) return { customizationId: PEPPOL_SELF_BILLING_CUSTOMIZATION_ID, profileId: PEPPOL_SELF_BILLING_PROFILE_ID };
  if (country === 'DE') return { customizationId: XRECHNUNG_CUSTOMIZATION_ID, profileId: PEPPOL_BIS_PROFILE_ID };
  return { customizationId: PEPPOL_BIS_CUSTOMIZATION_ID, profileId: PEPPOL_BIS_PROFILE_ID };
}

const NEEDS_REASON = new Set(['E', 'AE', 'K', 'G', 'O']);

const BIS_BREAKDOWN_CATEGORY: TaxCategoryOptions = {
  withPercent: (category) => category !== 'O',
  exemption: (entry) => {
    if (!NEEDS_REASON.has(entry.category)) return undefined;
    const fallback = DEFAULT_VATEX[entry.category];
    const code = entry.exemptionReasonCode ?? (entry.exemptionReason ? undefined : fallback?.code);
    const reason = entry.exemptionReason ?? (entry.exemptionReasonCode ? undefined : fallback?.reason);
    return code || reason ? { code, reason } : undefined;
  },
};

/** Germany: XRechnung asks for the rate of every breakdown category, 0 for not subject (BR-DE-14). */
const XRECHNUNG_BREAKDOWN_CATEGORY: TaxCategoryOptions = { ...BIS_BREAKDOWN_CATEGORY, withPercent: () => true };

/** Line level (ClassifiedTaxCategory): ID, Percent and scheme only. */
const BIS_LINE_CATEGORY: TaxCategoryOptions = { withPercent: (category) => category !== 'O', exemption: () => undefined };

/** A VAT number with its ISO country prefix (BR-CO-09). */
export function vatWithPrefix(vat: string | undefined, country: string | undefined): string | undefined {
  const v = str(vat)?.replace(/\s+/g, '');
  if (!v) return undefined;
  const c = str(country)?.toUpperCase();
  return c && /^\d/.test(v) ? `${c === 'GR' ? 'EL' : c}${v}` : v;
}

function bisParty(parent: XmlNode, party: CoreParty | undefined, schemeExtension: string | undefined): void {
  const p = branch(parent, 'cac:Party');
  const country = str(party?.address?.country)?.toUpperCase();
  const endpoint = splitParticipantId(party?.peppolId, schemeExtension);
  leaf(p, 'cbc:EndpointID', endpoint.value, { schemeID: endpoint.scheme ?? defaultEndpointScheme(country) });
  if (str(party?.tradeName)) leaf(branch(p, 'cac:PartyName'), 'cbc:Name', party?.tradeName);
  peppolAddress(p, 'cac:PostalAddress', party?.address, str(party?.address?.stateOrProvince));
  partyTaxScheme(p, vatWithPrefix(taxIdOf(party, ['VAT', 'TVA', 'BTW', 'USTIDNR']), country));
  const registration = registrationOf(party);
  if (str(party?.name) || registration) {
    const legal = branch(p, 'cac:PartyLegalEntity');
    leaf(legal, 'cbc:RegistrationName', party?.name);
    if (registration) {
      const scheme = str(registration.scheme) ?? (/^\d{4}$/.test(registration.type ?? '') ? registration.type : undefined);
      leaf(legal, 'cbc:CompanyID', registration.value, { schemeID: scheme });
    }
  }
  const contact = party?.contact;
  if (contact && (str(contact.name) || str(contact.phone) || str(contact.email))) {
    const c = branch(p, 'cac:Contact');
    leaf(c, 'cbc:Name', contact.name);
    leaf(c, 'cbc:Telephone', contact.phone);
    leaf(c, 'cbc:ElectronicMail', contact.email);
  }
}

export interface PeppolBisInput {
  /** BE or DE. */
  country: string;
  doc: CoreDocument;
  dt: ResolvedDocumentType;
  uuid: string;
}

export function buildPeppolBisDocument(input: PeppolBisInput): XmlOutput {
  const { doc, dt } = input;
  const header = doc.header ?? {};
  const parties = doc.parties ?? {};
  const ext = doc.extensions ?? {};
  const cur = documentCurrency(doc, 'EUR');
  const credit = dt.kind === 'credit_note';
  const lines = normalizeLines(doc, 'C62');
  const categoryOf = (raw: string | undefined, rate: number) => uncl5305Category(raw, rate, dt.modifiers);
  const breakdown = taxBreakdown(doc, lines, categoryOf);
  const totals = documentTotals(doc, lines, breakdown);
  const taxCurrency = str(header.taxCurrency)?.toUpperCase();
  const foreignTax = taxCurrency !== undefined && taxCurrency !== cur;
  const rate = num(header.exchangeRate?.rate as number | string | undefined);

  const xmlDoc = newXmlDocument();
  const root = ublRoot(xmlDoc, credit ? 'CreditNote' : 'Invoice');
  const specification = peppolBisSpecification(input.country, dt);
  leaf(root, 'cbc:CustomizationID', specification.customizationId);
  leaf(root, 'cbc:ProfileID', specification.profileId);
  leaf(root, 'cbc:ID', header.documentNumber);
  leaf(root, 'cbc:IssueDate', isoDate(header.issueDate));
  if (!credit) leaf(root, 'cbc:DueDate', isoDate(header.dueDate));
  leaf(root, credit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode', peppolBisTypeCode(dt));
  leaf(root, 'cbc:Note', header.note);
  leaf(root, 'cbc:DocumentCurrencyCode', cur);
  if (foreignTax) leaf(root, 'cbc:TaxCurrencyCode', taxCurrency);
  const orderRef = str(header.purchaseOrderReference);
  const buyerReference = str(header.buyerReference) ?? (input.country === 'DE' ? (orderRef ?? str(header.documentNumber)) : orderRef ? undefined : header.documentNumber);
  leaf(root, 'cbc:BuyerReference', buyerReference);
  const period = header.invoicePeriod;
  if (period && (str(period.startDate) || str(period.endDate))) {
    const p = branch(root, 'cac:InvoicePeriod');
    leaf(p, 'cbc:StartDate', isoDate(period.startDate));
    leaf(p, 'cbc:EndDate', isoDate(period.endDate));
  }
  if (orderRef) leaf(branch(root, 'cac:OrderReference'), 'cbc:ID', orderRef);
  const preceding = header.precedingInvoiceReference;
  billingReference(root, { id: preceding?.id, issueDate: isoDate(preceding?.issueDate ?? str(ext['peppol_precedingInvoiceIssueDate'])) });

  bisParty(branch(root, 'cac:AccountingSupplierParty'), parties.seller, str(ext['peppol_seller_peppolIdScheme']));
  bisParty(branch(root, 'cac:AccountingCustomerParty'), parties.buyer, str(ext['peppol_buyer_peppolIdScheme']));

  const delivery = parties.delivery;
  if (delivery && (delivery.address || str(delivery.deliveryDate) || str(delivery.name))) {
    const d = branch(root, 'cac:Delivery');
    leaf(d, 'cbc:ActualDeliveryDate', isoDate(delivery.deliveryDate));
    if (delivery.address) {
      const a = delivery.address;
      peppolAddress(branch(d, 'cac:DeliveryLocation'), 'cac:Address', a, str(a.countrySubdivision ?? a.stateOrProvince));
    }
    if (str(delivery.name)) leaf(branch(branch(d, 'cac:DeliveryParty'), 'cac:PartyName'), 'cbc:Name', delivery.name);
  }

  for (const pm of doc.payment?.paymentMeans ?? []) {
    const code = str(pm.paymentMeansCode);
    if (!code) continue;
    const p = branch(root, 'cac:PaymentMeans');
    leaf(p, 'cbc:PaymentMeansCode', code);
    if (credit) leaf(p, 'cbc:PaymentDueDate', isoDate(header.dueDate));
    leaf(p, 'cbc:PaymentID', pm.paymentId);
    const account = str(pm.creditTransferInfo?.payeeFinancialAccountId);
    if (account) {
      const fa = branch(p, 'cac:PayeeFinancialAccount');
      leaf(fa, 'cbc:ID', account);
      leaf(fa, 'cbc:Name', pm.creditTransferInfo?.payeeFinancialAccountName);
      const bank = str(pm.creditTransferInfo?.financialInstitutionId);
      if (bank) leaf(branch(fa, 'cac:FinancialInstitutionBranch'), 'cbc:ID', bank);
    }
  }
  if (str(doc.payment?.paymentTerms)) leaf(branch(root, 'cac:PaymentTerms'), 'cbc:Note', doc.payment?.paymentTerms);

  taxTotalWithBreakdown(root, totals.tax, breakdown, cur, input.country === 'DE' ? XRECHNUNG_BREAKDOWN_CATEGORY : BIS_BREAKDOWN_CATEGORY);
  if (foreignTax) {
    const inTaxCurrency = num(ext['peppol_totalTaxAmountInTaxCurrency'] as number | string | undefined) ?? (rate !== undefined ? round2(totals.tax * rate) : undefined);
    if (inTaxCurrency !== undefined && taxCurrency) taxTotalAmountOnly(root, inTaxCurrency, taxCurrency);
  }
  legalMonetaryTotal(root, totals, cur);

  for (const line of lines) {
    const el = branch(root, credit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine');
    leaf(el, 'cbc:ID', line.id);
    leaf(el, credit ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity', formatDecimal(line.quantity), { unitCode: line.unitCode });
    amount(el, 'cbc:LineExtensionAmount', line.net, cur);
    const item = branch(el, 'cac:Item');
    if (line.description && line.description !== line.name) leaf(item, 'cbc:Description', line.description);
    leaf(item, 'cbc:Name', line.name ?? line.description);
    if (line.sellerItemId) leaf(branch(item, 'cac:SellersItemIdentification'), 'cbc:ID', line.sellerItemId);
    if (line.classification) {
      leaf(branch(item, 'cac:CommodityClassification'), 'cbc:ItemClassificationCode', line.classification.code, {
        listID: line.classification.scheme ?? 'STI',
      });
    }
    const category = categoryOf(line.rawCategory, line.rate);
    taxCategory(
      item,
      'cac:ClassifiedTaxCategory',
      { category, rate: line.rate, exemptionReason: line.exemptionReason, exemptionReasonCode: line.exemptionReasonCode },
      BIS_LINE_CATEGORY,
    );
    const price = branch(el, 'cac:Price');
    priceAmount(price, 'cbc:PriceAmount', line.price, cur);
    if (line.baseQuantity !== 1) leaf(price, 'cbc:BaseQuantity', formatDecimal(line.baseQuantity), { unitCode: line.unitCode });
    if (line.grossPrice > line.price) {
      const discount = branch(price, 'cac:AllowanceCharge');
      leaf(discount, 'cbc:ChargeIndicator', 'false');
      priceAmount(discount, 'cbc:Amount', line.grossPrice - line.price, cur);
      priceAmount(discount, 'cbc:BaseAmount', line.grossPrice, cur);
    }
  }

  const xml = serialize(xmlDoc);
  return xmlOutput(xml);
}
