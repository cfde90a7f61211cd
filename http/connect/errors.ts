/**
 * Connect's error codes and their HTTP statuses (docs/api/http.md). Domain refusals and
 * dependency failures become HttpProblems, rendered in the Connect envelope by the one error
 * middleware; `retryable` is false for a refusal and true for a dependency failure.
 */
import type { Context, Next } from 'koa';
import { ConnectDependencyError } from '../../commands/connect/companies.js';
import { ConnectErrorCodes } from '../../domain/connect/values.js';
import { DomainError } from '../../domain/errors.js';
import { HttpProblem } from '../errors.js';

const STATUS_BY_CODE: Record<string, number> = {
  [ConnectErrorCodes.validation]: 400,
  [ConnectErrorCodes.unsupportedCountry]: 400,
  [ConnectErrorCodes.invalidEnvironment]: 400,
  [ConnectErrorCodes.companyNotFound]: 404,
  [ConnectErrorCodes.aspLinkageNotFound]: 404,
  [ConnectErrorCodes.companyExists]: 409,
  [ConnectErrorCodes.sourceExists]: 409,
  [ConnectErrorCodes.participantUnavailable]: 503,
  [ConnectErrorCodes.onboardingTimeout]: 504,
};

const STATUS_BY_KIND: Record<DomainError['kind'], number> = {
  validation: 400,
  not_found: 404,
  conflict: 409,
  precondition: 412,
  forbidden: 403,
};

export function toConnectProblem(err: unknown): unknown {
  if (err instanceof DomainError) {
    return new HttpProblem(STATUS_BY_CODE[err.code] ?? STATUS_BY_KIND[err.kind], err.message, {
      code: err.code,
      retryable: false,
      ...(err.path.length > 0 ? { path: err.path } : {}),
    });
  }
  if (err instanceof ConnectDependencyError) {
    return new HttpProblem(STATUS_BY_CODE[err.code]!, err.message, { code: err.code, retryable: true });
  }
  return err;
}

/** Route middleware: domain and dependency errors of the handlers leave as Connect problems. */
export async function connectErrors(_ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } catch (err) {
    throw toConnectProblem(err);
  }
}
