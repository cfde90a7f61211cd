/**
 * Tables of webhooks: subscriptions, deliveries (one per subscription and event, with its
 * schedule) and their attempts, written by the webhooks projection; and the claims the delivery
 * worker takes on an attempt so that two service instances never make the same attempt.
 */
import type { Knex } from 'knex';

export const webhooksMigration = {
  name: '0050_webhooks',
  async up(knex: Knex) {
    await knex.raw(`
      create table webhook_subscriptions (
        subscription_id text primary key,
        workspace_id text not null,
        environment text not null,
        webhook_url text not null,
        events text[] not null,
        secret_key text,
        signature_algorithm text not null,
        description text,
        active boolean not null,
        deleted boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index webhook_subscriptions_workspace on webhook_subscriptions (workspace_id, subscription_id) where not deleted;

      create table webhook_deliveries (
        delivery_id text primary key,
        subscription_id text not null,
        workspace_id text not null,
        environment text not null,
        event_id text not null,
        event_type text not null,
        occurred_at timestamptz not null,
        payload text not null,
        status text not null,
        attempts integer not null default 0,
        next_attempt_at timestamptz,
        last_attempt_at timestamptz,
        last_status_code integer,
        last_error text,
        log_commit bigint not null,
        log_prepare bigint not null
      );
      create index webhook_deliveries_due on webhook_deliveries (subscription_id, next_attempt_at) where status = 'pending';
      create index webhook_deliveries_log on webhook_deliveries (subscription_id, log_commit desc, log_prepare desc, delivery_id desc);
      create index webhook_deliveries_event on webhook_deliveries (event_id);

      create table webhook_attempts (
        delivery_id text not null,
        attempt integer not null,
        attempted_at timestamptz not null,
        status_code integer,
        duration_ms integer not null,
        error text,
        response_body text,
        outcome text not null,
        next_attempt_at timestamptz,
        primary key (delivery_id, attempt)
      );

      create table webhook_delivery_claims (
        delivery_id text not null,
        attempt integer not null,
        owner text not null,
        claimed_until timestamptz not null,
        primary key (delivery_id, attempt)
      );
      create index webhook_delivery_claims_until on webhook_delivery_claims (claimed_until);
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      drop table if exists webhook_delivery_claims;
      drop table if exists webhook_attempts;
      drop table if exists webhook_deliveries;
      drop table if exists webhook_subscriptions;
    `);
  },
};
