/**
 * Which key may onboard into which platform environment (SPEC.md 5.5): a sandbox key is
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

/** The first environment of an onboarding request (a company, or a job and its rows) the key does not serve. */
export function onboardingEnvironmentMismatch(
  keyEnvironment: KeyEnvironment,
  requested: PlatformEnvironment,
  rows: readonly unknown[] = [],
): EnvironmentMismatch | null {
  if (!keyServesEnvironment(keyEnvironment, requested)) return mismatch(keyEnvironment, requested, ['platformEnvironment']);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (typeof row !== 'object' || row === null || Array.isArray(row)) continue;
    const value = (row as Record<string, unknown>).platformEnvironment;
    if (typeof value !== 'string' || !(PLATFORM_ENVIRONMENTS as readonly string[]).includes(value)) continue;
    if (!keyServesEnvironment(keyEnvironment, value as PlatformEnvironment)) return mismatch(keyEnvironment, value, ['rows', i, 'platformEnvironment']);
  }
  return null;
}
