/**
 * Belgium (Peppol BIS Billing 3.0): mandatory header and party fields (both parties need an
 * electronic address, the seller a VAT number) and the Belgian VAT number with its mod-97 check.
 */
import { beVatFormat } from '../formats.js';
import { PARTY_TAX_ID_FORMAT, ruleSet, type RuleSet } from './define.js';
import { identifierFormatRule, nationalVat } from './identifiers.js';
import { peppolBisRules, peppolMandatory } from './peppol.js';

const BE = ['BE'] as const;

export const beMandatory = ruleSet(
  'be.mandatory',
  'Document number, issue date, currency, base; seller name, Peppol id, country, VAT number; buyer name, Peppol id, country',
  BE,
  peppolMandatory('BE', { seller: ['name', 'peppolId', 'country'], buyer: ['name', 'peppolId', 'country'] }),
);

const vat = nationalVat('BE', beVatFormat);
export const beIdentifiers = ruleSet('be.identifiers', 'Belgian VAT number format and check digits', BE, [
  identifierFormatRule('BE', PARTY_TAX_ID_FORMAT, 'seller', 'taxIds', vat, 'type VAT (Belgian): BE0 or BE1 and 9 digits, mod-97 check'),
  identifierFormatRule('BE', PARTY_TAX_ID_FORMAT, 'buyer', 'taxIds', vat, 'type VAT (Belgian): BE0 or BE1 and 9 digits, mod-97 check'),
]);

export const bePeppol = ruleSet('be.peppol', 'Peppol BIS Billing 3.0: endpoint schemes (EAS), Belgian enterprise numbers, exemption reasons', BE, peppolBisRules('BE'));

export const beRuleSets: readonly RuleSet[] = [beMandatory, beIdentifiers, bePeppol];
