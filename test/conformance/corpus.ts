/**
 * The conformance corpus: per country, payloads with the verdict the official rules give them.
 *
 * - `accepted`: the service accepts the payload, and the XML it writes passes the country's
 *   official validation artefacts (checked outside the test suite, see docs/conformance.md).
 * - `refused`: the service refuses it with `code`, and the finding names `official`, the official
 *   rule that would refuse its XML.
 *
 * Each case starts from the country's sample document (two lines) and changes what the case is
 * about; `withLines` recomputes every amount from the lines, so the arithmetic always holds.
 */
import type { DocumentTypeInput } from '../../domain/validation/index.js';
import { sampleDocument } from '../../domain/validation/index.js';

export type CorpusCountry = 'AE' | 'SA' | 'MY' | 'BE' | 'DE';
type Doc = Record<string, any>;

/** `warns`: warnings the service gives (each naming an official warning the payload chose to meet). */
export type Verdict = { verdict: 'accepted'; warns?: readonly string[] } | { verdict: 'refused'; code: string; official?: string };

export interface CorpusCase {
  readonly country: CorpusCountry;
  readonly name: string;
  readonly documentType: DocumentTypeInput;
  readonly document: Doc;
  readonly expect: Verdict;
}

const ACCEPTED: Verdict = { verdict: 'accepted' };
const refused = (code: string, official?: string): Verdict => ({ verdict: 'refused', code, ...(official ? { official } : {}) });

export interface LineSpec {
  category: string;
  rate: number;
  quantity?: number;
  price?: number;
  reasonCode?: string;
  reason?: string;
}

const cents = (n: number) => Math.round(n * 100);
const money = (c: number) => c / 100;

/** Replaces the lines (keeping the sample's line extras) and recomputes lines, breakdown and totals. */
export function withLines(doc: Doc, specs: readonly LineSpec[]): Doc {
  const template = doc['lineItems'] as Doc[];
  const lineItems = specs.map((s, i) => {
    const base = structuredClone(template[i % template.length]!);
    const quantity = s.quantity ?? i + 1;
    const price = s.price ?? 100 + 25 * i;
    const net = cents(quantity * price);
    const charged = s.category === 'S';
    const tax = charged ? Math.round((net * s.rate) / 100) : 0;
    const line: Doc = { ...base, id: String(i + 1), quantity, price: { amount: price, grossPrice: price }, lineTaxableValue: money(net), taxAmount: money(tax), taxCategory: s.category, taxRate: s.rate };
    delete line['taxExemptionReasonCode'];
    delete line['taxExemptionReason'];
    if (s.reasonCode) line['taxExemptionReasonCode'] = s.reasonCode;
    if (s.reason) line['taxExemptionReason'] = s.reason;
    return line;
  });
  const groups = new Map<string, { taxCategory: string; taxRate: number; taxable: number; tax: number; reasonCode?: string; reason?: string }>();
  for (const [i, l] of lineItems.entries()) {
    const key = `${l['taxCategory']}|${l['taxRate']}`;
    const g = groups.get(key) ?? { taxCategory: l['taxCategory'], taxRate: l['taxRate'], taxable: 0, tax: 0, reasonCode: specs[i]!.reasonCode, reason: specs[i]!.reason };
    g.taxable += cents(l['lineTaxableValue']);
    g.tax += cents(l['taxAmount']);
    groups.set(key, g);
  }
  const taxable = [...groups.values()].reduce((s, g) => s + g.taxable, 0);
  const tax = [...groups.values()].reduce((s, g) => s + g.tax, 0);
  return {
    ...doc,
    lineItems,
    taxTotals: [...groups.values()].map((g) => ({
      taxCategory: g.taxCategory,
      taxRate: g.taxRate,
      taxableAmount: money(g.taxable),
      taxAmount: money(g.tax),
      ...(g.reasonCode ? { taxExemptionReasonCode: g.reasonCode } : {}),
      ...(g.reason ? { taxExemptionReason: g.reason } : {}),
    })),
    totals: {
      totalLineTaxableAmount: money(taxable),
      totalAmountExcludingTax: money(taxable),
      totalTaxAmount: money(tax),
      totalAmountIncludingTax: money(taxable + tax),
      amountDue: money(taxable + tax),
    },
  };
}

