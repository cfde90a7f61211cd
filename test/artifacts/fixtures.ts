/**
 * Core documents for the artifact tests: a UAE document satisfying the docs/api/unify.md UAE rules for any
 * modifier set, and sample documents for Saudi Arabia, Malaysia, Belgium and Germany.
 */
import type { CoreDocument, CoreLineItem } from '../../domain/artifacts/index.js';

export const UAE_MODIFIERS = [
  'free_trade_zone',
  'deemed_supply',
  'margin_scheme',
  'summary',
  'continuous_supply',
  'disclosed_agent',
  'e_commerce',
  'export',
  'reverse_charge',
  'out_of_scope',
] as const;

export type UaeBase = 'tax_invoice' | 'credit_note' | 'debit_note';

/**
 * Whether the UAE rules accept a modifier set: PINT AE ibr-157-ae forbids deemed supply, margin
 * scheme and summary on an out-of-scope (commercial, 480/81) document; everything else combines.
 */
export function uaeAccepts(modifiers: readonly string[]): boolean {
  const m = new Set(modifiers);
  return !(m.has('out_of_scope') && (m.has('deemed_supply') || m.has('margin_scheme') || m.has('summary')));
}

/** Every modifier subset the UAE rules accept (576 of the 1024). */
export function acceptedUaeModifierSets(): string[][] {
  const sets: string[][] = [];
  for (let mask = 0; mask < 1 << UAE_MODIFIERS.length; mask++) {
    const set = UAE_MODIFIERS.filter((_, i) => mask & (1 << i));
    if (uaeAccepts(set)) sets.push(set);
  }
  return sets;
}

function uaeLine(i: number, modifiers: ReadonlySet<string>): CoreLineItem {
  const quantity = (i % 4) + 1;
  const price = 100 + i * 12.5;
  const net = Math.round(quantity * price * 100) / 100;
  const outOfScope = modifiers.has('out_of_scope');
  // PINT AE ibr-116-ae: with the margin scheme every line is N (rate stated, no line tax).
  const margin = !outOfScope && modifiers.has('margin_scheme');
  const reverse = !outOfScope && !margin && modifiers.has('reverse_charge');
  const exempt = !outOfScope && !margin && !reverse && i % 5 === 4;
  const zero = !outOfScope && !margin && !reverse && !exempt && modifiers.has('export');
  const category = outOfScope ? 'O' : margin ? 'N' : reverse ? 'AE' : exempt ? 'E' : zero ? 'Z' : 'S';
  const rate = category === 'S' || category === 'AE' || category === 'N' ? 5 : 0;
  const tax = category === 'S' ? Math.round(net * 5) / 100 : 0;
  return {
    id: String(i + 1),
    name: `Item ${i + 1} & co <special>`,
    description: `Description of item ${i + 1}`,
    quantity,
    unitCode: i % 2 ? 'H87' : 'EA',
    taxAmount: tax,
    lineTaxableValue: net,
    taxCategory: category,
    taxRate: rate,
    commodityClassification: { code: `8471.30.${10 + i}`, scheme: 'HS' },
    price: { amount: price, grossPrice: i % 3 === 0 ? price + 5 : price },
    ...(exempt ? { taxExemptionReasonCode: 'VATEX-AE-ED', taxExemptionReason: 'Exempt supply' } : {}),
    ...(outOfScope ? { taxExemptionReasonCode: 'VATEX-AE-OOS', taxExemptionReason: 'Out of scope' } : {}),
    ...(reverse ? { standardItemId: { id: `0629${String(100000000 + i)}`, scheme: '0160' } } : {}),
    extensions: {
      ae_itemType: i % 2 ? 'S' : 'G',
      ...(i % 2 ? { ae_serviceAccountingCode: '998311', ae_sacScheme: 'SAC' } : {}),
      ...(reverse ? { ae_rcmType: 'DL8.48.3.1' } : {}),
    },
  };
}

export interface UaeOptions {
  base?: UaeBase;
  modifiers?: readonly string[];
  currency?: string;
  lines?: number;
  buyerCountry?: string;
}

