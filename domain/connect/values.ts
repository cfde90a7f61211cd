/**
 * The vocabulary of Connect (the Connect section of the OpenAPI document): environments, the UAE Peppol scheme,
 * identifiers, mapping readiness and the error codes of the contract. Pure.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';

export const PLATFORM_ENVIRONMENTS = ['sandbox', 'simulation', 'production'] as const;
export type PlatformEnvironment = (typeof PLATFORM_ENVIRONMENTS)[number];

/** The only country Connect onboards. */
export const CONNECT_COUNTRY = 'AE';
/** Countries whose documents the counts endpoint reads (the Connect section of the OpenAPI document). */
export const COUNT_COUNTRIES = ['AE', 'SA', 'MY', 'BE', 'DE'] as const;

/** The Peppol participant identifier scheme of UAE TINs (ISO 6523 ICD 0235). */
export const UAE_PEPPOL_SCHEME = '0235';

/** The built-in sandbox mapping of the core shape (docs/api/unify.md); new workspaces assign it automatically. */
export const DEFAULT_MAPPING_TEMPLATE_ID = 'core-identity-ae-1';

export const SOURCE_STATUSES = ['active', 'inactive'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

export const ConnectErrorCodes = {
  validation: 'CONNECT_VALIDATION_ERROR',
  unsupportedCountry: 'CONNECT_UNSUPPORTED_COUNTRY',
  companyNotFound: 'CONNECT_COMPANY_NOT_FOUND',
  companyExists: 'CONNECT_COMPANY_ALREADY_EXISTS',
  sourceExists: 'CONNECT_SOURCE_ALREADY_EXISTS',
  aspLinkageNotFound: 'ASP_LINKAGE_NOT_FOUND',
  participantUnavailable: 'PEPPOL_PARTICIPANT_UNAVAILABLE',
  onboardingTimeout: 'ONBOARDING_TIMEOUT',
  mappingNotConfigured: 'CONNECT_MAPPING_NOT_CONFIGURED',
  invalidEnvironment: 'CONNECT_INVALID_ENVIRONMENT',
} as const;

export type MappingReadiness =
  | { status: 'READY'; templateId: string }
  | { status: 'ACTION_REQUIRED'; code: string };

/**
 * Whether documents may be submitted through a source: it must be active and its field
 * mapping ready. Returns the mapping template to use, or why the source cannot be used.
 */
export function sourceForInvoicing(source: { status: 'active' | 'inactive'; mappingReadiness: MappingReadiness }):
  | { ok: true; templateId: string }
  | { ok: false; reason: 'inactive' | 'mapping_not_configured' } {
  if (source.status !== 'active') return { ok: false, reason: 'inactive' };
  if (source.mappingReadiness.status !== 'READY') return { ok: false, reason: 'mapping_not_configured' };
  return { ok: true, templateId: source.mappingReadiness.templateId };
}

export const MappingReadinessCodec: t.Type<MappingReadiness, unknown, unknown> = t.union([
  t.type({ status: t.literal('READY'), templateId: t.string }),
  t.type({ status: t.literal('ACTION_REQUIRED'), code: t.string }),
]) as unknown as t.Type<MappingReadiness, unknown, unknown>;

export const isReadyForInvoicing = (m: MappingReadiness): boolean => m.status === 'READY';

export function peppolParticipantId(tin: string): string {
  return `${UAE_PEPPOL_SCHEME}:${tin}`;
}

/**
 * A company's id: 24 hex characters derived from its workspace and TIN, so the company stream
 * itself guarantees one company per TIN per workspace (its first append expects no stream).
 */
export function companyIdFor(workspaceId: string, tin: string): string {
  return createHash('sha256').update(`connect-company\n${workspaceId}\n${tin}`).digest('hex').slice(0, 24);
}

export const COMPANY_ID_PATTERN = /^[0-9a-f]{24}$/;

export const companyStream = (companyId: string) => `company-${companyId}`;

/** The buyer reference of a company's n-th branch (1-based), shared with suppliers. */
export function userGivenBranchId(tin: string, ordinal: number): string {
  return `${tin}-B${String(ordinal).padStart(3, '0')}`;
}

/** Text PostgreSQL can store (text and jsonb): no NUL character and no lone UTF-16 surrogate. */
export function isStorableText(s: string): boolean {
  if (s.includes('\u0000')) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}

export const oneOf = <T extends readonly string[]>(values: T, name: string) =>
  t.keyof(Object.fromEntries(values.map((v) => [v, null])) as Record<T[number], null>, name);