function sample(country: CorpusCountry, dt: DocumentTypeInput, lines: readonly LineSpec[], change?: (d: Doc) => void): Doc {
  const doc = withLines(sampleDocument(country, { lines: 2, documentType: dt, documentNumber: `CONF-${country}-1` }), lines);
  change?.(doc);
  return doc;
}

const mk = (country: CorpusCountry) => (name: string, dt: DocumentTypeInput, lines: readonly LineSpec[], expect: Verdict, change?: (d: Doc) => void): CorpusCase => ({
  country,
  name,
  documentType: dt,
  document: sample(country, dt, lines, change),
  expect,
});

const t = (base: string, modifiers: string[] = [], variant?: string): DocumentTypeInput => ({ base, modifiers, ...(variant ? { variant } : {}) });

// United Arab Emirates (PINT AE 1.0.4) ---------------------------------------------------------

const AE_S = [{ category: 'S', rate: 5 }, { category: 'S', rate: 5, quantity: 2.5, price: 19.99 }];
const saudiBuyer = (d: Doc) => {
  d.parties.buyer = {
    name: 'Najd Supplies Co.',
    address: { country: 'SA', city: 'Riyadh', addressLine1: 'King Fahd Road 2345', stateOrProvince: 'Riyadh Region' },
    taxIds: [{ type: 'VAT', value: '300075588700003' }],
    registrationNumbers: [{ type: 'TL', value: 'CR-1010010000' }],
    peppolId: '1234567890',
  };
  d.extensions.ae_buyer_authorityName = 'Ministry of Commerce';
};

function aeCases(): CorpusCase[] {
  const c = mk('AE');
  const vd = (d: Doc) => {
    d.header.creditNoteReason = { code: 'VD', description: 'Volume discount' };
    delete d.header.precedingInvoiceReference;
  };
  return [
    c('tax-invoice', t('tax_invoice'), AE_S, ACCEPTED),
    c('tax-invoice-usd', t('tax_invoice'), AE_S, ACCEPTED, (d) => {
      d.header.currency = 'USD';
      d.header.taxCurrency = 'AED';
      d.header.exchangeRate = { rate: 3.6725 };
    }),
    c('tax-invoice-zero-rated', t('tax_invoice'), [{ category: 'S', rate: 5 }, { category: 'Z', rate: 0 }], ACCEPTED),
    c('tax-invoice-exempt-line', t('tax_invoice'), [{ category: 'S', rate: 5 }, { category: 'E', rate: 0, reasonCode: 'VATEX-AE-FIN', reason: 'Financial services' }], ACCEPTED),
    c('tax-invoice-exempt-line-without-code', t('tax_invoice'), [{ category: 'S', rate: 5 }, { category: 'E', rate: 0 }], refused('AE-LINE-013', 'ibr-167-ae')),
    c('credit-note', t('credit_note'), AE_S, ACCEPTED),
    c('credit-note-vd-without-reference', t('credit_note'), AE_S, ACCEPTED, vd),
    c('credit-note-vd-with-reference', t('credit_note'), AE_S, refused('AE-HEAD-025', 'ibr-055-ae'), (d) => {
      d.header.creditNoteReason = { code: 'VD', description: 'Volume discount' };
    }),
    c('credit-note-without-reference', t('credit_note'), AE_S, refused('AE-HEAD-006', 'ibr-055-ae'), (d) => {
      delete d.header.precedingInvoiceReference;
    }),
    c('debit-note', t('debit_note'), AE_S, ACCEPTED),
    c('export-to-saudi-buyer-with-vat', t('tax_invoice', ['export']), [{ category: 'Z', rate: 0 }], ACCEPTED, saudiBuyer),
    c('tax-invoice-foreign-buyer-with-vat', t('tax_invoice'), AE_S, ACCEPTED, saudiBuyer),
    c('uae-buyer-with-bad-trn', t('tax_invoice'), AE_S, refused('AE-BUY-012', 'ibr-132-ae'), (d) => {
      d.parties.buyer.taxIds = [{ type: 'TRN', value: '300075588700003' }];
    }),
    c('e-commerce', t('tax_invoice', ['e_commerce']), AE_S, ACCEPTED),
    c('free-trade-zone', t('tax_invoice', ['free_trade_zone']), AE_S, ACCEPTED),
    c('disclosed-agent', t('tax_invoice', ['disclosed_agent']), AE_S, ACCEPTED),
    c('summary', t('tax_invoice', ['summary']), AE_S, ACCEPTED),
    c('continuous-supply', t('tax_invoice', ['continuous_supply']), AE_S, ACCEPTED),
    c('deemed-supply', t('tax_invoice', ['deemed_supply']), AE_S, ACCEPTED),
    c('reverse-charge', t('tax_invoice', ['reverse_charge']), [{ category: 'AE', rate: 5 }, { category: 'AE', rate: 5 }], ACCEPTED),
    c('margin-scheme', t('tax_invoice', ['margin_scheme']), [{ category: 'N', rate: 5 }, { category: 'N', rate: 5 }], ACCEPTED),
    c('out-of-scope', t('tax_invoice', ['out_of_scope']), [{ category: 'O', rate: 0 }, { category: 'O', rate: 0 }], ACCEPTED),
    c('self-billed-invoice', t('tax_invoice', ['self_billed']), AE_S, ACCEPTED),
    c('self-billed-credit-note', t('credit_note', ['self_billed']), AE_S, ACCEPTED),
    c('out-of-scope-credit-note', t('credit_note', ['out_of_scope']), [{ category: 'O', rate: 0 }], ACCEPTED),
    c('exempt-only-credit-note', t('credit_note'), [{ category: 'E', rate: 0, reasonCode: 'VATEX-AE-FIN', reason: 'Financial services' }], ACCEPTED),
    c('export-debit-note', t('debit_note', ['export']), [{ category: 'Z', rate: 0 }], ACCEPTED, saudiBuyer),
    c('b2g-invoice', t('tax_invoice', [], 'b2g'), AE_S, ACCEPTED),
  ];
}

