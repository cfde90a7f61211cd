/**
 * Value formats the rules check: calendar dates, currency and country codes, code lists and
 * the tax identifiers of each supported country. Every pattern is compiled once, here.
 */

export interface Format {
  /** Short name shown in the requirements catalogue (`date`, `emirate`, `AE TRN`, …). */
  readonly name: string;
  /** What a valid value looks like, in words. */
  readonly description: string;
  /** The kind of value the format applies to; values of another type are left to the preflight. */
  readonly appliesTo: 'string' | 'number';
  /** The accepted values when the format is a closed code list. */
  readonly values?: readonly string[];
  test(value: never): boolean;
}

export interface StringFormat extends Format {
  readonly appliesTo: 'string';
  test(value: string): boolean;
}
export interface NumberFormat extends Format {
  readonly appliesTo: 'number';
  test(value: number): boolean;
}

export function pattern(name: string, description: string, re: RegExp, extra?: (s: string) => boolean): StringFormat {
  return { name, description, appliesTo: 'string', test: extra ? (s) => re.test(s) && extra(s) : (s) => re.test(s) };
}

export function codeList(name: string, values: readonly string[], description?: string): StringFormat {
  const set = new Set(values);
  return { name, description: description ?? `one of ${values.join(', ')}`, appliesTo: 'string', values, test: (s) => set.has(s) };
}

// Dates -------------------------------------------------------------------------------------------

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const DIGIT = (c: number) => c >= 48 && c <= 57;
const DATE_DIGIT_POSITIONS = [0, 1, 2, 3, 5, 6, 8, 9] as const;

/** `YYYY-MM-DD` naming a real day of the Gregorian calendar (2024-02-29 yes, 2023-02-29 no). */
export function isCalendarDate(s: string): boolean {
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false;
  for (const i of DATE_DIGIT_POSITIONS) if (!DIGIT(s.charCodeAt(i))) return false;
  const year = (s.charCodeAt(0) - 48) * 1000 + (s.charCodeAt(1) - 48) * 100 + (s.charCodeAt(2) - 48) * 10 + (s.charCodeAt(3) - 48);
  const month = (s.charCodeAt(5) - 48) * 10 + (s.charCodeAt(6) - 48);
  const day = (s.charCodeAt(8) - 48) * 10 + (s.charCodeAt(9) - 48);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const max = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
  return day <= max;
}

export const dateFormat: StringFormat = {
  name: 'date',
  description: 'a calendar date written YYYY-MM-DD',
  appliesTo: 'string',
  test: isCalendarDate,
};

// Codes -------------------------------------------------------------------------------------------

export const currencyFormat = pattern('currency', 'an ISO 4217 currency code: three capital letters', /^[A-Z]{3}$/);
export const countryFormat = pattern('country', 'an ISO 3166-1 alpha-2 country code: two capital letters', /^[A-Z]{2}$/);
export const positiveNumber: NumberFormat = {
  name: 'positive number',
  description: 'a number greater than zero',
  appliesTo: 'number',
  test: (n) => n > 0,
};

/** The seven emirates (docs/api/unify.md). */
export const EMIRATE_CODES = ['AUH', 'DXB', 'SHJ', 'UAQ', 'FUJ', 'AJM', 'RAK'] as const;
export const emirateFormat = codeList('emirate', EMIRATE_CODES);

/** Summary-invoice frequencies (docs/api/unify.md). */
export const INVOICE_FREQUENCIES = ['DAILY', 'WEEKLY', 'ONCE_IN_15_DAYS', 'MONTHLY', 'ONCE_IN_45_DAYS', 'ONCE_IN_60_DAYS'] as const;
export const frequencyFormat = codeList('frequency', INVOICE_FREQUENCIES);

// Tax identifiers ---------------------------------------------------------------------------------

/** UAE Tax Registration Number: 15 digits. */
export const aeTrnFormat = pattern('AE TRN', 'a UAE tax registration number: 15 digits, starting with 1 and ending with 03 (PINT AE ibr-132-ae)', /^1\d{12}03$/);
/** UAE Tax Identification Number (also the Peppol participant id under scheme 0235): 10 digits. */
export const aeTinFormat = pattern('AE TIN', 'a UAE tax identification number: exactly 10 digits', /^\d{10}$/);
/** Saudi VAT registration number: 15 digits, first and last digit 3. */
export const saVatFormat = pattern('SA VAT', 'a Saudi VAT number: 15 digits starting and ending with 3', /^3\d{13}3$/);
/** Malaysian TIN: a type prefix (C, CS, D, E, EI, F, FA, PT, TA, TC, TN, TR, TP, J, LE, IG) and 8 to 13 digits. */
export const myTinFormat = pattern(
  'MY TIN',
  'a Malaysian TIN: a prefix such as C, IG, EI or CS followed by 8 to 13 digits',
  /^(?:C|CS|D|E|EI|F|FA|PT|TA|TC|TN|TR|TP|J|LE|IG)\d{8,13}$/,
);
/** Malaysian business registration number: 12 digits (new SSM form) or the old 6–7 digits and a letter. */
export const myBrnFormat = pattern('MY BRN', 'a Malaysian business registration number: 12 digits, or 6–7 digits and a check letter', /^(?:\d{12}|\d{6,7}-?[A-Z])$/);
/** Malaysian identity card number: 12 digits, optionally written 6-2-4. */
export const myNricFormat = pattern('MY NRIC', 'a Malaysian identity card number: 12 digits', /^\d{6}-?\d{2}-?\d{4}$/);

/** Belgian enterprise number check: the last two digits are 97 minus the first eight modulo 97. */
export function belgianCheckDigitsOk(tenDigits: string): boolean {
  const body = Number(tenDigits.slice(0, 8));
  const check = Number(tenDigits.slice(8));
  return 97 - (body % 97) === check;
}
/** Belgian VAT number: BE, then 0 or 1 and nine digits, with the mod-97 check. */
export const beVatFormat = pattern('BE VAT', 'a Belgian VAT number: BE0 or BE1 followed by 9 digits, passing the mod-97 check', /^BE[01]\d{9}$/, (s) =>
  belgianCheckDigitsOk(s.slice(2)),
);
/** German VAT identification number (USt-IdNr): DE and 9 digits. */
export const deVatFormat = pattern('DE USt-IdNr', 'a German VAT identification number: DE followed by 9 digits', /^DE\d{9}$/);
