/** Queries of the webhooks read model: subscriptions, due deliveries and their claims, the delivery log. */
import type { Knex } from 'knex';
import type { BatchWrite } from './batch-writes.js';
import type { WebhookTarget } from '../domain/webhooks/delivery.js';
import type { DeliveryFilters } from '../domain/webhooks/input.js';
import type { RedeliveryCandidate } from '../domain/webhooks/redelivery.js';

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

export async function readSubscriptionTarget(knex: Knex, workspaceId: string, subscriptionId: string): Promise<WebhookTarget | null> {
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
  /** Where the delivery stands in the log. */
  cursor: DeliveryCursor;
  target: WebhookTarget;
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

/** A delivery's own columns (as the webhooks projection wrote them), in this order. */
const DELIVERY_COLUMNS = 'd.delivery_id, d.subscription_id, d.workspace_id, d.environment, d.event_id, d.event_type, d.occurred_at, d.payload, d.next_attempt_at, d.log_commit, d.log_prepare';

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
    cursor: cursorOf(r),
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
 * webhooks projection added since the last call, however many earlier deliveries still wait for
 * their attempt's record, so the worker can call it on every commit of new deliveries.
 */
export async function freshDeliveries(
  knex: Knex,
  wants: readonly { subscriptionId: string; limit: number; after: DeliveryCursor }[],
  now: Date,
): Promise<{ due: DueDelivery[]; cursors: Map<string, DeliveryCursor> }> {
  if (wants.length === 0) return { due: [], cursors: new Map() };
  const { rows } = await knex.raw(
    `select d.*, st.delivery_id is not null as attempted, s.webhook_url, s.secret_key, s.signature_algorithm
       from json_to_recordset(?::json) as w(id text, n integer, c bigint, p bigint, d text)
       join webhook_subscriptions s on s.subscription_id = w.id and s.active and not s.deleted
       cross join lateral (
         select * from webhook_deliveries d
          where d.subscription_id = w.id and (d.log_commit, d.log_prepare, d.delivery_id) > (w.c, w.p, w.d)
          order by d.log_commit, d.log_prepare, d.delivery_id
          limit w.n) d
       left join webhook_delivery_state st on st.delivery_id = d.delivery_id`,
    [JSON.stringify(wants.map((w) => ({ id: w.subscriptionId, n: w.limit, c: w.after.commit, p: w.after.prepare, d: w.after.deliveryId })))],
  );
  const cursors = new Map<string, DeliveryCursor>();
  const due: DueDelivery[] = [];
  for (const r of rows) {
    const at = cursorOf(r);
    const before = cursors.get(r.subscription_id);
    if (!before || compareCursors(at, before) > 0) cursors.set(r.subscription_id, at);
    // Only first attempts that are due and not recorded (a test ping is never due); anything
    // else is the full round's.
    if (!r.attempted && r.next_attempt_at !== null && new Date(r.next_attempt_at).getTime() <= now.getTime()) due.push(dueRow({ ...r, attempts: 0 }));
  }
  due.sort((a, b) => compareCursors(a.cursor, b.cursor));
  return { due, cursors };
}

const cursorOf = (r: { log_commit: unknown; log_prepare: unknown; delivery_id: string }): DeliveryCursor => ({
  commit: String(r.log_commit),
  prepare: String(r.log_prepare),
  deliveryId: r.delivery_id,
});

export function compareCursors(a: DeliveryCursor, b: DeliveryCursor): number {
  const c = BigInt(a.commit) - BigInt(b.commit);
  if (c !== 0n) return c < 0n ? -1 : 1;
  const p = BigInt(a.prepare) - BigInt(b.prepare);
  if (p !== 0n) return p < 0n ? -1 : 1;
  return a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0;
}

/** The lowest cursor: before every delivery. */
export const START_CURSOR: DeliveryCursor = { commit: '0', prepare: '0', deliveryId: '' };

/**
 * Up to `limit` due attempts of each given subscription, with their targets: retries (and
 * attempts after a lapsed claim) from the delivery state, oldest due first; and first attempts
 * not recorded yet, in log order from the subscription's `floor` (every delivery before it has a
 * recorded attempt). Returns the floor each subscription may move to: its first delivery
 * without a recorded attempt, or its newest delivery when there is none, read in the same
 * statement (so a delivery committed meanwhile is after it).
 */
export async function dueDeliveries(
  knex: Knex,
  wants: readonly { subscriptionId: string; limit: number; floor: DeliveryCursor }[],
  now: Date,
): Promise<{ due: DueDelivery[]; floors: Map<string, DeliveryCursor> }> {
  if (wants.length === 0) return { due: [], floors: new Map() };
  const at = now.toISOString();
  const { rows } = await knex.raw(
    `with w as (select * from json_to_recordset(?::json) as w(id text, n integer, c bigint, p bigint, d text)),
     due as (
       select ${DELIVERY_COLUMNS}, st.attempts, st.next_attempt_at as due_at, false as first, false as claimed
         from w cross join lateral (
           select * from webhook_delivery_state st
            where st.subscription_id = w.id and st.status = 'pending' and st.next_attempt_at <= ?
              -- an attempt someone holds (or made, and the read model does not show yet) is not due again
              and not exists (select 1 from webhook_delivery_claims c where c.delivery_id = st.delivery_id and c.attempt = st.attempts + 1 and c.claimed_until >= ?)
            order by st.next_attempt_at, st.delivery_id
            limit w.n) st
         join webhook_deliveries d on d.delivery_id = st.delivery_id
       union all
       select ${DELIVERY_COLUMNS}, 0, d.next_attempt_at, true,
              exists (select 1 from webhook_delivery_claims c where c.delivery_id = d.delivery_id and c.attempt = 1 and c.claimed_until >= ?)
         from w cross join lateral (
           select * from webhook_deliveries d
            where d.subscription_id = w.id and (d.log_commit, d.log_prepare, d.delivery_id) >= (w.c, w.p, w.d) and d.next_attempt_at is not null
              and not exists (select 1 from webhook_delivery_state st where st.delivery_id = d.delivery_id)
            order by d.log_commit, d.log_prepare, d.delivery_id
            limit w.n) d)
     select due.*, s.webhook_url, s.secret_key, s.signature_algorithm, false as newest
       from due join webhook_subscriptions s on s.subscription_id = due.subscription_id and s.active and not s.deleted
     union all
     select d.delivery_id, w.id, null, null, null, null, null, null, null, d.log_commit, d.log_prepare, null, null, null, null, null, null, null, true
       from w cross join lateral (
         select log_commit, log_prepare, delivery_id from webhook_deliveries d
          where d.subscription_id = w.id
          order by log_commit desc, log_prepare desc, delivery_id desc limit 1) d`,
    [JSON.stringify(wants.map((w) => ({ id: w.subscriptionId, n: w.limit, c: w.floor.commit, p: w.floor.prepare, d: w.floor.deliveryId }))), at, at, at],
  );
  const floors = new Map<string, DeliveryCursor>();
  const firstUnrecorded = new Map<string, DeliveryCursor>();
  const due: DueDelivery[] = [];
  for (const r of rows) {
    if (r.newest) {
      if (!firstUnrecorded.has(r.subscription_id)) floors.set(r.subscription_id, cursorOf(r));
      continue;
    }
    if (r.first) {
      const c = cursorOf(r);
      const before = firstUnrecorded.get(r.subscription_id);
      if (!before || compareCursors(c, before) < 0) firstUnrecorded.set(r.subscription_id, c);
      if (r.claimed || new Date(r.due_at).getTime() > now.getTime()) continue;
    }
    due.push(dueRow({ ...r, next_attempt_at: r.due_at }));
  }
  for (const [id, c] of firstUnrecorded) floors.set(id, c);
  due.sort((a, b) => a.nextAttemptAt.localeCompare(b.nextAttemptAt) || compareCursors(a.cursor, b.cursor));
  // Up to the limit of each subscription (retries and first attempts were read up to it each).
  const left = new Map(wants.map((w) => [w.subscriptionId, w.limit]));
  const kept = due.filter((d) => {
    const n = left.get(d.subscriptionId) ?? 0;
    left.set(d.subscriptionId, n - 1);
    return n > 0;
  });
  return { due: kept, floors };
}

/** The stored floors of these subscriptions (see dueDeliveries); a subscription without one has none yet. */
export async function readFloors(knex: Knex, subscriptionIds: readonly string[]): Promise<Map<string, DeliveryCursor>> {
  const out = new Map<string, DeliveryCursor>();
  if (subscriptionIds.length === 0) return out;
  const rows = await knex('webhook_delivery_floors').whereIn('subscription_id', [...subscriptionIds]);
  for (const r of rows) out.set(r.subscription_id, cursorOf(r));
  return out;
}

/** Stores floors that moved; a stored floor only ever moves forward (of two instances, the later one stays). */
export async function saveFloors(knex: Knex, floors: ReadonlyMap<string, DeliveryCursor>): Promise<void> {
  if (floors.size === 0) return;
  await knex.raw(
    `insert into webhook_delivery_floors (subscription_id, log_commit, log_prepare, delivery_id)
     select * from json_to_recordset(?::json) as v(subscription_id text, log_commit bigint, log_prepare bigint, delivery_id text)
     on conflict (subscription_id) do update
       set log_commit = excluded.log_commit, log_prepare = excluded.log_prepare, delivery_id = excluded.delivery_id
     where (excluded.log_commit, excluded.log_prepare, excluded.delivery_id)
         > (webhook_delivery_floors.log_commit, webhook_delivery_floors.log_prepare, webhook_delivery_floors.delivery_id)`,
    [JSON.stringify([...floors].map(([id, c]) => ({ subscription_id: id, log_commit: c.commit, log_prepare: c.prepare, delivery_id: c.deliveryId })))],
  );
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
  /** The delivery a redelivery delivered again, and that redelivery (null for an original). */
  redeliveryOf: string | null;
  redeliveryId: string | null;
  attemptLog: AttemptRow[];
}

export async function listDeliveries(
  knex: Knex,
  subscriptionId: string,
  q: { limit: number; after: [string, string, string] | null; filters: DeliveryFilters },
): Promise<{ items: DeliveryLogRow[]; hasMore: boolean }> {
  // A delivery's state is the webhook_attempts projection's (none yet: pending, its first attempt due).
  const query = knex('webhook_deliveries as d')
    .leftJoin('webhook_delivery_state as st', 'st.delivery_id', 'd.delivery_id')
    .select(
      'd.*',
      knex.raw(`coalesce(st.status, 'pending') as status`),
      knex.raw('coalesce(st.attempts, 0) as attempts'),
      knex.raw('case when st.delivery_id is null then d.next_attempt_at else st.next_attempt_at end as next_attempt_at'),
      'st.last_attempt_at',
      'st.last_status_code',
      'st.last_error',
    )
    .where('d.subscription_id', subscriptionId)
    .orderBy([
      { column: 'd.log_commit', order: 'desc' },
      { column: 'd.log_prepare', order: 'desc' },
      { column: 'd.delivery_id', order: 'desc' },
    ])
    .limit(q.limit + 1);
  if (q.filters.eventType !== null) query.where('d.event_type', q.filters.eventType);
  if (q.filters.outcome !== null) query.whereRaw(`coalesce(st.status, 'pending') = ?`, [q.filters.outcome]);
  if (q.filters.eventId !== null) query.where('d.event_id', q.filters.eventId);
  if (q.filters.redeliveryId !== undefined) query.where('d.redelivery_id', q.filters.redeliveryId);
  if (q.after) query.whereRaw('(d.log_commit, d.log_prepare, d.delivery_id) < (?::bigint, ?::bigint, ?)', q.after);
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
      redeliveryOf: r.redelivery_of ?? null,
      redeliveryId: r.redelivery_id ?? null,
      attemptLog: byDelivery.get(r.delivery_id) ?? [],
    })),
    hasMore: rows.length > q.limit,
  };
}

