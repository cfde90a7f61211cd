/**
 * What a rule and a rule set are, and the small factories the country files write them with.
 * Rules are data (code, message, severity, paths, condition) plus, for the few checks no
 * declarative kind covers, one small predicate function written once at module load.
 */
import type { Condition } from '../conditions.js';
import type { Country, ResolvedDocumentType } from '../document-types.js';
import type { Format } from '../formats.js';
import type { PathSegment } from '../paths.js';

export type Severity = 'error' | 'warning';

interface RuleCommon {
  /** Stable code, e.g. `AE-HEAD-001`. */
  readonly code: string;
  readonly message: string;
  readonly severity: Severity;
  /** When the rule applies; absent means always (within its rule set). */
  readonly when?: Condition;
  /**
   * The official rule this rule enforces ahead of the XML (e.g. `ibr-174-ae` of PINT AE 1.0.4):
   * findings carry it as `officialRule` and name it in their message.
   */
  readonly official?: string;
}

/** The value at `path` must be present (not absent, null, blank or an empty array). */
export interface RequiredRule extends RuleCommon {
  readonly kind: 'required';
  readonly path: string;
  /** Other paths that satisfy the requirement when present (the first path is the main one). */
  readonly alternatives?: readonly string[];
}

/** Each value present at one of `paths` (of the format's type) must pass the format. */
export interface FormatRule extends RuleCommon {
  readonly kind: 'format';
  readonly paths: readonly string[];
  readonly format: Format;
}

/** Reports findings through the context; returns false when the rule does not apply (skipped). */
export type CheckFn = (doc: Readonly<Record<string, unknown>>, ctx: CheckContext) => boolean;

export interface CheckContext {
  /** The document type being validated. */
  readonly documentType: ResolvedDocumentType;
  /** Reports a finding of the rule being evaluated; the message defaults to the rule's. */
  report(path: PathSegment[], message?: string): void;
}

/** A computed check (arithmetic, cross-field, typed identifiers). */
export interface CheckRule extends RuleCommon {
  readonly kind: 'check';
  /** The core paths the check looks at (findings name the exact one). */
  readonly paths: readonly string[];
  /** What the check accepts, in words (catalogue text). */
  readonly constraint: string;
  readonly check: CheckFn;
  /**
   * When the check also reports the absence of its paths (e.g. a field every line must carry):
   * `'always'`, or in words when (`'taxCategory is AE'`). The catalogue lists the paths as required
   * or conditional accordingly.
   */
  readonly requires?: string;
}

export type Rule = RequiredRule | FormatRule | CheckRule;

export interface RuleSet {
  /** Stable name, e.g. `ae.summary`; findings carry it as `ruleSet`. */
  readonly name: string;
  readonly description: string;
  readonly countries: readonly Country[];
  /** Document-type condition selecting the set (base, modifiers, variant only). */
  readonly when?: Condition;
  readonly rules: readonly Rule[];
}

// Factories ---------------------------------------------------------------------------------------

interface Options {
  readonly when?: Condition;
  readonly severity?: Severity;
  readonly official?: string;
}

const common = (opts: Options) => ({
  severity: opts.severity ?? ('error' as Severity),
  ...(opts.when ? { when: opts.when } : {}),
  ...(opts.official ? { official: opts.official } : {}),
});

export function required(code: string, path: string, message: string, opts: Options & { alternatives?: readonly string[] } = {}): RequiredRule {
  return {
    kind: 'required',
    code,
    path,
    message,
    ...common(opts),
    ...(opts.alternatives ? { alternatives: opts.alternatives } : {}),
  };
}

export function format(code: string, paths: string | readonly string[], fmt: Format, message: string, opts: Options = {}): FormatRule {
  return {
    kind: 'format',
    code,
    paths: typeof paths === 'string' ? [paths] : paths,
    format: fmt,
    message,
    ...common(opts),
  };
}

export function check(code: string, paths: readonly string[], message: string, constraint: string, fn: CheckFn, opts: Options & { requires?: string } = {}): CheckRule {
  return {
    kind: 'check',
    code,
    paths,
    message,
    constraint,
    check: fn,
    ...common(opts),
    ...(opts.requires ? { requires: opts.requires } : {}),
  };
}

