/**
 * Documents (`/api/v3/documents`): the status of a submitted sales document (docs/api/unify.md),
 * the list of received purchase invoices and the single received purchase invoice (2.7, 4.2).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { documentStatusView } from '../../domain/document/status.js';
import { findSalesDocument, type SalesDocumentRow } from '../../readmodels/sales-documents.js';
import type { FamilyRoutes, HttpDeps } from '../app.js';
import type { AuthContext } from '../auth.js';
import { HttpProblem } from '../errors.js';
import { documentCompliance, renderCompliantPdf } from '../../commands/artifacts.js';
import { purchaseListItem, readPurchase } from './purchases.js';
import { decodePurchaseListQuery, encodePurchaseCursor, microsToIso } from '../../domain/purchases/list-query.js';
import { findPurchase, listPurchases, purchaseCursorKey } from '../../readmodels/purchases.js';
import { requireWritePermission } from '../auth.js';
import { idempotent } from '../idempotency.js';
import { commandContext } from '../request-context.js';
import { decodeResponseRequest } from '../../domain/peppol/invoice-response.js';
import { purchaseResponses, respondToPurchase, type RespondDeps } from '../../commands/purchases/respond.js';
import { sandboxResponseTransport } from '../../commands/purchases/sandbox-network.js';
import { purchaseResponseView } from './purchases.js';

function statusOf(row: SalesDocumentRow) {
  return documentStatusView({
    documentId: row.documentId,
    documentNumber: row.documentNumber,
    country: row.country,
    environment: row.environment,
    state: row.state,
    uuid: row.uuid,
    lastUpdatedAt: row.lastUpdatedAt,
    errors: row.errors,
    government: row.government,
    xmlBase64: row.xmlBase64,
    tddXmlBase64: row.tddXmlBase64,
    compliance: documentCompliance(row.country, row.documentType),
  });
}

async function salesDocument(ctx: Context, deps: HttpDeps, notFoundMessage: string) {
  const auth = ctx.state.auth as AuthContext;
  const row = await findSalesDocument(deps.knex, auth.workspaceId, ctx.params.documentId!);
  if (!row) throw new HttpProblem(404, notFoundMessage, { code: 'NOT_FOUND' });
  return withStoredArtifacts(deps, row);
}

/**
 * The read joins the artifact table of the PostgreSQL event store. An artifact the join did not
 * find is asked of the event store itself (with EventStoreDB, artifacts live in its artifact
 * streams; see docs/architecture.md).
 */
async function withStoredArtifacts(deps: HttpDeps, row: SalesDocumentRow): Promise<SalesDocumentRow> {
  const missing = [row.xmlBase64 === null ? row.xmlSha256 : null, row.tddXmlBase64 === null ? row.tddXmlSha256 : null].filter((h): h is string => h !== null);
  if (missing.length === 0) return row;
  const found = await deps.store.readArtifacts(missing);
  const base64 = (hash: string | null) => (hash ? (found.get(hash)?.toString('base64') ?? null) : null);
  return { ...row, xmlBase64: row.xmlBase64 ?? base64(row.xmlSha256), tddXmlBase64: row.tddXmlBase64 ?? base64(row.tddXmlSha256) };
}

