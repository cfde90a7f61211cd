/**
 * The guards of a Connect write that manages workspace-level resources (credits, webhook
 * subscriptions): the key's role, and the data environment chosen by `X-Environment`
 * (docs/api/credits.md, docs/api/http.md).
 */
import type { Context, Next } from 'koa';
import { CreditErrorCodes, creditEnvironmentOf } from '../../domain/credits/values.js';
import { requireWritePermission, type AuthContext } from '../auth.js';
import { HttpProblem } from '../errors.js';

const WRITER_ROLES: ReadonlySet<AuthContext['role']> = new Set(['owner', 'admin', 'partner']);

/** Owners, admins and partners with a read-and-write key may write; other members read only. */
export function writerRoles(what: string) {
  return async function writeAccess(ctx: Context, next: Next): Promise<void> {
    const auth = requireWritePermission(ctx);
    if (!WRITER_ROLES.has(auth.role)) {
      throw new HttpProblem(403, `a ${auth.role} key may read ${what} but not change them; that needs an owner, admin or partner key`, {
        code: 'CONNECT_INSUFFICIENT_PERMISSION',
        retryable: false,
      });
    }
    await next();
  };
}

/** X-Environment: sandbox|test|development → sandbox, production|prod or absent → production; else 400. */
export async function writeEnvironment(ctx: Context, next: Next): Promise<void> {
  const header = ctx.get('x-environment');
  const environment = creditEnvironmentOf(header);
  if (!environment) {
    throw new HttpProblem(400, `X-Environment "${header.slice(0, 40).replace(/[^\x20-\x7e]/g, '?')}" is not recognised: use sandbox, test, development, production or prod`, {
      code: CreditErrorCodes.invalidEnvironment,
      path: ['headers', 'X-Environment'],
      retryable: false,
    });
  }
  ctx.state.environment = environment;
  if (header.trim() === '') assumeProductionEnvironment(ctx);
  await next();
}

/** The response header saying that a request without X-Environment acted on production data. */
export const ENVIRONMENT_ASSUMED_HEADER = 'X-Environment-Assumed';

/** No X-Environment: production is the default; the answer says so (also on errors). */
export function assumeProductionEnvironment(ctx: Context): void {
  ctx.set(ENVIRONMENT_ASSUMED_HEADER, 'production');
}
