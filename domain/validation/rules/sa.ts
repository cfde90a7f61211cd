/**
 * Saudi Arabia (ZATCA): mandatory header and party fields, the billing reference of credit
 * and debit notes, and the VAT number format (15 digits, first and last 3).
 * Simplified (B2C) documents do not need the buyer's name and address.
 */
import { baseIs, not, variantIs } from '../conditions.js';
import { saVatFormat } from '../formats.js';
import { headerRequired, PARTY_TAX_ID_FORMAT, partyRequiredAll, ruleSet, type RuleSet } from './define.js';
import { identifierFormatRule, nationalVat } from './identifiers.js';

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
  [headerRequired('SA', 'precedingId', { message: 'The preceding invoice reference id is required for credit and debit notes' })],
  baseIs('credit_note', 'debit_note'),
);

const vat = nationalVat('SA', saVatFormat);
export const saIdentifiers = ruleSet('sa.identifiers', 'Saudi VAT number format', SA, [
  identifierFormatRule('SA', PARTY_TAX_ID_FORMAT, 'seller', 'taxIds', vat, 'type VAT: 15 digits starting and ending with 3'),
  identifierFormatRule('SA', PARTY_TAX_ID_FORMAT, 'buyer', 'taxIds', vat, 'type VAT (Saudi buyer): 15 digits starting and ending with 3'),
]);

export const saRuleSets: readonly RuleSet[] = [saMandatory, saPrecedingInvoice, saIdentifiers];
