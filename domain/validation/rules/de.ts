/**
 * Germany (XRechnung / EN 16931): mandatory header and party fields (city and country of both
 * parties, electronic addresses, the seller's VAT id or tax number) and the USt-IdNr format.
 */
import { deVatFormat } from '../formats.js';
import { headerRequired, PARTY_TAX_ID_FORMAT, partyRequiredAll, ruleSet, type RuleSet } from './define.js';
import { identifierFormatRule, nationalVat } from './identifiers.js';

const DE = ['DE'] as const;

export const deMandatory = ruleSet('de.mandatory', 'Document number, issue date, currency, base; seller name, city, country, Peppol id, tax id; buyer name, city, country, Peppol id', DE, [
  headerRequired('DE', 'documentNumber'),
  headerRequired('DE', 'issueDate'),
  headerRequired('DE', 'currency'),
  headerRequired('DE', 'base'),
  ...partyRequiredAll('DE', 'seller', ['name', 'city', 'country', 'peppolId', 'taxIdType', 'taxIdValue']),
  ...partyRequiredAll('DE', 'buyer', ['name', 'city', 'country', 'peppolId']),
]);

const vat = nationalVat('DE', deVatFormat);
export const deIdentifiers = ruleSet('de.identifiers', 'German VAT identification number format', DE, [
  identifierFormatRule('DE', PARTY_TAX_ID_FORMAT, 'seller', 'taxIds', vat, 'type VAT (German): DE and 9 digits'),
  identifierFormatRule('DE', PARTY_TAX_ID_FORMAT, 'buyer', 'taxIds', vat, 'type VAT (German): DE and 9 digits'),
]);

export const deRuleSets: readonly RuleSet[] = [deMandatory, deIdentifiers];
