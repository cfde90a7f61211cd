/**
 * Invoice query (`POST /invoices/query`, docs/api/invoice-query.md): decodes and checks the body
 * (domain/query/request.ts), asks the search index for the page, shapes the documents
 * (domain/query/columns.ts). A read: read-only keys may query. Errors in the documents
 * family's shape.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { shapeDocument } from '../../domain/query/columns.js';
import { checkInvoiceQuery, InvoiceQueryBody, toSearchQuery, unknownBodyFields } from '../../domain/query/request.js';
import { supportedCountries } from '../../domain/validation/document-types.js';
import { keyServesEnvironment } from '../../domain/workspace/workspace.js';
import type { FamilyRoutes, HttpDeps } from '../app.js';
import type { AuthContext } from '../auth.js';
import { decode } from '../decode.js';
import { HttpProblem, type ProblemDetail } from '../errors.js';

function invalid(problems: readonly ProblemDetail[]): HttpProblem {
  const [first] = problems;
  return new HttpProblem(400, first!.message, { path: first!.path ?? [], details: problems });
}

async function query(ctx: Context, deps: HttpDeps) {
  const auth = ctx.state.auth as AuthContext;
  const raw = ctx.request.body;
  if (raw === undefined) throw new HttpProblem(400, 'the request body is required: {country, type, environment, ...}', { path: [] });
  const unknown = unknownBodyFields(raw);
  if (unknown.length > 0) {
    throw invalid(unknown.map((name) => ({ message: `unknown field "${name}"; the query takes country, type, environment, page, limit, filters, searches, columns and sort`, path: [name] })));
  }
  const decoded = decode(InvoiceQueryBody, raw);
  if (!decoded.ok) throw invalid(decoded.problems);
  const body = decoded.value;
  if (!(supportedCountries as readonly string[]).includes(body.country)) {
    throw new HttpProblem(400, `country ${body.country} is not supported; supported: ${supportedCountries.join(', ')}`, { path: ['country'] });
  }
  if (!keyServesEnvironment(auth.environment, body.environment)) {
    throw new HttpProblem(403, `this ${auth.environment} API key cannot query ${body.environment} documents`, { code: 'permission_denied', path: ['environment'] });
  }
  const checked = checkInvoiceQuery(body);
  if (!checked.ok) throw invalid(checked.problems);
  const q = checked.query;
  const result = await deps.search.search(toSearchQuery(q, auth.workspaceId));
  ctx.body = {
    status: 'success',
    data: { documents: result.documents.map((d) => shapeDocument(q.type, d, q.columns, { apiKey: true })) },
    pagination: { page: q.page, perPage: q.limit, total: result.total, totalPages: Math.ceil(result.total / q.limit) },
  };
}

export function invoiceQueryRoutes(): FamilyRoutes {
  const prefix = '/invoices/query';
  return {
    family: 'invoice_query',
    prefix,
    routes(deps) {
      const router = new Router({ prefix });
      router.post('/', (ctx) => query(ctx, deps));
      return router;
    },
  };
}