// Redelivery ----------------------------------------------------------------------------------

/**
 * The original deliveries a redelivery request names, with whether their event is still being
 * delivered to the subscription (a delivery of it, original or redelivered, pending: no attempt
 * recorded yet, or a retry scheduled). One delivery: that one, resolved to its original when it
 * is a redelivery. Since an instant: the originals (no test pings) whose event occurred in
 * [since, until), oldest first, up to `limit`.
 */
export async function redeliveryCandidates(
  knex: Knex,
  subscriptionId: string,
  request: { kind: 'delivery'; deliveryId: string } | { kind: 'since'; since: string; until: string },
  limit: number,
): Promise<RedeliveryCandidate[]> {
  const pending = `exists (select 1 from webhook_deliveries o left join webhook_delivery_state os on os.delivery_id = o.delivery_id
                            where o.subscription_id = d.subscription_id and o.event_id = d.event_id and o.next_attempt_at is not null
                              and coalesce(os.status, 'pending') = 'pending') as pending`;
  let rows: any[];
  if (request.kind === 'delivery') {
    ({ rows } = await knex.raw(
      `select d.delivery_id, d.event_id, d.event_type, d.occurred_at, ${pending}
         from webhook_deliveries n
         join webhook_deliveries d on d.delivery_id = coalesce(n.redelivery_of, n.delivery_id)
        where n.subscription_id = ? and n.delivery_id = ?`,
      [subscriptionId, request.deliveryId],
    ));
  } else {
    ({ rows } = await knex.raw(
      `select d.delivery_id, d.event_id, d.event_type, d.occurred_at, ${pending}
         from webhook_deliveries d
        where d.subscription_id = ? and d.redelivery_of is null and d.next_attempt_at is not null
          and d.occurred_at >= ? and d.occurred_at < ?
        order by d.occurred_at, d.log_commit, d.log_prepare, d.delivery_id
        limit ?`,
      [subscriptionId, request.since, request.until, limit],
    ));
  }
  return rows.map((r) => ({ deliveryId: r.delivery_id, eventId: r.event_id, eventType: r.event_type, occurredAt: iso(r.occurred_at)!, pending: r.pending }));
}

