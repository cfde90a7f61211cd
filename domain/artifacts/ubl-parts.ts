/**
 * UBL 2.1 aggregates that several profiles write the same way. Each writer appends its children in
 * the order of the UBL 2.1 XSD sequence of its type (the XSD is the judge; see the tests).
 */
import type { CoreAddress } from './core-document.js';
import { formatAmount, formatDecimal, formatPercent, round2, str, type BreakdownEntry, type DocumentTotals } from './normalize.js';
import { amount, branch, leaf, type XmlNode } from './xml.js';

/** A unit price: at least 2 decimals, more (up to 6) only when the price needs them. */
export function formatPrice(n: number): string {
  if (n >= 1e21 || n <= -1e21) return formatAmount(n); // a whole number, written in full (no exponent)
  // A price that is a whole number of cents (the double nearest to one, as parsed or rounded) has
  // 2 decimals: formatAmount's, which spares the toFixed/Number round trips below.
  if (n < 1e9 && n > -1e9) {
    const cents = Math.round(n * 100);
    if (cents / 100 === n) return formatAmount(n);
  }
  const r = Number(n.toFixed(6));
  const twoDecimals = round2(r).toFixed(2);
  return Number(twoDecimals) === r ? twoDecimals : formatDecimal(r, 6);
}

export function priceAmount(parent: XmlNode, name: string, value: number, currency: string): void {
  leaf(parent, name, formatPrice(value), { currencyID: currency });
}

/**
 * AddressType in the Peppol style: StreetName, AdditionalStreetName, CityName, PostalZone,
 * CountrySubentity, AddressLine, Country (XSD order).
 */
export function peppolAddress(parent: XmlNode, name: string, address: CoreAddress | undefined, subentity: string | undefined): void {
  if (!address) return;
  const a = branch(parent, name);
  leaf(a, 'cbc:StreetName', address.streetName ?? address.addressLine1);
  leaf(a, 'cbc:AdditionalStreetName', address.streetName ? address.addressLine1 : address.addressLine2);
  leaf(a, 'cbc:CityName', address.city);
  leaf(a, 'cbc:PostalZone', address.postalCode);
  leaf(a, 'cbc:CountrySubentity', subentity);
  const extraLine = address.streetName ? address.addressLine2 : address.addressLine3;
  if (str(extraLine)) leaf(branch(a, 'cac:AddressLine'), 'cbc:Line', extraLine);
  const country = str(address.country);
  if (country) leaf(branch(a, 'cac:Country'), 'cbc:IdentificationCode', country.toUpperCase());
}

export function taxScheme(parent: XmlNode, id = 'VAT'): void {
  leaf(branch(parent, 'cac:TaxScheme'), 'cbc:ID', id);
}

/** cac:PartyTaxScheme with a CompanyID and the VAT scheme. */
export function partyTaxScheme(parent: XmlNode, companyId: string | undefined, scheme = 'VAT'): void {
  if (!str(companyId)) return;
  const pts = branch(parent, 'cac:PartyTaxScheme');
  leaf(pts, 'cbc:CompanyID', companyId);
  taxScheme(pts, scheme);
}

export interface TaxCategoryOptions {
  /** Whether cbc:Percent is written for a category. */
  withPercent: (category: string) => boolean;
  /** The exemption code and reason written for a breakdown entry (none when undefined). */
  exemption: (entry: Pick<BreakdownEntry, 'category' | 'exemptionReason' | 'exemptionReasonCode'>) =>
    | { code: string | undefined; reason: string | undefined }
    | undefined;
  scheme?: string;
}

/** TaxCategoryType: ID, Percent, TaxExemptionReasonCode, TaxExemptionReason, TaxScheme. */
export function taxCategory(
  parent: XmlNode,
  name: string,
  entry: Pick<BreakdownEntry, 'category' | 'rate' | 'exemptionReason' | 'exemptionReasonCode'>,
  options: TaxCategoryOptions,
): void {
  const cat = branch(parent, name);
  leaf(cat, 'cbc:ID', entry.category);
  if (options.withPercent(entry.category)) leaf(cat, 'cbc:Percent', formatPercent(entry.rate));
  const exemption = options.exemption(entry);
  if (exemption) {
    leaf(cat, 'cbc:TaxExemptionReasonCode', exemption.code);
    leaf(cat, 'cbc:TaxExemptionReason', exemption.reason);
  }
  taxScheme(cat, options.scheme ?? 'VAT');
}

/** cac:TaxTotal with the tax amount and one cac:TaxSubtotal per breakdown entry. */
export function taxTotalWithBreakdown(
  parent: XmlNode,
  total: number,
  breakdown: readonly BreakdownEntry[],
  currency: string,
  options: TaxCategoryOptions,
): void {
  const tt = branch(parent, 'cac:TaxTotal');
  amount(tt, 'cbc:TaxAmount', total, currency);
  for (const entry of breakdown) {
    const sub = branch(tt, 'cac:TaxSubtotal');
    amount(sub, 'cbc:TaxableAmount', entry.taxable, currency);
    amount(sub, 'cbc:TaxAmount', entry.tax, currency);
    taxCategory(sub, 'cac:TaxCategory', entry, options);
  }
}

/** cac:TaxTotal holding only the tax amount (the accounting-currency total of EN 16931 BT-111). */
export function taxTotalAmountOnly(parent: XmlNode, total: number, currency: string): void {
  amount(branch(parent, 'cac:TaxTotal'), 'cbc:TaxAmount', total, currency);
}

/** cac:LegalMonetaryTotal in XSD order. */
export function legalMonetaryTotal(parent: XmlNode, totals: DocumentTotals, currency: string, options?: { allowanceTotal?: boolean }): void {
  const m = branch(parent, 'cac:LegalMonetaryTotal');
  amount(m, 'cbc:LineExtensionAmount', totals.lineExtension, currency);
  amount(m, 'cbc:TaxExclusiveAmount', totals.taxExclusive, currency);
  amount(m, 'cbc:TaxInclusiveAmount', totals.taxInclusive, currency);
  if (options?.allowanceTotal) amount(m, 'cbc:AllowanceTotalAmount', 0, currency);
  amount(m, 'cbc:PrepaidAmount', totals.prepaid, currency);
  amount(m, 'cbc:PayableRoundingAmount', totals.rounding, currency);
  amount(m, 'cbc:PayableAmount', totals.payable, currency);
}

/** cac:BillingReference/cac:InvoiceDocumentReference (ID, UUID, IssueDate). */
export function billingReference(parent: XmlNode, ref: { id: string | undefined; uuid?: string | undefined; issueDate?: string | undefined }): void {
  if (!str(ref.id)) return;
  const r = branch(branch(parent, 'cac:BillingReference'), 'cac:InvoiceDocumentReference');
  leaf(r, 'cbc:ID', ref.id);
  leaf(r, 'cbc:UUID', ref.uuid);
  leaf(r, 'cbc:IssueDate', ref.issueDate);
}
