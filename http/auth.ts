/**
 * Authentication per API family, exactly as docs/api/http.md describes: which header each
 * family reads, and the precise failure body and content type of each case.
 */
import type { Context, Next } from 'koa';
import type { ApiKeyCache, ApiKeyRecord } from '../readmodels/keys.js';
import type { Clock } from '../platform/clock.js';
import { FixedResponse, HttpProblem, type Family } from './errors.js';

export interface AuthContext {
  keyId: string;
  workspaceId: string;
  environment: 'sandbox' | 'production';
  permission: 'read' | 'read_write';
  role: 'owner' | 'admin' | 'partner' | 'member';
}

type Credentials = { kind: 'missing' } | { kind: 'malformed'; reason: string } | { kind: 'key'; apiKey: string };

const WORKSPACE_HEADER = /^(x-)?(workspace|client)([-_]?id)?$/i;

/** How many times the request carries a header (Node keeps only the first Authorization). */
function occurrences(ctx: Context, name: string): number {
  const raw = ctx.req.rawHeaders;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) n++;
  return n;
}

const AMBIGUOUS: Credentials = { kind: 'malformed', reason: 'send exactly one credential: the request carries the key header more than once' };

function bearer(ctx: Context): Credentials {
  if (occurrences(ctx, 'authorization') > 1) return AMBIGUOUS;
  const header = ctx.get('authorization');
  if (!header) return { kind: 'missing' };
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? { kind: 'key', apiKey: match[1]! } : { kind: 'malformed', reason: 'the Authorization header must be "Bearer <API_KEY>"' };
}

function bearerOrApiKey(ctx: Context): Credentials {
  if (occurrences(ctx, 'x-api-key') > 1 || occurrences(ctx, 'authorization') > 1) return AMBIGUOUS;
  const apiKey = ctx.get('x-api-key');
  const authorization = ctx.get('authorization');
  if (apiKey && authorization) return { kind: 'malformed', reason: 'send the key in X-API-Key or in Authorization: Bearer, not both' };
  if (apiKey) return { kind: 'key', apiKey: apiKey.trim() };
  return bearer(ctx);
}

type Failure = 'missing' | 'invalid_api_key' | 'key_revoked' | 'key_expired' | 'no_workspace';

const MESSAGES: Record<Exclude<Failure, 'missing'>, string> = {
  invalid_api_key: 'The API key is not valid.',
  key_revoked: 'The API key has been revoked.',
  key_expired: 'The API key has expired.',
  no_workspace: 'No workspace was found for this API key.',
};

/**
 * RFC 6750's challenge, sent with every 401: the body of each family is fixed by the interface,
 * so this header is where the answer says what is expected. A key sent as X-API-Key to an API
 * that reads only `Authorization: Bearer` is named as such.
 */
function challenge(family: Family, ctx: Context, kind: Failure, reason?: string): string {
  const realm = 'Bearer realm="einvoicing"';
  const bearerOnly = family === 'unify' || family === 'unify_legacy' || family === 'documents';
  const quoted = (text: string) => text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
  if (bearerOnly && ctx.get('x-api-key') && !ctx.get('authorization')) {
    return `${realm}, error="invalid_request", error_description="this API reads the key from Authorization: Bearer <API_KEY>; the X-API-Key header is not read here"`;
  }
  if (kind === 'missing') return `${realm}, error_description="send the key as Authorization: Bearer <API_KEY>"`;
  return `${realm}, error="invalid_token", error_description="${quoted(reason ?? MESSAGES[kind])}"`;
}

/** The exact response of an authentication failure, per family and path, with its challenge. */
function failure(family: Family, ctx: Context, kind: Failure, reason?: string): FixedResponse {
  const response = failureBody(family, ctx, kind, reason);
  return new FixedResponse(response.status, response.body, response.contentType, { ...response.headers, 'WWW-Authenticate': challenge(family, ctx, kind, reason) });
}

