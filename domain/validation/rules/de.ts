/**
 * Germany (XRechnung / EN 16931): mandatory header and party fields (city and country of both
 * parties, electronic addresses, the seller's VAT id or tax number) and the USt-IdNr format.
 */
import { fieldPresent, variantIs } from '../conditions.js';
import { deVatFormat } from '../formats.js';
import { PARTY_TAX_ID_FORMAT, required, ruleSet, type RuleSet } from './define.js';
import { identifierFormatRule, nationalVat } from './identifiers.js';
import { peppolBisRules, peppolMandatory } from './peppol.js';

const DE = ['DE'] as const;

export const deMandatory = ruleSet(
  'de.mandatory',
  'Document number, issue date, currency, base; seller name, city, country, Peppol id, tax id; buyer name, city, country, Peppol id',
  DE,
  peppolMandatory('DE', { seller: ['name', 'city', 'country', 'peppolId'], buyer: ['name', 'city', 'country', 'peppolId'] }, { 'seller.city': 'BR-DE-3', 'buyer.city': 'BR-DE-8' }),
);

const vat = nationalVat('DE', deVatFormat);
export const deIdentifiers = ruleSet('de.identifiers', 'German VAT identification number format', DE, [
  identifierFormatRule('DE', PARTY_TAX_ID_FORMAT, 'seller', 'taxIds', vat, 'type VAT (German): DE and 9 digits'),
  identifierFormatRule('DE', PARTY_TAX_ID_FORMAT, 'buyer', 'taxIds', vat, 'type VAT (German): DE and 9 digits'),
]);

/**
 * XRechnung 3.0 (CIUS of EN 16931): the seller contact (BR-DE-2) with name, telephone and e-mail
 * (BR-DE-5..7), and for a public buyer (variant b2g) its Leitweg-ID as the buyer
 * reference (BR-DE-15; other documents without one get the order reference or the document
 * number, see docs/conformance.md).
 */
export const deXRechnung = ruleSet('de.xrechnung', 'XRechnung 3.0: seller contact (name, telephone, e-mail); buyer reference (Leitweg-ID) for public buyers', DE, [
  // No contact at all is BR-DE-2; a contact without one of its parts is BR-DE-5, 6 or 7 (as the XRechnung rules report them).
  required('DE-SELL-024', 'parties.seller.contact', 'The seller contact (name, telephone, e-mail) is required (XRechnung seller contact)', { official: 'BR-DE-2' }),
  required('DE-SELL-020', 'parties.seller.contact.name', 'The seller contact name is required (XRechnung seller contact)', { official: 'BR-DE-5', when: fieldPresent('parties.seller.contact') }),
  required('DE-SELL-021', 'parties.seller.contact.phone', 'The seller contact telephone is required (XRechnung seller contact)', { official: 'BR-DE-6', when: fieldPresent('parties.seller.contact') }),
  required('DE-SELL-022', 'parties.seller.contact.email', 'The seller contact e-mail is required (XRechnung seller contact)', { official: 'BR-DE-7', when: fieldPresent('parties.seller.contact') }),
  required('DE-HEAD-030', 'header.buyerReference', 'A public buyer (variant b2g) needs its Leitweg-ID as header.buyerReference', { official: 'BR-DE-15', when: variantIs('b2g') }),
  required('DE-SELL-023', 'parties.seller.address.postalCode', 'The seller postal code is required', { official: 'BR-DE-4' }),
  required('DE-BUY-023', 'parties.buyer.address.postalCode', 'The buyer postal code is required', { official: 'BR-DE-9' }),
  required('DE-DLV-002', 'parties.delivery.address.city', 'The delivery city is required when a delivery address is given', { official: 'BR-DE-10', when: fieldPresent('parties.delivery.address') }),
  required('DE-DLV-023', 'parties.delivery.address.postalCode', 'The delivery postal code is required when a delivery address is given', {
    official: 'BR-DE-11',
    when: fieldPresent('parties.delivery.address'),
  }),
  required('DE-HEAD-031', 'parties.delivery.deliveryDate', 'A German invoice should state the delivery date (parties.delivery.deliveryDate) or the invoice period (header.invoicePeriod)', {
    official: 'BR-DE-TMP-32',
    severity: 'warning',
    alternatives: ['header.invoicePeriod.startDate', 'header.invoicePeriod.endDate'],
  }),
]);

export const dePeppol = ruleSet('de.peppol', 'Peppol BIS Billing 3.0: endpoint schemes (EAS), Belgian enterprise numbers, exemption reasons', DE, peppolBisRules('DE'));

export const deRuleSets: readonly RuleSet[] = [deMandatory, deIdentifiers, deXRechnung, dePeppol];
