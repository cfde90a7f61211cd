/**
 * United Arab Emirates: the eight field rules of docs/api/unify.md, one rule set per spec rule,
 * each with its modifier exceptions, plus the UAE identifier formats.
 */
import { any, baseIs, fieldEquals, fieldPresent, fieldPresentAndNot, hasAnyModifier, hasModifier, not } from '../conditions.js';
import { aeTinFormat, aeTrnFormat, EMIRATE_CODES, emirateFormat, frequencyFormat, INVOICE_FREQUENCIES } from '../formats.js';
import { isPresent, recordAt } from '../paths.js';
import {
  check,
  format,
  headerRequired,
  PARTY_PEPPOL_FORMAT,
  PARTY_REGISTRATION_FORMAT,
  PARTY_SUBDIVISION,
  PARTY_TAX_ID_FORMAT,
  partyCode,
  partyRequired,
  required,
  ruleSet,
  type CheckFn,
  type PartyField,
  type RuleSet,
} from './define.js';
import { byType, identifierFormatRule, ofPartyIn } from './identifiers.js';

const AE = ['AE'] as const;

/** Rule 1: per party (seller and buyer). */
const PARTY_MANDATORY: readonly PartyField[] = ['registrationType', 'name', 'registrationValue', 'peppolId', 'addressLine1', 'city', 'stateOrProvince', 'country'];

/** The PINT AE rules behind rule 1's party fields (address: ibr-143/144-ae; registration: ibr-150/180/181-ae, ibr-136-ae). */
const PARTY_OFFICIAL: Record<'seller' | 'buyer', Partial<Record<PartyField, string>>> = {
  seller: { registrationType: 'ibr-181-ae', registrationValue: 'ibr-150-ae', name: 'ibr-006', addressLine1: 'ibr-143-ae', city: 'ibr-143-ae', stateOrProvince: 'ibr-143-ae', country: 'ibr-009' },
  buyer: { registrationType: 'ibr-180-ae', registrationValue: 'ibr-136-ae', name: 'ibr-007', addressLine1: 'ibr-144-ae', city: 'ibr-144-ae', stateOrProvince: 'ibr-144-ae', country: 'ibr-011' },
};

export const aeMandatory = ruleSet(
  'ae.mandatory',
  'Rule 1: document number, issue date, currency, base; per party registration type and value, name, Peppol id, address line 1, city, state/province, country; seller tax id type',
  AE,
  [
    headerRequired('AE', 'documentNumber', { official: 'ibr-002' }),
    headerRequired('AE', 'issueDate', { official: 'ibr-003' }),
    headerRequired('AE', 'currency', { official: 'ibr-005' }),
    headerRequired('AE', 'base'),
    ...PARTY_MANDATORY.map((f) => partyRequired('AE', 'seller', f, { official: PARTY_OFFICIAL.seller[f] })),
    partyRequired('AE', 'seller', 'taxIdType'),
    ...PARTY_MANDATORY.map((f) => partyRequired('AE', 'buyer', f, { official: PARTY_OFFICIAL.buyer[f] })),
  ],
);

const notAed = fieldPresentAndNot('header.currency', 'AED');
export const aeCurrency = ruleSet('ae.currency', 'Rule 2: tax currency and exchange rate when the currency is not AED', AE, [
  headerRequired('AE', 'taxCurrency', { official: 'ibr-175-ae', when: notAed, message: 'The tax currency is required when the currency is not AED' }),
  headerRequired('AE', 'exchangeRate', { official: 'ibr-159-ae', when: notAed, message: 'The exchange rate is required when the currency is not AED' }),
]);

export const aeDueDate = ruleSet(
  'ae.due_date',
  'Rule 3: due date for tax invoices, except with deemed_supply (optional for credit notes)',
  AE,
  [headerRequired('AE', 'dueDate', { official: 'ibr-127-ae', when: not(hasModifier('deemed_supply')), message: 'The due date is required for tax invoices' })],
  baseIs('tax_invoice'),
);

