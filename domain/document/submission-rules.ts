/**
 * The request-level rules of a submission, shared by both request formats: which purposes,
 * environments and countries a submission may name. Pure: the HTTP layer turns a refusal into
 * its format's error envelope and path.
 */
import { isSupportedCountry, supportedCountries } from '../validation/document-types.js';
import { keyServesEnvironment, type KeyEnvironment } from '../workspace/workspace.js';

export type SubmissionEnvironment = 'sandbox' | 'simulation' | 'production';
export type SubmissionFormat = 'new' | 'earlier';

export { supportedCountries };

/** The earlier format also spells production `prod`. */
export const normalizeEnvironment = (env: SubmissionEnvironment | 'prod'): SubmissionEnvironment => (env === 'prod' ? 'production' : env);

export type EnvironmentRefusal =
  /** The new format submits to sandbox or production only (no simulation). */
  | 'not_offered'
  /** The key's environment does not serve the requested one. */
  | 'key_environment';

/**
 * May a key of `keyEnvironment` submit to `requested`? The new format needs the key's own
 * environment exactly; the earlier format lets a non-production key serve sandbox and simulation.
 */
export function environmentRefusal(format: SubmissionFormat, keyEnvironment: KeyEnvironment, requested: string): EnvironmentRefusal | null {
  if (format === 'new') {
    if (requested !== 'sandbox' && requested !== 'production') return 'not_offered';
    return requested === keyEnvironment ? null : 'key_environment';
  }
  return keyServesEnvironment(keyEnvironment, requested as SubmissionEnvironment) ? null : 'key_environment';
}

/**
 * Is the purpose one a submission may have? The new format submits for invoicing only; the
 * earlier one also stores mapping samples, and an invoicing submission always goes to the tax
 * authority (`submitToGovernment` false contradicts it).
 */
export function purposeAllowed(format: SubmissionFormat, purpose: string, submitToGovernment?: boolean): boolean {
  if (format === 'new') return purpose === 'invoicing';
  return !(purpose === 'invoicing' && submitToGovernment === false);
}

/** Is the country one documents can be submitted for? */
export const submissionCountryAllowed = (country: string): boolean => isSupportedCountry(country);
