/**
 * The core document as the artifact generators read it: the payload shape of docs/api/unify.md
 * (`header`, `parties`, `lineItems`, `payment`, `taxTotals`, `totals`, `extensions`), plus the
 * places the spec leaves open that the generators use (`header.invoicePeriod`,
 * `header.precedingInvoiceReference`, `parties.delivery`, optional address details).
 *
 * Every field is optional: XML and PDF are produced only for documents that already passed the
 * country's validation, so the generators tolerate gaps (an absent optional element is simply not
 * written) instead of re-validating. Numbers may arrive as JSON numbers or numeric strings.
 */

export type CoreNumber = number | string;

export interface CoreAddress {
  addressLine1?: string;
  addressLine2?: string;
  addressLine3?: string;
  /** Street name when sent apart from addressLine1 (ZATCA). */
  streetName?: string;
  /** Building number (ZATCA: 4 digits). */
  buildingNumber?: string;
  /** Additional / plot number (ZATCA). */
  additionalNumber?: string;
  /** District / city subdivision (ZATCA). */
  district?: string;
  city?: string;
  postalCode?: string;
  /** UAE: emirate code (AUH, DXB, SHJ, UAQ, FUJ, AJM, RAK); Malaysia: state code 01..17. */
  stateOrProvince?: string;
  /** Delivery addresses use this name for the subdivision (docs/api/unify.md). */
  countrySubdivision?: string;
  /** ISO 3166-1 alpha-2. */
  country?: string;
}

export interface CoreIdentifier {
  type?: string;
  value?: string;
  /** Optional identification scheme (for example an ISO 6523 ICD). */
  scheme?: string;
}

export interface CoreContact {
  name?: string;
  phone?: string;
  email?: string;
}

export interface CoreParty {
  name?: string;
  /** Trading name when it differs from the legal name. */
  tradeName?: string;
  address?: CoreAddress;
  taxIds?: CoreIdentifier[];
  registrationNumbers?: CoreIdentifier[];
  /** Peppol participant identifier without the scheme prefix (the scheme is in the extensions). */
  peppolId?: string;
  contact?: CoreContact;
  /** Malaysia: MSIC code and description. */
  industryClassification?: { code?: string; description?: string };
}

export interface CoreDeliveryParty {
  name?: string;
  address?: CoreAddress;
  deliveryDate?: string;
}

export interface CoreLineItem {
  id?: string | number;
  name?: string;
  description?: string;
  quantity?: CoreNumber;
  unitCode?: string;
  taxAmount?: CoreNumber;
  lineTaxableValue?: CoreNumber;
  taxCategory?: string;
  taxRate?: CoreNumber;
  commodityClassification?: { code?: string; scheme?: string };
  price?: { amount?: CoreNumber; grossPrice?: CoreNumber; baseQuantity?: CoreNumber };
  taxExemptionReason?: string;
  taxExemptionReasonCode?: string;
  sellerItemId?: string;
  /** Buyer's item identifier (IBT-156). */
  buyerItemId?: string;
  /** Invoice line note (IBT-127). */
  note?: string;
  /** Item standard identifier (IBT-157): `{id, scheme}`, e.g. a GTIN with scheme 0160 (PINT AE reverse charge). */
  standardItemId?: { id?: string; scheme?: string };
  /** Names seen: ae_itemType, ae_rcmType, ae_serviceAccountingCode, ae_sacScheme. */
  extensions?: Record<string, unknown>;
}

export interface CorePaymentMeans {
  paymentMeansCode?: string | number;
  paymentId?: string;
  creditTransferInfo?: {
    payeeFinancialAccountId?: string;
    payeeFinancialAccountName?: string;
    financialInstitutionId?: string;
  };
}

export interface CoreTaxSubtotal {
  taxCategory?: string;
  category?: string;
  taxRate?: CoreNumber;
  rate?: CoreNumber;
  taxableAmount?: CoreNumber;
  taxAmount?: CoreNumber;
  taxExemptionReason?: string;
  taxExemptionReasonCode?: string;
}

export interface CoreTotals {
  totalAmountExcludingTax?: CoreNumber;
  totalAmountIncludingTax?: CoreNumber;
  amountDue?: CoreNumber;
  totalLineTaxableAmount?: CoreNumber;
  totalTaxAmount?: CoreNumber;
  prepaidAmount?: CoreNumber;
  roundingAmount?: CoreNumber;
  /** Sum of document-level allowances (IBT-107). */
  allowanceTotalAmount?: CoreNumber;
  /** Sum of document-level charges (IBT-108). */
  chargeTotalAmount?: CoreNumber;
}

export interface CoreHeader {
  documentType?: { base?: string; modifiers?: string[]; variant?: string };
  documentNumber?: string;
  documentId?: string;
  issueDate?: string;
  /** HH:MM:SS, optional. */
  issueTime?: string;
  dueDate?: string;
  /** Saudi Arabia: the supply (delivery) date; defaults to the issue date. */
  supplyDate?: string;
  currency?: string;
  taxCurrency?: string;
  /** 1 unit of `currency` = `rate` units of `taxCurrency`. */
  exchangeRate?: { rate?: CoreNumber; date?: string };
  invoicePeriod?: { startDate?: string; endDate?: string; frequency?: string };
  precedingInvoiceReference?: { id?: string; issueDate?: string; uuid?: string };
  buyerReference?: string;
  purchaseOrderReference?: string;
  /** The document's notes (IBT-022) as one text; a received document with several joins them with newlines. */
  note?: string;
  /** Every note of a received document, in document order. */
  notes?: string[];
  /** Credit/debit note reason (UAE BTAE-03 code such as DL8.61.1.A; ZATCA KSA-10 text). */
  creditNoteReason?: { code?: string; description?: string };
}

export interface CoreDocument {
  header?: CoreHeader;
  parties?: {
    seller?: CoreParty;
    buyer?: CoreParty;
    delivery?: CoreDeliveryParty;
  };
  lineItems?: CoreLineItem[];
  payment?: { paymentMeans?: CorePaymentMeans[]; paymentTerms?: string };
  /** Either the breakdown itself or an object holding it (`taxSubtotals` / `subtotals`). */
  taxTotals?: CoreTaxSubtotal[] | { taxAmount?: CoreNumber; taxSubtotals?: CoreTaxSubtotal[]; subtotals?: CoreTaxSubtotal[] };
  totals?: CoreTotals;
  extensions?: Record<string, unknown>;
}

/** `documentType` as submitted (docs/api/unify.md). */
export interface ArtifactDocumentType {
  base: string;
  modifiers?: readonly string[];
  variant?: string | null;
}
