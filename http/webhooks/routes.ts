/**
 * Webhook subscriptions (docs/api/webhooks.md; the management endpoints are this service's design),
 * under /v3/connect/webhooks with Connect's authentication, rate limit and error envelope:
 * POST / (create), GET / (list), GET /{id}, PATCH /{id}, DELETE /{id}, GET /{id}/deliveries
 * (the delivery log), POST /{id}/test (a signed webhook.test ping) and POST /{id}/redeliveries
 * (deliver one delivery, or every event since an instant, again). Owners, admins and
 * partners with a read-and-write key manage; any key of the workspace reads. X-Environment
 * selects the data environment of a new subscription as for credit writes. The secret is
 * write-only: no answer carries it (only `hasSecret`).
 */
import { secretBox } from '../../commands/webhooks/secrets.js';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { sendTestPing, type WebhookDeliveryDeps } from '../../commands/webhooks/deliver.js';
import { requestRedelivery } from '../../commands/webhooks/redeliver.js';
import { REDELIVERY_LIMITS, parseRedeliveryBody, type RedeliveryRequest } from '../../domain/webhooks/redelivery.js';
import { createSubscription, deleteSubscription, updateSubscription, type SubscriptionDeps } from '../../commands/webhooks/subscriptions.js';
import type { Position } from '../../platform/eventstore/port.js';
import { DomainError } from '../../domain/errors.js';
import { encodeCursor, parseDeliveryListQuery, parseSubscriptionBody, parseSubscriptionId, parseSubscriptionListQuery, parseSubscriptionPatch } from '../../domain/webhooks/input.js';
import type { Subscription } from '../../domain/webhooks/subscription.js';
import { WebhookErrorCodes, type WebhookEnvironment } from '../../domain/webhooks/values.js';
import { listDeliveries, listSubscriptions, readSubscription, readSubscriptionTarget, type DeliveryLogRow, type SubscriptionRow } from '../../readmodels/webhooks.js';
import type { FamilyRoutes, HttpDeps } from '../app.js';
import type { AuthContext } from '../auth.js';
import { connectErrors } from '../connect/errors.js';
import { ok } from '../connect/present.js';
import { HttpProblem } from '../errors.js';
import { writeEnvironment, writerRoles } from '../connect/write-guards.js';
import { idempotent } from '../idempotency.js';
import { workspaceRateLimiter } from '../rate-limit.js';
import { commandContext } from '../request-context.js';

const writeAccess = writerRoles('webhook subscriptions');

export const WEBHOOKS_PREFIX = '/v3/connect/webhooks';
const READ_MODELS = ['webhooks'];
/** A test ping's delivery row is the webhooks projection's, its attempt and outcome the webhook_attempts one's. */
const PING_READ_MODELS = ['webhooks', 'webhook_attempts'];
const auth = (ctx: Context) => ctx.state.auth as AuthContext;



function noQuery(ctx: Context): void {
  const key = Object.keys(ctx.query)[0];
  if (key !== undefined) {
    throw new HttpProblem(400, `unknown query parameter "${key.slice(0, 40)}"`, { code: WebhookErrorCodes.validation, path: ['query', key], retryable: false });
  }
}

