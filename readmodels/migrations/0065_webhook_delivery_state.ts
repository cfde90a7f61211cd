/**
 * Webhook delivery state of its own: the webhooks projection writes the deliveries (one per
 * subscription and event, due at once) and no longer applies attempts; the webhook_attempts
 * projection applies every recorded attempt to the attempt log (webhook_attempts, now its table)
 * and to webhook_delivery_state (the attempts made, the outcome, the next attempt). This moves
 * the state of every delivery with an attempt into the new table, drops it from
 * webhook_deliveries (whose next_attempt_at stays the first attempt's due time), and starts the
 * webhook_attempts checkpoint where the webhooks one stands, since everything before it is in
 * the moved rows already. The webhooks projection's version moves to 2 in the code: a
 * `rebuild -- webhooks` gives the attempted deliveries their first due time again (the column
 * is not read once a delivery has a state row).
 */
import type { Knex } from 'knex';

export const webhookDeliveryStateMigration = {
  name: '0065_webhook_delivery_state',
  async up(knex: Knex) {
    await knex.raw(`
      create table webhook_delivery_state (
        delivery_id text primary key,
        subscription_id text not null,
        status text not null,
        attempts integer not null,
        next_attempt_at timestamptz,
        last_attempt_at timestamptz,
        last_status_code integer,
        last_error text
      );
      create index webhook_delivery_state_due on webhook_delivery_state (subscription_id, next_attempt_at) where status = 'pending';

      insert into webhook_delivery_state (delivery_id, subscription_id, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_error)
      select delivery_id, subscription_id, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_error
        from webhook_deliveries where attempts > 0;

      drop index webhook_deliveries_due;
      alter table webhook_deliveries
        drop column status, drop column attempts, drop column last_attempt_at, drop column last_status_code, drop column last_error;

      insert into projection_checkpoints (projection, version, commit_position, prepare_position, events_applied)
      select 'webhook_attempts', 1, commit_position, prepare_position, 0 from projection_checkpoints where projection = 'webhooks'
      on conflict (projection) do nothing;
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      alter table webhook_deliveries
        add column status text not null default 'pending', add column attempts integer not null default 0,
        add column last_attempt_at timestamptz, add column last_status_code integer, add column last_error text;
      update webhook_deliveries d set status = s.status, attempts = s.attempts, next_attempt_at = s.next_attempt_at,
             last_attempt_at = s.last_attempt_at, last_status_code = s.last_status_code, last_error = s.last_error
        from webhook_delivery_state s where s.delivery_id = d.delivery_id;
      create index webhook_deliveries_due on webhook_deliveries (subscription_id, next_attempt_at) where status = 'pending';
      drop table webhook_delivery_state;
      delete from projection_checkpoints where projection = 'webhook_attempts';
    `);
  },
};
