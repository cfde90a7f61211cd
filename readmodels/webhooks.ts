/** Queries of the webhooks read model: subscriptions, due deliveries and their claims, the delivery log. */
import type { Knex } from 'knex';
import type { DeliveryFilters } from '../domain/webhooks/input.js';

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

export interface SubscriptionRow {
  subscriptionId: string;
  workspaceId: string;
  environment: 'sandbox' | 'production';
  webhookUrl: string;
  events: string[];
  hasSecret: boolean;
  signatureAlgorithm: 'sha256' | 'sha512';
  description: string | null;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The columns every answer may show: never the secret itself. */
const PUBLIC_COLUMNS = [
  'subscription_id',
  'workspace_id',
  'environment',
  'webhook_url',
  'events',
  'signature_algorithm',
  'description',
  'active',
  'created_at',
  'updated_at',
] as const;

function subscriptionRow(r: any): SubscriptionRow {
  return {
    subscriptionId: r.subscription_id,
    workspaceId: r.workspace_id,
    environment: r.environment,
    webhookUrl: r.webhook_url,
    events: r.events,
    hasSecret: r.has_secret,
    signatureAlgorithm: r.signature_algorithm,
    description: r.description,
    active: r.active,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

const selectPublic = (knex: Knex) => knex('webhook_subscriptions').select([...PUBLIC_COLUMNS, knex.raw('secret_key is not null as has_secret')]);

export async function readSubscription(knex: Knex, workspaceId: string, subscriptionId: string): Promise<SubscriptionRow | null> {
  const r = await selectPublic(knex).where({ workspace_id: workspaceId, subscription_id: subscriptionId, deleted: false }).first();
  return r ? subscriptionRow(r) : null;
}

export async function listSubscriptions(knex: Knex, workspaceId: string, q: { limit: number; after: string | null }): Promise<{ items: SubscriptionRow[]; hasMore: boolean }> {
  const query = selectPublic(knex).where({ workspace_id: workspaceId, deleted: false }).orderBy('subscription_id').limit(q.limit + 1);
  if (q.after !== null) query.where('subscription_id', '>', q.after);
  const rows = await query;
  return { items: rows.slice(0, q.limit).map(subscriptionRow), hasMore: rows.length > q.limit };
}

/** Everything a sender needs of a subscription, the secret included (never shown in an answer). */
export interface SubscriptionTarget {
  subscriptionId: string;
  workspaceId: string;
  environment: 'sandbox' | 'production';
  webhookUrl: string;
  secretKey: string | null;
  signatureAlgorithm: 'sha256' | 'sha512';
}

export async function readSubscriptionTarget(knex: Knex, workspaceId: string, subscriptionId: string): Promise<SubscriptionTarget | null> {
  const r = await knex('webhook_subscriptions').where({ workspace_id: workspaceId, subscription_id: subscriptionId, deleted: false }).first();
  return r
    ? { subscriptionId: r.subscription_id, workspaceId: r.workspace_id, environment: r.environment, webhookUrl: r.webhook_url, secretKey: r.secret_key, signatureAlgorithm: r.signature_algorithm }
    : null;
}

// Delivery worker ------------------------------------------------------------------------------

export interface DueDelivery {
  deliveryId: string;
  subscriptionId: string;
  workspaceId: string;
  environment: 'sandbox' | 'production';
  eventId: string;
  eventType: string;
  occurredAt: string;
  payload: Record<string, unknown>;
  /** Attempts made so far: the next is attempts + 1. */
  attempts: number;
  nextAttemptAt: string;
  target: SubscriptionTarget;
}

/** Active subscriptions (the worker's round over all of them). */
export async function activeSubscriptionIds(knex: Knex): Promise<string[]> {
  const rows = await knex('webhook_subscriptions').where({ active: true, deleted: false }).select('subscription_id');
  return rows.map((r: { subscription_id: string }) => r.subscription_id);
}

/**
 * Where a subscription's deliveries stand in the log: deliveries are written in log order, so a
 * delivery committed later is after this (the log position of its occurrence, then its id).
 */
export interface DeliveryCursor {
  commit: string;
  prepare: string;
  deliveryId: string;
}

/** The newest delivery of each subscription (null: none yet), one index probe each. */
export async function latestDeliveryCursors(knex: Knex, subscriptionIds: readonly string[]): Promise<Map<string, DeliveryCursor | null>> {
  const out = new Map<string, DeliveryCursor | null>(subscriptionIds.map((id) => [id, null]));
  if (subscriptionIds.length === 0) return out;
  const { rows } = await knex.raw(
    `select w.id, d.log_commit, d.log_prepare, d.delivery_id
       from unnest(?::text[]) as w(id)
       cross join lateral (select log_commit, log_prepare, delivery_id from webhook_deliveries
                            where subscription_id = w.id
                            order by log_commit desc, log_prepare desc, delivery_id desc limit 1) d`,
    [[...subscriptionIds]],
  );
  for (const r of rows) out.set(r.id, { commit: String(r.log_commit), prepare: String(r.log_prepare), deliveryId: r.delivery_id });
  return out;
}

function dueRow(r: any): DueDelivery {
  return {
    deliveryId: r.delivery_id,
    subscriptionId: r.subscription_id,
    workspaceId: r.workspace_id,
    environment: r.environment,
    eventId: r.event_id,
    eventType: r.event_type,
    occurredAt: iso(r.occurred_at)!,
    payload: JSON.parse(r.payload),
    attempts: r.attempts,
    nextAttemptAt: iso(r.next_attempt_at)!,
    target: {
      subscriptionId: r.subscription_id,
      workspaceId: r.workspace_id,
      environment: r.environment,
      webhookUrl: r.webhook_url,
      secretKey: r.secret_key,
      signatureAlgorithm: r.signature_algorithm,
    },
  };
}

/**
 * First attempts of deliveries written after each subscription's cursor (up to `limit` each, in
 * log order), with their targets, and the cursor after the rows read. It reads only what the
 * projection added since the last call, however many earlier deliveries still wait for their
 * attempt's record, so the worker can call it on every commit of new deliveries.
 */
export async function freshDeliveries(
  knex: Knex,
  wants: readonly { subscriptionId: string; limit: number; after: DeliveryCursor }[],
  now: Date,
): Promise<{ due: DueDelivery[]; cursors: Map<string, DeliveryCursor> }> {
  if (wants.length === 0) return { due: [], cursors: new Map() };
  const { rows } = await knex.raw(
    `select d.*, s.webhook_url, s.secret_key, s.signature_algorithm
       from json_to_recordset(?::json) as w(id text, n integer, c bigint, p bigint, d text)
       join webhook_subscriptions s on s.subscription_id = w.id and s.active and not s.deleted
       cross join lateral (
         select * from webhook_deliveries d
          where d.subscription_id = w.id and (d.log_commit, d.log_prepare, d.delivery_id) > (w.c, w.p, w.d)
          order by d.log_commit, d.log_prepare, d.delivery_id
          limit w.n) d`,
    [JSON.stringify(wants.map((w) => ({ id: w.subscriptionId, n: w.limit, c: w.after.commit, p: w.after.prepare, d: w.after.deliveryId })))],
  );
  const cursors = new Map<string, DeliveryCursor>();
  const due: DueDelivery[] = [];
  for (const r of rows) {
    cursors.set(r.subscription_id, { commit: String(r.log_commit), prepare: String(r.log_prepare), deliveryId: r.delivery_id });
    // Only first attempts that are due and unclaimed; anything else is the full round's.
    if (r.status === 'pending' && r.attempts === 0 && new Date(r.next_attempt_at).getTime() <= now.getTime()) due.push(dueRow(r));
  }
  return { due, cursors };
}

/** Up to `limit` due deliveries of each given subscription (oldest due first), with their targets. */
export async function dueDeliveries(knex: Knex, wants: readonly { subscriptionId: string; limit: number }[], now: Date): Promise<DueDelivery[]> {
  if (wants.length === 0) return [];
  const { rows } = await knex.raw(
    `select d.*, s.webhook_url, s.secret_key, s.signature_algorithm
       from json_to_recordset(?::json) as w(id text, n integer)
       join webhook_subscriptions s on s.subscription_id = w.id and s.active and not s.deleted
       cross join lateral (
         select * from webhook_deliveries d
          where d.subscription_id = w.id and d.status = 'pending' and d.next_attempt_at <= ?
            -- an attempt someone holds (or made, and the read model does not show yet) is not due again
            and not exists (select 1 from webhook_delivery_claims c where c.delivery_id = d.delivery_id and c.attempt = d.attempts + 1 and c.claimed_until >= ?)
          order by d.next_attempt_at, d.delivery_id
          limit w.n) d`,
    [JSON.stringify(wants.map((w) => ({ id: w.subscriptionId, n: w.limit }))), now.toISOString(), now.toISOString()],
  );
  return rows.map(dueRow);
}

/**
 * Claims attempts for `owner` until `until`: an attempt nobody claimed, or whose claim lapsed (its
 * claimant died mid-attempt). Returns the delivery ids claimed; one statement for the whole lot.
 */
export async function claimAttempts(knex: Knex, claims: readonly { deliveryId: string; attempt: number }[], owner: string, now: Date, until: Date): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const { rows } = await knex.raw(
    `insert into webhook_delivery_claims (delivery_id, attempt, owner, claimed_until)
     select c.id, c.attempt, ?, ? from json_to_recordset(?::json) as c(id text, attempt integer)
     on conflict (delivery_id, attempt) do update set owner = excluded.owner, claimed_until = excluded.claimed_until
       where webhook_delivery_claims.claimed_until < ?
     returning delivery_id`,
    [owner, until.toISOString(), JSON.stringify(claims.map((c) => ({ id: c.deliveryId, attempt: c.attempt }))), now.toISOString()],
  );
  return new Set(rows.map((r: { delivery_id: string }) => r.delivery_id));
}

/** Claims that lapsed long ago are of no use any more. */
export async function pruneClaims(knex: Knex, before: Date): Promise<number> {
  return knex('webhook_delivery_claims').where('claimed_until', '<', before.toISOString()).delete();
}

// Delivery log -------------------------------------------------------------------------------

export interface AttemptRow {
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  outcome: string;
  nextAttemptAt: string | null;
}

export interface DeliveryLogRow {
  deliveryId: string;
  eventId: string;
  eventType: string;
  occurredAt: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  logCommit: string;
  logPrepare: string;
  attemptLog: AttemptRow[];
}

export async function listDeliveries(
  knex: Knex,
  subscriptionId: string,
  q: { limit: number; after: [string, string, string] | null; filters: DeliveryFilters },
): Promise<{ items: DeliveryLogRow[]; hasMore: boolean }> {
  const query = knex('webhook_deliveries')
    .where({ subscription_id: subscriptionId })
    .orderBy([
      { column: 'log_commit', order: 'desc' },
      { column: 'log_prepare', order: 'desc' },
      { column: 'delivery_id', order: 'desc' },
    ])
    .limit(q.limit + 1);
  if (q.filters.eventType !== null) query.where('event_type', q.filters.eventType);
  if (q.filters.outcome !== null) query.where('status', q.filters.outcome);
  if (q.filters.eventId !== null) query.where('event_id', q.filters.eventId);
  if (q.after) query.whereRaw('(log_commit, log_prepare, delivery_id) < (?::bigint, ?::bigint, ?)', q.after);
  const rows = await query;
  const page = rows.slice(0, q.limit);
  const attempts = page.length === 0 ? [] : await knex('webhook_attempts').whereIn('delivery_id', page.map((r: any) => r.delivery_id)).orderBy(['delivery_id', 'attempt']);
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push({
      attempt: a.attempt,
      attemptedAt: iso(a.attempted_at)!,
      statusCode: a.status_code,
      durationMs: a.duration_ms,
      error: a.error,
      responseBody: a.response_body,
      outcome: a.outcome,
      nextAttemptAt: iso(a.next_attempt_at),
    });
    byDelivery.set(a.delivery_id, list);
  }
  return {
    items: page.map((r: any) => ({
      deliveryId: r.delivery_id,
      eventId: r.event_id,
      eventType: r.event_type,
      occurredAt: iso(r.occurred_at)!,
      status: r.status,
      attempts: r.attempts,
      nextAttemptAt: iso(r.next_attempt_at),
      lastAttemptAt: iso(r.last_attempt_at),
      lastStatusCode: r.last_status_code,
      lastError: r.last_error,
      logCommit: String(r.log_commit),
      logPrepare: String(r.log_prepare),
      attemptLog: byDelivery.get(r.delivery_id) ?? [],
    })),
    hasMore: rows.length > q.limit,
  };
}
