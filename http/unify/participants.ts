/**
 * Participant lookup, GET /api/v3/unify/participants/{participantId} (docs/api/participant-lookup.md):
 * whether a Peppol participant can be sent to, and for which document types and processes. A
 * sandbox key asks the sandbox network (the companies onboarded in sandbox); a production key asks
 * the SML and the participant's SMP through the access point's discovery, cached with the SMP's
 * validity. Its own rate limit per workspace (discovery costs DNS and SMP round trips).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { PeppolDiscoveryError } from '../../commands/peppol/discovery/index.js';
import { AS4_TRANSPORT_PROFILE } from '../../commands/peppol/discovery/index.js';
import { DOCUMENT_TYPE_SCHEME, PROCESS_SCHEME } from '../../domain/peppol/identifiers.js';
import { lookupAnswer, parseParticipantId, SANDBOX_NETWORK_SERVICES, withScheme, type LookupAnswer } from '../../domain/peppol/participant-lookup.js';
import { companiesHoldingParticipants } from '../../readmodels/purchases.js';
import type { FamilyRoutes, HttpDeps } from '../app.js';
import type { AuthContext } from '../auth.js';
import { HttpProblem } from '../errors.js';
import { workspaceRateLimit } from '../rate-limit.js';

export const PARTICIPANTS_PREFIX = '/api/v3/unify/participants';

function queryText(ctx: Context, name: string): string | null {
  const v = ctx.query[name];
  if (v === undefined) return null;
  if (typeof v !== 'string' || v.trim() === '' || v.length > 500) {
    throw new HttpProblem(400, `query parameter ${name} must be given once, 1 to 500 characters`, { code: 'invalid_argument', path: ['query', name] });
  }
  return v.trim();
}

export function participantLookupRoutes(): FamilyRoutes {
  return {
    family: 'unify',
    prefix: PARTICIPANTS_PREFIX,
    routes(deps: HttpDeps) {
      const router = new Router({ prefix: PARTICIPANTS_PREFIX });
      const limit = workspaceRateLimit(deps.config.participantLookupRateLimit);
      router.get('/:participantId', limit, async (ctx) => {
        for (const name of Object.keys(ctx.query)) {
          if (name !== 'documentTypeId' && name !== 'processId') throw new HttpProblem(400, `unknown query parameter ${name}: the parameters are documentTypeId and processId`, { code: 'invalid_argument', path: ['query', name] });
        }
        const parsed = parseParticipantId(ctx.params.participantId!);
        if (!parsed.ok) throw new HttpProblem(400, parsed.message, { code: 'invalid_argument', path: ['path', 'participantId'] });
        const documentTypeId = queryText(ctx, 'documentTypeId');
        const processId = queryText(ctx, 'processId');
        if (processId && !documentTypeId) throw new HttpProblem(400, 'processId needs documentTypeId', { code: 'invalid_argument', path: ['query', 'documentTypeId'] });
        const requested = documentTypeId ? { documentTypeId: withScheme(documentTypeId, DOCUMENT_TYPE_SCHEME), processId: processId ? withScheme(processId, PROCESS_SCHEME) : null } : null;
        const auth = ctx.state.auth as AuthContext;
        const participant = { scheme: parsed.scheme, value: parsed.value };
        let answer: LookupAnswer;
        if (auth.environment === 'sandbox') {
          const [companies = []] = await companiesHoldingParticipants(deps.knex, [{ participantId: parsed.value, environment: 'sandbox' }]);
          answer = lookupAnswer({
            participant,
            environment: 'sandbox',
            source: 'sandbox_network',
            registered: companies.length > 0,
            detail: companies.length > 0 ? null : `no company onboarded in sandbox holds the participant ${parsed.value}`,
            documentTypes: [...SANDBOX_NETWORK_SERVICES],
            requested,
            transportProfile: 'sandbox-network',
            // The sandbox network is read live: onboarding shows at once.
            validUntil: deps.clock.now().toISOString(),
          });
        } else {
          const discovery = deps.peppolDiscovery;
          if (!discovery?.participantServices) {
            throw new HttpProblem(503, 'the Peppol access point is not configured: production participants cannot be looked up (see the access point configuration)', { code: 'peppol_not_configured' });
          }
          try {
            const services = await discovery.participantServices(participant);
            answer = lookupAnswer({
              participant,
              environment: 'production',
              source: 'smp',
              registered: services.registered,
              detail: services.registered ? null : services.detail,
              documentTypes: services.registered ? services.documentTypes : [],
              unreadable: services.registered ? services.unreadable : [],
              requested,
              transportProfile: AS4_TRANSPORT_PROFILE,
              validUntil: services.validUntil,
            });
            // With a process, discovery's own lookup decides (it matches PINT's wildcard document types too).
            if (services.registered && requested?.processId) {
              const found = await discovery.lookup(participant, requested.documentTypeId, requested.processId);
              answer = found.found
                ? { ...answer, status: 'REGISTERED', reachable: true, detail: null }
                : { ...answer, status: found.reason === 'PARTICIPANT_NOT_REGISTERED' ? 'NOT_REGISTERED' : found.reason, reachable: false, detail: found.detail };
            }
          } catch (err) {
            if (!(err instanceof PeppolDiscoveryError)) throw err;
            if (err.transient) throw new HttpProblem(503, `discovery failed: ${err.message}`, { code: 'discovery_unavailable', retryable: true, headers: { 'Retry-After': '30' } });
            throw new HttpProblem(502, `the participant's SMP gave no usable answer: ${err.message}`, { code: `discovery_${err.code.toLowerCase()}` });
          }
        }
        const maxAge = Math.max(0, Math.floor((Date.parse(answer.validUntil) - deps.clock.now().getTime()) / 1000));
        ctx.set('Cache-Control', `private, max-age=${maxAge}`);
        ctx.body = answer;
      });
      return router;
    },
  };
}