// Saudi Arabia (ZATCA 3.4.6) ------------------------------------------------------------------

const SA_S = [{ category: 'S', rate: 15 }, { category: 'S', rate: 15, quantity: 3, price: 12.5 }];
/** The national address of both parties (building number, district, additional number, postal code). */
const nationalAddress = (d: Doc) => {
  Object.assign(d.parties.seller.address, { buildingNumber: '2345', additionalNumber: '6789', district: 'Al Olaya', postalCode: '12211' });
  if (d.parties.buyer) Object.assign(d.parties.buyer.address, { buildingNumber: '8821', additionalNumber: '3344', district: 'Al Rawdah', postalCode: '23435' });
};
const reason = (d: Doc) => {
  d.header.creditNoteReason = { description: 'Returned goods' };
};

function saCases(): CorpusCase[] {
  const c = mk('SA');
  const simplifiedBuyer = (d: Doc) => {
    nationalAddress(d);
    delete d.parties.buyer;
  };
  return [
    c('tax-invoice', t('tax_invoice'), SA_S, ACCEPTED, nationalAddress),
    c('tax-invoice-usd', t('tax_invoice'), SA_S, ACCEPTED, (d) => {
      nationalAddress(d);
      d.header.currency = 'USD';
      d.header.exchangeRate = { rate: 3.75 };
    }),
    c('tax-invoice-zero-rated', t('tax_invoice'), [{ category: 'S', rate: 15 }, { category: 'Z', rate: 0, reasonCode: 'VATEX-SA-32', reason: 'Export of goods' }], ACCEPTED, nationalAddress),
    c('tax-invoice-exempt', t('tax_invoice'), [{ category: 'S', rate: 15 }, { category: 'E', rate: 0, reasonCode: 'VATEX-SA-29', reason: 'Financial services mentioned in Article 29 of the VAT Regulations' }], ACCEPTED, nationalAddress),
    c('tax-invoice-not-subject', t('tax_invoice'), [{ category: 'S', rate: 15 }, { category: 'O', rate: 0, reasonCode: 'VATEX-SA-OOS', reason: 'Not subject to VAT' }], ACCEPTED, nationalAddress),
    c('tax-invoice-exempt-without-code', t('tax_invoice'), [{ category: 'S', rate: 15 }, { category: 'E', rate: 0 }], { verdict: 'accepted', warns: ['SA-LINE-001'] }, nationalAddress),
    c('simplified', t('tax_invoice', [], 'simplified'), SA_S, ACCEPTED, simplifiedBuyer),
    c('credit-note', t('credit_note'), SA_S, ACCEPTED, (d) => {
      nationalAddress(d);
      reason(d);
    }),
    c('credit-note-without-reason', t('credit_note'), SA_S, refused('SA-HEAD-019', 'BR-KSA-17'), (d) => {
      nationalAddress(d);
      delete d.header.creditNoteReason;
    }),
    c('export-credit-note', t('credit_note', ['export']), [{ category: 'Z', rate: 0, reasonCode: 'VATEX-SA-32', reason: 'Export of goods' }], ACCEPTED, (d) => {
      nationalAddress(d);
      reason(d);
      d.parties.buyer = {
        name: 'Falcon Trading LLC',
        address: { country: 'AE', city: 'Dubai', addressLine1: 'Bay Square', buildingNumber: '12', postalCode: '00000', district: 'Business Bay' },
        registrationNumbers: [{ type: 'OTH', value: 'CN-1234567' }],
      };
    }),
    c('simplified-credit-note', t('credit_note', [], 'simplified'), SA_S, ACCEPTED, (d) => {
      simplifiedBuyer(d);
      reason(d);
    }),
    c('debit-note', t('debit_note'), SA_S, ACCEPTED, (d) => {
      nationalAddress(d);
      reason(d);
    }),
    c('export', t('tax_invoice', ['export']), [{ category: 'Z', rate: 0, reasonCode: 'VATEX-SA-32', reason: 'Export of goods' }], ACCEPTED, (d) => {
      nationalAddress(d);
      d.parties.buyer = {
        name: 'Falcon Trading LLC',
        address: { country: 'AE', city: 'Dubai', addressLine1: 'Bay Square', buildingNumber: '12', postalCode: '00000', district: 'Business Bay' },
        registrationNumbers: [{ type: 'OTH', value: 'CN-1234567' }],
      };
    }),
    c('self-billed', t('tax_invoice', ['self_billed']), SA_S, ACCEPTED, nationalAddress),
    c('tax-invoice-not-subject-without-reason', t('tax_invoice'), [{ category: 'S', rate: 15 }, { category: 'O', rate: 0 }], { verdict: 'accepted', warns: ['SA-LINE-002'] }, nationalAddress),
    c('simplified-self-billed', t('tax_invoice', ['self_billed'], 'simplified'), SA_S, refused('SA-HEAD-026', 'BR-KSA-31'), simplifiedBuyer),
    c('third-party', t('tax_invoice', ['disclosed_agent']), SA_S, ACCEPTED, nationalAddress),
    c('nominal-supply', t('tax_invoice', ['deemed_supply']), SA_S, ACCEPTED, nationalAddress),
    c('summary', t('tax_invoice', ['summary']), SA_S, ACCEPTED, (d) => {
      nationalAddress(d);
      d.header.invoicePeriod = { startDate: '2026-01-01', endDate: '2026-01-31' };
    }),
    // A simplified summary invoice names its buyer (BR-KSA-71, a warning).
    c('simplified-summary', t('tax_invoice', ['summary'], 'simplified'), SA_S, ACCEPTED, (d) => {
      simplifiedBuyer(d);
      d.parties.buyer = { name: 'Hijaz Builders Ltd' };
      d.header.invoicePeriod = { startDate: '2026-01-01', endDate: '2026-01-31' };
    }),
    c('simplified-summary-without-buyer-name', t('tax_invoice', ['summary'], 'simplified'), SA_S, { verdict: 'accepted', warns: ['SA-BUY-026'] }, (d) => {
      simplifiedBuyer(d);
      d.header.invoicePeriod = { startDate: '2026-01-01', endDate: '2026-01-31' };
    }),
    c('simplified-summary-without-period', t('tax_invoice', ['summary'], 'simplified'), SA_S, refused('SA-HEAD-009', 'BR-KSA-72'), (d) => {
      simplifiedBuyer(d);
      delete d.header.invoicePeriod;
    }),
    // ZATCA reports an incomplete national address as a warning (BR-KSA-09, BR-KSA-37): so does the service.
    c('seller-without-building-number', t('tax_invoice'), SA_S, { verdict: 'accepted', warns: ['SA-SELL-020'] }, (d) => {
      nationalAddress(d);
      delete d.parties.seller.address.buildingNumber;
    }),
  ];
}

