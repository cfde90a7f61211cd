/**
 * Malaysia (LHDN MyInvois): mandatory header and party fields (TIN, registration number and
 * full address for both parties), the original invoice reference of credit and debit notes,
 * and the TIN, BRN and NRIC formats.
 */
import { baseIs } from '../conditions.js';
import { myBrnFormat, myNricFormat, myTinFormat } from '../formats.js';
import { headerRequired, PARTY_REGISTRATION_FORMAT, PARTY_TAX_ID_FORMAT, partyRequiredAll, ruleSet, type PartyField, type RuleSet } from './define.js';
import { byType, identifierFormatRule } from './identifiers.js';

const MY = ['MY'] as const;
const PARTY: readonly PartyField[] = ['name', 'taxIdType', 'taxIdValue', 'registrationType', 'registrationValue', 'addressLine1', 'city', 'stateOrProvince', 'country'];

export const myMandatory = ruleSet('my.mandatory', 'Document number, issue date, currency, base; per party name, TIN, registration number and address', MY, [
  headerRequired('MY', 'documentNumber'),
  headerRequired('MY', 'issueDate'),
  headerRequired('MY', 'currency'),
  headerRequired('MY', 'base'),
  ...partyRequiredAll('MY', 'seller', PARTY),
  ...partyRequiredAll('MY', 'buyer', PARTY),
]);

export const myPrecedingInvoice = ruleSet(
  'my.preceding_invoice',
  'Original e-invoice reference for credit and debit notes',
  MY,
  [headerRequired('MY', 'precedingId', { message: 'The original invoice reference id is required for credit and debit notes' })],
  baseIs('credit_note', 'debit_note'),
);

const tin = byType({ TIN: myTinFormat });
const registration = byType({ BRN: myBrnFormat, NRIC: myNricFormat });
export const myIdentifiers = ruleSet('my.identifiers', 'Malaysian TIN, BRN and NRIC formats', MY, [
  identifierFormatRule('MY', PARTY_TAX_ID_FORMAT, 'seller', 'taxIds', tin, 'type TIN: prefix (C, CS, IG, EI, …) and 8–13 digits'),
  identifierFormatRule('MY', PARTY_TAX_ID_FORMAT, 'buyer', 'taxIds', tin, 'type TIN: prefix (C, CS, IG, EI, …) and 8–13 digits'),
  identifierFormatRule('MY', PARTY_REGISTRATION_FORMAT, 'seller', 'registrationNumbers', registration, 'type BRN: 12 digits (or 6–7 digits and a letter); type NRIC: 12 digits'),
  identifierFormatRule('MY', PARTY_REGISTRATION_FORMAT, 'buyer', 'registrationNumbers', registration, 'type BRN: 12 digits (or 6–7 digits and a letter); type NRIC: 12 digits'),
]);

export const myRuleSets: readonly RuleSet[] = [myMandatory, myPrecedingInvoice, myIdentifiers];