export function ruleSet(name: string, description: string, countries: readonly Country[], rules: readonly Rule[], when?: Condition): RuleSet {
  return { name, description, countries, rules, ...(when ? { when } : {}) };
}

// Numbered fields, shared by every country so that a number means the same field everywhere ------

/** Header fields: `<CC>-HEAD-<n>`. */
export const HEADER_FIELDS = {
  documentNumber: { n: '001', path: 'header.documentNumber', label: 'document number' },
  issueDate: { n: '002', path: 'header.issueDate', label: 'issue date' },
  currency: { n: '003', path: 'header.currency', label: 'currency' },
  base: { n: '004', path: 'header.documentType.base', label: 'document base (documentType.base)' },
  dueDate: { n: '005', path: 'header.dueDate', label: 'due date' },
  precedingId: { n: '006', path: 'header.precedingInvoiceReference.id', label: 'preceding invoice reference id' },
  precedingIssueDate: { n: '007', path: 'header.precedingInvoiceReference.issueDate', label: 'preceding invoice issue date' },
  periodStart: { n: '008', path: 'header.invoicePeriod.startDate', label: 'invoice period start date' },
  periodEnd: { n: '009', path: 'header.invoicePeriod.endDate', label: 'invoice period end date' },
  frequency: { n: '010', path: 'header.invoicePeriod.frequency', label: 'invoice period frequency' },
  taxCurrency: { n: '012', path: 'header.taxCurrency', label: 'tax currency' },
  exchangeRate: { n: '013', path: 'header.exchangeRate.rate', label: 'exchange rate' },
} as const;
export type HeaderField = keyof typeof HEADER_FIELDS;

export function headerRequired(country: Country, field: HeaderField, opts: Options & { alternatives?: readonly string[]; message?: string } = {}): RequiredRule {
  const f = HEADER_FIELDS[field];
  return required(`${country}-HEAD-${f.n}`, f.path, opts.message ?? `The ${f.label} is required`, opts);
}

export type PartyRole = 'seller' | 'buyer';

/** Party fields: `<CC>-SELL-<n>` / `<CC>-BUY-<n>`. 011–014 are the party's code-list and identifier formats. */
export const PARTY_FIELDS = {
  registrationType: { n: '001', path: 'registrationNumbers[0].type', label: 'registration type' },
  name: { n: '002', path: 'name', label: 'name' },
  registrationValue: { n: '003', path: 'registrationNumbers[0].value', label: 'registration number' },
  peppolId: { n: '004', path: 'peppolId', label: 'Peppol id' },
  addressLine1: { n: '005', path: 'address.addressLine1', label: 'address line 1' },
  city: { n: '006', path: 'address.city', label: 'city' },
  stateOrProvince: { n: '007', path: 'address.stateOrProvince', label: 'state/province' },
  country: { n: '008', path: 'address.country', label: 'country' },
  taxIdType: { n: '009', path: 'taxIds[0].type', label: 'tax id type' },
  taxIdValue: { n: '010', path: 'taxIds[0].value', label: 'tax id value' },
} as const;
export type PartyField = keyof typeof PARTY_FIELDS;
export const PARTY_SUBDIVISION = '011';
export const PARTY_TAX_ID_FORMAT = '012';
export const PARTY_PEPPOL_FORMAT = '013';
export const PARTY_REGISTRATION_FORMAT = '014';

export const partyCode = (country: Country, role: PartyRole, n: string) => `${country}-${role === 'seller' ? 'SELL' : 'BUY'}-${n}`;
export const partyPath = (role: PartyRole, rest: string) => `parties.${role}.${rest}`;
const Role = (role: PartyRole) => (role === 'seller' ? 'Seller' : 'Buyer');

export function partyRequired(country: Country, role: PartyRole, field: PartyField, opts: Options & { message?: string } = {}): RequiredRule {
  const f = PARTY_FIELDS[field];
  return required(partyCode(country, role, f.n), partyPath(role, f.path), opts.message ?? `${Role(role)} ${f.label} is required`, opts);
}

export function partyRequiredAll(country: Country, role: PartyRole, fields: readonly PartyField[], opts: Options = {}): RequiredRule[] {
  return fields.map((f) => partyRequired(country, role, f, opts));
}
