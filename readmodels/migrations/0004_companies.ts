/**
 * Read models of Connect: ASP authorizations, companies and their sources (one branch each),
 * written by the connect projections; and the shared documents read model, which the Unify and
 * purchases capabilities fill and the Connect document counts read.
 */
import type { Knex } from 'knex';

export const companiesMigration = {
  name: '0004_companies',
  async up(knex: Knex) {
    await knex.raw(`
      create table asp_authorizations (
        authorization_id text primary key,
        workspace_id text not null,
        environment text not null,
        tin text not null,
        email text not null,
        legal_name text,
        legal_name_arabic text,
        vat_trn text,
        created_at timestamptz not null
      );
      create index asp_authorizations_workspace on asp_authorizations (workspace_id, created_at, authorization_id);

      create table connect_companies (
        company_id text primary key,
        workspace_id text not null,
        country_code text not null,
        tin text not null,
        legal_name text,
        legal_name_arabic text,
        legal_identifier text,
        vat_trn text,
        peppol_participant_id text not null,
        platform_environment text not null,
        contact_person_name text,
        contact_person_email text not null,
        contact_person_mobile text,
        onboarding_status text not null,
        -- lower-cased legal name, tin, and the names of every source and branch: what "search" looks in
        search_text text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index connect_companies_recent on connect_companies (workspace_id, updated_at desc, company_id desc);
      create index connect_companies_tin on connect_companies (workspace_id, tin);

      create table connect_sources (
        source_id text primary key,
        branch_id text not null,
        company_id text not null,
        workspace_id text not null,
        source_name text not null,
        source_version text not null,
        branch_name text not null,
        user_given_branch_id text not null,
        status text not null check (status in ('active', 'inactive')),
        metadata jsonb not null default '{}',
        mapping_readiness jsonb not null,
        platform_environment text not null,
        -- lower-cased legal name, source name, tin and branch name of this row (search with source filters)
        search_text text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index connect_sources_name on connect_sources (workspace_id, source_name, source_version);
      create index connect_sources_company on connect_sources (company_id, created_at, source_id);
      create index connect_sources_branch on connect_sources (branch_id);

      create table documents (
        document_id text primary key,
        workspace_id text not null,
        environment text not null,
        company_id text null,
        country text not null,
        direction text not null check (direction in ('sales', 'purchase')),
        document_base text null,
        document_number text null,
        state text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index documents_counts on documents (workspace_id, environment, country, created_at);
    `);
  },
  async down(knex: Knex) {
    await knex.raw(
      'drop table if exists documents; drop table if exists connect_sources; drop table if exists connect_companies; drop table if exists asp_authorizations;',
    );
  },
};
