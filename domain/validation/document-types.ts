/**
 * Document types: the bases, modifiers and variants the validation engine knows, which of
 * them each supported country accepts, the 14 derived flags of docs/api/unify.md, and the resolver
 * of the earlier format's `logicalDocumentType` (string or object form).
 *
 * Pure data and functions; nothing here reads a clock or does I/O.
 */
import { DomainError } from '../errors.js';

/** Countries with rule sets (docs/api/unify.md: any other country answers 400 at the HTTP edge). */
export const supportedCountries = ['AE', 'SA', 'MY', 'BE', 'DE'] as const;
export type Country = (typeof supportedCountries)[number];

export const DOCUMENT_BASES = ['tax_invoice', 'credit_note', 'debit_note'] as const;
export type DocumentBase = (typeof DOCUMENT_BASES)[number];

export const DOCUMENT_MODIFIERS = [
  'free_trade_zone',
  'disclosed_agent',
  'e_commerce',
  'export',
  'reverse_charge',
  'continuous_supply',
  'summary',
  'out_of_scope',
  'deemed_supply',
  'self_billed',
  'margin_scheme',
] as const;
export type DocumentModifier = (typeof DOCUMENT_MODIFIERS)[number];

/**
 * Variants (docs/api/unify.md leaves the values open). One variant at most per document; each one
 * corresponds to a derived flag (UNTDID 1001 invoice kinds plus the B2C / B2G audiences).
 * No variant means `standard` (a business-to-business document).
 */
export const DOCUMENT_VARIANTS = [
  'standard',
  'simplified',
  'b2g',
  'prepayment',
  'adjusted',
  'receipt',
  'partial',
  'partial_construction',
  'partial_final_construction',
  'final_construction',
] as const;
export type DocumentVariant = (typeof DOCUMENT_VARIANTS)[number];

/** A document type as the new request format carries it (docs/api/unify.md `documentType`). */
export interface DocumentTypeInput {
  readonly base: string;
  readonly modifiers?: readonly string[];
  readonly variant?: string | null;
}

/** A document type checked against a country: known values, modifiers de-duplicated. */
export interface ResolvedDocumentType {
  readonly base: DocumentBase;
  readonly modifiers: readonly DocumentModifier[];
  readonly variant: DocumentVariant | null;
}

export interface CountryDocumentTypes {
  readonly bases: readonly DocumentBase[];
  readonly modifiers: readonly DocumentModifier[];
  readonly variants: readonly DocumentVariant[];
}

const ALL_BASES = DOCUMENT_BASES;
const PEPPOL_VARIANTS: readonly DocumentVariant[] = [
  'standard',
  'b2g',
  'prepayment',
  'adjusted',
  'partial',
  'partial_construction',
  'partial_final_construction',
  'final_construction',
];

/** Which bases, modifiers and variants each country accepts. */
export const countryDocumentTypes: Readonly<Record<Country, CountryDocumentTypes>> = {
  AE: { bases: ALL_BASES, modifiers: DOCUMENT_MODIFIERS, variants: ['standard', 'b2g', 'prepayment', 'adjusted'] },
  SA: {
    bases: ALL_BASES,
    modifiers: ['export', 'self_billed', 'disclosed_agent', 'deemed_supply', 'summary'],
    variants: ['standard', 'simplified', 'prepayment', 'adjusted'],
  },
  MY: { bases: ALL_BASES, modifiers: ['export', 'self_billed', 'summary'], variants: ['standard', 'b2g', 'receipt'] },
  BE: { bases: ALL_BASES, modifiers: ['export', 'self_billed', 'reverse_charge', 'margin_scheme'], variants: PEPPOL_VARIANTS },
  DE: { bases: ALL_BASES, modifiers: ['export', 'self_billed', 'reverse_charge', 'margin_scheme'], variants: PEPPOL_VARIANTS },
};

/** The earlier format's logical document type names and the document type each stands for. */
export const LOGICAL_DOCUMENT_TYPES: Readonly<Record<string, ResolvedDocumentType>> = {
  TAX_INVOICE: { base: 'tax_invoice', modifiers: [], variant: null },
  TAX_INVOICE_CREDIT_NOTE: { base: 'credit_note', modifiers: [], variant: null },
  TAX_INVOICE_DEBIT_NOTE: { base: 'debit_note', modifiers: [], variant: null },
  SIMPLIFIED_TAX_INVOICE: { base: 'tax_invoice', modifiers: [], variant: 'simplified' },
  SIMPLIFIED_TAX_INVOICE_CREDIT_NOTE: { base: 'credit_note', modifiers: [], variant: 'simplified' },
  EXPORT_INVOICE: { base: 'tax_invoice', modifiers: ['export'], variant: null },
  SELF_BILLED_INVOICE: { base: 'tax_invoice', modifiers: ['self_billed'], variant: null },
  THIRD_PARTY_INVOICE: { base: 'tax_invoice', modifiers: ['disclosed_agent'], variant: null },
  DEEMED_SUPPLY: { base: 'tax_invoice', modifiers: ['deemed_supply'], variant: null },
  MARGIN_SCHEME: { base: 'tax_invoice', modifiers: ['margin_scheme'], variant: null },
  CONTINUOUS_SUPPLY: { base: 'tax_invoice', modifiers: ['continuous_supply'], variant: null },
};