/** A delivery a redelivery creates: a copy of its original's event, due at `next_attempt_at`. */
export interface RedeliveryRecordRow {
  delivery_id: string;
  redelivery_of: string;
  redelivery_id: string;
  next_attempt_at: string;
  log_commit: string;
  log_prepare: string;
}

/**
 * The deliveries of redeliveries: each copies its original's subscription, workspace, event id,
 * type, time and payload (the original is earlier in the log, so it is there, in a rebuild too).
 * A delivery written already is left as it is.
 */
export async function insertRedeliveries(trx: Knex.Transaction, rows: readonly RedeliveryRecordRow[]): Promise<void> {
  await chunked(rows, 5000, (chunk) =>
    trx.raw(
      `insert into webhook_deliveries (delivery_id, subscription_id, workspace_id, environment, event_id, event_type, occurred_at, payload, next_attempt_at, log_commit, log_prepare, redelivery_of, redelivery_id)
       select v.delivery_id, o.subscription_id, o.workspace_id, o.environment, o.event_id, o.event_type, o.occurred_at, o.payload, v.next_attempt_at, v.log_commit, v.log_prepare, v.redelivery_of, v.redelivery_id
         from json_to_recordset(?::json) as v(delivery_id text, redelivery_of text, redelivery_id text, next_attempt_at timestamptz, log_commit bigint, log_prepare bigint)
         join webhook_deliveries o on o.delivery_id = v.redelivery_of
       on conflict (delivery_id) do nothing`,
      [JSON.stringify(chunk)],
    ),
  );
}

