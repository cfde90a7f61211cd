/**
 * Property: for random valid UAE payloads (every base, every modifier combination the rules allow,
 * every PINT AE tax category, AED and USD), the validator accepts the payload and the generated
 * PINT AE XML passes the OASIS UBL 2.1 schemas and the PINT AE rules the project implements, read
 * back from the XML: the type code lists of the billing and self-billing rule sets (ibr-cl-01),
 * ibr-151-ae, ibr-174-ae, ibr-116-ae, ibr-172-ae / ibr-101-ae, ibr-005-ae, ibr-016 and the totals
 * (ibr-co-10, -13, -14, -15), the category breakdown (aligned-ibrp-*-08/09) and the line amounts
 * (ibr-147-ae). A payload the validator refuses never reaches the generator (the command layer
 * stores it as rejected); here a refused payload fails the property, since the builder only makes
 * valid ones.
 *
 * PINT_AE_XML_DIR=<dir> writes every generated document there, for a check with the official
 * Schematron outside the test suite.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { expect } from 'chai';
import fc from 'fast-check';
import { generateInvoiceXml } from '../../domain/artifacts/index.js';
import { validateDocument } from '../../domain/validation/index.js';
import { attrs, has, text, texts } from './xml-query.js';
import { mainSchema, validateAgainst } from './xsd.js';

const UUID = '5f0c7d2e-8a1b-4c3d-9e8f-0a1b2c3d4e5f';
const NOW = new Date('2026-01-20T00:00:00Z');
const MODIFIERS = ['free_trade_zone', 'deemed_supply', 'margin_scheme', 'summary', 'continuous_supply', 'disclosed_agent', 'e_commerce', 'export', 'reverse_charge', 'out_of_scope', 'self_billed'] as const;
const r2 = (n: number) => Math.round(n * 100) / 100;

type Doc = Record<string, any>;

/** Modifier sets the UAE rules allow: out_of_scope (480/81) excludes summary, deemed supply and margin scheme (ibr-157-ae). */
const modifierSet = fc.subarray([...MODIFIERS]).filter((m) => !(m.includes('out_of_scope') && m.some((x) => x === 'summary' || x === 'deemed_supply' || x === 'margin_scheme')));

interface LineSpec {
  category: string;
  quantity: number;
  priceCents: number;
  discountCents: number;
  itemType: 'G' | 'S' | 'B';
}

function categoriesFor(modifiers: readonly string[]): string[] {
  if (modifiers.includes('out_of_scope')) return ['E', 'O', 'Z'];
  if (modifiers.includes('margin_scheme')) return ['N'];
  return ['S', 'Z', 'E', 'O', 'AE'];
}

const caseArb = fc
  .record({
    base: fc.constantFrom('tax_invoice', 'credit_note', 'debit_note'),
    modifiers: modifierSet,
    currency: fc.constantFrom('AED', 'USD'),
  })
  .chain((head) =>
    fc.record({
      head: fc.constant(head),
      lines: fc.array(
        fc.record({
          category: fc.constantFrom(...categoriesFor(head.modifiers)),
          quantity: fc.integer({ min: 1, max: 25 }),
          priceCents: fc.integer({ min: 1, max: 500_000 }),
          discountCents: fc.integer({ min: 0, max: 2_000 }),
          itemType: fc.constantFrom<'G' | 'S' | 'B'>('G', 'S', 'B'),
        }),
        { minLength: 1, maxLength: 6 },
      ),
    }),
  )
  // Summary, deemed supply and margin scheme need a taxable line (ibr-157-ae): such a draw is replaced, not refused.
  .map(({ head, lines }) => {
    const needsTaxable = head.modifiers.some((m) => m === 'summary' || m === 'deemed_supply');
    if (needsTaxable && lines.every((l) => l.category === 'E' || l.category === 'O')) lines[0] = { ...lines[0]!, category: 'S' };
    return { head, lines };
  });