/** The credit note reason is VD (volume discount), in either place the payload may give it. */
const reasonIsVd = any(fieldEquals('header.creditNoteReason.code', 'VD'), fieldEquals('extensions.ae_creditNoteReasonCode', 'VD'));

/** PINT AE ibr-055-ae: a VD (volume discount) credit note has no billing reference; any other has one. */
const noReferenceWithVd: CheckFn = (doc, ctx) => {
  const reference = recordAt(recordAt(doc, 'header'), 'precedingInvoiceReference');
  if (reference === undefined || !isPresent(reference['id'])) return true;
  ctx.report(['header', 'precedingInvoiceReference', 'id']);
  return true;
};

export const aePrecedingInvoice = ruleSet(
  'ae.preceding_invoice',
  'Rule 4: preceding invoice reference (id and issue date) for credit notes, except volume-discount (VD) credit notes, which have none',
  AE,
  [
    headerRequired('AE', 'precedingId', {
      official: 'ibr-055-ae',
      when: not(reasonIsVd),
      message: 'The preceding invoice reference id is required for credit notes (except reason VD)',
    }),
    headerRequired('AE', 'precedingIssueDate', {
      official: 'ibr-055-ae',
      when: not(reasonIsVd),
      alternatives: ['extensions.peppol_precedingInvoiceIssueDate'],
      message: 'The preceding invoice issue date is required for credit notes except reason VD (header.precedingInvoiceReference.issueDate or extensions.peppol_precedingInvoiceIssueDate)',
    }),
    check(
      'AE-HEAD-025',
      ['header.precedingInvoiceReference.id'],
      'A volume-discount (VD) credit note must not reference a preceding invoice',
      'absent when the credit note reason is VD',
      noReferenceWithVd,
      { official: 'ibr-055-ae', when: reasonIsVd },
    ),
  ],
  baseIs('credit_note'),
);

export const aeSummary = ruleSet(
  'ae.summary',
  'Rule 5: invoice period start, end and frequency with the summary modifier',
  AE,
  [
    headerRequired('AE', 'periodStart', { official: 'ibr-138-ae', message: 'The invoice period start date is required for summary invoices' }),
    headerRequired('AE', 'periodEnd', { official: 'ibr-138-ae', message: 'The invoice period end date is required for summary invoices' }),
    headerRequired('AE', 'frequency', { official: 'ibr-005-ae', message: 'The invoice period frequency is required for summary invoices' }),
  ],
  hasModifier('summary'),
);

export const aeTaxIds = ruleSet(
  'ae.tax_ids',
  'Rule 6: seller tax id value (optional with out_of_scope); buyer tax id value (optional with export, mandatory with reverse_charge)',
  AE,
  [
    partyRequired('AE', 'seller', 'taxIdValue', { official: 'ibr-134-ae', when: not(hasModifier('out_of_scope')) }),
    partyRequired('AE', 'buyer', 'taxIdType', {
      when: fieldPresent('parties.buyer.taxIds[0].value'),
      message: 'Buyer tax id type is required when a buyer tax id value is given',
    }),
    partyRequired('AE', 'buyer', 'taxIdValue', { when: any(hasModifier('reverse_charge'), not(hasModifier('export'))) }),
  ],
);

export const aeDelivery = ruleSet(
  'ae.delivery',
  'Rule 7: delivery address line 1, city, country subdivision and country with e_commerce or export',
  AE,
  [
    required('AE-DLV-001', 'parties.delivery.address.addressLine1', 'Delivery address line 1 is required with e_commerce or export', { official: 'ibr-142-ae' }),
    required('AE-DLV-002', 'parties.delivery.address.city', 'Delivery city is required with e_commerce or export', { official: 'ibr-142-ae' }),
    required('AE-DLV-003', 'parties.delivery.address.countrySubdivision', 'Delivery country subdivision is required with e_commerce or export', { official: 'ibr-142-ae' }),
    required('AE-DLV-004', 'parties.delivery.address.country', 'Delivery country is required with e_commerce or export', { official: 'ibr-057' }),
  ],
  hasAnyModifier('e_commerce', 'export'),
);