// Projection writes -----------------------------------------------------------------------------

/** A subscription as the webhooks projection keeps it (the secret sealed). */
export interface SubscriptionRecord {
  subscription_id: string;
  workspace_id: string;
  environment: string;
  webhook_url: string;
  events: string[];
  secret_key: string | null;
  signature_algorithm: string;
  description: string | null;
  active: boolean;
  deleted: boolean;
  created_at: string;
  updated_at: string;
}

/** A delivery as the webhooks projection writes it; its state is the webhook_attempts projection's. */
export interface DeliveryRecord {
  delivery_id: string;
  subscription_id: string;
  workspace_id: string;
  environment: string;
  event_id: string;
  event_type: string;
  occurred_at: string;
  payload: string;
  /** When the first attempt is due (null for a test ping: made at once, never scheduled). */
  next_attempt_at: string | null;
  log_commit: string;
  log_prepare: string;
}

/** The state of a delivery after an attempt. */
export interface DeliveryStateRecord {
  delivery_id: string;
  subscription_id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string;
  last_status_code: number | null;
  last_error: string | null;
}

export interface AttemptLogRecord {
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  outcome: string;
  next_attempt_at: string | null;
}

async function chunked<T>(rows: readonly T[], size: number, write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += size) await write(rows.slice(i, i + size));
}

/** The live subscriptions of these workspaces. */
export async function subscriptionsOfWorkspaces(trx: Knex.Transaction, workspaceIds: readonly string[]): Promise<SubscriptionRecord[]> {
  if (workspaceIds.length === 0) return [];
  return trx('webhook_subscriptions').whereIn('workspace_id', [...workspaceIds]).andWhere('deleted', false);
}

/** What of a live subscription decides which occurrences it receives. */
export interface SubscriptionMatch {
  readonly subscription_id: string;
  readonly environment: string;
  readonly events: readonly string[];
  readonly active: boolean;
}

