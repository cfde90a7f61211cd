/**
 * Malaysia: LHDNM MyInvois UBL 2.1, document version 1.0 (no digital signature).
 *
 * - Every document is a UBL Invoice; `cbc:InvoiceTypeCode listVersionID="1.0"`: 01 invoice,
 *   02 credit note, 03 debit note (self-billed: 11, 12, 13). Credit and debit notes reference the
 *   original in BillingReference/InvoiceDocumentReference (number and, when known, its UUID).
 * - Issue time in UTC with a Z; the tax currency is MYR, with TaxExchangeRate when the document
 *   currency is not MYR.
 * - Parties: PartyIdentification TIN plus one of BRN / NRIC / PASSPORT / ARMY, and SST / TTX when
 *   registered; addresses with the state code (CountrySubentityCode 01..17), AddressLine lines and
 *   the ISO 3166-1 alpha-3 country (listID ISO3166-1, listAgencyID 6); MSIC code on the supplier.
 * - Tax types (TaxCategory/ID): 01 sales tax, 02 service tax, 03 tourism tax, 04 high-value goods
 *   tax, 05 sales tax on low value goods, 06 not applicable, E exemption; TaxScheme OTH
 *   (UN/ECE 5153, agency 6).
 * - Lines carry their own TaxTotal, the product classification (listID CLASS, and PTC when the
 *   payload names it), the unit price and the subtotal (ItemPriceExtension).
 */
import type { CoreAddress, CoreDocument, CoreParty } from './core-document.js';
import { countryAlpha3, malaysianStateCode } from './codes.js';
import {
  documentCurrency,
  documentTotals,
  formatDecimal,
  formatPercent,
  isoDate,
  isoTime,
  normalizeLines,
  num,
  round2,
  str,
  taxBreakdown,
  taxIdOfType,
  type BreakdownEntry,
  type ResolvedDocumentType,
} from './normalize.js';
import { billingReference, legalMonetaryTotal, priceAmount, taxTotalAmountOnly } from './ubl-parts.js';
import { amount, branch, leaf, newXmlDocument, serialize, xmlOutput, ublRoot, type XmlNode, type XmlOutput } from './xml.js';

const MY_TAX_TYPES = new Set(['01', '02', '03', '04', '05', '06', 'E']);
const MY_TAX_WORDS: Record<string, string> = {
  SALES_TAX: '01',
  SERVICE_TAX: '02',
  TOURISM_TAX: '03',
  HIGH_VALUE_GOODS_TAX: '04',
  LOW_VALUE_GOODS_TAX: '05',
  NOT_APPLICABLE: '06',
  EXEMPT: 'E',
  O: '06',
  Z: '06',
};

/** The MyInvois tax type of a line: the code or word as sent, else 06 (not applicable) at rate 0, else 02 (service tax). */
export function myTaxType(raw: string | undefined, rate: number): string {
  if (raw) {
    const key = raw.replace(/[\s-]+/g, '_');
    if (MY_TAX_TYPES.has(key)) return key;
    if (/^\d$/.test(key)) return `0${key}`;
    const word = MY_TAX_WORDS[key];
    if (word) return word;
  }
  return rate > 0 ? '02' : '06';
}

export function myInvoisTypeCode(dt: ResolvedDocumentType): string {
  const base = dt.kind === 'credit_note' ? 2 : dt.kind === 'debit_note' ? 3 : 1;
  return `${dt.selfBilled ? 1 : 0}${base}`;
}

function myTaxScheme(parent: XmlNode): void {
  leaf(branch(parent, 'cac:TaxScheme'), 'cbc:ID', 'OTH', { schemeID: 'UN/ECE 5153', schemeAgencyID: '6' });
}

function myTaxCategory(parent: XmlNode, entry: Pick<BreakdownEntry, 'category' | 'exemptionReason'>): void {
  const cat = branch(parent, 'cac:TaxCategory');
  leaf(cat, 'cbc:ID', entry.category);
  if (entry.category === 'E') leaf(cat, 'cbc:TaxExemptionReason', entry.exemptionReason);
  myTaxScheme(cat);
}