export function uaeDocument(options: UaeOptions = {}): CoreDocument {
  const base = options.base ?? 'tax_invoice';
  const modifiers = new Set(options.modifiers ?? []);
  const currency = options.currency ?? 'AED';
  const foreign = currency !== 'AED';
  const rate = 3.6725;
  const lineItems = Array.from({ length: options.lines ?? 3 }, (_, i) => uaeLine(i, modifiers));
  const net = lineItems.reduce((s, l) => s + Number(l.lineTaxableValue), 0);
  const tax = lineItems.reduce((s, l) => s + Number(l.taxAmount), 0);
  const r2 = (n: number) => Math.round(n * 100) / 100;
  const exportBuyer = modifiers.has('export');
  const buyerCountry = options.buyerCountry ?? (exportBuyer ? 'US' : 'AE');
  const delivery = modifiers.has('e_commerce') || modifiers.has('export');
  return {
    header: {
      documentType: { base },
      documentNumber: `AE-${base}-${[...modifiers].join('+') || 'plain'}-${currency}`,
      documentId: 'internal-1',
      issueDate: '2025-07-01',
      ...(base === 'tax_invoice' && !modifiers.has('deemed_supply') ? { dueDate: '2025-07-31' } : {}),
      ...(base === 'debit_note' ? { dueDate: '2025-07-31' } : {}),
      currency,
      ...(foreign ? { taxCurrency: 'AED', exchangeRate: { rate } } : {}),
      ...(modifiers.has('summary') || modifiers.has('continuous_supply')
        ? { invoicePeriod: { startDate: '2025-06-01', endDate: '2025-06-30', frequency: 'MONTHLY' } }
        : {}),
      ...(base !== 'tax_invoice' ? { precedingInvoiceReference: { id: 'AE-INV-0001' } } : {}),
      ...(base === 'credit_note' ? { creditNoteReason: { code: 'DL8.61.1.B', description: 'Price change' } } : {}),
      buyerReference: 'PO-4711',
    },
    parties: {
      seller: {
        name: 'Emirates Trading LLC',
        address: { addressLine1: 'Sheikh Zayed Road 1', city: 'Dubai', stateOrProvince: 'DXB', country: 'AE' },
        taxIds: modifiers.has('out_of_scope') ? [] : [{ type: 'TRN', value: '100000000000003' }],
        registrationNumbers: [{ type: 'TL', value: 'TL-998877' }],
        peppolId: '1000000000',
      },
      buyer: {
        name: exportBuyer ? 'Overseas Buyer Inc' : 'Abu Dhabi Buyer LLC',
        address: exportBuyer
          ? { addressLine1: '1 Main Street', city: 'New York', stateOrProvince: 'NY', country: buyerCountry }
          : { addressLine1: 'Corniche Road 5', city: 'Abu Dhabi', stateOrProvince: 'Abu Dhabi', country: 'AE' },
        taxIds: exportBuyer ? [] : [{ type: 'TRN', value: '100000000100003' }],
        registrationNumbers: exportBuyer ? [{ type: 'PAS', value: 'P1234567' }] : [{ type: 'TL', value: 'TL-112233' }],
        ...(exportBuyer ? {} : { peppolId: '1000000001' }),
      },
      ...(delivery
        ? {
            delivery: {
              name: 'Receiving dock',
              address: exportBuyer
                ? { addressLine1: '1 Harbor Way', city: 'New York', countrySubdivision: 'NY', country: 'US' }
                : { addressLine1: 'Warehouse 7, Al Quoz', city: 'Dubai', countrySubdivision: 'Dubai', country: 'AE' },
            },
          }
        : {}),
    },
    lineItems,
    payment: { paymentMeans: [{ paymentMeansCode: '30', creditTransferInfo: { payeeFinancialAccountId: 'AE070331234567890123456' } }] },
    totals: {
      totalLineTaxableAmount: r2(net),
      totalAmountExcludingTax: r2(net),
      totalTaxAmount: r2(tax),
      totalAmountIncludingTax: r2(net + tax),
      amountDue: r2(net + tax),
    },
    extensions: {
      peppol_seller_peppolIdScheme: '0235',
      peppol_buyer_peppolIdScheme: '0235',
      ae_seller_authorityName: 'Dubai Economy and Tourism',
      ae_buyer_authorityName: 'Abu Dhabi DED',
      ...(exportBuyer ? { ae_buyer_passportCountry: 'US' } : {}),
      ...(base !== 'tax_invoice' ? { peppol_precedingInvoiceIssueDate: '2025-06-15' } : {}),
      ...(foreign ? { peppol_totalTaxAmountInTaxCurrency: r2(tax * rate), ae_totalAmountIncludingTaxInAED: r2((net + tax) * rate) } : {}),
      ...(modifiers.has('free_trade_zone') ? { ae_beneficiaryId: '100000000200003' } : {}),
      ...(modifiers.has('disclosed_agent') ? { ae_principalTRN: '100000000300003' } : {}),
    },
  };
}