const emirates = EMIRATE_CODES.join(', ');
export const aeCodeLists = ruleSet('ae.code_lists', 'Rule 8: emirate codes for UAE addresses; rule 5: frequency values', AE, [
  format(partyCode('AE', 'seller', PARTY_SUBDIVISION), 'parties.seller.address.stateOrProvince', emirateFormat, `Seller state/province must be an emirate code (${emirates}) when the country is AE`, {
    when: fieldEquals('parties.seller.address.country', 'AE'),
    official: 'ibr-128-ae',
  }),
  format(partyCode('AE', 'buyer', PARTY_SUBDIVISION), 'parties.buyer.address.stateOrProvince', emirateFormat, `Buyer state/province must be an emirate code (${emirates}) when the country is AE`, {
    when: fieldEquals('parties.buyer.address.country', 'AE'),
    official: 'ibr-128-ae',
  }),
  format('AE-DLV-005', 'parties.delivery.address.countrySubdivision', emirateFormat, `Delivery country subdivision must be an emirate code (${emirates}) when the country is AE`, {
    when: fieldEquals('parties.delivery.address.country', 'AE'),
    official: 'ibr-128-ae',
  }),
  format('AE-HEAD-011', 'header.invoicePeriod.frequency', frequencyFormat, `The invoice period frequency must be one of ${INVOICE_FREQUENCIES.join(', ')}`, { official: 'ibr-005-ae' }),
]);

/**
 * PINT AE ibr-132-ae binds the VAT identifier of a party whose postal address is in the UAE: a
 * foreign buyer's (or seller's) own VAT number is not a TRN and is written as it is.
 */
const taxIdFormats = ofPartyIn('AE', byType({ TRN: aeTrnFormat, VAT: aeTrnFormat, TIN: aeTinFormat }));
const registrationFormats = byType({ TIN: aeTinFormat });
const TAX_ID_CONSTRAINT = 'when the party address country is AE: type TRN or VAT 15 digits starting with 1 and ending with 03; type TIN 10 digits';

export const aeIdentifiers = ruleSet('ae.identifiers', 'UAE identifier formats: TRN 15 digits, TIN 10 digits, Peppol id under scheme 0235', AE, [
  identifierFormatRule('AE', PARTY_TAX_ID_FORMAT, 'seller', 'taxIds', taxIdFormats, TAX_ID_CONSTRAINT, { official: 'ibr-132-ae' }),
  identifierFormatRule('AE', PARTY_TAX_ID_FORMAT, 'buyer', 'taxIds', taxIdFormats, TAX_ID_CONSTRAINT, { official: 'ibr-132-ae' }),
  format(partyCode('AE', 'seller', PARTY_PEPPOL_FORMAT), 'parties.seller.peppolId', aeTinFormat, 'Seller Peppol id under scheme 0235 must be a 10-digit UAE TIN', {
    when: fieldEquals('extensions.peppol_seller_peppolIdScheme', '0235'),
  }),
  format(partyCode('AE', 'buyer', PARTY_PEPPOL_FORMAT), 'parties.buyer.peppolId', aeTinFormat, 'Buyer Peppol id under scheme 0235 must be a 10-digit UAE TIN', {
    when: fieldEquals('extensions.peppol_buyer_peppolIdScheme', '0235'),
  }),
  identifierFormatRule('AE', PARTY_REGISTRATION_FORMAT, 'seller', 'registrationNumbers', registrationFormats, 'type TIN: 10 digits'),
  identifierFormatRule('AE', PARTY_REGISTRATION_FORMAT, 'buyer', 'registrationNumbers', registrationFormats, 'type TIN: 10 digits'),
]);

export const aeRuleSets: readonly RuleSet[] = [aeMandatory, aeCurrency, aeDueDate, aePrecedingInvoice, aeSummary, aeTaxIds, aeDelivery, aeCodeLists, aeIdentifiers];