function myAddress(parent: XmlNode, name: string, address: CoreAddress | undefined): void {
  if (!address) return;
  const a = branch(parent, name);
  leaf(a, 'cbc:CityName', address.city);
  leaf(a, 'cbc:PostalZone', address.postalCode);
  leaf(a, 'cbc:CountrySubentityCode', malaysianStateCode(address.stateOrProvince ?? address.countrySubdivision));
  for (const line of [address.addressLine1, address.addressLine2, address.addressLine3]) {
    if (str(line)) leaf(branch(a, 'cac:AddressLine'), 'cbc:Line', line);
  }
  const country = countryAlpha3(address.country);
  if (country) leaf(branch(a, 'cac:Country'), 'cbc:IdentificationCode', country, { listID: 'ISO3166-1', listAgencyID: '6' });
}

const MY_REGISTRATION_TYPES = ['BRN', 'NRIC', 'PASSPORT', 'ARMY'];

function myParty(parent: XmlNode, party: CoreParty | undefined): void {
  const p = branch(parent, 'cac:Party');
  const msic = party?.industryClassification;
  if (str(msic?.code)) leaf(p, 'cbc:IndustryClassificationCode', msic?.code, { name: msic?.description });
  const ids: Array<[string, string | undefined]> = [['TIN', taxIdOfType(party, ['TIN']) ?? party?.taxIds?.find((t) => str(t.value))?.value]];
  const registration = party?.registrationNumbers?.find((r) => MY_REGISTRATION_TYPES.includes((r.type ?? '').toUpperCase()) && str(r.value));
  ids.push([(registration?.type ?? 'BRN').toUpperCase(), registration?.value]);
  ids.push(['SST', taxIdOfType(party, ['SST'])]);
  ids.push(['TTX', taxIdOfType(party, ['TTX'])]);
  for (const [scheme, value] of ids) {
    if (str(value)) leaf(branch(p, 'cac:PartyIdentification'), 'cbc:ID', value, { schemeID: scheme });
  }
  myAddress(p, 'cac:PostalAddress', party?.address);
  if (str(party?.name)) leaf(branch(p, 'cac:PartyLegalEntity'), 'cbc:RegistrationName', party?.name);
  const contact = party?.contact;
  if (contact && (str(contact.phone) || str(contact.email))) {
    const c = branch(p, 'cac:Contact');
    leaf(c, 'cbc:Telephone', contact.phone);
    leaf(c, 'cbc:ElectronicMail', contact.email);
  }
}

export interface MyInvoisInput {
  doc: CoreDocument;
  dt: ResolvedDocumentType;
  uuid: string;
  issueTimestamp?: string;
}

