/**
 * Peppol BIS Billing 3.0 rules shared by Belgium and Germany, checked on the payload so that a
 * document whose XML the network refuses is refused with the official rule's id:
 *
 * - endpoint schemes from the Peppol EAS code list (PEPPOL-EN16931-CL008), the scheme being the
 *   payload's `extensions.peppol_<role>_peppolIdScheme`, a `NNNN:` prefix of the id, or the
 *   country default the generator writes (0208 Belgium, 9930 Germany, else 0088);
 * - Belgian enterprise numbers (scheme 0208) with their mod-97 check digits (PEPPOL-COMMON-R043);
 * - an exempt (E) line carries an exemption reason code or text (BR-E-10).
 */
import { belgianEnterpriseNumberOk, defaultEndpointScheme, PEPPOL_EAS_CODES } from '../../artifacts/codes.js';
import { splitParticipantId, uncl5305Category } from '../../artifacts/normalize.js';
import type { Country } from '../document-types.js';
import { isRecord, recordAt } from '../paths.js';
import { check, headerRequired, partyCode, PARTY_PEPPOL_FORMAT, partyRequired, type CheckFn, type PartyField, type PartyRole, type Rule } from './define.js';

/**
 * The mandatory fields of a Peppol BIS document with the official rule behind each: EN 16931
 * BR-02/03/05 (number, issue date, currency), BR-06/07 (names), BR-09/11 (countries), the Peppol
 * electronic addresses (PEPPOL-EN16931-R020 seller, R010 buyer), the seller VAT id (BR-CO-26 /
 * BR-S-02: a seller identifier, and the VAT id when a line is taxed); `fields` in their order.
 */
export function peppolMandatory(country: Country, fields: { seller: readonly PartyField[]; buyer: readonly PartyField[] }, official: Partial<Record<string, string>> = {}): Rule[] {
  const SELLER: Partial<Record<PartyField, string>> = { name: 'BR-06', country: 'BR-09', peppolId: 'PEPPOL-EN16931-R020', taxIdType: 'BR-CO-26', taxIdValue: 'BR-CO-26' };
  const BUYER: Partial<Record<PartyField, string>> = { name: 'BR-07', country: 'BR-11', peppolId: 'PEPPOL-EN16931-R010' };
  const party = (role: PartyRole, fields: readonly PartyField[], table: Partial<Record<PartyField, string>>) =>
    fields.map((f) => {
      const id = official[`${role}.${f}`] ?? table[f];
      return partyRequired(country, role, f, id ? { official: id } : {});
    });
  return [
    headerRequired(country, 'documentNumber', { official: 'BR-02' }),
    headerRequired(country, 'issueDate', { official: 'BR-03' }),
    headerRequired(country, 'currency', { official: 'BR-05' }),
    headerRequired(country, 'base'),
    ...party('seller', fields.seller, SELLER),
    ...party('buyer', fields.buyer, BUYER),
  ];
}

export const PARTY_ENDPOINT_SCHEME = '019';

type Rec = Readonly<Record<string, unknown>>;
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** The endpoint (scheme and id) the generator writes for a party, or undefined without a Peppol id. */
export function peppolEndpoint(doc: Rec, role: PartyRole): { scheme: string; value: string; fromPrefix: boolean } | undefined {
  const party = recordAt(recordAt(doc, 'parties'), role);
  const id = text(party?.['peppolId']);
  if (!id) return undefined;
  const extension = text(recordAt(doc, 'extensions')?.[`peppol_${role}_peppolIdScheme`]);
  const split = splitParticipantId(id, extension);
  const country = text(recordAt(party, 'address')?.['country']);
  return { scheme: split.scheme ?? defaultEndpointScheme(country), value: split.value ?? id, fromPrefix: /^\d{4}:/.test(id) };
}

const schemePath = (role: PartyRole) => `extensions.peppol_${role}_peppolIdScheme`;

function easScheme(role: PartyRole): CheckFn {
  return (doc, ctx) => {
    const endpoint = peppolEndpoint(doc, role);
    if (!endpoint) return false;
    if (!PEPPOL_EAS_CODES.has(endpoint.scheme)) {
      const path = endpoint.fromPrefix || !text(recordAt(doc, 'extensions')?.[`peppol_${role}_peppolIdScheme`]) ? ['parties', role, 'peppolId'] : ['extensions', `peppol_${role}_peppolIdScheme`];
      ctx.report(path, `The ${role} endpoint scheme ${JSON.stringify(endpoint.scheme.slice(0, 20))} is not in the Peppol EAS code list (e.g. 0208, 9930, 0088, 0060)`);
    }
    return true;
  };
}

function enterpriseNumber(role: PartyRole): CheckFn {
  return (doc, ctx) => {
    const endpoint = peppolEndpoint(doc, role);
    if (!endpoint || endpoint.scheme !== '0208') return false;
    if (!belgianEnterpriseNumberOk(endpoint.value)) ctx.report(['parties', role, 'peppolId']);
    return true;
  };
}

/**
 * Lines of a UNCL 5305 `category` carry an exemption reason code (or, with `orText`, a reason
 * text): the tax breakdown takes them from its lines (e.g. BR-E-10 exempt, BR-O-10 not subject).
 */
export function exemptionReason(category: string, opts: { orText: boolean }): CheckFn {
  return (doc, ctx) => {
    const lines = doc['lineItems'];
    if (!Array.isArray(lines)) return false;
    let applied = false;
    lines.forEach((line: unknown, i) => {
      if (!isRecord(line)) return;
      const raw = text(line['taxCategory'])?.toUpperCase();
      const rate = typeof line['taxRate'] === 'number' ? line['taxRate'] : 0;
      if (!raw || uncl5305Category(raw, rate, new Set()) !== category) return;
      applied = true;
      if (!text(line['taxExemptionReasonCode']) && !(opts.orText && text(line['taxExemptionReason']))) ctx.report(['lineItems', i, 'taxExemptionReasonCode']);
    });
    return applied;
  };
}

/** The shared Peppol BIS rules of one country (codes `<CC>-SELL/BUY-019`, `-013`, `<CC>-LINE-001`). */
export function peppolBisRules(country: Country): Rule[] {
  const roles: PartyRole[] = ['seller', 'buyer'];
  return [
    ...roles.map((role) =>
      check(partyCode(country, role, PARTY_ENDPOINT_SCHEME), [schemePath(role), `parties.${role}.peppolId`], `The ${role} endpoint scheme must be in the Peppol EAS code list`, 'a scheme of the Peppol EAS code list', easScheme(role), {
        official: 'PEPPOL-EN16931-CL008',
      }),
    ),
    ...roles.map((role) =>
      check(partyCode(country, role, PARTY_PEPPOL_FORMAT), [`parties.${role}.peppolId`], `The ${role} Belgian enterprise number (scheme 0208) has wrong check digits`, 'scheme 0208: 10 digits, the last two 97 - (first eight mod 97)', enterpriseNumber(role), {
        official: 'PEPPOL-COMMON-R043',
      }),
    ),
    check(`${country}-LINE-001`, ['lineItems[].taxExemptionReasonCode', 'lineItems[].taxExemptionReason'], 'An exempt (E) line needs an exemption reason code or text', 'a VATEX code or a reason text on E lines', exemptionReason('E', { orText: true }), {
      official: 'BR-E-10',
      requires: 'taxCategory is E',
    }),
  ];
}
