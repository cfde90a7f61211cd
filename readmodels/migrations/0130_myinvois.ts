/**
 * MyInvois (Malaysia): the taxpayers the service submits for, per environment and TIN, with their
 * credentials sealed (docs/operations/malaysia.md), and the shared store of the MyInvois rate
 * limits (rate-limiter-flexible's PostgreSQL table), so that several instances of the service
 * count their requests to the authority together.
 */
import type { Knex } from 'knex';

export const myinvoisMigration = {
  name: '0130_myinvois',
  async up(knex: Knex) {
    await knex.raw(`
      create table if not exists myinvois_taxpayers (
        environment text not null,
        tin text not null,
        mode text not null check (mode in ('taxpayer', 'intermediary')),
        client_id text,
        client_secret_sealed text,
        signing_key_sealed text not null,
        certificate_pem text not null,
        updated_at timestamptz not null,
        primary key (environment, tin),
        check ((mode = 'taxpayer') = (client_id is not null and client_secret_sealed is not null))
      )`);
    await knex.raw(`
      create table if not exists myinvois_rate_limits (
        key varchar(255) primary key,
        points integer not null default 0,
        expire bigint
      )`);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists myinvois_rate_limits');
    await knex.raw('drop table if exists myinvois_taxpayers');
  },
};
