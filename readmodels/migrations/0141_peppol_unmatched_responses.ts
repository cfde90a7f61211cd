/**
 * Buyer's answers (Peppol Invoice Responses) that matched no delivered sales document, for
 * operators (`admin peppol unmatched-responses`): one row per kept response, from its event.
 */
import type { Knex } from 'knex';

export const peppolUnmatchedResponsesMigration = {
  name: '0141_peppol_unmatched_responses',
  async up(knex: Knex) {
    await knex.raw(`
      create table if not exists peppol_unmatched_responses (
        xml_sha256 text primary key,
        environment text not null,
        channel text not null,
        message_id text,
        response_id text,
        code text,
        invoice_number text,
        sender_participant_id text,
        receiver_participant_id text,
        reason text not null,
        received_at timestamptz not null
      )`);
    await knex.raw('create index if not exists peppol_unmatched_responses_by_time on peppol_unmatched_responses (received_at desc)');
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists peppol_unmatched_responses');
  },
};
