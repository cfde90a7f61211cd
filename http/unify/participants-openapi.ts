/** Participant lookup (docs/api/participant-lookup.md) in the OpenAPI document. */
import { arr, bool, dateTime, enumOf, json, nullable, obj, ref, response, str, type FamilyDocument, type ResponseObject } from '../openapi/schema.js';

const err = (description: string, headers?: ResponseObject['headers']): ResponseObject => ({ description, content: json(ref('UnifyError')), ...(headers ? { headers } : {}) });
const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' }, required: true } };

export const participantsDocument: FamilyDocument = {
  tag: { name: 'Unify', description: 'Submit sales documents (new format and earlier format). Bearer authentication.' },
  schemas: {
    ParticipantLookup: obj(
      {
        participantId: { ...str, description: '`<EAS scheme>:<identifier>`, e.g. `0208:0123456789`' },
        participantScheme: str,
        environment: enumOf(['sandbox', 'production']),
        source: enumOf(['sandbox_network', 'smp'], '`sandbox_network`: the companies onboarded in sandbox; `smp`: the SML and the participant\'s SMP'),
        status: enumOf(
          ['REGISTERED', 'NOT_REGISTERED', 'DOCUMENT_TYPE_NOT_SUPPORTED', 'PROCESS_NOT_SUPPORTED', 'TRANSPORT_NOT_SUPPORTED'],
          '`NOT_REGISTERED`: unknown to the network; `DOCUMENT_TYPE_NOT_SUPPORTED` / `PROCESS_NOT_SUPPORTED`: registered, but not for the document type (process) asked; `TRANSPORT_NOT_SUPPORTED`: no active AS4 endpoint for it',
        ),
        reachable: { ...bool, description: 'Registered and, when a document type was asked, able to receive it from this service' },
        detail: nullable(str),
        requested: nullable(obj({ documentTypeId: str, processId: nullable(str) })),
        documentTypes: arr(obj({ documentTypeId: str, processes: arr(obj({ processId: str, transportProfiles: arr(str) })) })),
        unreadableDocumentTypes: { ...arr(obj({ documentTypeId: str, reason: str })), description: 'Document types the SMP lists whose signed metadata could not be used' },
        validUntil: { ...dateTime, description: 'Until when this answer is cached (the SMP\'s validity; the sandbox network is read live)' },
      },
      {},
      { description: 'Whether a Peppol participant can be sent to, and which document types and processes it receives.' },
    ),
  },
  paths: {
    '/api/v3/unify/participants/{participantId}': {
      get: {
        operationId: 'participantLookup',
        summary: 'Look up a Peppol participant: registered? for which document types and processes?',
        description:
          'A sandbox key asks the sandbox network, a production key the SML/SMP (through the access point\'s discovery). Optional `documentTypeId` (and `processId`) ask about one document type. Its own rate limit per workspace.',
        tags: ['Unify'],
        security: [{ bearerAuth: [] }],
        parameters: [
          { name: 'participantId', in: 'path', required: true, description: '`0208:0123456789` or `iso6523-actorid-upis::0208:0123456789`', schema: str },
          { name: 'documentTypeId', in: 'query', description: 'A Peppol document type identifier (with or without `busdox-docid-qns::`)', schema: str },
          { name: 'processId', in: 'query', description: 'A Peppol process identifier (with or without `cenbii-procid-ubl::`); needs documentTypeId', schema: str },
        ],
        responses: {
          200: response('The lookup', ref('ParticipantLookup'), undefined, { 'Cache-Control': { description: '`private, max-age=<seconds until validUntil>`', schema: str, required: true } }),
          400: err('`invalid_argument`: a malformed participant identifier (path `["path","participantId"]`), an unknown or repeated query parameter'),
          401: { description: 'Key missing, invalid, revoked or expired', content: json(ref('UnifyUnauthorized')) },
          429: err('The workspace exceeded the participant lookup limit (PARTICIPANT_LOOKUP_RATE_LIMIT_PER_SECOND, _BURST); honor Retry-After', retryAfter),
          500: err('Service failure'),
          502: err('`discovery_smp_*`: the participant\'s SMP answered with something unusable (unsigned, untrusted, malformed)'),
          503: err('`peppol_not_configured` (production without an access point) or `discovery_unavailable` (DNS or SMP unreachable; with Retry-After)', {
            'Retry-After': { description: 'On discovery_unavailable: seconds to wait before retrying.', schema: { type: 'string' } },
          }),
        },
      },
    },
  },
};
