/**
 * Tables of credits: the read models (pool and lots, company credit states, the ledger, bulk
 * jobs and exports) written by the credits projections, and the snapshots of the credits
 * aggregate (a cache of folded state the command side may start from; never a source of truth:
 * dropping it only makes the next load read more events). Natural keys only, no foreign keys.
 */
import type { Knex } from 'knex';

export const creditsMigration = {
  name: '0007_credits',
  async up(knex: Knex) {
    await knex.raw(`
      create table credit_snapshots (
        stream_id text primary key,
        revision bigint not null,
        version integer not null,
        state jsonb not null,
        saved_at timestamptz not null default now()
      );

      create table credit_pools (
        workspace_id text primary key,
        issued bigint not null default 0,
        active bigint not null default 0,
        reserved bigint not null default 0,
        consumed bigint not null default 0,
        expired bigint not null default 0,
        available bigint not null default 0,
        enforcement boolean not null default false,
        updated_at timestamptz not null
      );

      create table credit_lots (
        lot_id text primary key,
        workspace_id text not null,
        environment text not null,
        amount bigint not null,
        reserved bigint not null default 0,
        consumed bigint not null default 0,
        expired bigint not null default 0,
        status text not null check (status in ('active', 'expired')),
        reason text,
        issued_at timestamptz not null,
        expires_at timestamptz
      );
      create index credit_lots_workspace on credit_lots (workspace_id, issued_at, lot_id);
      create index credit_lots_due on credit_lots (expires_at) where status = 'active';

      create table credit_companies (
        workspace_id text not null,
        company_id text not null,
        current jsonb,
        current_status text,
        current_period_id text,
        current_start_at timestamptz,
        current_end_at timestamptz,
        current_limit bigint,
        current_usage bigint not null default 0,
        current_reserved bigint not null default 0,
        current_updated_at timestamptz,
        scheduled jsonb,
        scheduled_start_at timestamptz,
        scheduled_end_at timestamptz,
        last_changed_at timestamptz,
        primary key (workspace_id, company_id)
      );
      create index credit_companies_due_activation on credit_companies (scheduled_start_at) where scheduled is not null;
      create index credit_companies_due_expiry on credit_companies (current_end_at) where current_status in ('active', 'paused');

      create table credit_transactions (
        workspace_id text not null,
        log_commit bigint not null,
        log_prepare bigint not null,
        transaction_id text not null,
        event_type text not null,
        occurred_at timestamptz not null,
        company_id text,
        environment text,
        amount bigint,
        allowance_period_id text,
        allowance_version integer,
        target text,
        reservation_id text,
        document_id text,
        lot_id text,
        reason text,
        balance_before jsonb not null,
        balance_after jsonb not null,
        correlation_id text,
        idempotency_key text,
        request_id text,
        bulk_job_id text,
        key_id text,
        actor text,
        details jsonb not null default '{}',
        primary key (workspace_id, log_commit, log_prepare)
      );
      create unique index credit_transactions_id on credit_transactions (transaction_id);
      create index credit_transactions_company on credit_transactions (workspace_id, company_id, log_commit, log_prepare);
      create index credit_transactions_type on credit_transactions (workspace_id, event_type, log_commit, log_prepare);
      create index credit_transactions_occurred on credit_transactions (workspace_id, occurred_at);
      create index credit_transactions_correlation on credit_transactions (workspace_id, correlation_id, log_commit, log_prepare) where correlation_id is not null;
      create index credit_transactions_idempotency on credit_transactions (workspace_id, idempotency_key, log_commit, log_prepare) where idempotency_key is not null;
      create index credit_transactions_request on credit_transactions (workspace_id, request_id, log_commit, log_prepare) where request_id is not null;
      create index credit_transactions_bulk on credit_transactions (workspace_id, bulk_job_id, log_commit, log_prepare) where bulk_job_id is not null;

      create table credit_bulk_jobs (
        job_id text primary key,
        workspace_id text not null,
        environment text not null,
        status text not null,
        total integer not null,
        processed integer not null default 0,
        succeeded integer not null default 0,
        failed integer not null default 0,
        submitted_at timestamptz not null,
        updated_at timestamptz not null,
        completed_at timestamptz
      );
      create index credit_bulk_jobs_workspace on credit_bulk_jobs (workspace_id, submitted_at);

      create table credit_bulk_job_rows (
        job_id text not null,
        row_index integer not null,
        operation_id text not null,
        company_id text not null,
        operation text not null,
        expected_version integer not null,
        status text not null,
        version integer,
        error_code text,
        error_message text,
        updated_at timestamptz not null,
        primary key (job_id, row_index)
      );

      create table credit_exports (
        export_id text primary key,
        workspace_id text not null,
        status text not null,
        format text not null,
        filters jsonb not null,
        request_commit bigint not null,
        request_prepare bigint not null,
        row_count integer,
        failure_reason text,
        requested_at timestamptz not null,
        completed_at timestamptz,
        expires_at timestamptz
      );
      create index credit_exports_workspace on credit_exports (workspace_id, requested_at);
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      drop table if exists credit_exports;
      drop table if exists credit_bulk_job_rows;
      drop table if exists credit_bulk_jobs;
      drop table if exists credit_transactions;
      drop table if exists credit_companies;
      drop table if exists credit_lots;
      drop table if exists credit_pools;
      drop table if exists credit_snapshots;
    `);
  },
};