export function buildMyInvoisInvoice(input: MyInvoisInput): XmlOutput {
  const { doc, dt } = input;
  const header = doc.header ?? {};
  const parties = doc.parties ?? {};
  const cur = documentCurrency(doc, 'MYR');
  const lines = normalizeLines(doc, 'C62');
  const breakdown = taxBreakdown(doc, lines, myTaxType);
  const totals = documentTotals(doc, lines, breakdown);
  const rate = num(header.exchangeRate?.rate as number | string | undefined);

  const xmlDoc = newXmlDocument();
  const root = ublRoot(xmlDoc, 'Invoice');
  // No cbc:UUID: MyInvois assigns the document UUID itself when it accepts the submission.
  leaf(root, 'cbc:ID', header.documentNumber);
  leaf(root, 'cbc:IssueDate', isoDate(header.issueDate) ?? isoDate(input.issueTimestamp));
  leaf(root, 'cbc:IssueTime', `${isoTime(header.issueTime) ?? isoTime(input.issueTimestamp) ?? '00:00:00'}Z`);
  leaf(root, 'cbc:InvoiceTypeCode', myInvoisTypeCode(dt), { listVersionID: '1.0' });
  leaf(root, 'cbc:Note', header.note);
  leaf(root, 'cbc:DocumentCurrencyCode', cur);
  leaf(root, 'cbc:TaxCurrencyCode', 'MYR');
  const period = header.invoicePeriod;
  if (period && (str(period.startDate) || str(period.endDate))) {
    const p = branch(root, 'cac:InvoicePeriod');
    leaf(p, 'cbc:StartDate', isoDate(period.startDate));
    leaf(p, 'cbc:EndDate', isoDate(period.endDate));
    leaf(p, 'cbc:Description', period.frequency);
  }
  if (dt.kind !== 'invoice' || header.precedingInvoiceReference?.id) {
    const preceding = header.precedingInvoiceReference;
    billingReference(root, { id: preceding?.id, uuid: preceding?.uuid });
  }

  myParty(branch(root, 'cac:AccountingSupplierParty'), parties.seller);
  myParty(branch(root, 'cac:AccountingCustomerParty'), parties.buyer);

  const delivery = parties.delivery;
  if (delivery && (delivery.address || str(delivery.name))) {
    const d = branch(root, 'cac:Delivery');
    leaf(d, 'cbc:ActualDeliveryDate', isoDate(delivery.deliveryDate));
    const party = branch(d, 'cac:DeliveryParty');
    myAddress(party, 'cac:PostalAddress', delivery.address);
    if (str(delivery.name)) leaf(branch(party, 'cac:PartyLegalEntity'), 'cbc:RegistrationName', delivery.name);
  }

  for (const pm of doc.payment?.paymentMeans ?? []) {
    const code = str(pm.paymentMeansCode);
    if (!code) continue;
    const p = branch(root, 'cac:PaymentMeans');
    leaf(p, 'cbc:PaymentMeansCode', code.padStart(2, '0'));
    const account = str(pm.creditTransferInfo?.payeeFinancialAccountId);
    if (account) leaf(branch(p, 'cac:PayeeFinancialAccount'), 'cbc:ID', account);
  }
  if (str(doc.payment?.paymentTerms)) leaf(branch(root, 'cac:PaymentTerms'), 'cbc:Note', doc.payment?.paymentTerms);
  if (cur !== 'MYR' && rate !== undefined) {
    const x = branch(root, 'cac:TaxExchangeRate');
    leaf(x, 'cbc:SourceCurrencyCode', cur);
    leaf(x, 'cbc:TargetCurrencyCode', 'MYR');
    leaf(x, 'cbc:CalculationRate', formatDecimal(rate));
  }

  const tt = branch(root, 'cac:TaxTotal');
  amount(tt, 'cbc:TaxAmount', totals.tax, cur);
  for (const entry of breakdown) {
    const sub = branch(tt, 'cac:TaxSubtotal');
    amount(sub, 'cbc:TaxableAmount', entry.taxable, cur);
    amount(sub, 'cbc:TaxAmount', entry.tax, cur);
    myTaxCategory(sub, entry);
  }
  if (cur !== 'MYR' && rate !== undefined) taxTotalAmountOnly(root, round2(totals.tax * rate), 'MYR');
  legalMonetaryTotal(root, totals, cur);

  for (const line of lines) {
    const el = branch(root, 'cac:InvoiceLine');
    leaf(el, 'cbc:ID', line.id);
    leaf(el, 'cbc:InvoicedQuantity', formatDecimal(line.quantity), { unitCode: line.unitCode });
    amount(el, 'cbc:LineExtensionAmount', line.net, cur);
    const category = myTaxType(line.rawCategory, line.rate);
    const ltt = branch(el, 'cac:TaxTotal');
    amount(ltt, 'cbc:TaxAmount', line.tax, cur);
    const sub = branch(ltt, 'cac:TaxSubtotal');
    amount(sub, 'cbc:TaxableAmount', line.net, cur);
    amount(sub, 'cbc:TaxAmount', line.tax, cur);
    leaf(sub, 'cbc:Percent', formatPercent(line.rate));
    myTaxCategory(sub, { category, exemptionReason: line.exemptionReason });
    const item = branch(el, 'cac:Item');
    leaf(item, 'cbc:Description', line.description ?? line.name);
    leaf(item, 'cbc:Name', line.name);
    const scheme = line.classification?.scheme?.toUpperCase();
    if (line.classification) {
      leaf(branch(item, 'cac:CommodityClassification'), 'cbc:ItemClassificationCode', line.classification.code, { listID: scheme ?? 'CLASS' });
    }
    const ptc = str(line.ext['my_tariffCode']);
    if (ptc) leaf(branch(item, 'cac:CommodityClassification'), 'cbc:ItemClassificationCode', ptc, { listID: 'PTC' });
    priceAmount(branch(el, 'cac:Price'), 'cbc:PriceAmount', line.price, cur);
    amount(branch(el, 'cac:ItemPriceExtension'), 'cbc:Amount', round2(line.quantity * line.grossPrice / (line.baseQuantity || 1)), cur);
  }

  const xml = serialize(xmlDoc);
  return xmlOutput(xml);
}