export function documentsRoutes(): FamilyRoutes {
  const prefix = '/api/v3/documents';
  return {
    family: 'documents',
    prefix,
    routes(deps) {
      const router = new Router({ prefix });
      let cursorKey: Promise<string> | null = null;
      const key = () => (cursorKey ??= purchaseCursorKey(deps.knex).catch((err) => {
        cursorKey = null;
        throw err;
      }));
      router.get('/', async (ctx) => {
        const auth = ctx.state.auth as AuthContext;
        const binding = { workspaceId: auth.workspaceId, environment: auth.environment, key: await key() };
        const decoded = decodePurchaseListQuery(ctx.query, binding);
        if (!decoded.ok) {
          const p = decoded.problem;
          throw new HttpProblem(p.status, p.message, {
            code: p.code,
            path: p.path,
            ...(p.status === 422 ? { details: [{ code: p.code, message: p.message, path: p.path }] } : {}),
          });
        }
        const q = decoded.value;
        const page = await listPurchases(deps.knex, auth.workspaceId, auth.environment, {
          startsAt: q.startsAt,
          endsBefore: q.endsBefore,
          limit: q.limit,
          after: q.after,
          afterIso: q.after ? microsToIso(q.after.storedAtMicros) : null,
        });
        const last = page.rows[page.rows.length - 1];
        ctx.body = {
          success: true,
          data: {
            items: page.rows.map(purchaseListItem),
            hasMore: page.hasMore,
            nextCursor: page.hasMore && last ? encodePurchaseCursor(binding, q, { storedAtMicros: last.storedAtMicros, documentId: last.documentId }) : null,
          },
        };
      });
      router.get('/:documentId', async (ctx) => {
        const type = ctx.query.type;
        if (type !== 'sales' && type !== 'purchases') {
          throw new HttpProblem(422, 'query parameter type is required and must be "sales" or "purchases"', { path: ['query', 'type'] });
        }
        if (type === 'purchases') {
          const auth = ctx.state.auth as AuthContext;
          const body = await readPurchase(deps, auth.workspaceId, auth.environment, ctx.params.documentId!);
          if (!body) throw new HttpProblem(404, `no received purchase invoice ${ctx.params.documentId!.slice(0, 100)} in this workspace`, { code: 'NOT_FOUND' });
          ctx.body = { success: true, data: body };
          return;
        }
        const row = await salesDocument(ctx, deps, `no sales document ${ctx.params.documentId} in this workspace`);
        ctx.body = { success: true, data: statusOf(row) };
      });
      // The buyer's answer to a received purchase invoice (docs/api/invoice-response.md).
      const respondDeps: RespondDeps = {
        store: deps.store,
        clock: deps.clock,
        transports: { peppol_sandbox: sandboxResponseTransport(deps), ...(deps.peppolResponses ? { peppol_as4: deps.peppolResponses } : {}) },
      };
      const idem = idempotent({ store: deps.store, clock: deps.clock });
      const purchaseOf = async (ctx: Context) => {
        const auth = ctx.state.auth as AuthContext;
        const id = ctx.params.documentId!;
        const row = /^pur_[0-9a-f]{32}$/.test(id) ? await findPurchase(deps.knex, auth.workspaceId, auth.environment, id) : null;
        if (!row) throw new HttpProblem(404, `no received purchase invoice ${id.slice(0, 100)} in this workspace`, { code: 'NOT_FOUND' });
        return row;
      };
      router.post('/:documentId/responses', async (ctx) => {
        requireWritePermission(ctx);
        return idem(ctx, async () => {
          const row = await purchaseOf(ctx);
          const decoded = decodeResponseRequest(ctx.request.body);
          if (!decoded.ok) {
            const first = decoded.problems[0]!;
            throw new HttpProblem(400, first.message, { code: first.code, path: first.path, details: decoded.problems });
          }
          const auth = ctx.state.auth as AuthContext;
          const { response } = await respondToPurchase(respondDeps, { workspaceId: auth.workspaceId, documentId: row.documentId, request: decoded.value }, commandContext(ctx, deps.clock));
          ctx.status = 201;
          ctx.set('Location', `${prefix}/${row.documentId}/responses/${response.responseId}`);
          ctx.body = { success: true, data: purchaseResponseView(response) };
        });
      });
      router.get('/:documentId/responses', async (ctx) => {
        const row = await purchaseOf(ctx);
        const responses = await purchaseResponses(deps.store, row.documentId);
        ctx.body = { success: true, data: { items: responses.map(purchaseResponseView) } };
      });
      router.get('/:documentId/responses/:responseId', async (ctx) => {
        const row = await purchaseOf(ctx);
        const found = (await purchaseResponses(deps.store, row.documentId)).find((r) => r.responseId === ctx.params.responseId);
        if (!found) throw new HttpProblem(404, `no response ${ctx.params.responseId!.slice(0, 100)} to purchase ${row.documentId}`, { code: 'NOT_FOUND' });
        const xml = (await deps.store.readArtifacts([found.xml.sha256])).get(found.xml.sha256);
        ctx.body = { success: true, data: { ...purchaseResponseView(found), responseXmlBase64: xml ? xml.toString('base64') : null } };
      });
      router.get('/:documentId/status', async (ctx) => {
        const row = await salesDocument(ctx, deps, `no status is available for document ${ctx.params.documentId}`);
        ctx.body = { success: true, data: { ...statusOf(row), pdfBase64: await renderCompliantPdf(deps.store, row) } };
      });
      return router;
    },
  };
}