export function isSupportedCountry(country: unknown): country is Country {
  return typeof country === 'string' && (supportedCountries as readonly string[]).includes(country);
}

// ---------------------------------------------------------------------------------------------
// Derived flags (docs/api/unify.md)

export interface DerivedFlags {
  isExport: boolean;
  isSelfBilled: boolean;
  isThirdParty: boolean;
  isNominalSupply: boolean;
  isSummary: boolean;
  isB2B: boolean;
  isPrepayment: boolean;
  isAdjusted: boolean;
  isReceipt: boolean;
  isB2G: boolean;
  isPartial: boolean;
  isPartialConstruction: boolean;
  isPartialFinalConst: boolean;
  isFinalConstruction: boolean;
}

/**
 * The 14 booleans of docs/api/unify.md for a document type. Modifiers give export, self-billed,
 * third party (`disclosed_agent`), nominal supply (`deemed_supply`) and summary; the variant
 * gives the rest. A document is B2B unless its variant is `simplified`, `b2g` or `receipt`.
 */
export function derivedFlags(documentType: { readonly modifiers?: readonly string[] | null; readonly variant?: string | null }): DerivedFlags {
  const modifiers = Array.isArray(documentType.modifiers) ? documentType.modifiers : [];
  const has = (m: DocumentModifier) => modifiers.includes(m);
  const variant = typeof documentType.variant === 'string' ? documentType.variant : 'standard';
  return {
    isExport: has('export'),
    isSelfBilled: has('self_billed'),
    isThirdParty: has('disclosed_agent'),
    isNominalSupply: has('deemed_supply'),
    isSummary: has('summary'),
    isB2B: variant !== 'simplified' && variant !== 'b2g' && variant !== 'receipt',
    isPrepayment: variant === 'prepayment',
    isAdjusted: variant === 'adjusted',
    isReceipt: variant === 'receipt',
    isB2G: variant === 'b2g',
    isPartial: variant === 'partial',
    isPartialConstruction: variant === 'partial_construction',
    isPartialFinalConst: variant === 'partial_final_construction',
    isFinalConstruction: variant === 'final_construction',
  };
}

// ---------------------------------------------------------------------------------------------
// Resolution and per-country validation

export type DocumentTypeErrorReason =
  | 'unsupported_country'
  | 'invalid_document_type'
  | 'unknown_document_type'
  | 'not_applicable';

/**
 * A document type that cannot be used: malformed, unknown, or not applicable to the country.
 * `path` is relative to the value that was resolved (e.g. `['modifiers', 1]`); `code` is the
 * preflight rule code the validation report uses for the same problem.
 */
export class DocumentTypeError extends DomainError {
  /** The path with array indices kept as numbers. */
  readonly segments: readonly (string | number)[];
  constructor(
    readonly reason: DocumentTypeErrorReason,
    code: string,
    message: string,
    path: readonly (string | number)[] = [],
  ) {
    super('validation', code, message, path.map(String));
    this.segments = path;
  }
}

export type Result<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export const COUNTRY_ERROR_CODE = 'CORE-PRE-003';
export const BASE_ERROR_CODE = 'CORE-PRE-004';
export const MODIFIER_ERROR_CODE = 'CORE-PRE-005';
export const VARIANT_ERROR_CODE = 'CORE-PRE-006';

const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
const fail = (error: DocumentTypeError): Result<never, DocumentTypeError> => ({ ok: false, error });

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks a document type in object form against a country: `base` known and accepted,
 * `modifiers` an array of accepted modifier names (duplicates dropped), `variant` absent,
 * null or accepted. The first problem is returned as a typed error.
 */