/**
 * The condition (BatchWrite.requires) that the live subscriptions of these workspaces are exactly
 * these, with these values: a batch that matched its occurrences against remembered
 * subscriptions instead of reading them is applied only then.
 */
export function subscriptionsStoredAs(workspaces: ReadonlyMap<string, readonly SubscriptionMatch[]>): NonNullable<BatchWrite['requires']> {
  const remembered = [...workspaces].flatMap(([w, subs]) => subs.map((s) => ({ w, i: s.subscription_id, e: s.environment, ev: s.events, a: s.active })));
  const stored = `select s.workspace_id, s.subscription_id, s.environment, s.events, s.active from webhook_subscriptions s
                   where s.workspace_id in (select json_array_elements_text(?::json)) and not s.deleted`;
  const expected = `select c.w, c.i, c.e, c.ev, c.a from json_to_recordset(?::json) as c(w text, i text, e text, ev text[], a boolean)`;
  const workspaceIds = JSON.stringify([...workspaces.keys()]);
  const rows = JSON.stringify(remembered);
  return {
    sql: remembered.length === 0
      ? `not exists (${stored})`
      : `not exists ((${stored}) except all (${expected})) and not exists ((${expected}) except all (${stored}))`,
    bindings: remembered.length === 0 ? [workspaceIds] : [workspaceIds, rows, rows, workspaceIds],
  };
}

export async function subscriptionRecord(trx: Knex.Transaction, subscriptionId: string): Promise<SubscriptionRecord | undefined> {
  return trx('webhook_subscriptions').where({ subscription_id: subscriptionId }).first();
}

export async function writeSubscriptions(trx: Knex.Transaction, rows: readonly SubscriptionRecord[]): Promise<void> {
  if (rows.length > 0) await trx('webhook_subscriptions').insert([...rows]).onConflict('subscription_id').merge();
}

/**
 * New deliveries (a delivery written already is left as it is). The rows go as one JSON
 * parameter per 5,000: an occurrence matching ten subscriptions is ten rows of eleven columns,
 * which as bound parameters would cost more to build and parse than to insert.
 */
export async function insertDeliveries(trx: Knex.Transaction, rows: readonly DeliveryRecord[]): Promise<void> {
  await chunked(rows, 5000, (chunk) =>
    trx.raw(
      `insert into webhook_deliveries (delivery_id, subscription_id, workspace_id, environment, event_id, event_type, occurred_at, payload, next_attempt_at, log_commit, log_prepare)
       select * from json_to_recordset(?::json)
         as v(delivery_id text, subscription_id text, workspace_id text, environment text, event_id text, event_type text,
              occurred_at timestamptz, payload text, next_attempt_at timestamptz, log_commit bigint, log_prepare bigint)
       on conflict (delivery_id) do nothing`,
      [JSON.stringify(chunk)],
    ),
  );
}

/**
 * Attempts into the attempt log (an attempt recorded already is left as it is) and the state of
 * their deliveries: a state only ever moves to a later attempt, so applying the same attempts
 * again, or an earlier one after a later, changes nothing. One statement per table, the rows as
 * one JSON parameter.
 */
export async function writeAttempts(trx: Knex.Transaction, attempts: readonly AttemptLogRecord[], states: readonly DeliveryStateRecord[]): Promise<void> {
  await chunked(attempts, 5000, (chunk) =>
    trx.raw(
      `insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms, error, response_body, outcome, next_attempt_at)
       select * from json_to_recordset(?::json)
         as v(delivery_id text, attempt integer, attempted_at timestamptz, status_code integer, duration_ms integer, error text,
              response_body text, outcome text, next_attempt_at timestamptz)
       on conflict (delivery_id, attempt) do nothing`,
      [JSON.stringify(chunk)],
    ),
  );
  await chunked(states, 5000, (chunk) =>
    trx.raw(
      `insert into webhook_delivery_state (delivery_id, subscription_id, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_error)
       select * from json_to_recordset(?::json)
         as v(delivery_id text, subscription_id text, status text, attempts integer, next_attempt_at timestamptz, last_attempt_at timestamptz, last_status_code integer, last_error text)
       on conflict (delivery_id) do update
         set status = excluded.status, attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at,
             last_attempt_at = excluded.last_attempt_at, last_status_code = excluded.last_status_code, last_error = excluded.last_error
       where webhook_delivery_state.attempts < excluded.attempts`,
      [JSON.stringify(chunk)],
    ),
  );
}