function subscriptionJson(s: SubscriptionRow | Subscription) {
  return {
    id: s.subscriptionId,
    webhookUrl: s.webhookUrl,
    events: s.events,
    environment: s.environment,
    signatureAlgorithm: s.signatureAlgorithm,
    hasSecret: 'hasSecret' in s ? s.hasSecret : s.secretKey !== null,
    description: s.description,
    active: s.active,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

function deliveryJson(d: DeliveryLogRow) {
  return {
    deliveryId: d.deliveryId,
    eventId: d.eventId,
    eventType: d.eventType,
    occurredAt: d.occurredAt,
    outcome: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt,
    lastAttemptAt: d.lastAttemptAt,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    redeliveryOf: d.redeliveryOf,
    redeliveryId: d.redeliveryId,
    attemptLog: d.attemptLog,
  };
}

const notFound = () => new DomainError('not_found', WebhookErrorCodes.notFound, 'no webhook subscription with that id in the workspace', ['path', 'id']);

export function webhooksFamily(): FamilyRoutes {
  return {
    family: 'connect',
    prefix: WEBHOOKS_PREFIX,
    routes(deps: HttpDeps) {
      const router = new Router({ prefix: WEBHOOKS_PREFIX });
      const allowPrivateTargets = deps.config.webhooks.allowPrivateTargets;
      const secrets = secretBox(deps.config.webhooks.secretEncryptionKey);
      const subs: SubscriptionDeps = { store: deps.store, allowPrivateTargets, secrets };
      const delivery: WebhookDeliveryDeps = { store: deps.store, clock: deps.clock, sender: { allowPrivateTargets, timeoutMs: deps.config.webhooks.timeoutMs }, secrets };
      const idem = idempotent({ store: deps.store, clock: deps.clock });
      const write = [writeAccess, writeEnvironment, idem, connectErrors] as const;
      const read = connectErrors;
      const settle = async (position: Position | null, projections = READ_MODELS) => {
        if (position) await deps.runner.waitFor(position, { timeoutMs: deps.config.projections.waitTimeoutMs, projections });
      };
      const cmdCtx = (ctx: Context) => commandContext(ctx, deps.clock);
      const existing = async (ctx: Context) => {
        const id = parseSubscriptionId(ctx.params.id!);
        const row = await readSubscription(deps.knex, auth(ctx).workspaceId, id);
        if (!row) throw notFound();
        return row;
      };

      router.post('/', ...write, async (ctx) => {
        noQuery(ctx);
        const environment = ctx.state.environment as WebhookEnvironment;
        const input = parseSubscriptionBody(ctx.request.body, { environment, allowPrivateTargets });
        const { subscription, position } = await createSubscription(subs, { ...input, workspaceId: auth(ctx).workspaceId, environment }, { ...cmdCtx(ctx), environment });
        await settle(position);
        ctx.set('Location', `${WEBHOOKS_PREFIX}/${subscription.subscriptionId}`);
        ok(ctx, 201, subscriptionJson(subscription));
      });

      router.get('/', read, async (ctx) => {
        const query = parseSubscriptionListQuery(ctx.query);
        const page = await listSubscriptions(deps.knex, auth(ctx).workspaceId, query);
        const last = page.items[page.items.length - 1];
        ok(ctx, 200, { items: page.items.map(subscriptionJson), nextCursor: page.hasMore && last ? encodeCursor([last.subscriptionId], {}) : null });
      });

      router.get('/:id', read, async (ctx) => {
        noQuery(ctx);
        ok(ctx, 200, subscriptionJson(await existing(ctx)));
      });

      router.patch('/:id', ...write, async (ctx) => {
        noQuery(ctx);
        const row = await existing(ctx);
        const changes = parseSubscriptionPatch(ctx.request.body, { environment: row.environment, allowPrivateTargets });
        const { subscription, position } = await updateSubscription(subs, auth(ctx).workspaceId, row.subscriptionId, changes, cmdCtx(ctx));
        await settle(position);
        ok(ctx, 200, subscriptionJson(subscription));
      });

      router.delete('/:id', ...write, async (ctx) => {
        noQuery(ctx);
        const row = await existing(ctx);
        const { position } = await deleteSubscription(subs, auth(ctx).workspaceId, row.subscriptionId, cmdCtx(ctx));
        await settle(position);
        ok(ctx, 200, { id: row.subscriptionId, deleted: true });
      });

      router.get('/:id/deliveries', read, async (ctx) => {
        const row = await existing(ctx);
        const query = parseDeliveryListQuery(ctx.query);
        const page = await listDeliveries(deps.knex, row.subscriptionId, query);
        const last = page.items[page.items.length - 1];
        ok(ctx, 200, {
          items: page.items.map(deliveryJson),
          nextCursor: page.hasMore && last ? encodeCursor([last.logCommit, last.logPrepare, last.deliveryId], query.filters) : null,
        });
      });

      router.post('/:id/test', writeAccess, connectErrors, async (ctx) => {
        noQuery(ctx);
        const row = await existing(ctx);
        const target = await readSubscriptionTarget(deps.knex, auth(ctx).workspaceId, row.subscriptionId);
        if (!target) throw notFound();
        const { record, position } = await sendTestPing(delivery, target);
        await settle(position, PING_READ_MODELS);
        ok(ctx, 200, {
          eventId: record.eventId,
          deliveryId: record.deliveryId,
          eventType: record.eventType,
          outcome: record.outcome,
          statusCode: record.statusCode,
          durationMs: record.durationMs,
          error: record.error,
          attemptedAt: record.attemptedAt,
        });
      });

      // A limit of its own: a redelivery may send up to a thousand events again. It counts the
      // well-formed requests for a subscription of the workspace (a refused body costs nothing),
      // before the idempotency record, so a 429 is never recorded as the answer to a key.
      const redeliveryLimit = workspaceRateLimiter({ perSecond: REDELIVERY_LIMITS.perMinute / 60, burst: REDELIVERY_LIMITS.perMinute });
      const acceptRedelivery = async (ctx: Context, next: Next) => {
        noQuery(ctx);
        const row = await existing(ctx);
        const now = deps.clock.now();
        ctx.state.redelivery = { row, now, request: parseRedeliveryBody(ctx.request.body, now) };
        await redeliveryLimit(ctx);
        await next();
      };
      // connectErrors twice: around the checks, and inside the idempotency record (as the other writes).
      router.post('/:id/redeliveries', writeAccess, connectErrors, acceptRedelivery, idem, connectErrors, async (ctx) => {
        const { row, now, request } = ctx.state.redelivery as { row: SubscriptionRow; now: Date; request: RedeliveryRequest };
        const outcome = await requestRedelivery(
          { store: deps.store, knex: deps.knex },
          { workspaceId: auth(ctx).workspaceId, subscriptionId: row.subscriptionId, request },
          { ...cmdCtx(ctx), now },
        );
        await settle(outcome.position);
        ok(ctx, outcome.redeliveryId ? 202 : 200, {
          redeliveryId: outcome.redeliveryId,
          subscriptionId: row.subscriptionId,
          requestedAt: outcome.requestedAt,
          deliveries: outcome.deliveries,
          skipped: outcome.skipped,
        });
      });

      return router;
    },
  };
}
