/**
 * Where the webhook worker's full round starts looking for first attempts not recorded yet, per
 * subscription: every delivery before the floor has a recorded attempt (a fact of the log, so a
 * floor stays true; two instances only ever move it forward). Kept so that a restarted worker
 * does not step over a subscription's whole delivery history to find where it left off. The
 * worker's, like the claims: no projection writes it and a rebuild leaves it alone.
 */
import type { Knex } from 'knex';

export const webhookDeliveryFloorsMigration = {
  name: '0066_webhook_delivery_floors',
  async up(knex: Knex) {
    await knex.raw(`
      create table webhook_delivery_floors (
        subscription_id text primary key,
        log_commit bigint not null,
        log_prepare bigint not null,
        delivery_id text not null
      );
    `);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists webhook_delivery_floors');
  },
};