function failureBody(family: Family, ctx: Context, kind: Failure, reason?: string): FixedResponse {
  const plainRequired = new FixedResponse(401, 'Authentication required', 'text');
  const jsonRequired = new FixedResponse(401, { code: 'authentication_required', message: 'Authentication required.' }, 'json');
  const wrong = (code: string) => new FixedResponse(401, { code, message: reason ?? MESSAGES[kind as Exclude<Failure, 'missing'>] }, 'json');
  switch (family) {
    case 'unify':
    case 'unify_legacy':
      return new FixedResponse(401, { error: 'Unauthorized' }, 'json');
    case 'connect':
      if (kind === 'missing') return plainRequired;
      if (kind === 'no_workspace') throw new HttpProblem(401, MESSAGES.no_workspace, { code: 'CONNECT_AUTH_CONTEXT_MISSING' });
      return wrong(kind);
    case 'documents': {
      const isStatus = /^\/api\/v3\/documents\/[^/]+\/status\/?$/.test(ctx.path);
      const isList = /^\/api\/v3\/documents\/?$/.test(ctx.path);
      if (kind === 'missing') return isStatus ? plainRequired : jsonRequired;
      if (isList) return wrong('AUTHORIZATION_ERROR');
      return wrong(kind === 'no_workspace' ? 'invalid_api_key' : kind);
    }
    case 'invoice_query':
    case 'system':
      if (kind === 'missing') return jsonRequired;
      return wrong(kind === 'no_workspace' ? 'invalid_api_key' : kind);
  }
}

export function refuseWorkspaceHeaders(ctx: Context): void {
  for (const name of Object.keys(ctx.headers)) {
    if (WORKSPACE_HEADER.test(name)) {
      throw new HttpProblem(400, `the ${name} header is not accepted: the API key determines the workspace`, {
        path: ['headers', name],
      });
    }
  }
}

export interface Authenticator {
  /** Koa middleware authenticating the request for `family`; sets ctx.state.auth. */
  middleware(family: Family, options?: { optional?: boolean }): (ctx: Context, next: Next) => Promise<void>;
}

/**
 * `catchUp` brings the key read model up to the event log's head (bounded): called once for a
 * key the read model does not know, so a key created a moment ago (e.g. by the admin CLI, in
 * another process) works on the very next request.
 */
export function createAuthenticator(keys: ApiKeyCache, clock: Clock, catchUp?: () => Promise<void>): Authenticator {
  async function resolve(family: Family, ctx: Context, credentials: Credentials): Promise<AuthContext> {
    if (credentials.kind === 'missing') throw failure(family, ctx, 'missing');
    if (credentials.kind === 'malformed') throw failure(family, ctx, 'invalid_api_key', credentials.reason);
    if (credentials.apiKey.length > 200) throw failure(family, ctx, 'invalid_api_key');
    let record: ApiKeyRecord | null = await keys.lookup(credentials.apiKey);
    if (!record && catchUp) {
      await catchUp();
      record = await keys.lookup(credentials.apiKey, { fresh: true });
    }
    if (!record) throw failure(family, ctx, 'invalid_api_key');
    if (record.revokedAt) throw failure(family, ctx, 'key_revoked');
    if (record.expiresAt && record.expiresAt.getTime() <= clock.now().getTime()) throw failure(family, ctx, 'key_expired');
    if (!record.workspaceActive) throw failure(family, ctx, 'no_workspace');
    return {
      keyId: record.keyId,
      workspaceId: record.workspaceId,
      environment: record.environment,
      permission: record.permission,
      role: record.role,
    };
  }

  return {
    middleware(family, options = {}) {
      const extract = family === 'connect' || family === 'invoice_query' || family === 'system' ? bearerOrApiKey : bearer;
      return async (ctx, next) => {
        const credentials = extract(ctx);
        if (!(options.optional && credentials.kind === 'missing')) {
          ctx.state.auth = await resolve(family, ctx, credentials);
        }
        await next();
      };
    },
  };
}

/** Write operations need a read-and-write key (docs/api/http.md). */
export function requireWritePermission(ctx: Context): AuthContext {
  const auth = ctx.state.auth as AuthContext;
  if (auth.permission !== 'read_write') {
    throw new HttpProblem(403, 'This API key is read-only; writing needs a read-and-write key.', {
      code: ctx.state.family === 'connect' ? 'CONNECT_INSUFFICIENT_PERMISSION' : 'insufficient_permission',
    });
  }
  return auth;
}
