/**
 * Saudi Arabia (ZATCA): mandatory header and party fields, the billing reference of credit
 * and debit notes, and the VAT number format (15 digits, first and last 3).
 * Simplified (B2C) documents do not need the buyer's name and address.
 */
import { all, baseIs, fieldEquals, hasModifier, not, variantIs } from '../conditions.js';
import { pattern, saVatFormat } from '../formats.js';
import { check, format, headerRequired, PARTY_TAX_ID_FORMAT, partyCode, partyRequiredAll, required, ruleSet, type PartyRole, type RuleSet } from './define.js';
import { identifierFormatRule, nationalVat } from './identifiers.js';
import { exemptionReason } from './peppol.js';

const SA = ['SA'] as const;

export const saMandatory = ruleSet('sa.mandatory', 'Document number, issue date, currency, base; seller name, address, VAT number; buyer name and address unless simplified', SA, [
  headerRequired('SA', 'documentNumber'),
  headerRequired('SA', 'issueDate'),
  headerRequired('SA', 'currency'),
  headerRequired('SA', 'base'),
  ...partyRequiredAll('SA', 'seller', ['name', 'addressLine1', 'city', 'country', 'taxIdType', 'taxIdValue']),
  ...partyRequiredAll('SA', 'buyer', ['name', 'addressLine1', 'city', 'country'], { when: not(variantIs('simplified')) }),
]);

export const saPrecedingInvoice = ruleSet(
  'sa.preceding_invoice',
  'Billing reference (preceding invoice id) for credit and debit notes',
  SA,
  [
    headerRequired('SA', 'precedingId', { official: 'BR-KSA-56', message: 'The preceding invoice reference id is required for credit and debit notes' }),
    required('SA-HEAD-019', 'header.creditNoteReason.description', 'The reason for issuing a credit or debit note is required (header.creditNoteReason.description or .code)', {
      official: 'BR-KSA-17',
      alternatives: ['header.creditNoteReason.code'],
    }),
  ],
  baseIs('credit_note', 'debit_note'),
);

/**
 * ZATCA transaction types (KSA-2): a simplified document cannot be self-billed (BR-KSA-31); a
 * simplified summary invoice needs its supply end date (BR-KSA-72), the invoice period's end.
 */
export const saTransactionTypes = ruleSet('sa.transaction_types', 'Simplified documents: no self-billing; summary needs the supply period end', SA, [
  check(
    'SA-HEAD-026',
    ['header.documentType.modifiers'],
    'A simplified document cannot be self-billed',
    'no self_billed with variant simplified',
    (_doc, ctx) => {
      ctx.report(['header', 'documentType', 'modifiers']);
      return true;
    },
    { official: 'BR-KSA-31', when: all(variantIs('simplified'), hasModifier('self_billed')) },
  ),
  required('SA-BUY-026', 'parties.buyer.name', 'A simplified summary invoice should name the buyer', {
    official: 'BR-KSA-71',
    severity: 'warning',
    when: all(variantIs('simplified'), hasModifier('summary')),
  }),
  headerRequired('SA', 'periodEnd', {
    official: 'BR-KSA-72',
    when: all(variantIs('simplified'), hasModifier('summary')),
    message: 'A simplified summary invoice needs the supply end date (header.invoicePeriod.endDate)',
  }),
]);

const buildingNumberFormat = pattern('SA building number', 'a building number of 4 digits', /^\d{4}$/);
const postalCodeFormat = pattern('SA postal code', 'a postal code of 5 digits', /^\d{5}$/);

/**
 * The Saudi national address (BR-KSA-09 seller, BR-KSA-63 Saudi buyer of a standard document):
 * building number, additional number (seller), district and postal code, with their formats
 * (BR-KSA-37, BR-KSA-66, BR-KSA-67). ZATCA reports these as warnings, and so does the service.
 */
