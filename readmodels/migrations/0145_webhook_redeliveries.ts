/**
 * Webhook redelivery: a delivery a redelivery created names its original (`redelivery_of`) and
 * the redelivery (`redelivery_id`); both null for every delivery written before. The index finds
 * a subscription's original deliveries by the time their event occurred (a redelivery since an
 * instant).
 */
import type { Knex } from 'knex';

export const webhookRedeliveriesMigration = {
  name: '0145_webhook_redeliveries',
  async up(knex: Knex) {
    await knex.raw(`
      alter table webhook_deliveries add column if not exists redelivery_of text, add column if not exists redelivery_id text;
      create index if not exists webhook_deliveries_occurred on webhook_deliveries (subscription_id, occurred_at) where redelivery_of is null;
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      drop index if exists webhook_deliveries_occurred;
      alter table webhook_deliveries drop column if exists redelivery_id, drop column if exists redelivery_of;
    `);
  },
};
