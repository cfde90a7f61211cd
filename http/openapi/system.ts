/** The system routes in the OpenAPI document: health, readiness, this document, its reference page, metrics. */
import { errorResponses } from './errors.js';
import { arr, bool, constant, dateTime, enumOf, obj, openObject, ref, response, str, type FamilyDocument } from './schema.js';

const readiness = obj(
  {
    status: enumOf(['ready', 'not_ready']),
    ready: bool,
    checkedAt: dateTime,
    checks: obj({
      database: str,
      eventStore: str,
      projections: arr(obj({ name: str, status: enumOf(['ok', 'failing', 'stalled']), error: { type: ['string', 'null'] } })),
      connectors: obj({
        missing: arr(obj({ environment: str, destination: str })),
        present: arr(obj({ environment: str, destination: str, connector: str })),
        peppolAccessPoint: str,
      }),
    }),
  },
  { workspaceId: str },
);

export const systemDocument: FamilyDocument = {
  tag: { name: 'System', description: 'Liveness, readiness, this document, the API reference page and Prometheus metrics. No authentication.' },
  schemas: { Readiness: readiness },
  paths: {
    '/healthz': {
      get: {
        operationId: 'healthz',
        summary: 'Liveness: the process is up',
        tags: ['System'],
        security: [],
        responses: { 200: response('Up', obj({ status: constant('ok') })), ...errorResponses.system([400, 500]) },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readyz',
        summary: 'Readiness: database, event store, projections not stalled, connectors present and missing, Peppol access point',
        description: 'Optionally authenticated (either key header): with a key the answer also names the key\'s workspace.',
        tags: ['System'],
        security: [{}, { bearerAuth: [] }, { apiKeyAuth: [] }],
        responses: {
          200: response('Ready', ref('Readiness')),
          503: response('Not ready', ref('Readiness')),
          ...errorResponses.system([400, 401, 500]),
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: 'This OpenAPI 3.1 document',
        tags: ['System'],
        security: [],
        responses: { 200: response('The document', openObject), ...errorResponses.system([400, 500]) },
      },
    },
    '/docs': {
      get: {
        operationId: 'docs',
        summary: 'The API reference page (rendered from this document, served without any CDN)',
        tags: ['System'],
        security: [],
        responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: str } } }, ...errorResponses.system([400, 500]) },
      },
    },
    '/favicon.ico': {
      get: {
        operationId: 'favicon',
        summary: 'The icon of the reference page',
        tags: ['System'],
        security: [],
        responses: { 200: { description: 'A PNG icon', content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } } }, ...errorResponses.system([400, 500]) },
      },
    },
    '/docs/assets/{asset}': {
      get: {
        operationId: 'docsAsset',
        summary: 'The reference page\'s renderer (swagger-ui), served from the installed package',
        tags: ['System'],
        security: [],
        parameters: [{ name: 'asset', in: 'path', required: true, schema: enumOf(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']) }],
        responses: {
          200: { description: 'The asset', content: { 'text/css': { schema: str }, 'application/javascript': { schema: str }, 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } } },
          ...errorResponses.system([400, 404, 500]),
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary: 'Prometheus metrics of this instance (text exposition format)',
        tags: ['System'],
        security: [],
        responses: { 200: { description: 'Metrics', content: { 'text/plain': { schema: str } } }, ...errorResponses.system([400, 500]) },
      },
    },
  },
};