function payload(head: { base: string; modifiers: string[]; currency: string }, specs: LineSpec[]): Doc {
  const m = new Set(head.modifiers);
  const exportBuyer = m.has('export');
  let net = 0;
  let tax = 0;
  const lineItems = specs.map((l, i) => {
    const price = l.priceCents / 100;
    const lineTaxableValue = r2(l.quantity * price);
    const rate = l.category === 'S' || l.category === 'AE' || l.category === 'N' ? 5 : 0;
    const taxAmount = l.category === 'S' ? r2(lineTaxableValue * 0.05) : 0;
    net += lineTaxableValue;
    tax += taxAmount;
    return {
      id: String(i + 1),
      name: `Item ${i + 1}`,
      description: `Item ${i + 1} described`,
      quantity: l.quantity,
      unitCode: 'H87',
      price: { amount: price, grossPrice: r2(price + l.discountCents / 100) },
      lineTaxableValue,
      taxCategory: l.category,
      taxRate: rate,
      taxAmount,
      ...(l.category === 'E' ? { taxExemptionReasonCode: 'VATEX-AE-ED', taxExemptionReason: 'Exempt financial service' } : {}),
      ...(l.itemType !== 'S' ? { commodityClassification: { code: '847130', scheme: 'HS' } } : {}),
      ...(l.category === 'AE' ? { standardItemId: { id: `06291041500${String(10 + i)}`, scheme: '0160' } } : {}),
      extensions: {
        ae_itemType: l.itemType,
        ...(l.itemType !== 'G' ? { ae_serviceAccountingCode: '998311' } : {}),
        ...(l.category === 'AE' ? { ae_rcmType: 'DL8.48.3.1' } : {}),
      },
    };
  });
  net = r2(net);
  tax = r2(tax);
  const foreign = head.currency !== 'AED';
  const rate = 3.6725;
  const needsBuyerVat = !exportBuyer || m.has('reverse_charge') || specs.some((l) => l.category === 'AE');
  return {
    header: {
      documentType: { base: head.base },
      documentNumber: `P-${head.base}-${head.modifiers.join('+') || 'none'}`,
      issueDate: '2026-01-15',
      dueDate: '2026-02-14',
      currency: head.currency,
      ...(foreign ? { taxCurrency: 'AED', exchangeRate: { rate } } : {}),
      ...(m.has('summary') || m.has('continuous_supply') ? { invoicePeriod: { startDate: '2026-01-01', endDate: '2026-01-31', frequency: 'MONTHLY' } } : {}),
      ...(head.base !== 'tax_invoice' ? { precedingInvoiceReference: { id: 'INV-0001', issueDate: '2026-01-02' } } : {}),
      ...(head.base === 'credit_note' ? { creditNoteReason: { code: 'DL8.61.1.B', description: 'Price change' } } : {}),
    },
    parties: {
      seller: {
        name: 'Falcon Trading LLC',
        address: { addressLine1: 'Bay Square 12', city: 'Dubai', stateOrProvince: 'DXB', country: 'AE' },
        taxIds: [{ type: 'TRN', value: '100234567800003' }],
        registrationNumbers: [{ type: 'TL', value: 'CN-1234567' }],
        peppolId: '1002345678',
      },
      buyer: exportBuyer
        ? {
            name: 'Overseas Buyer Inc',
            address: { addressLine1: '1 Main Street', city: 'New York', stateOrProvince: 'NY', country: 'US' },
            taxIds: needsBuyerVat ? [{ type: 'TRN', value: '100987654300003' }] : [],
            registrationNumbers: [{ type: 'PAS', value: 'P1234567' }],
            peppolId: '1009876543',
          }
        : {
            name: 'Oasis Retail PJSC',
            address: { addressLine1: 'Al Maryah Island', city: 'Abu Dhabi', stateOrProvince: 'AUH', country: 'AE' },
            taxIds: [{ type: 'TRN', value: '100987654300003' }],
            registrationNumbers: [{ type: 'TL', value: 'CN-7654321' }],
            peppolId: '1009876543',
          },
      ...(m.has('e_commerce') || exportBuyer
        ? { delivery: { address: { addressLine1: 'Warehouse 7', city: 'Dubai', countrySubdivision: 'DXB', country: 'AE' } } }
        : {}),
    },
    lineItems,
    payment: { paymentMeans: [{ paymentMeansCode: '30', creditTransferInfo: { payeeFinancialAccountId: 'AE070331234567890123456' } }] },
    totals: {
      totalLineTaxableAmount: net,
      totalAmountExcludingTax: net,
      totalTaxAmount: tax,
      totalAmountIncludingTax: r2(net + tax),
      amountDue: r2(net + tax),
    },
    extensions: {
      peppol_seller_peppolIdScheme: '0235',
      peppol_buyer_peppolIdScheme: '0235',
      ae_seller_authorityName: 'Dubai Department of Economy and Tourism',
      ...(exportBuyer ? { ae_buyer_passportCountry: 'US' } : { ae_buyer_authorityName: 'Abu Dhabi Department of Economic Development' }),
      ...(m.has('free_trade_zone') ? { ae_beneficiaryId: '100555666700003' } : {}),
      ...(m.has('disclosed_agent') ? { ae_principalTRN: '100444555600003' } : {}),
    },
  };
}