export function saudiDocument(options: { simplified?: boolean; number?: string; base?: UaeBase } = {}): CoreDocument {
  const lines: CoreLineItem[] = [
    { id: '1', name: 'Coffee beans 1kg', quantity: 2, unitCode: 'PCE', price: { amount: 50 }, lineTaxableValue: 100, taxAmount: 15, taxCategory: 'S', taxRate: 15 },
    { id: '2', name: 'Export service', quantity: 1, unitCode: 'PCE', price: { amount: 40, grossPrice: 50 }, lineTaxableValue: 40, taxAmount: 0, taxCategory: 'Z', taxRate: 0, taxExemptionReasonCode: 'VATEX-SA-32', taxExemptionReason: 'Export of goods' },
  ];
  return {
    header: {
      documentNumber: options.number ?? 'SA-0001',
      issueDate: '2025-07-01',
      issueTime: '10:15:30',
      currency: 'SAR',
      ...(options.base && options.base !== 'tax_invoice'
        ? { precedingInvoiceReference: { id: 'SA-0000' }, creditNoteReason: { description: 'Returned goods' } }
        : {}),
    },
    parties: {
      seller: {
        name: 'Riyadh Roasters Co',
        address: { streetName: 'King Fahd Road', buildingNumber: '1234', additionalNumber: '5678', district: 'Al Olaya', city: 'Riyadh', postalCode: '12211', country: 'SA' },
        taxIds: [{ type: 'VAT', value: '300000000000003' }],
        registrationNumbers: [{ type: 'CRN', value: '1010010000' }],
      },
      ...(options.simplified
        ? {}
        : {
            buyer: {
              name: 'Jeddah Retail LLC',
              address: { streetName: 'Tahlia Street', buildingNumber: '4321', district: 'Al Andalus', city: 'Jeddah', postalCode: '23326', country: 'SA' },
              taxIds: [{ type: 'VAT', value: '310000000000003' }],
            },
          }),
    },
    lineItems: lines,
    payment: { paymentMeans: [{ paymentMeansCode: '10' }] },
    totals: { totalLineTaxableAmount: 140, totalAmountExcludingTax: 140, totalTaxAmount: 15, totalAmountIncludingTax: 155, amountDue: 155 },
  };
}

export function malaysianDocument(options: { base?: UaeBase; currency?: string } = {}): CoreDocument {
  const currency = options.currency ?? 'MYR';
  return {
    header: {
      documentNumber: 'MY-0001',
      issueDate: '2025-07-01',
      currency,
      ...(currency !== 'MYR' ? { taxCurrency: 'MYR', exchangeRate: { rate: 4.7 } } : {}),
      ...(options.base && options.base !== 'tax_invoice' ? { precedingInvoiceReference: { id: 'MY-0000', uuid: 'F9D425P6DS7D8IU' } } : {}),
    },
    parties: {
      seller: {
        name: 'Kuala Lumpur Supplies Sdn Bhd',
        address: { addressLine1: 'Lot 66, Bangunan Merdeka', addressLine2: 'Persiaran Jaya', city: 'Kuala Lumpur', postalCode: '50480', stateOrProvince: 'Kuala Lumpur', country: 'MY' },
        taxIds: [{ type: 'TIN', value: 'C2584563200' }, { type: 'SST', value: 'W10-1808-32000001' }],
        registrationNumbers: [{ type: 'BRN', value: '201901234567' }],
        contact: { phone: '+60123456789', email: 'billing@kl-supplies.my' },
        industryClassification: { code: '46510', description: 'Wholesale of computer hardware, software and peripherals' },
      },
      buyer: {
        name: 'Penang Electronics Bhd',
        address: { addressLine1: 'Jalan Sultan Ahmad Shah 12', city: 'George Town', postalCode: '10050', stateOrProvince: '07', country: 'MY' },
        taxIds: [{ type: 'TIN', value: 'C1234567890' }],
        registrationNumbers: [{ type: 'BRN', value: '199001012345' }],
        contact: { phone: '+60412345678' },
      },
    },
    lineItems: [
      { id: '1', name: 'Laptop', description: 'Laptop 14 inch', quantity: 2, unitCode: 'C62', price: { amount: 3000 }, lineTaxableValue: 6000, taxAmount: 480, taxCategory: '02', taxRate: 8, commodityClassification: { code: '003', scheme: 'CLASS' } },
      { id: '2', name: 'Warranty', quantity: 1, unitCode: 'C62', price: { amount: 200 }, lineTaxableValue: 200, taxAmount: 0, taxCategory: 'E', taxRate: 0, taxExemptionReason: 'Exempt under Service Tax Act', commodityClassification: { code: '022' } },
    ],
    payment: { paymentMeans: [{ paymentMeansCode: '3', creditTransferInfo: { payeeFinancialAccountId: '1234567890123' } }], paymentTerms: 'Payment within 30 days' },
    totals: { totalLineTaxableAmount: 6200, totalAmountExcludingTax: 6200, totalTaxAmount: 480, totalAmountIncludingTax: 6680, amountDue: 6680 },
  };
}

