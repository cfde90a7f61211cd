/**
 * Valid sample core documents, one per supported country, in the docs/api/unify.md shape: the
 * payload reference in executable form, and realistic input for tests and benchmarks.
 * Amounts are consistent (no arithmetic warnings). Pure: the issue date is a parameter.
 */
import type { Country, DocumentTypeInput } from './document-types.js';

export interface SampleOptions {
  /** Number of line items (default 20). */
  readonly lines?: number;
  readonly documentNumber?: string;
  /** Default `{base: 'tax_invoice', modifiers: []}`; the sample adds what the type requires. */
  readonly documentType?: DocumentTypeInput;
  /** Default 2026-01-15. */
  readonly issueDate?: string;
}

interface CountryParties {
  currency: string;
  taxRate: number;
  seller: Record<string, unknown>;
  buyer: Record<string, unknown>;
  extensions: Record<string, unknown>;
}

const PARTIES: Record<Country, CountryParties> = {
  AE: {
    currency: 'AED',
    taxRate: 5,
    seller: {
      name: 'Falcon Trading LLC',
      address: { country: 'AE', city: 'Dubai', addressLine1: 'Office 1204, Bay Square, Business Bay', stateOrProvince: 'DXB' },
      taxIds: [{ type: 'TRN', value: '100234567800003' }],
      registrationNumbers: [{ type: 'TL', value: 'CN-1234567' }],
      peppolId: '1002345678',
    },
    buyer: {
      name: 'Oasis Retail PJSC',
      address: { country: 'AE', city: 'Abu Dhabi', addressLine1: 'Tower B, Al Maryah Island', stateOrProvince: 'AUH' },
      taxIds: [{ type: 'TRN', value: '100987654300003' }],
      registrationNumbers: [{ type: 'TL', value: 'CN-7654321' }],
      peppolId: '1009876543',
    },
    // Both parties register with a trade licence (TL): PINT AE then wants its issuing authority (ibr-172-ae, ibr-101-ae).
    extensions: {
      peppol_seller_peppolIdScheme: '0235',
      peppol_buyer_peppolIdScheme: '0235',
      ae_seller_authorityName: 'Dubai Department of Economy and Tourism',
      ae_buyer_authorityName: 'Abu Dhabi Department of Economic Development',
    },
  },
  SA: {
    currency: 'SAR',
    taxRate: 15,
    seller: {
      name: 'Najd Supplies Co.',
      // The national address: building number, additional number, district and postal code (BR-KSA-09).
      address: {
        country: 'SA',
        city: 'Riyadh',
        addressLine1: 'King Fahd Road',
        buildingNumber: '2345',
        additionalNumber: '6789',
        district: 'Al Olaya',
        postalCode: '12211',
        stateOrProvince: 'Riyadh Region',
      },
      taxIds: [{ type: 'VAT', value: '300000000000003' }],
      registrationNumbers: [{ type: 'CRN', value: '1010010000' }],
    },
    buyer: {
      name: 'Hijaz Builders Ltd',
      address: {
        country: 'SA',
        city: 'Jeddah',
        addressLine1: 'Prince Sultan Street',
        buildingNumber: '8821',
        additionalNumber: '3344',
        district: 'Al Rawdah',
        postalCode: '23435',
        stateOrProvince: 'Makkah Region',
      },
      taxIds: [{ type: 'VAT', value: '310122393500003' }],
    },
    extensions: {},
  },
  MY: {
    currency: 'MYR',
    taxRate: 8,
    seller: {
      name: 'Kinabalu Tech Sdn Bhd',
      address: { country: 'MY', city: 'Kuala Lumpur', addressLine1: 'Level 12, Menara Sentral', stateOrProvince: '14' },
      taxIds: [{ type: 'TIN', value: 'C21234567080' }],
      registrationNumbers: [{ type: 'BRN', value: '201901234567' }],
    },
    buyer: {
      name: 'Penang Components Bhd',
      address: { country: 'MY', city: 'George Town', addressLine1: '22 Lebuh Pantai', stateOrProvince: '07' },
      taxIds: [{ type: 'TIN', value: 'C10987654320' }],
      registrationNumbers: [{ type: 'BRN', value: '200501012345' }],
    },
    extensions: {},
  },
  BE: {
    currency: 'EUR',
    taxRate: 21,
    seller: {
      name: 'Brabant Logistics NV',
      address: { country: 'BE', city: 'Brussels', addressLine1: 'Rue de la Loi 16' },
      taxIds: [{ type: 'VAT', value: 'BE0123456749' }],
      peppolId: '0123456749',
    },
    buyer: {
      name: 'Antwerp Port Services BV',
      address: { country: 'BE', city: 'Antwerp', addressLine1: 'Havenlaan 5' },
      taxIds: [{ type: 'VAT', value: 'BE0987654394' }],
      peppolId: '0987654394',
    },
    extensions: { peppol_seller_peppolIdScheme: '0208', peppol_buyer_peppolIdScheme: '0208' },
  },
  DE: {
    currency: 'EUR',
    taxRate: 19,
    seller: {
      name: 'Rheinwerk Maschinen GmbH',
      address: { country: 'DE', city: 'Köln', addressLine1: 'Domstraße 10', postalCode: '50667' },
      taxIds: [{ type: 'VAT', value: 'DE123456789' }],
      peppolId: 'DE123456789',
      // XRechnung: the seller contact with name, telephone and e-mail (BR-DE-2, BR-DE-5..7).
      contact: { name: 'Anna Schmidt', phone: '+49 221 123456', email: 'rechnung@rheinwerk.example' },
    },
    buyer: {
      name: 'Hanse Handel AG',
      address: { country: 'DE', city: 'Hamburg', addressLine1: 'Speicherstadt 3', postalCode: '20457' },
      taxIds: [{ type: 'VAT', value: 'DE987654321' }],
      peppolId: 'DE987654321',
    },
    // Endpoints under the Peppol EAS scheme 9930 (German VAT number).
    extensions: { peppol_seller_peppolIdScheme: '9930', peppol_buyer_peppolIdScheme: '9930' },
  },
};

