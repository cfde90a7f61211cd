/**
 * Peppol BIS Billing 3.0 rules shared by Belgium and Germany, checked on the payload so that a
 * document whose XML the network refuses is refused with the official rule's id:
 *
 * - endpoint schemes from the Peppol EAS code list (PEPPOL-EN16931-CL008), the scheme being the
 *   payload's `extensions.peppol_<role>_peppolIdScheme`, a `NNNN:` prefix of the id, or the
 *   country default the generator writes (0208 Belgium, 9930 Germany, else 0088);
 * - Belgian enterprise numbers (scheme 0208) with their mod-97 check digits (PEPPOL-COMMON-R043);
 * - an exempt (E) line carries an exemption reason code or text (BR-E-10);
 * - the seller VAT id when a line's category needs it (BR-S-02, BR-Z-02, BR-E-02, BR-AE-02,
 *   BR-IC-02, BR-G-02), and none with not-subject (O) lines, which stand alone (BR-O-02, BR-O-11).
 */
import { belgianEnterpriseNumberOk, defaultEndpointScheme, PEPPOL_EAS_CODES } from '../../artifacts/codes.js';
import { splitParticipantId, uncl5305Category } from '../../artifacts/normalize.js';
import type { Country } from '../document-types.js';
import { isRecord, recordAt } from '../paths.js';
import { check, headerRequired, partyCode, PARTY_PEPPOL_FORMAT, partyRequired, required, type CheckFn, type PartyField, type PartyRole, type Rule } from './define.js';

/**
 * The mandatory fields of a Peppol BIS document with the official rule behind each: EN 16931
 * BR-02/03/05 (number, issue date, currency), BR-06/07 (names), BR-09/11 (countries), the Peppol
 * electronic addresses (PEPPOL-EN16931-R020 seller, R010 buyer), a seller identifier (BR-CO-26: a
 * VAT id or a legal registration number); `fields` in their order. The seller VAT id itself is
 * required by the VAT categories of the lines (`peppolBisRules`).
 */
export function peppolMandatory(country: Country, fields: { seller: readonly PartyField[]; buyer: readonly PartyField[] }, official: Partial<Record<string, string>> = {}): Rule[] {
  const SELLER: Partial<Record<PartyField, string>> = { name: 'BR-06', country: 'BR-09', peppolId: 'PEPPOL-EN16931-R020' };
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
    // BR-CO-26: the seller is identified by its VAT identifier or its legal registration number.
    required(partyCode(country, 'seller', '009'), 'parties.seller.taxIds[0].value', 'The seller needs a VAT identifier (taxIds) or a legal registration number (registrationNumbers)', {
      official: 'BR-CO-26',
      alternatives: ['parties.seller.registrationNumbers[0].value'],
    }),
    ...party('buyer', fields.buyer, BUYER),
  ];
}

/**
 * The seller's VAT identifier, required as the EN 16931 rules require it: only when a line is of
 * a VAT category that needs it (BR-S-02 standard, BR-Z-02 zero-rated, BR-E-02 exempt, BR-AE-02
 * reverse charge, BR-IC-02 intra-community, BR-G-02 export); codes `<CC>-SELL-010` (S) and
 * `<CC>-SELL-030..034`.
 */
const SELLER_VAT_CATEGORIES: readonly { category: string; n: string; official: string; label: string }[] = [
  { category: 'S', n: '010', official: 'BR-S-02', label: 'standard-rated' },
  { category: 'Z', n: '030', official: 'BR-Z-02', label: 'zero-rated' },
  { category: 'E', n: '031', official: 'BR-E-02', label: 'exempt' },
  { category: 'AE', n: '032', official: 'BR-AE-02', label: 'reverse-charge' },
  { category: 'K', n: '033', official: 'BR-IC-02', label: 'intra-community' },
  { category: 'G', n: '034', official: 'BR-G-02', label: 'export' },
];

/** The UNCL 5305 categories of the document's lines. */
function lineCategories(doc: Rec): Set<string> {
  const out = new Set<string>();
  const lines = doc['lineItems'];
  if (!Array.isArray(lines)) return out;
  for (const line of lines) {
    if (!isRecord(line)) continue;
    const raw = text(line['taxCategory'])?.toUpperCase();
    const rate = typeof line['taxRate'] === 'number' ? line['taxRate'] : 0;
    if (raw) out.add(uncl5305Category(raw, rate, new Set()));
  }
  return out;
}

const hasTaxId = (doc: Rec, role: PartyRole): boolean => {
  const ids = recordAt(doc, 'parties') && recordAt(recordAt(doc, 'parties'), role)?.['taxIds'];
  return Array.isArray(ids) && ids.some((id) => isRecord(id) && text(id['value']) !== undefined);
};

function sellerVatFor(category: string): CheckFn {
  return (doc, ctx) => {
    if (!lineCategories(doc).has(category)) return false;
    if (!hasTaxId(doc, 'seller')) ctx.report(['parties', 'seller', 'taxIds']);
    return true;
  };
}

/** Not subject to VAT (O): no seller or buyer VAT identifier (BR-O-02). */
const noVatIdsWhenNotSubject: CheckFn = (doc, ctx) => {
  if (!lineCategories(doc).has('O')) return false;
  for (const role of ['seller', 'buyer'] as const) if (hasTaxId(doc, role)) ctx.report(['parties', role, 'taxIds'], `A document with not-subject (O) lines carries no ${role} VAT identifier`);
  return true;
};

/** Not subject to VAT (O) lines only with other O lines (BR-O-11: an O breakdown is the only one). */
const notSubjectAlone: CheckFn = (doc, ctx) => {
  const categories = lineCategories(doc);
  if (!categories.has('O')) return false;
  if (categories.size > 1) ctx.report(['lineItems'], `Not-subject (O) lines cannot be mixed with lines of other VAT categories (${[...categories].filter((c) => c !== 'O').join(', ')})`);
  return true;
};

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
    ...SELLER_VAT_CATEGORIES.map((c) =>
      check(partyCode(country, 'seller', c.n), ['parties.seller.taxIds'], `A document with ${c.label} (${c.category}) lines needs the seller VAT identifier`, `a seller VAT identifier when a line is ${c.category}`, sellerVatFor(c.category), {
        official: c.official,
        requires: `a line of category ${c.category}`,
      }),
    ),
    check(`${country}-LINE-002`, ['lineItems[].taxCategory'], 'Not-subject (O) lines cannot be mixed with lines of other VAT categories', 'only O lines when one line is O', notSubjectAlone, {
      official: 'BR-O-11',
      requires: 'a line of category O',
    }),
    check(`${country}-LINE-003`, ['parties.seller.taxIds', 'parties.buyer.taxIds'], 'A document with not-subject (O) lines carries no seller or buyer VAT identifier', 'no VAT identifiers when a line is O', noVatIdsWhenNotSubject, {
      official: 'BR-O-02',
      requires: 'a line of category O',
    }),
  ];
}