export function checkDocumentType(country: unknown, documentType: unknown): Result<ResolvedDocumentType, DocumentTypeError> {
  if (!isSupportedCountry(country)) {
    return fail(new DocumentTypeError('unsupported_country', COUNTRY_ERROR_CODE, `country ${describe(country)} is not supported; supported: ${supportedCountries.join(', ')}`));
  }
  const accepted = countryDocumentTypes[country];
  if (!isRecord(documentType)) {
    return fail(new DocumentTypeError('invalid_document_type', BASE_ERROR_CODE, 'documentType must be an object with base, modifiers and an optional variant'));
  }
  const base = documentType['base'];
  if (typeof base !== 'string') {
    return fail(new DocumentTypeError('invalid_document_type', BASE_ERROR_CODE, 'documentType.base must be a string', ['base']));
  }
  if (!(DOCUMENT_BASES as readonly string[]).includes(base)) {
    return fail(new DocumentTypeError('unknown_document_type', BASE_ERROR_CODE, `documentType.base ${describe(base)} is not one of ${DOCUMENT_BASES.join(', ')}`, ['base']));
  }
  if (!(accepted.bases as readonly string[]).includes(base)) {
    return fail(new DocumentTypeError('not_applicable', BASE_ERROR_CODE, `documentType.base ${base} is not accepted for ${country}`, ['base']));
  }
  const rawModifiers = documentType['modifiers'];
  const modifiers: DocumentModifier[] = [];
  if (rawModifiers !== undefined && rawModifiers !== null) {
    if (!Array.isArray(rawModifiers)) {
      return fail(new DocumentTypeError('invalid_document_type', MODIFIER_ERROR_CODE, 'documentType.modifiers must be an array of strings', ['modifiers']));
    }
    for (let i = 0; i < rawModifiers.length; i++) {
      const m: unknown = rawModifiers[i];
      if (typeof m !== 'string') {
        return fail(new DocumentTypeError('invalid_document_type', MODIFIER_ERROR_CODE, 'each modifier must be a string', ['modifiers', i]));
      }
      if (!(DOCUMENT_MODIFIERS as readonly string[]).includes(m)) {
        return fail(new DocumentTypeError('unknown_document_type', MODIFIER_ERROR_CODE, `modifier ${describe(m)} is not one of ${DOCUMENT_MODIFIERS.join(', ')}`, ['modifiers', i]));
      }
      if (!(accepted.modifiers as readonly string[]).includes(m)) {
        return fail(new DocumentTypeError('not_applicable', MODIFIER_ERROR_CODE, `modifier ${m} is not accepted for ${country}`, ['modifiers', i]));
      }
      if (!modifiers.includes(m as DocumentModifier)) modifiers.push(m as DocumentModifier);
    }
  }
  const rawVariant = documentType['variant'];
  let variant: DocumentVariant | null = null;
  if (rawVariant !== undefined && rawVariant !== null) {
    if (typeof rawVariant !== 'string') {
      return fail(new DocumentTypeError('invalid_document_type', VARIANT_ERROR_CODE, 'documentType.variant must be a string', ['variant']));
    }
    if (!(DOCUMENT_VARIANTS as readonly string[]).includes(rawVariant)) {
      return fail(new DocumentTypeError('unknown_document_type', VARIANT_ERROR_CODE, `variant ${describe(rawVariant)} is not one of ${DOCUMENT_VARIANTS.join(', ')}`, ['variant']));
    }
    if (!(accepted.variants as readonly string[]).includes(rawVariant)) {
      return fail(new DocumentTypeError('not_applicable', VARIANT_ERROR_CODE, `variant ${rawVariant} is not accepted for ${country}`, ['variant']));
    }
    variant = rawVariant as DocumentVariant;
  }
  return ok({ base: base as DocumentBase, modifiers, variant });
}

/**
 * Resolves the earlier format's `logicalDocumentType` (docs/api/unify.md) for a country: a name such
 * as `EXPORT_INVOICE` (case-insensitive) or the object form {base, modifiers[], variant}.
 * Unknown names, malformed objects and values the country does not accept give a
 * `DocumentTypeError` (never thrown).
 */
export function resolveLogicalDocumentType(country: unknown, logicalDocumentType: unknown): Result<ResolvedDocumentType, DocumentTypeError> {
  if (typeof logicalDocumentType === 'string') {
    const named = Object.hasOwn(LOGICAL_DOCUMENT_TYPES, logicalDocumentType.trim().toUpperCase())
      ? LOGICAL_DOCUMENT_TYPES[logicalDocumentType.trim().toUpperCase()]
      : undefined;
    if (!named) {
      if (!isSupportedCountry(country)) return checkDocumentType(country, null);
      return fail(
        new DocumentTypeError(
          'unknown_document_type',
          BASE_ERROR_CODE,
          `logicalDocumentType ${describe(logicalDocumentType)} is not one of ${Object.keys(LOGICAL_DOCUMENT_TYPES).join(', ')}`,
        ),
      );
    }
    const checked = checkDocumentType(country, named);
    if (!checked.ok && checked.error.reason === 'not_applicable') {
      return fail(new DocumentTypeError('not_applicable', checked.error.code, `logicalDocumentType ${logicalDocumentType} is not accepted for ${String(country)}`));
    }
    return checked;
  }
  if (isRecord(logicalDocumentType)) return checkDocumentType(country, logicalDocumentType);
  if (!isSupportedCountry(country)) return checkDocumentType(country, null);
  return fail(new DocumentTypeError('invalid_document_type', BASE_ERROR_CODE, 'logicalDocumentType must be a name such as TAX_INVOICE or an object {base, modifiers, variant}'));
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : String(v);
}