const sum = (values: string[]) => r2(values.reduce((s, v) => s + Number(v), 0));

/** The implemented PINT AE rules, read back from the XML. Returns the ids of the rules it breaks. */
function brokenRules(xml: string, head: { base: string; modifiers: string[] }, specs: LineSpec[]): string[] {
  const broken: string[] = [];
  const selfBilling = text(xml, 'cbc:CustomizationID') === 'urn:peppol:pint:selfbilling-1@ae-1';
  const credit = head.base === 'credit_note';
  const code = text(xml, credit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode')!;
  const allowed = credit ? (selfBilling ? ['261', '81'] : ['381', '81']) : selfBilling ? ['389', '480'] : ['380', '480'];
  if (!allowed.includes(code)) broken.push('ibr-cl-01');
  if (selfBilling !== head.modifiers.includes('self_billed')) broken.push('aligned-ibrp-001-ae');
  const lineCategories = specs.map((l) => l.category);
  if (['380', '381'].includes(code) && lineCategories.every((c) => c === 'E' || c === 'O')) broken.push('ibr-151-ae');
  if (['480', '81'].includes(code) && lineCategories.some((c) => !['E', 'O', 'Z'].includes(c))) broken.push('ibr-122-ae');
  const lines = [...xml.matchAll(/<cac:(?:Invoice|CreditNote)Line>(.*?)<\/cac:(?:Invoice|CreditNote)Line>/g)].map((x) => x[1]!);
  if (lines.length === 0) broken.push('ibr-016');
  lines.forEach((line, i) => {
    const category = /<cac:ClassifiedTaxCategory><cbc:ID>([^<]*)<\/cbc:ID>/.exec(line)?.[1];
    if (category !== specs[i]!.category) broken.push('ibr-139-ae');
    if (category === 'AE' && !/<cac:StandardItemIdentification><cbc:ID schemeID="0160">[^<]+<\/cbc:ID>/.test(line)) broken.push('ibr-174-ae');
    if (category === 'AE' && !/<cbc:NatureCode>/.test(line)) broken.push('ibr-166-ae');
    if (category !== 'N' && head.modifiers.includes('margin_scheme')) broken.push('ibr-116-ae');
    const q = Number(/<cbc:(?:Invoiced|Credited)Quantity[^>]*>([^<]*)</.exec(line)![1]);
    const price = Number(/<cbc:PriceAmount[^>]*>([^<]*)</.exec(line)![1]);
    const base = Number(/<cbc:BaseQuantity[^>]*>([^<]*)</.exec(line)![1]);
    const lineNet = Number(/<cbc:LineExtensionAmount[^>]*>([^<]*)</.exec(line)![1]);
    if (r2(lineNet) !== r2((q * price) / base)) broken.push('ibr-147-ae');
    const discount = Number(/<cac:AllowanceCharge><cbc:ChargeIndicator>false<\/cbc:ChargeIndicator><cbc:Amount[^>]*>([^<]*)</.exec(line)![1]);
    const gross = Number(/<cbc:BaseAmount[^>]*>([^<]*)</.exec(line)![1]);
    if (r2(gross - discount) !== r2(price)) broken.push('aligned-ibrp-004');
    const itemType = /<cbc:CommodityCode>([^<]*)</.exec(line)?.[1];
    if (itemType === 'G' && !/<cbc:ItemClassificationCode listID="HS">/.test(line)) broken.push('ibr-184-ae');
    if (itemType === 'S' && !/<cac:AdditionalItemIdentification><cbc:ID schemeID="SAC">/.test(line)) broken.push('ibr-185-ae');
  });
  // Seller and buyer legal registration with a trade licence carry the authority (BTAE-11/12).
  for (const m of xml.matchAll(/<cbc:CompanyID([^>]*schemeAgencyID="TL"[^>]*)>/g)) if (!/schemeAgencyName="[^"]+"/.test(m[1]!)) broken.push('ibr-172-ae/ibr-101-ae');
  const frequency = text(xml, 'cbc:DescriptionCode');
  if (frequency !== undefined && !['DLY', 'WKY', 'Q15', 'MTH', 'Q45', 'Q60', 'QTR', 'YRL', 'HYR', 'OTH'].includes(frequency)) broken.push('ibr-005-ae');
  if (has(xml, 'cac:InvoicePeriod') && /<cac:InvoicePeriod>.*<cbc:Description>.*<\/cac:InvoicePeriod>/.test(xml)) broken.push('ibr-005-ae');
  // Totals and breakdown in the document currency.
  const currency = text(xml, 'cbc:DocumentCurrencyCode')!;
  const documentLevel = xml.slice(0, xml.search(/<cac:(Invoice|CreditNote)Line>/));
  const lineNets = lines.map((l) => /<cbc:LineExtensionAmount[^>]*>([^<]*)</.exec(l)![1]!);
  const lmt = /<cac:LegalMonetaryTotal>(.*?)<\/cac:LegalMonetaryTotal>/.exec(documentLevel)![1]!;
  const total = (name: string) => Number(new RegExp(`<cbc:${name}[^>]*>([^<]*)<`).exec(lmt)?.[1]);
  if (total('LineExtensionAmount') !== sum(lineNets)) broken.push('ibr-co-10');
  if (total('TaxExclusiveAmount') !== total('LineExtensionAmount')) broken.push('ibr-co-13');
  const taxTotal = new RegExp(`<cac:TaxTotal><cbc:TaxAmount currencyID="${currency}">([^<]*)</cbc:TaxAmount>(.*?)</cac:TaxTotal>`).exec(documentLevel)!;
  const subtotals = [...taxTotal[2]!.matchAll(/<cac:TaxSubtotal>(.*?)<\/cac:TaxSubtotal>/g)].map((x) => x[1]!);
  if (Number(taxTotal[1]) !== sum(subtotals.map((st) => /<cbc:TaxAmount[^>]*>([^<]*)</.exec(st)![1]!))) broken.push('ibr-co-14');
  if (total('TaxInclusiveAmount') !== r2(total('TaxExclusiveAmount') + Number(taxTotal[1]))) broken.push('ibr-co-15');
  for (const st of subtotals) {
    const category = /<cac:TaxCategory><cbc:ID>([^<]*)</.exec(st)![1]!;
    const taxable = Number(/<cbc:TaxableAmount[^>]*>([^<]*)</.exec(st)![1]);
    const amount = Number(/<cbc:TaxAmount[^>]*>([^<]*)</.exec(st)![1]);
    const percent = /<cbc:Percent>([^<]*)</.exec(st)?.[1];
    const ofCategory = lines.filter((l) => new RegExp(`<cac:ClassifiedTaxCategory><cbc:ID>${category}</cbc:ID>`).test(l));
    if (taxable !== sum(ofCategory.map((l) => /<cbc:LineExtensionAmount[^>]*>([^<]*)</.exec(l)![1]!))) broken.push(`aligned-ibrp-${category.toLowerCase()}-08`);
    if (category !== 'S' && amount !== 0) broken.push(`aligned-ibrp-${category.toLowerCase()}-09`);
    if (category === 'S' && Math.abs(amount - r2((taxable * Number(percent)) / 100)) > 0.02) broken.push('aligned-ibrp-s-09');
    if ((category === 'E' || category === 'O') && percent !== undefined) broken.push('ibr-119-ae');
  }
  if (currency !== 'AED' && !(text(xml, 'cbc:TaxCurrencyCode') === 'AED' && attrs(xml, 'cbc:TaxAmount', 'currencyID').includes('AED') && xml.includes('<cbc:DocumentTypeCode>aedtotal-incl-vat</cbc:DocumentTypeCode>'))) {
    broken.push('ibr-175-ae');
  }
  if (!credit && !head.modifiers.includes('deemed_supply') && texts(xml, 'cbc:PaymentMeansCode').length === 0) broken.push('ibr-191-ae');
  return broken;
}

describe('property: generated PINT AE XML passes the UBL 2.1 schemas and the implemented PINT AE rules', function () {
  this.timeout(300_000);

  it('random valid payloads: accepted, and their XML breaks no implemented rule and validates against UBL 2.1', async function () {
    const invoices: { name: string; xml: string }[] = [];
    const credits: { name: string; xml: string }[] = [];
    const dump = process.env['PINT_AE_XML_DIR'];
    if (dump) mkdirSync(dump, { recursive: true });
    let n = 0;
    fc.assert(
      fc.property(caseArb, ({ head, lines }) => {
        const document = payload(head, lines);
        const documentType = { base: head.base, modifiers: head.modifiers };
        const report = validateDocument({ country: 'AE', documentType, document, now: NOW });
        expect(report.errors, JSON.stringify(head)).to.deep.equal([]);
        const { xml } = generateInvoiceXml({ country: 'AE', documentType, document, uuid: UUID });
        expect(brokenRules(xml, head, lines), `${JSON.stringify(head)} ${JSON.stringify(lines)}`).to.deep.equal([]);
        const name = `doc-${n++}`;
        (head.base === 'credit_note' ? credits : invoices).push({ name, xml });
        if (dump) writeFileSync(`${dump}/${name}.xml`, xml);
      }),
      { numRuns: Number(process.env['PINT_AE_RUNS'] ?? 300) },
    );
    const failures: string[] = [];
    for (const [schema, docs] of [
      [mainSchema('Invoice'), invoices],
      [mainSchema('CreditNote'), credits],
    ] as const) {
      if (docs.length === 0) continue;
      const results = await validateAgainst(schema, docs);
      for (const [name, r] of results) if (!r.valid) failures.push(`${name}: ${r.errors.slice(0, 2).join(' | ')}`);
    }
    expect(failures, failures.slice(0, 3).join('\n')).to.deep.equal([]);
  });

  it('the rule reader sees a broken document (it really checks)', function () {
    const head = { base: 'tax_invoice', modifiers: ['reverse_charge'], currency: 'AED' };
    const lines: LineSpec[] = [{ category: 'AE', quantity: 2, priceCents: 10_000, discountCents: 0, itemType: 'G' }];
    const { xml } = generateInvoiceXml({ country: 'AE', documentType: head, document: payload(head, lines), uuid: UUID });
    expect(brokenRules(xml, head, lines)).to.deep.equal([]);
    const broken = xml
      .replace('<cbc:InvoiceTypeCode>380<', '<cbc:InvoiceTypeCode>383<')
      .replace(/<cac:StandardItemIdentification>.*?<\/cac:StandardItemIdentification>/, '')
      .replace(/ schemeAgencyName="[^"]*"/, '');
    expect(brokenRules(broken, head, lines)).to.have.members(['ibr-cl-01', 'ibr-174-ae', 'ibr-172-ae/ibr-101-ae']);
  });

  it('the validator refuses what the rules would reject, naming the field and the official rule', function () {
    const head = { base: 'tax_invoice', modifiers: ['reverse_charge'], currency: 'AED' };
    const document = payload(head, [{ category: 'AE', quantity: 1, priceCents: 5_000, discountCents: 0, itemType: 'G' }]);
    delete document['lineItems'][0].standardItemId;
    delete document['extensions'].ae_seller_authorityName;
    const report = validateDocument({ country: 'AE', documentType: head, document, now: NOW });
    expect(report.errors.map((e) => [e.code, e.corePath, e.officialRule])).to.deep.equal([
      ['AE-SELL-015', 'extensions.ae_seller_authorityName', 'ibr-172-ae'],
      ['AE-LINE-015', 'lineItems[0].standardItemId.id', 'ibr-174-ae'],
    ]);
    expect(report.errors[1]!.message).to.include('[ibr-174-ae]');
    const onlyExempt = payload({ ...head, modifiers: ['summary'] }, [{ category: 'E', quantity: 1, priceCents: 5_000, discountCents: 0, itemType: 'G' }]);
    onlyExempt['header'].invoicePeriod = { startDate: '2026-01-01', endDate: '2026-01-31', frequency: 'MONTHLY' };
    const r = validateDocument({ country: 'AE', documentType: { base: 'tax_invoice', modifiers: ['summary'] }, document: onlyExempt, now: NOW });
    expect(r.errors.map((e) => [e.code, e.officialRule])).to.deep.equal([['AE-HEAD-021', 'ibr-157-ae']]);
  });
});