const round2 = (n: number) => Math.round(n * 100) / 100;
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** A valid core document for `country` and the requested document type. */
export function sampleDocument(country: Country, options: SampleOptions = {}): Record<string, unknown> {
  const p = PARTIES[country];
  const lines = options.lines ?? 20;
  const dt = options.documentType ?? { base: 'tax_invoice', modifiers: [] };
  const modifiers = dt.modifiers ?? [];
  const issueDate = options.issueDate ?? '2026-01-15';
  const lineItems: Record<string, unknown>[] = [];
  let taxable = 0;
  let tax = 0;
  // UAE line category by modifier (PINT AE): O out of scope, N margin scheme (every line, ibr-116-ae;
  // no line tax: the VAT on the margin is not shown), AE reverse charge (no line tax), else S.
  const aeCategory = modifiers.includes('out_of_scope') ? 'O' : modifiers.includes('margin_scheme') ? 'N' : modifiers.includes('reverse_charge') ? 'AE' : 'S';
  const category = country === 'AE' ? aeCategory : 'S';
  const taxRate = category === 'O' ? 0 : p.taxRate;
  const charged = category === 'S';
  for (let i = 0; i < lines; i++) {
    const quantity = (i % 5) + 1;
    const amount = round2(12.5 + i * 3.75);
    const lineTaxableValue = round2(quantity * amount);
    const taxAmount = charged ? round2((lineTaxableValue * taxRate) / 100) : 0;
    taxable += lineTaxableValue;
    tax += taxAmount;
    lineItems.push({
      id: String(i + 1),
      name: `Item ${i + 1}: industrial supply`,
      quantity,
      unitCode: 'EA',
      taxAmount,
      lineTaxableValue,
      taxCategory: category,
      taxRate,
      commodityClassification: { code: `8471.${String(30 + (i % 60)).padStart(2, '0')}`, scheme: 'HS' },
      price: { amount, grossPrice: amount },
      // UAE item type (BTAE-13): G goods carry the HS classification above, S services a service accounting code.
      ...(country === 'AE' ? aeLineExtras(i, category) : {}),
    });
  }
  taxable = round2(taxable);
  tax = round2(tax);
  const header: Record<string, unknown> = {
    documentType: { base: dt.base },
    documentNumber: options.documentNumber ?? `INV-${country}-000001`,
    documentId: `doc-${country}-000001`,
    issueDate,
    dueDate: '2026-02-14',
    currency: p.currency,
  };
  if (dt.base === 'credit_note' || dt.base === 'debit_note') {
    header['precedingInvoiceReference'] = { id: `INV-${country}-000000`, issueDate: '2026-01-02' };
  }
  if (country === 'AE' && dt.base === 'credit_note') header['creditNoteReason'] = { code: 'DL8.61.1.B', description: 'Price adjustment' };
  // Germany: a public buyer (b2g) is addressed by its Leitweg-ID as the buyer reference (BR-DE-15).
  if (country === 'DE' && dt.variant === 'b2g') header['buyerReference'] = '04011000-12345-34';
  // ZATCA: the reason of a credit or debit note (KSA-10, BR-KSA-17).
  if (country === 'SA' && (dt.base === 'credit_note' || dt.base === 'debit_note')) header['creditNoteReason'] = { description: 'Price adjustment' };
  if (modifiers.includes('summary')) {
    header['invoicePeriod'] = { startDate: '2026-01-01', endDate: '2026-01-31', frequency: 'MONTHLY' };
  }
  const parties: Record<string, unknown> = { seller: clone(p.seller), buyer: clone(p.buyer) };
  // Germany: the delivery date (XRechnung BR-DE-TMP-32 asks for it or the invoice period).
  if (country === 'DE') parties['delivery'] = { deliveryDate: issueDate };
  if (country === 'AE' && (modifiers.includes('export') || modifiers.includes('e_commerce'))) {
    parties['delivery'] = { address: { addressLine1: 'Warehouse 7, Jebel Ali Free Zone', city: 'Dubai', countrySubdivision: 'DXB', country: 'AE' } };
  }
  return {
    header,
    parties,
    lineItems,
    payment: { paymentMeans: [{ paymentMeansCode: '30', creditTransferInfo: { payeeFinancialAccountId: 'AE070331234567890123456' } }] },
    taxTotals: [{ taxCategory: category, taxRate, taxableAmount: taxable, taxAmount: tax }],
    totals: {
      totalLineTaxableAmount: taxable,
      totalAmountExcludingTax: taxable,
      totalTaxAmount: tax,
      totalAmountIncludingTax: round2(taxable + tax),
      amountDue: round2(taxable + tax),
    },
    extensions: { ...clone(p.extensions), ...(country === 'AE' ? aeDocumentExtras(modifiers) : {}) },
  };
}

/**
 * UAE line fields PINT AE asks for: the item type (BTAE-13; G goods carry the HS classification,
 * S services a service accounting code) and, on reverse-charge lines, the item's GTIN (scheme 0160)
 * and the type of goods or services subject to reverse charge.
 */
function aeLineExtras(i: number, category: string): Record<string, unknown> {
  const extensions: Record<string, unknown> =
    i % 2 === 0 ? { ae_itemType: 'G' } : { ae_itemType: 'S', ae_serviceAccountingCode: `9983${String(11 + (i % 80)).padStart(2, '0')}` };
  if (category !== 'AE') return { extensions };
  return { standardItemId: { id: `0629${String(100000000 + i).padStart(9, '0')}`, scheme: '0160' }, extensions: { ...extensions, ae_rcmType: 'DL8.48.3.1' } };
}

/** UAE document fields the transaction types ask for: beneficiary (free trade zone), principal (disclosed agent). */
function aeDocumentExtras(modifiers: readonly string[]): Record<string, unknown> {
  return {
    ...(modifiers.includes('free_trade_zone') ? { ae_beneficiaryId: '100555666700003' } : {}),
    ...(modifiers.includes('disclosed_agent') ? { ae_principalTRN: '100444555600003' } : {}),
  };
}
