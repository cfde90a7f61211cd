/**
 * UAE: Peppol PINT AE billing 1.0.4 (UBL 2.1 Invoice / CreditNote).
 *
 * - CustomizationID `urn:peppol:pint:billing-1@ae-1` (self-billing: `urn:peppol:pint:selfbilling-1@ae-1`),
 *   ProfileID `urn:peppol:bis:billing` (`urn:peppol:bis:selfbilling`).
 * - ProfileExecutionID carries the 8 transaction-type flags (ibr-154-ae), see `uaeTransactionTypeFlags`.
 * - Type codes (see `pintAeTypeCode`): 380 tax invoice, 381 credit note (a UBL CreditNote with
 *   BillingReference), 389 / 261 self-billed; a debit note is a 380 (389) Invoice with
 *   BillingReference; out-of-scope documents and documents without a taxable line use the
 *   commercial codes 480 (invoice) and 81 (credit note).
 * - TaxCurrencyCode AED, a second TaxTotal in AED, TaxExchangeRate (BTAE-04) and the AED total
 *   with VAT (BTAE-20, AdditionalDocumentReference `aedtotal-incl-vat`) only when the document
 *   currency is not AED.
 * - Buyer endpoint: the predefined PINT AE endpoints replace the buyer's Peppol id for deemed
 *   supplies (0235:9900000097), exports to a buyer without a Peppol id (0235:9900000099) and any
 *   other buyer without one (0235:9900000098).
 * - Beneficiary (BTAE-01, free trade zone) in BuyerCustomerParty; principal (BTAE-14, disclosed
 *   agent) in SellerSupplierParty; credit note reason (BTAE-03) in DiscrepancyResponse.
 * - Lines carry the item description (ibr-125-ae), the price base quantity and gross price
 *   (ibr-126-ae), the item type in CommodityClassification/CommodityCode, and ItemPriceExtension
 *   with the line amount with VAT (BTAE-10) and the VAT line amount (BTAE-08, absent for exempt).
 * - PaymentMeans is absent on credit notes and deemed supplies (ibr-191-ae).
 *
 * Line amounts (BTAE-08/10) are written in the document currency, as the payload gives them.
 */
