/**
 * Which key may onboard into which platform environment (docs/api/http.md): a sandbox key is
 * required for sandbox (and serves simulation), a production key for production.
 */
import { keyServesEnvironment, type KeyEnvironment } from '../workspace/workspace.js';
import { PLATFORM_ENVIRONMENTS, type PlatformEnvironment } from './values.js';

export const ENVIRONMENT_MISMATCH = 'CONNECT_ENVIRONMENT_MISMATCH';

export interface EnvironmentMismatch {
  path: (string | number)[];
  message: string;
}

const mismatch = (keyEnvironment: KeyEnvironment, requested: string, path: (string | number)[]): EnvironmentMismatch => ({
  path,
  message: `this ${keyEnvironment} API key cannot onboard a company in ${requested}: a ${requested === 'production' ? 'production' : 'sandbox'} key is required`,
});

/** The environment of a company or of an onboarding job, when the key does not serve it. */
export function onboardingEnvironmentMismatch(keyEnvironment: KeyEnvironment, requested: PlatformEnvironment): EnvironmentMismatch | null {
  return keyServesEnvironment(keyEnvironment, requested) ? null : mismatch(keyEnvironment, requested, ['platformEnvironment']);
}

/**
 * The rows of an onboarding job that name an environment the key does not serve, by index.
 * Each such row fails on its own (a failed row never rolls back the others).
 */
export function rowEnvironmentMismatches(keyEnvironment: KeyEnvironment, rows: readonly unknown[]): Map<number, EnvironmentMismatch> {
  const found = new Map<number, EnvironmentMismatch>();
  rows.forEach((row, i) => {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) return;
    const value = (row as Record<string, unknown>).platformEnvironment;
    if (typeof value !== 'string' || !(PLATFORM_ENVIRONMENTS as readonly string[]).includes(value)) return;
    if (!keyServesEnvironment(keyEnvironment, value as PlatformEnvironment)) found.set(i, mismatch(keyEnvironment, value, ['rows', i, 'platformEnvironment']));
  });
  return found;
}

/**
 * A document is submitted in its company's environment (the Connect section of the OpenAPI document): production documents
 * only through a company onboarded in production, test documents (sandbox, and simulation,
 * which sandbox keys also serve) only through a company onboarded in sandbox or simulation.
 */
export function submissionServesCompany(companyEnvironment: string, requested: string): boolean {
  return (companyEnvironment === 'production') === (requested === 'production');
}