function nationalAddress(role: PartyRole, official: string, postalOfficial: string, opts: { additional: boolean }) {
  const p = (field: string) => `parties.${role}.address.${field}`;
  const who = role === 'seller' ? 'Seller' : 'Buyer';
  const warning = { severity: 'warning' as const, official };
  return [
    required(partyCode('SA', role, '020'), p('buildingNumber'), `${who} address building number is part of the national address`, warning),
    ...(opts.additional ? [required(partyCode('SA', role, '021'), p('additionalNumber'), `${who} address additional number is part of the national address`, warning)] : []),
    required(partyCode('SA', role, '022'), p('district'), `${who} address district is part of the national address`, warning),
    required(partyCode('SA', role, '023'), p('postalCode'), `${who} address postal code is part of the national address`, warning),
    format(partyCode('SA', role, '024'), p('buildingNumber'), buildingNumberFormat, `${who} address building number must have 4 digits`, {
      severity: 'warning',
      official: role === 'seller' ? 'BR-KSA-37' : official,
    }),
    format(partyCode('SA', role, '025'), p('postalCode'), postalCodeFormat, `${who} address postal code must have 5 digits`, { severity: 'warning', official: postalOfficial }),
  ];
}

export const saNationalAddress = ruleSet('sa.national_address', 'National address parts of the seller and of a Saudi buyer (warnings, as ZATCA reports them)', SA, [
  ...nationalAddress('seller', 'BR-KSA-09', 'BR-KSA-66', { additional: true }),
  ...nationalAddress('buyer', 'BR-KSA-63', 'BR-KSA-67', { additional: false }).map((rule) => ({
    ...rule,
    when: all(fieldEquals('parties.buyer.address.country', 'SA'), not(variantIs('simplified'))),
  })),
]);

const vat = nationalVat('SA', saVatFormat);
export const saIdentifiers = ruleSet('sa.identifiers', 'Saudi VAT number format', SA, [
  identifierFormatRule('SA', PARTY_TAX_ID_FORMAT, 'seller', 'taxIds', vat, 'type VAT: 15 digits starting and ending with 3'),
  identifierFormatRule('SA', PARTY_TAX_ID_FORMAT, 'buyer', 'taxIds', vat, 'type VAT (Saudi buyer): 15 digits starting and ending with 3'),
]);

/**
 * Exemption reason codes on E, O and Z lines. ZATCA's rules ask for the code as warnings only
 * (BR-KSA-23 exempt, BR-KSA-24 not subject, BR-KSA-69 zero-rated; its EN 16931 layer does not
 * apply BR-E-10 / BR-O-10), so the service warns too.
 */
export const saExemptions = ruleSet('sa.exemptions', 'Exemption reason codes on exempt, not-subject and zero-rated lines (warnings)', SA, [
  check('SA-LINE-001', ['lineItems[].taxExemptionReasonCode'], 'An exempt (E) line should carry its exemption reason code', 'a VATEX-SA code on E lines', exemptionReason('E', { orText: false }), {
    official: 'BR-KSA-23',
    severity: 'warning',
    requires: 'taxCategory is E',
  }),
  check('SA-LINE-002', ['lineItems[].taxExemptionReasonCode'], 'A not-subject (O) line should carry its exemption reason code', 'a VATEX-SA code on O lines', exemptionReason('O', { orText: false }), {
    official: 'BR-KSA-24',
    severity: 'warning',
    requires: 'taxCategory is O',
  }),
  check('SA-LINE-003', ['lineItems[].taxExemptionReasonCode'], 'A zero-rated (Z) line should carry its exemption reason code', 'a VATEX-SA code on Z lines', exemptionReason('Z', { orText: false }), {
    official: 'BR-KSA-69',
    severity: 'warning',
    requires: 'taxCategory is Z',
  }),
]);

export const saRuleSets: readonly RuleSet[] = [saExemptions, saMandatory, saPrecedingInvoice, saTransactionTypes, saNationalAddress, saIdentifiers];
