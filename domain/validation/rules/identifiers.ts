/**
 * Typed identifier checks: each entry of a party's `taxIds[]` or `registrationNumbers[]`
 * whose `type` names a known scheme must have a `value` of that scheme's format.
 */
import type { Country } from '../document-types.js';
import type { Format } from '../formats.js';
import { isRecord } from '../paths.js';
import { check, partyCode, type CheckRule, type PartyRole } from './define.js';

/** Picks the format for one entry (type upper-cased), or undefined when the entry is not checked. */
export type FormatPicker = (type: string, value: string, party: Readonly<Record<string, unknown>>) => Format | undefined;

export function identifierFormatRule(
  country: Country,
  n: string,
  role: PartyRole,
  list: 'taxIds' | 'registrationNumbers',
  pick: FormatPicker,
  constraint: string,
  opts: { official?: string } = {},
): CheckRule {
  const who = role === 'seller' ? 'Seller' : 'Buyer';
  const what = list === 'taxIds' ? 'tax id' : 'registration number';
  const message = `${who} ${what} has the wrong format`;
  return check(partyCode(country, role, n), [`parties.${role}.${list}[].value`], message, constraint, (doc, ctx) => {
    const parties = doc['parties'];
    if (!isRecord(parties)) return false;
    const party = parties[role];
    if (!isRecord(party)) return false;
    const entries = party[list];
    if (!Array.isArray(entries)) return false;
    let checked = false;
    for (let i = 0; i < entries.length; i++) {
      const entry: unknown = entries[i];
      if (!isRecord(entry)) continue;
      const type = entry['type'];
      const value = entry['value'];
      if (typeof type !== 'string' || typeof value !== 'string' || value === '') continue;
      const format = pick(type.toUpperCase(), value, party);
      if (!format) continue;
      checked = true;
      if (!(format.test as (s: string) => boolean)(value)) {
        ctx.report(['parties', role, list, i, 'value'], `${message}: a ${type} must be ${format.description}`);
      }
    }
    return checked;
  }, opts);
}

/** Only the entries of a party whose address country is `country` (a national rule binds only them). */
export function ofPartyIn(country: Country, pick: FormatPicker): FormatPicker {
  return (type, value, party) => {
    const address = party['address'];
    return isRecord(address) && address['country'] === country ? pick(type, value, party) : undefined;
  };
}

/** A picker from a table of type names to formats. */
export function byType(table: Readonly<Record<string, Format>>): FormatPicker {
  return (type) => (Object.hasOwn(table, type) ? table[type] : undefined);
}

/**
 * A picker for a national VAT number: entries of type VAT (or VATIN, TRN) whose value starts
 * with the country prefix, or that belong to a party whose address country is the country.
 */
export function nationalVat(country: Country, format: Format): FormatPicker {
  return (type, value, party) => {
    if (type !== 'VAT' && type !== 'VATIN' && type !== 'TRN') return undefined;
    if (value.startsWith(country)) return format;
    const address = party['address'];
    return isRecord(address) && address['country'] === country ? format : undefined;
  };
}