import type { CoreDocument, CoreParty } from './core-document.js';
import { emirateCode } from './codes.js';
import {
  documentCurrency,
  documentTotals,
  formatDecimal,
  isoDate,
  isoTime,
  normalizeLines,
  num,
  registrationOf,
  round2,
  splitParticipantId,
  str,
  taxBreakdown,
  taxIdOf,
  uncl5305Category,
  type BreakdownEntry,
  type DocumentTotals,
  type NormalizedLine,
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
import { amount, branch, leaf, ublRoot, type XmlNode } from './xml.js';

export const PINT_AE_CUSTOMIZATION_ID = 'urn:peppol:pint:billing-1@ae-1';
export const PINT_AE_SELFBILLING_CUSTOMIZATION_ID = 'urn:peppol:pint:selfbilling-1@ae-1';
export const PINT_AE_PROFILE_ID = 'urn:peppol:bis:billing';
export const PINT_AE_SELFBILLING_PROFILE_ID = 'urn:peppol:bis:selfbilling';
export const UAE_PEPPOL_SCHEME = '0235';

/** Predefined PINT AE buyer endpoints (scheme 0235) for documents that are only reported to the FTA. */
export const PINT_AE_PREDEFINED_ENDPOINTS = {
  deemedSupply: '9900000097',
  buyerNotOnPeppol: '9900000098',
  exportWithoutPeppolId: '9900000099',
} as const;

/** Positions 1..8 of the PINT AE invoice transaction type (cbc:ProfileExecutionID). */
export const UAE_TRANSACTION_FLAG_ORDER = [
  'free_trade_zone',
  'deemed_supply',
  'margin_scheme',
  'summary',
  'continuous_supply',
  'disclosed_agent',
  'e_commerce',
  'export',
] as const;

/** The 8-character 0/1 transaction-type string for a set of (normalized) modifiers, e.g. "00010000". */
export function uaeTransactionTypeFlags(modifiers: Iterable<string>): string {
  const set = new Set(modifiers);
  return UAE_TRANSACTION_FLAG_ORDER.map((m) => (set.has(m) ? '1' : '0')).join('');
}

export function pintAeIdentifiers(dt: ResolvedDocumentType): { customizationId: string; profileId: string } {
  return dt.selfBilled
    ? { customizationId: PINT_AE_SELFBILLING_CUSTOMIZATION_ID, profileId: PINT_AE_SELFBILLING_PROFILE_ID }
    : { customizationId: PINT_AE_CUSTOMIZATION_ID, profileId: PINT_AE_PROFILE_ID };
}

/** The PINT AE aligned tax categories (ibr-139-ae). */
export const PINT_AE_TAX_CATEGORIES = ['S', 'Z', 'E', 'O', 'AE', 'N'] as const;

/**
 * Whether the document is a commercial document (480 invoice / 81 credit note) rather than a tax
 * document: with out_of_scope, or when no line is taxable (every line exempt E or not subject O).
 * PINT AE: "Invoices categorized under 480 or credit notes under 81 should only be associated with
 * tax category code E and O", and ibr-151-ae forbids a 380/381 made only of E and O lines.
 */
export function pintAeIsCommercial(outOfScope: boolean, lineCategories: readonly string[]): boolean {
  if (outOfScope) return true;
  return lineCategories.length > 0 && lineCategories.every((c) => c === 'E' || c === 'O');
}

/**
 * UNCL 1001 type code of the PINT AE document (PINT AE 1.0.4, 1.5.1 Document type):
 * - 480 / 81: commercial invoice / credit note (see `pintAeIsCommercial`), billing or self-billing;
 * - 389 / 261: self-billed invoice / credit note (self-billing rule set: only 389, 480, 261, 81);
 * - 380 / 381: tax invoice / tax credit note.
 * PINT AE has no debit note type: a UAE debit note (an upward adjustment of an earlier supply) is
 * a tax invoice (380, or 389 self-billed) that references the adjusted invoice in BillingReference.
 */
export function pintAeTypeCode(dt: ResolvedDocumentType, lineCategories: readonly string[] = []): string {
  const credit = dt.kind === 'credit_note';
  if (pintAeIsCommercial(dt.modifiers.has('out_of_scope'), lineCategories)) return credit ? '81' : '480';
  if (dt.selfBilled) return credit ? '261' : '389';
  return credit ? '381' : '380';
}

/** PINT AE frequency of billing codes (BTAE-06, ibr-005-ae) for the payload's frequency names. */
export const PINT_AE_FREQUENCY_CODES: Readonly<Record<string, string>> = {
  DAILY: 'DLY',
  WEEKLY: 'WKY',
  ONCE_IN_15_DAYS: 'Q15',
  MONTHLY: 'MTH',
  ONCE_IN_45_DAYS: 'Q45',
  ONCE_IN_60_DAYS: 'Q60',
};

/** Everything the PINT AE invoice and the TDD derive from the core document. */
export interface PintAeContext {
  doc: CoreDocument;
  dt: ResolvedDocumentType;
  uuid: string;
  root: 'Invoice' | 'CreditNote';
  typeCode: string;
  flags: string;
  currency: string;
  /** True when the document currency is not AED. */
  foreignCurrency: boolean;
  lines: NormalizedLine[];
  breakdown: BreakdownEntry[];
  totals: DocumentTotals;
  /** Total tax in AED (only when foreignCurrency). */
  taxInAed: number | undefined;
  /** Total with tax in AED (only when foreignCurrency). */
  totalInAed: number | undefined;
  ids: { customizationId: string; profileId: string };
  ext: Record<string, unknown>;
}

export function pintAeContext(doc: CoreDocument, dt: ResolvedDocumentType, uuid: string): PintAeContext {
  const ext = doc.extensions ?? {};
  const currency = documentCurrency(doc, 'AED');
  const foreignCurrency = currency !== 'AED';
  const lines = normalizeLines(doc);
  const categoryOf = (raw: string | undefined, rate: number) => uncl5305Category(raw, rate, dt.modifiers);
  // The breakdown is always the lines grouped by category and rate (never the payload's taxTotals),
  // so that every category's taxable and tax amounts equal its lines (aligned-ibrp-*-08, ibr-co-14).
  const breakdown = taxBreakdown({ ...doc, taxTotals: undefined }, lines, categoryOf);
  const totals = documentTotals(doc, lines, breakdown);
  const rate = num(doc.header?.exchangeRate?.rate as number | string | undefined);
  const taxInAed = foreignCurrency
    ? (num(ext['peppol_totalTaxAmountInTaxCurrency'] as number | string | undefined) ?? (rate !== undefined ? round2(totals.tax * rate) : undefined))
    : undefined;
  const totalInAed = foreignCurrency
    ? (num(ext['ae_totalAmountIncludingTaxInAED'] as number | string | undefined) ??
      (rate !== undefined ? round2(totals.taxInclusive * rate) : undefined))
    : undefined;
  return {
    doc,
    dt,
    uuid,
    root: dt.kind === 'credit_note' ? 'CreditNote' : 'Invoice',
    typeCode: pintAeTypeCode(
      dt,
      lines.map((l) => categoryOf(l.rawCategory, l.rate)),
    ),
    flags: uaeTransactionTypeFlags(dt.modifiers),
    currency,
    foreignCurrency,
    lines,
    breakdown,
    totals,
    taxInAed,
    totalInAed,
    ids: pintAeIdentifiers(dt),
    ext,
  };
}

const AE_TAX_CATEGORY: TaxCategoryOptions = {
  // ibr-121-ae: no rate on exempt; EN 16931: no rate on out of scope.
  withPercent: (category) => category !== 'E' && category !== 'O',
  exemption: (entry) =>
    entry.exemptionReasonCode || entry.exemptionReason ? { code: entry.exemptionReasonCode, reason: entry.exemptionReason } : undefined,
};

/** The endpoint of the seller: its Peppol id with the scheme from the extensions (default 0235). */
export function aeSellerEndpoint(ctx: PintAeContext): { scheme: string; value: string | undefined } {
  const seller = ctx.doc.parties?.seller;
  const id = splitParticipantId(seller?.peppolId, str(ctx.ext['peppol_seller_peppolIdScheme']));
  return { scheme: id.scheme ?? UAE_PEPPOL_SCHEME, value: id.value };
}

/** The endpoint of the buyer, with the predefined PINT AE endpoints where they apply. */
export function aeBuyerEndpoint(ctx: PintAeContext): { scheme: string; value: string } {
  const buyer = ctx.doc.parties?.buyer;
  const id = splitParticipantId(buyer?.peppolId, str(ctx.ext['peppol_buyer_peppolIdScheme']));
  const m = ctx.dt.modifiers;
  if (m.has('deemed_supply')) return { scheme: UAE_PEPPOL_SCHEME, value: PINT_AE_PREDEFINED_ENDPOINTS.deemedSupply };
  if (!id.value) {
    return {
      scheme: UAE_PEPPOL_SCHEME,
      value: m.has('export') ? PINT_AE_PREDEFINED_ENDPOINTS.exportWithoutPeppolId : PINT_AE_PREDEFINED_ENDPOINTS.buyerNotOnPeppol,
    };
  }
  return { scheme: id.scheme ?? UAE_PEPPOL_SCHEME, value: id.value };
}

/** The party's TRN (tax id typed TRN or VAT, else its first tax id). */
export function aeTrn(party: CoreParty | undefined): string | undefined {
  return taxIdOf(party, ['TRN', 'VAT']);
}

function aeParty(parent: XmlNode, party: CoreParty | undefined, endpoint: { scheme: string; value: string | undefined }, role: 'seller' | 'buyer', ext: Record<string, unknown>): void {
  const p = branch(parent, 'cac:Party');
  leaf(p, 'cbc:EndpointID', endpoint.value, { schemeID: endpoint.scheme });
  if (str(party?.tradeName)) leaf(branch(p, 'cac:PartyName'), 'cbc:Name', party?.tradeName);
  const address = party?.address;
  const country = str(address?.country)?.toUpperCase();
  peppolAddress(p, 'cac:PostalAddress', address, country === 'AE' ? emirateCode(address?.stateOrProvince) : str(address?.stateOrProvince));
  partyTaxScheme(p, aeTrn(party));
  const registration = registrationOf(party);
  if (!str(party?.name) && !registration) return contactOf(p, party);
  const legal = branch(p, 'cac:PartyLegalEntity');
  leaf(legal, 'cbc:RegistrationName', party?.name);
  if (registration) {
    const type = str(registration.type)?.toUpperCase();
    // Trade licence: the issuing authority; passport: the issuing country (PINT AE BTAE-11/12/15/16).
    const agencyName =
      type === 'TL'
        ? str(ext[`ae_${role}_authorityName`])
        : type === 'PAS'
          ? str(ext[role === 'seller' ? 'ae_seller_passportIssuingCountry' : 'ae_buyer_passportCountry'])
          : undefined;
    leaf(legal, 'cbc:CompanyID', registration.value, { schemeAgencyID: type, schemeAgencyName: agencyName });
  }
  contactOf(p, party);
}

function contactOf(p: XmlNode, party: CoreParty | undefined): void {
  const contact = party?.contact;
  if (contact && (str(contact.name) || str(contact.phone) || str(contact.email))) {
    const c = branch(p, 'cac:Contact');
    leaf(c, 'cbc:Name', contact.name);
    leaf(c, 'cbc:Telephone', contact.phone);
    leaf(c, 'cbc:ElectronicMail', contact.email);
  }
}

function aeLine(root: XmlNode, line: NormalizedLine, ctx: PintAeContext): void {
  const credit = ctx.root === 'CreditNote';
  const cur = ctx.currency;
  const category = uncl5305Category(line.rawCategory, line.rate, ctx.dt.modifiers);
  const el = branch(root, credit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine');
  leaf(el, 'cbc:ID', line.id);
  leaf(el, credit ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity', formatDecimal(line.quantity), { unitCode: line.unitCode });
  amount(el, 'cbc:LineExtensionAmount', line.net, cur);

  const item = branch(el, 'cac:Item');
  leaf(item, 'cbc:Description', line.description ?? line.name);
  leaf(item, 'cbc:Name', line.name ?? line.description);
  if (line.sellerItemId) leaf(branch(item, 'cac:SellersItemIdentification'), 'cbc:ID', line.sellerItemId);
  // IBT-157 item standard identifier (ibr-174-ae: scheme 0160 on reverse-charge lines).
  const standard = line.standardItemId;
  if (standard) leaf(branch(item, 'cac:StandardItemIdentification'), 'cbc:ID', standard.id, { schemeID: standard.scheme });
  const sac = str(line.ext['ae_serviceAccountingCode']);
  if (sac) leaf(branch(item, 'cac:AdditionalItemIdentification'), 'cbc:ID', sac, { schemeID: str(line.ext['ae_sacScheme']) ?? 'SAC' });
  const itemType = str(line.ext['ae_itemType']);
  const rcmType = str(line.ext['ae_rcmType']);
  if (itemType || rcmType) {
    const cc = branch(item, 'cac:CommodityClassification');
    leaf(cc, 'cbc:NatureCode', rcmType);
    leaf(cc, 'cbc:CommodityCode', itemType);
  }
  if (line.classification) {
    leaf(branch(item, 'cac:CommodityClassification'), 'cbc:ItemClassificationCode', line.classification.code, {
      listID: line.classification.scheme,
    });
  }
  taxCategory(
    item,
    'cac:ClassifiedTaxCategory',
    { category, rate: line.rate, exemptionReason: line.exemptionReason, exemptionReasonCode: line.exemptionReasonCode },
    AE_TAX_CATEGORY,
  );

  const price = branch(el, 'cac:Price');
  priceAmount(price, 'cbc:PriceAmount', line.price, cur);
  leaf(price, 'cbc:BaseQuantity', formatDecimal(line.baseQuantity), { unitCode: line.unitCode });
  const discount = branch(price, 'cac:AllowanceCharge');
  leaf(discount, 'cbc:ChargeIndicator', 'false');
  priceAmount(discount, 'cbc:Amount', Math.max(0, line.grossPrice - line.price), cur);
  priceAmount(discount, 'cbc:BaseAmount', line.grossPrice, cur);

  const extension = branch(el, 'cac:ItemPriceExtension');
  amount(extension, 'cbc:Amount', round2(line.net + line.tax), cur);
  if (category !== 'E') amount(branch(extension, 'cac:TaxTotal'), 'cbc:TaxAmount', line.tax, cur);
}

/**
 * Appends the PINT AE Invoice or CreditNote element to `parent`: a document, or an extension
 * content inside an envelope that declares the cac and cbc prefixes (`prefixesInScope`).
 */
export function writePintAeDocument(parent: XmlNode, ctx: PintAeContext, prefixesInScope = false): XmlNode {
  const { doc, dt, currency: cur } = ctx;
  const header = doc.header ?? {};
  const parties = doc.parties ?? {};
  const m = dt.modifiers;
  const credit = ctx.root === 'CreditNote';

  const root = ublRoot(parent, ctx.root, prefixesInScope);
  leaf(root, 'cbc:CustomizationID', ctx.ids.customizationId);
  leaf(root, 'cbc:ProfileID', ctx.ids.profileId);
  leaf(root, 'cbc:ProfileExecutionID', ctx.flags);
  leaf(root, 'cbc:ID', header.documentNumber);
  leaf(root, 'cbc:UUID', ctx.uuid);
  leaf(root, 'cbc:IssueDate', isoDate(header.issueDate));
  leaf(root, 'cbc:IssueTime', isoTime(header.issueTime));
  if (!credit) leaf(root, 'cbc:DueDate', isoDate(header.dueDate));
  leaf(root, credit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode', ctx.typeCode);
  leaf(root, 'cbc:Note', header.note);
  leaf(root, 'cbc:DocumentCurrencyCode', cur);
  if (ctx.foreignCurrency) leaf(root, 'cbc:TaxCurrencyCode', 'AED');
  leaf(root, 'cbc:BuyerReference', header.buyerReference);

  const period = header.invoicePeriod;
  if (period && (str(period.startDate) || str(period.endDate) || str(period.frequency))) {
    const p = branch(root, 'cac:InvoicePeriod');
    leaf(p, 'cbc:StartDate', isoDate(period.startDate));
    leaf(p, 'cbc:EndDate', isoDate(period.endDate));
    // BTAE-06 frequency of billing: the coded cbc:DescriptionCode (ibr-005-ae).
    const frequency = str(period.frequency)?.toUpperCase();
    leaf(p, 'cbc:DescriptionCode', frequency ? (PINT_AE_FREQUENCY_CODES[frequency] ?? frequency) : undefined);
  }
  if (credit) {
    const reasonCode = str(header.creditNoteReason?.code) ?? str(ctx.ext['ae_creditNoteReasonCode']);
    if (reasonCode || str(header.creditNoteReason?.description)) {
      const r = branch(root, 'cac:DiscrepancyResponse');
      leaf(r, 'cbc:ResponseCode', reasonCode);
      leaf(r, 'cbc:Description', header.creditNoteReason?.description);
    }
  }
  if (str(header.purchaseOrderReference)) leaf(branch(root, 'cac:OrderReference'), 'cbc:ID', header.purchaseOrderReference);
  const preceding = header.precedingInvoiceReference;
  billingReference(root, {
    id: preceding?.id,
    issueDate: isoDate(preceding?.issueDate ?? str(ctx.ext['peppol_precedingInvoiceIssueDate'])),
  });
  if (ctx.foreignCurrency && ctx.totalInAed !== undefined) {
    // BTAE-20: the total with VAT in AED.
    const r = branch(root, 'cac:AdditionalDocumentReference');
    leaf(r, 'cbc:ID', 'aedtotal-incl-vat');
    leaf(r, 'cbc:DocumentTypeCode', 'aedtotal-incl-vat');
    leaf(r, 'cbc:DocumentDescription', round2(ctx.totalInAed).toFixed(2));
  }

  aeParty(branch(root, 'cac:AccountingSupplierParty'), parties.seller, aeSellerEndpoint(ctx), 'seller', ctx.ext);
  aeParty(branch(root, 'cac:AccountingCustomerParty'), parties.buyer, aeBuyerEndpoint(ctx), 'buyer', ctx.ext);

  const beneficiary = str(ctx.ext['ae_beneficiaryId']);
  if (beneficiary) {
    leaf(branch(branch(branch(root, 'cac:BuyerCustomerParty'), 'cac:Party'), 'cac:PartyIdentification'), 'cbc:ID', beneficiary);
  }
  const principal = str(ctx.ext['ae_principalTRN']);
  if (principal) {
    leaf(branch(branch(branch(root, 'cac:SellerSupplierParty'), 'cac:Party'), 'cac:PartyIdentification'), 'cbc:ID', principal);
  }

  const delivery = parties.delivery;
  if (delivery && (delivery.address || str(delivery.deliveryDate) || str(delivery.name))) {
    const d = branch(root, 'cac:Delivery');
    leaf(d, 'cbc:ActualDeliveryDate', isoDate(delivery.deliveryDate));
    if (delivery.address) {
      const a = delivery.address;
      const country = str(a.country)?.toUpperCase();
      const sub = a.countrySubdivision ?? a.stateOrProvince;
      peppolAddress(branch(d, 'cac:DeliveryLocation'), 'cac:Address', a, country === 'AE' ? emirateCode(sub) : str(sub));
    }
    if (str(delivery.name)) leaf(branch(branch(d, 'cac:DeliveryParty'), 'cac:PartyName'), 'cbc:Name', delivery.name);
  }

  if (!credit && !m.has('deemed_supply')) {
    for (const pm of doc.payment?.paymentMeans ?? []) {
      const code = str(pm.paymentMeansCode);
      if (!code) continue;
      const p = branch(root, 'cac:PaymentMeans');
      leaf(p, 'cbc:PaymentMeansCode', code);
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
  }
  if (str(doc.payment?.paymentTerms)) leaf(branch(root, 'cac:PaymentTerms'), 'cbc:Note', doc.payment?.paymentTerms);

  if (ctx.foreignCurrency) {
    const rate = num(header.exchangeRate?.rate as number | string | undefined);
    if (rate !== undefined) {
      const x = branch(root, 'cac:TaxExchangeRate');
      leaf(x, 'cbc:SourceCurrencyCode', cur);
      leaf(x, 'cbc:TargetCurrencyCode', 'AED');
      leaf(x, 'cbc:CalculationRate', formatDecimal(rate));
      leaf(x, 'cbc:Date', isoDate(header.exchangeRate?.date));
    }
  }
  taxTotalWithBreakdown(root, ctx.totals.tax, ctx.breakdown, cur, AE_TAX_CATEGORY);
  if (ctx.foreignCurrency && ctx.taxInAed !== undefined) taxTotalAmountOnly(root, ctx.taxInAed, 'AED');
  legalMonetaryTotal(root, ctx.totals, cur);
  for (const line of ctx.lines) aeLine(root, line, ctx);
  return root;
}