export function europeanDocument(country: 'BE' | 'DE', options: { base?: UaeBase; taxCurrency?: string } = {}): CoreDocument {
  const be = country === 'BE';
  return {
    header: {
      documentNumber: `${country}-2025-0001`,
      issueDate: '2025-07-01',
      dueDate: '2025-07-31',
      currency: 'EUR',
      ...(options.taxCurrency ? { taxCurrency: options.taxCurrency, exchangeRate: { rate: 0.85 } } : {}),
      ...(options.base && options.base !== 'tax_invoice' ? { precedingInvoiceReference: { id: `${country}-2025-0000`, issueDate: '2025-06-01' } } : {}),
      ...(be ? { buyerReference: 'REF-42' } : { purchaseOrderReference: 'PO-2025-17' }),
    },
    parties: {
      seller: be
        ? {
            name: 'Brussels Consulting NV',
            address: { addressLine1: 'Rue de la Loi 16', city: 'Brussels', postalCode: '1000', country: 'BE' },
            taxIds: [{ type: 'VAT', value: '0123456749' }],
            registrationNumbers: [{ type: '0208', value: '0123456749' }],
            peppolId: '0123456749',
          }
        : {
            name: 'Berlin Maschinenbau GmbH',
            address: { addressLine1: 'Unter den Linden 1', city: 'Berlin', postalCode: '10117', country: 'DE' },
            taxIds: [{ type: 'VAT', value: 'DE123456789' }],
            registrationNumbers: [{ type: 'HRB', value: 'HRB 12345' }],
            peppolId: 'DE123456789',
          },
      buyer: be
        ? {
            name: 'Antwerp Logistics BV',
            address: { addressLine1: 'Meir 1', city: 'Antwerpen', postalCode: '2000', country: 'BE' },
            taxIds: [{ type: 'VAT', value: 'BE0987654321' }],
            peppolId: '0987654321',
          }
        : {
            name: 'München Handel AG',
            address: { addressLine1: 'Marienplatz 8', city: 'München', postalCode: '80331', country: 'DE' },
            taxIds: [{ type: 'VAT', value: 'DE987654321' }],
            peppolId: 'DE987654321',
          },
    },
    lineItems: [
      { id: '1', name: 'Consulting hours', quantity: 10, unitCode: 'HUR', price: { amount: 120 }, lineTaxableValue: 1200, taxAmount: be ? 252 : 228, taxCategory: 'S', taxRate: be ? 21 : 19 },
      { id: '2', name: 'Training', quantity: 1, unitCode: 'C62', price: { amount: 300, grossPrice: 350 }, lineTaxableValue: 300, taxAmount: 0, taxCategory: 'E', taxRate: 0, taxExemptionReason: 'Exempt education service' },
    ],
    payment: { paymentMeans: [{ paymentMeansCode: '58', paymentId: 'INV-2025-0001', creditTransferInfo: { payeeFinancialAccountId: be ? 'BE68539007547034' : 'DE89370400440532013000' } }] },
    totals: { totalLineTaxableAmount: 1500, totalAmountExcludingTax: 1500, totalTaxAmount: be ? 252 : 228, totalAmountIncludingTax: be ? 1752 : 1728, amountDue: be ? 1752 : 1728 },
    extensions: { peppol_seller_peppolIdScheme: be ? '0208' : '9930', peppol_buyer_peppolIdScheme: be ? '0208' : '9930' },
  };
}