// Malaysia (MyInvois 1.0; no public Schematron: verdicts and the UBL schema only) -------------

function myCases(): CorpusCase[] {
  const c = mk('MY');
  const MY_S = [{ category: 'S', rate: 8 }, { category: 'S', rate: 8, quantity: 4, price: 7.25 }];
  return [
    c('tax-invoice', t('tax_invoice'), MY_S, ACCEPTED),
    c('credit-note', t('credit_note'), MY_S, ACCEPTED),
    c('debit-note', t('debit_note'), MY_S, ACCEPTED),
    c('export', t('tax_invoice', ['export']), MY_S, ACCEPTED),
    c('self-billed', t('tax_invoice', ['self_billed']), MY_S, ACCEPTED),
    c('summary', t('tax_invoice', ['summary']), MY_S, ACCEPTED),
    c('credit-note-without-reference', t('credit_note'), MY_S, refused('MY-HEAD-006'), (d) => {
      delete d.header.precedingInvoiceReference;
    }),
  ];
}

// Belgium and Germany (Peppol BIS Billing 3.0; Germany also XRechnung 3.0.2) ------------------

function euCases(country: 'BE' | 'DE'): CorpusCase[] {
  const c = mk(country);
  const rate = country === 'BE' ? 21 : 19;
  const reduced = country === 'BE' ? 6 : 7;
  const S = [{ category: 'S', rate }, { category: 'S', rate: reduced, quantity: 1.5, price: 33.33 }];
  const foreignBuyer = (d: Doc) => {
    d.parties.buyer = {
      name: 'Acme Inc.',
      address: { country: 'US', city: 'New York', addressLine1: '5th Avenue 1', postalCode: '10001' },
      peppolId: '0123456789',
    };
    d.extensions.peppol_buyer_peppolIdScheme = '0060';
  };
  const euBuyer = (d: Doc) => {
    d.parties.buyer = {
      name: 'Lumière SARL',
      address: { country: 'FR', city: 'Lyon', addressLine1: 'Rue de la République 1', postalCode: '69002' },
      taxIds: [{ type: 'VAT', value: 'FR40303265045' }],
      peppolId: '30326504500018',
    };
    d.extensions.peppol_buyer_peppolIdScheme = '0009';
  };
  const O = { category: 'O', rate: 0, reasonCode: 'VATEX-EU-O', reason: 'Not subject to VAT' };
  // A seller identified by its legal registration number only, and a buyer without VAT identifier.
  const registrationOnly = (d: Doc) => {
    delete d.parties.seller.taxIds;
    d.parties.seller.registrationNumbers = [country === 'BE' ? { type: '0208', value: '0123456749' } : { type: '0204', value: '991-12345-67' }];
    delete d.parties.buyer.taxIds;
  };
  const common = [
    c('tax-invoice', t('tax_invoice'), S, ACCEPTED),
    c('tax-invoice-with-order-reference', t('tax_invoice'), S, ACCEPTED, (d) => {
      d.header.purchaseOrderReference = 'PO-4711';
    }),
    c('tax-invoice-usd', t('tax_invoice'), S, ACCEPTED, (d) => {
      d.header.currency = 'USD';
      d.header.taxCurrency = 'EUR';
      d.header.exchangeRate = { rate: 0.92 };
    }),
    c('credit-note', t('credit_note'), S, ACCEPTED),
    c('debit-note', t('debit_note'), S, ACCEPTED),
    c('zero-rated', t('tax_invoice'), [{ category: 'S', rate }, { category: 'Z', rate: 0 }], ACCEPTED),
    c('exempt', t('tax_invoice'), [{ category: 'S', rate }, { category: 'E', rate: 0, reasonCode: 'VATEX-EU-132-1I', reason: 'Exempt medical care' }], ACCEPTED),
    c('exempt-without-code', t('tax_invoice'), [{ category: 'S', rate }, { category: 'E', rate: 0 }], refused(`${country}-LINE-001`, 'BR-E-10')),
    c('intra-community', t('tax_invoice'), [{ category: 'K', rate: 0 }], ACCEPTED, (d) => {
      euBuyer(d);
      d.parties.delivery = { address: { country: 'FR', city: 'Lyon', addressLine1: 'Quai 3', postalCode: '69002' }, deliveryDate: '2026-01-14' };
    }),
    c('export', t('tax_invoice', ['export']), [{ category: 'G', rate: 0 }], ACCEPTED, foreignBuyer),
    c('reverse-charge', t('tax_invoice', ['reverse_charge']), [{ category: 'AE', rate: 0 }], ACCEPTED, euBuyer),
    c('self-billed-invoice', t('tax_invoice', ['self_billed']), S, ACCEPTED),
    c('self-billed-credit-note', t('credit_note', ['self_billed']), S, ACCEPTED),
    c('self-billed-debit-note', t('debit_note', ['self_billed']), S, ACCEPTED),
    c('margin-scheme', t('tax_invoice', ['margin_scheme']), [{ category: 'E', rate: 0, reasonCode: 'VATEX-EU-J', reason: 'Margin scheme - Collectors items and antiques' }], ACCEPTED),
    c('prepayment', t('tax_invoice', [], 'prepayment'), S, ACCEPTED),
    // The seller VAT identifier as EN 16931 asks for it: by the lines' VAT categories, not always.
    c('not-subject-seller-with-registration-only', t('tax_invoice'), [O, O], ACCEPTED, registrationOnly),
    c('not-subject-with-seller-vat', t('tax_invoice'), [O], refused(`${country}-LINE-003`, 'BR-O-02'), (d) => {
      delete d.parties.buyer.taxIds;
    }),
    c('not-subject-mixed-with-standard', t('tax_invoice'), [{ category: 'S', rate }, O], refused(`${country}-LINE-002`, 'BR-O-11'), registrationOnly),
    c('standard-without-seller-vat', t('tax_invoice'), S, refused(`${country}-SELL-010`, 'BR-S-02'), registrationOnly),
    c('zero-rated-without-seller-vat', t('tax_invoice'), [{ category: 'Z', rate: 0 }], refused(`${country}-SELL-030`, 'BR-Z-02'), registrationOnly),
    c('seller-without-any-identifier', t('tax_invoice'), [O], refused(`${country}-SELL-009`, 'BR-CO-26'), (d) => {
      registrationOnly(d);
      delete d.parties.seller.registrationNumbers;
    }),
    c('endpoint-scheme-outside-eas', t('tax_invoice'), S, refused(`${country}-SELL-019`, 'PEPPOL-EN16931-CL008'), (d) => {
      d.extensions.peppol_seller_peppolIdScheme = 'EM';
      d.parties.seller.peppolId = 'rechnung@example.com';
    }),
  ];
  if (country === 'BE') {
    return [
      ...common,
      c('enterprise-number-bad-check-digits', t('tax_invoice'), S, refused('BE-BUY-013', 'PEPPOL-COMMON-R043'), (d) => {
        d.parties.buyer.peppolId = '0987654395';
      }),
    ];
  }
  return [
    ...common,
    c('public-buyer-with-leitweg-id', t('tax_invoice', [], 'b2g'), S, ACCEPTED, (d) => {
      d.header.buyerReference = '04011000-12345-34';
      d.header.purchaseOrderReference = 'PO-4711';
    }),
    c('buyer-without-postal-code', t('tax_invoice'), S, refused('DE-BUY-023', 'BR-DE-9'), (d) => {
      delete d.parties.buyer.address.postalCode;
    }),
    c('without-delivery-date', t('tax_invoice'), S, { verdict: 'accepted', warns: ['DE-HEAD-031'] }, (d) => {
      delete d.parties.delivery;
    }),
    c('seller-without-contact', t('tax_invoice'), S, refused('DE-SELL-024', 'BR-DE-2'), (d) => {
      delete d.parties.seller.contact;
    }),
    c('seller-contact-without-phone', t('tax_invoice'), S, refused('DE-SELL-021', 'BR-DE-6'), (d) => {
      delete d.parties.seller.contact.phone;
    }),
  ];
}

/** Every case of every country. */
export function conformanceCorpus(): CorpusCase[] {
  return [...aeCases(), ...saCases(), ...myCases(), ...euCases('BE'), ...euCases('DE')];
}
