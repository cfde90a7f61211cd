/**
 * Schema of the PostgreSQL event store, as a knex migration.
 *
 * - es_events is append-only (triggers refuse UPDATE, DELETE and TRUNCATE).
 * - unique (stream_id, stream_revision) gives optimistic concurrency; unique event_id makes
 *   re-appends idempotent.
 * - every row records the writing transaction's id (xid8). Readers order by
 *   (transaction_id, global_position) and read only below the oldest transaction still in
 *   flight, so an event committed late by a concurrent transaction is never skipped.
 * - es_append() does the whole append in one round trip: idempotency check, stream row lock,
 *   expected-revision check, insert, notify.
 */
import type { Knex } from 'knex';

export const WRONG_EXPECTED_VERSION_SQLSTATE = 'ES409';
export const DUPLICATE_EVENT_SQLSTATE = 'ES410';
export const APPEND_ONLY_SQLSTATE = 'ES403';
export const APPEND_CHANNEL = 'es_appended';

/**
 * Version 1 of the append function, as first released. It notified listeners from inside the
 * append, which takes PostgreSQL's notify lock until the commit is flushed and so serialised all
 * appends; version 2 (below) leaves notification to the adapter, once per burst after the commit.
 */
function appendFunction(options: { notify: boolean }): string {
  return `
      -- p_expected: 'any' | 'no_stream' | 'stream_exists' | a revision as decimal text.
      -- p_events: jsonb array of {id, type, version, data, metadata}.
      -- p_serialize: take one global lock for the append (the alternative to reading below
      --   the oldest in-flight transaction; kept so the benchmark can compare the two).
      create or replace function es_append(p_stream text, p_expected text, p_events jsonb, p_serialize boolean default false)
      returns table (last_revision bigint, transaction_id xid8, last_position bigint, replayed boolean)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        v_count integer := jsonb_array_length(p_events);
        v_current bigint;
        v_existing integer;
        v_last_position bigint;
      begin
        select count(*) into v_existing
          from es_events e
          where e.event_id in (select (x->>'id')::uuid from jsonb_array_elements(p_events) x);
        if v_existing > 0 then
          -- the same events, in the same order, at consecutive revisions of this stream: a replay
          if v_existing = v_count and not exists (
            select 1
              from jsonb_array_elements(p_events) with ordinality as x(ev, ord)
              left join es_events e on e.event_id = (x.ev->>'id')::uuid
              where e.stream_id is distinct from p_stream
                 or e.stream_revision <> (
                      select min(f.stream_revision) from es_events f
                       where f.event_id in (select (y->>'id')::uuid from jsonb_array_elements(p_events) y)
                    ) + x.ord - 1
          ) then
            return query
              select e.stream_revision, e.transaction_id, e.global_position, true
                from es_events e
               where e.event_id = (p_events->(v_count - 1)->>'id')::uuid;
            return;
          end if;
          raise exception 'duplicate event ids for stream %', p_stream
            using errcode = '${DUPLICATE_EVENT_SQLSTATE}';
        end if;

        if p_serialize then
          perform pg_advisory_xact_lock(7239001);
        end if;

        insert into es_streams as s (stream_id, revision) values (p_stream, -1)
          on conflict (stream_id) do nothing;
        select s.revision into v_current from es_streams s where s.stream_id = p_stream for update;

        if (p_expected = 'no_stream' and v_current <> -1)
           or (p_expected = 'stream_exists' and v_current = -1)
           or (p_expected not in ('any', 'no_stream', 'stream_exists') and v_current <> p_expected::bigint) then
          raise exception 'wrong expected version for stream %', p_stream
            using errcode = '${WRONG_EXPECTED_VERSION_SQLSTATE}', detail = v_current::text;
        end if;

        with inserted as (
          insert into es_events (event_id, stream_id, stream_revision, event_type, schema_version, data, metadata)
          select (x.ev->>'id')::uuid, p_stream, v_current + x.ord, x.ev->>'type', (x.ev->>'version')::integer,
                 x.ev->'data', x.ev->'metadata'
            from jsonb_array_elements(p_events) with ordinality as x(ev, ord)
           order by x.ord
          returning global_position
        )
        select max(global_position) into v_last_position from inserted;

        update es_streams s set revision = v_current + v_count where s.stream_id = p_stream;
${options.notify ? `        perform pg_notify('${APPEND_CHANNEL}', '');\n` : ''}        return query select v_current + v_count, pg_current_xact_id(), v_last_position, false;
      end $$;
`;
}

export const eventStoreMigration = {
  name: '0001_event_store',
  async up(knex: Knex) {
    await knex.raw(`
      create table es_events (
        global_position bigint generated always as identity primary key,
        transaction_id xid8 not null default pg_current_xact_id(),
        event_id uuid not null,
        stream_id text not null,
        stream_revision bigint not null,
        event_type text not null,
        schema_version integer not null,
        data jsonb not null,
        metadata jsonb not null,
        recorded_at timestamptz not null default clock_timestamp(),
        constraint es_events_event_id_key unique (event_id),
        constraint es_events_stream_revision_key unique (stream_id, stream_revision)
      );
      create index es_events_tx_position on es_events (transaction_id, global_position);

      create table es_streams (
        stream_id text primary key,
        revision bigint not null
      );

      create function es_refuse_change() returns trigger language plpgsql as $$
      begin
        raise exception 'the event log is append-only: % refused on %', tg_op, tg_table_name
          using errcode = '${APPEND_ONLY_SQLSTATE}';
      end $$;
      create trigger es_events_append_only before update or delete on es_events
        for each row execute function es_refuse_change();
      create trigger es_events_no_truncate before truncate on es_events
        for each statement execute function es_refuse_change();

      ${appendFunction({ notify: true })}
    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      drop function if exists es_append(text, text, jsonb, boolean);
      drop table if exists es_streams;
      drop table if exists es_events;
      drop function if exists es_refuse_change();
    `);
  },
};



/**
 * Version 2 of the append function: no NOTIFY inside (see appendFunction), no duplicate-id
 * pre-check on the common path (a re-append hits the unique event_id index and the adapter then
 * asks es_replay() whether it was a replay), and one statement to lock an existing stream.
 */
const appendV2 = `
  create or replace function es_append(p_stream text, p_expected text, p_events jsonb, p_serialize boolean default false)
  returns table (last_revision bigint, transaction_id xid8, last_position bigint, replayed boolean)
  language plpgsql as $$
  #variable_conflict use_column
  declare
    v_count integer := jsonb_array_length(p_events);
    v_current bigint;
    v_last_position bigint;
  begin
    if p_serialize then
      perform pg_advisory_xact_lock(7239001);
    end if;
    select s.revision into v_current from es_streams s where s.stream_id = p_stream for update;
    if not found then
      insert into es_streams as s (stream_id, revision) values (p_stream, -1) on conflict (stream_id) do nothing;
      select s.revision into v_current from es_streams s where s.stream_id = p_stream for update;
    end if;

    if (p_expected = 'no_stream' and v_current <> -1)
       or (p_expected = 'stream_exists' and v_current = -1)
       or (p_expected not in ('any', 'no_stream', 'stream_exists') and v_current <> p_expected::bigint) then
      raise exception 'wrong expected version for stream %', p_stream
        using errcode = '${WRONG_EXPECTED_VERSION_SQLSTATE}', detail = v_current::text;
    end if;

    with inserted as (
      insert into es_events (event_id, stream_id, stream_revision, event_type, schema_version, data, metadata)
      select (x.ev->>'id')::uuid, p_stream, v_current + x.ord, x.ev->>'type', (x.ev->>'version')::integer,
             x.ev->'data', x.ev->'metadata'
        from jsonb_array_elements(p_events) with ordinality as x(ev, ord)
       order by x.ord
      returning global_position
    )
    select max(global_position) into v_last_position from inserted;

    update es_streams s set revision = v_current + v_count where s.stream_id = p_stream;
    return query select v_current + v_count, pg_current_xact_id(), v_last_position, false;
  end $$;

  -- After a failed append: the same events, in the same order, at consecutive revisions of this
  -- stream are a replay (returns the last one); none of them stored returns no row; any other
  -- overlap is a duplicate.
  create or replace function es_replay(p_stream text, p_events jsonb)
  returns table (last_revision bigint, transaction_id xid8, last_position bigint, replayed boolean)
  language plpgsql as $$
  #variable_conflict use_column
  declare
    v_count integer := jsonb_array_length(p_events);
    v_first bigint;
  begin
    if not exists (select 1 from es_events e where e.event_id in (select (y->>'id')::uuid from jsonb_array_elements(p_events) y)) then
      return;
    end if;
    select min(e.stream_revision) into v_first from es_events e
     where e.event_id in (select (y->>'id')::uuid from jsonb_array_elements(p_events) y) and e.stream_id = p_stream;
    if v_first is not null
       and (select count(*) from es_events e where e.event_id in (select (y->>'id')::uuid from jsonb_array_elements(p_events) y)) = v_count
       and not exists (
         select 1 from jsonb_array_elements(p_events) with ordinality as x(ev, ord)
           left join es_events e on e.event_id = (x.ev->>'id')::uuid
          where e.stream_id is distinct from p_stream or e.stream_revision <> v_first + x.ord - 1) then
      return query
        select e.stream_revision, e.transaction_id, e.global_position, true
          from es_events e where e.event_id = (p_events->(v_count - 1)->>'id')::uuid;
      return;
    end if;
    raise exception 'duplicate event ids for stream %', p_stream using errcode = '${DUPLICATE_EVENT_SQLSTATE}';
  end $$;
`;

export const appendV2Migration = {
  name: '0005_event_store_append_v2',
  async up(knex: Knex) {
    await knex.raw(appendV2);
  },
  async down(knex: Knex) {
    await knex.raw(`drop function if exists es_replay(text, jsonb); ${appendFunction({ notify: true })}`);
  },
};

/**
 * Group commit: several appends (to any streams) in one transaction, so concurrent writers share
 * one round trip and one WAL flush. p_batch is a jsonb array of {stream, expected, events}, sorted
 * by the adapter by stream id (a stable sort: appends to one stream keep their order), so two
 * batches lock their streams in the same order and cannot deadlock on each other.
 *
 * Each append is checked and written as es_append() does it, but a wrong expected revision does
 * not abort the batch: that append writes nothing and returns ok = false with the stream's
 * revision, and the adapter then runs it alone through es_append() (which also recognises a
 * replay). Any error (a stored event id, a deadlock) rolls the whole batch back; the adapter then
 * runs each append alone. Every event of a batch shares the transaction id; global_position
 * orders them.
 */
const appendBatch = `
  create or replace function es_append_batch(p_batch jsonb, p_serialize boolean default false)
  returns table (item integer, ok boolean, last_revision bigint, transaction_id xid8, last_position bigint)
  language plpgsql as $$
  #variable_conflict use_column
  declare
    v_item jsonb;
    v_ord bigint;
    v_stream text;
    v_expected text;
    v_events jsonb;
    v_count integer;
    v_current bigint;
    v_last_position bigint;
    v_tx xid8 := pg_current_xact_id();
  begin
    if p_serialize then
      perform pg_advisory_xact_lock(7239001);
    end if;
    for v_item, v_ord in select b.x, b.o from jsonb_array_elements(p_batch) with ordinality as b(x, o) loop
      v_stream := v_item->>'stream';
      v_expected := v_item->>'expected';
      v_events := v_item->'events';
      v_count := jsonb_array_length(v_events);

      select s.revision into v_current from es_streams s where s.stream_id = v_stream for update;
      if not found then
        insert into es_streams as s (stream_id, revision) values (v_stream, -1) on conflict (stream_id) do nothing;
        select s.revision into v_current from es_streams s where s.stream_id = v_stream for update;
      end if;

      if (v_expected = 'no_stream' and v_current <> -1)
         or (v_expected = 'stream_exists' and v_current = -1)
         or (v_expected not in ('any', 'no_stream', 'stream_exists') and v_current <> v_expected::bigint) then
        return query select (v_ord - 1)::integer, false, v_current, v_tx, null::bigint;
        continue;
      end if;

      with inserted as (
        insert into es_events (event_id, stream_id, stream_revision, event_type, schema_version, data, metadata)
        select (x.ev->>'id')::uuid, v_stream, v_current + x.ord, x.ev->>'type', (x.ev->>'version')::integer,
               x.ev->'data', x.ev->'metadata'
          from jsonb_array_elements(v_events) with ordinality as x(ev, ord)
         order by x.ord
        returning global_position
      )
      select max(global_position) into v_last_position from inserted;

      update es_streams s set revision = v_current + v_count where s.stream_id = v_stream;
      return query select (v_ord - 1)::integer, true, v_current + v_count, v_tx, v_last_position;
    end loop;
  end $$;
`;

export const appendBatchMigration = {
  name: '0021_event_store_append_batch',
  async up(knex: Knex) {
    await knex.raw(appendBatch);
  },
  async down(knex: Knex) {
    await knex.raw('drop function if exists es_append_batch(jsonb, boolean)');
  },
};

/**
 * The lock-and-check of one append, shared by the json functions below: the stream's row is
 * created when missing and locked, and `v_current` holds its revision; `mismatch` is the
 * statement run when the expected revision (`expected`, text) does not hold.
 */
const lockStreamAndCheck = (stream: string, expected: string, mismatch: string) => `
      select s.revision into v_current from es_streams s where s.stream_id = ${stream} for update;
      if not found then
        insert into es_streams as s (stream_id, revision) values (${stream}, -1) on conflict (stream_id) do nothing;
        select s.revision into v_current from es_streams s where s.stream_id = ${stream} for update;
      end if;
      if (${expected} = 'no_stream' and v_current <> -1)
         or (${expected} = 'stream_exists' and v_current = -1)
         or (${expected} not in ('any', 'no_stream', 'stream_exists') and v_current <> ${expected}::bigint) then
        ${mismatch}
      end if;`;

/** Inserts the event rows of `events` (json array) after `v_current`; sets v_count and v_last_position. */
const insertEventRows = (stream: string, events: string) => `
      with inserted as (
        insert into es_events (event_id, stream_id, stream_revision, event_type, schema_version, data, metadata)
        select x.id, ${stream}, v_current + x.ord, x.event_type, x.version, x.data, x.metadata
          from rows from (json_to_recordset(${events}) as ("id" uuid, "type" text, "version" integer, "data" json, "metadata" json))
               with ordinality as x(id, event_type, version, data, metadata, ord)
         order by x.ord
        returning global_position
      )
      select count(*)::integer, max(global_position) into v_count, v_last_position from inserted;`;

/** Inserts the events of `events` (json array) after `v_current` and moves the stream's row to the last. */
const insertEvents = (stream: string, events: string) => `${insertEventRows(stream, events)}
      update es_streams s set revision = v_current + v_count where s.stream_id = ${stream};`;

/** es_append_batch on json (migration 0022; restored by 0150's down). */
const appendBatchJson = `
      create or replace function es_append_batch(p_batch json, p_serialize boolean default false)
      returns table (item integer, ok boolean, last_revision bigint, transaction_id xid8, last_position bigint)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        v_item record;
        v_count integer;
        v_current bigint;
        v_last_position bigint;
        v_tx xid8 := pg_current_xact_id();
      begin
        if p_serialize then
          perform pg_advisory_xact_lock(7239001);
        end if;
        for v_item in
          select b.stream, b.expected, b.events, b.ord
            from rows from (json_to_recordset(p_batch) as ("stream" text, "expected" text, "events" json))
                 with ordinality as b(stream, expected, events, ord)
           order by b.ord
        loop
          ${lockStreamAndCheck('v_item.stream', 'v_item.expected', `return query select (v_item.ord - 1)::integer, false, v_current, v_tx, null::bigint;
          continue;`)}
          ${insertEvents('v_item.stream', 'v_item.events')}
          return query select (v_item.ord - 1)::integer, true, v_current + v_count, v_tx, v_last_position;
        end loop;
      end $$;
`;

/**
 * The log stores data and metadata as json, not jsonb: the text as the adapter wrote it (compact
 * JSON.stringify), checked on insert but not converted to jsonb's binary form and back on every
 * read. The log is never queried inside its JSON, and that conversion was most of PostgreSQL's
 * work in reading it back. The append functions take json from now on (the adapter sends
 * `::json`) and read each argument once (json_to_recordset), as json has no parsed form to look
 * fields up in. The jsonb versions stay for a process still running the previous code
 * (PostgreSQL converts jsonb to json on insert); es_replay's json version calls its jsonb one.
 */
export const jsonEventsMigration = {
  name: '0022_event_store_json_columns',
  async up(knex: Knex) {
    await knex.raw(`
      alter table es_events alter column data type json using data::json, alter column metadata type json using metadata::json;

      create or replace function es_append(p_stream text, p_expected text, p_events json, p_serialize boolean default false)
      returns table (last_revision bigint, transaction_id xid8, last_position bigint, replayed boolean)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        v_count integer;
        v_current bigint;
        v_last_position bigint;
      begin
        if p_serialize then
          perform pg_advisory_xact_lock(7239001);
        end if;
        ${lockStreamAndCheck('p_stream', 'p_expected', `raise exception 'wrong expected version for stream %', p_stream
          using errcode = '${WRONG_EXPECTED_VERSION_SQLSTATE}', detail = v_current::text;`)}
        ${insertEvents('p_stream', 'p_events')}
        return query select v_current + v_count, pg_current_xact_id(), v_last_position, false;
      end $$;

      create or replace function es_replay(p_stream text, p_events json)
      returns table (last_revision bigint, transaction_id xid8, last_position bigint, replayed boolean)
      language sql as $$ select * from es_replay(p_stream, p_events::jsonb) $$;

${appendBatchJson}    `);
  },
  async down(knex: Knex) {
    await knex.raw(`
      drop function if exists es_append(text, text, json, boolean);
      drop function if exists es_replay(text, json);
      drop function if exists es_append_batch(json, boolean);
      alter table es_events alter column data type jsonb using data::jsonb, alter column metadata type jsonb using metadata::jsonb;
    `);
  },
};

/**
 * Multi-stream append (issue 13): several streams, each with its own expected revision, in one
 * transaction: every part is written or none is. The parts are locked in stream-id order (as the
 * group-commit batches lock theirs), so two multi-stream appends cannot deadlock on each other.
 * A wrong expected revision raises ES409 with the stream's revision as detail and the stream id
 * as hint, and rolls the whole append back. One row per part, `item` its 0-based index in p_parts.
 */
const appendMulti = `
  create or replace function es_append_multi(p_parts json, p_serialize boolean default false)
  returns table (item integer, last_revision bigint, transaction_id xid8, last_position bigint)
  language plpgsql as $$
  #variable_conflict use_column
  declare
    v_item record;
    v_count integer;
    v_current bigint;
    v_last_position bigint;
    v_tx xid8 := pg_current_xact_id();
  begin
    if p_serialize then
      perform pg_advisory_xact_lock(7239001);
    end if;
    for v_item in
      select b.stream, b.expected, b.events, b.ord
        from rows from (json_to_recordset(p_parts) as ("stream" text, "expected" text, "events" json))
             with ordinality as b(stream, expected, events, ord)
       order by b.stream collate "C", b.ord
    loop
      ${lockStreamAndCheck('v_item.stream', 'v_item.expected', `raise exception 'wrong expected version for stream %', v_item.stream
        using errcode = '${WRONG_EXPECTED_VERSION_SQLSTATE}', detail = v_current::text, hint = v_item.stream;`)}
      ${insertEvents('v_item.stream', 'v_item.events')}
      return query select (v_item.ord - 1)::integer, v_current + v_count, v_tx, v_last_position;
    end loop;
  end $$;
`;

export const appendMultiMigration = {
  name: '0035_event_store_append_multi',
  async up(knex: Knex) {
    await knex.raw(appendMulti);
  },
  async down(knex: Knex) {
    await knex.raw('drop function if exists es_append_multi(json, boolean)');
  },
};

export const ARTIFACT_HASH_CONSTRAINT = 'es_artifacts_content_hash';

/**
 * Artifacts stored once (issue 19): the e-invoice XML and the Tax Data Document, keyed by the
 * SHA-256 of their bytes, which the table itself checks on insert (since migration 0070, for the
 * bytes stored as they are; the store compresses the others after checking them). Append-only
 * like es_events (the same refusing triggers). The adapter writes an append's artifacts in the
 * statement, and so the transaction, of its events; an event names an artifact by its hash.
 */
export const artifactsMigration = {
  name: '0060_event_store_artifacts',
  async up(knex: Knex) {
    await knex.raw(`
      create table es_artifacts (
        hash text primary key,
        content bytea not null,
        recorded_at timestamptz not null default clock_timestamp(),
        constraint ${ARTIFACT_HASH_CONSTRAINT} check (hash = encode(sha256(content), 'hex'))
      );
      create trigger es_artifacts_append_only before update or delete on es_artifacts
        for each row execute function es_refuse_change();
      create trigger es_artifacts_no_truncate before truncate on es_artifacts
        for each statement execute function es_refuse_change();
    `);
  },
  async down(knex: Knex) {
    await knex.raw('drop table if exists es_artifacts');
  },
};

/**
 * Artifacts compressed by the store (artifact-encoding.ts): the encoding of the stored bytes
 * (`identity` for every row written before), the hash check kept for bytes stored as they are, and
 * no compression of PostgreSQL's own on the column (storage EXTERNAL: out of line, as they come).
 * Metadata only: no row is rewritten, and the rows written before keep their TOAST compression.
 * The check constraints are added NOT VALID: they hold for every row written from now on, and the
 * rows before were checked on insert (reading them all again at start-up would take minutes on a
 * large store). Going down is refused once compressed rows exist (their bytes need the store).
 */
export const artifactsEncodingMigration = {
  name: '0070_event_store_artifacts_encoding',
  async up(knex: Knex) {
    await knex.raw(`
      alter table es_artifacts add column encoding text not null default 'identity';
      alter table es_artifacts drop constraint ${ARTIFACT_HASH_CONSTRAINT};
      alter table es_artifacts add constraint ${ARTIFACT_HASH_CONSTRAINT}
        check (encoding <> 'identity' or hash = encode(sha256(content), 'hex')) not valid;
      alter table es_artifacts add constraint es_artifacts_encoding check (encoding in ('identity', 'br')) not valid;
      alter table es_artifacts alter column content set storage external;
    `);
  },
  async down(knex: Knex) {
    const { rows } = await knex.raw(`select exists (select 1 from es_artifacts where encoding <> 'identity') as packed`);
    if (rows[0].packed) throw new Error('es_artifacts holds compressed artifacts: migration 0070 cannot be undone');
    await knex.raw(`
      alter table es_artifacts drop constraint es_artifacts_encoding;
      alter table es_artifacts drop constraint ${ARTIFACT_HASH_CONSTRAINT};
      alter table es_artifacts add constraint ${ARTIFACT_HASH_CONSTRAINT} check (hash = encode(sha256(content), 'hex')) not valid;
      alter table es_artifacts alter column content set storage extended;
      alter table es_artifacts drop column encoding;
    `);
  },
};

/**
 * A new stream's row written once (es_append_multi and es_append_batch). Before, a part whose
 * stream did not exist looked its row up, inserted it at revision -1, locked it, appended the
 * events and updated the row to its new revision: two more WAL records (the lock and the update)
 * for every new stream, and a received purchase appends five new streams. Now a part that may
 * create its stream (`any` or `no_stream`: the ones a missing stream satisfies) inserts the
 * row at the revision the append leaves it at; when the insert finds the row there (another
 * transaction's, waited for as before), the part locks and checks it as before. Any other part
 * (`stream_exists`, a revision ≥ 0) also goes the old way, so a batch item that does not hold
 * still leaves the stream as it found it (missing, or at -1 as before).
 *
 * A `no_stream` part tries the insert first (its stream nearly always is new); the others look the
 * row up first, as before.
 */
const createsStream = (expected: string) => `(${expected} in ('any', 'no_stream'))`;

const lockOrCreateStreamAndCheck = (stream: string, expected: string, events: string, mismatch: string) => `
      v_created := false;
      if ${expected} = 'no_stream' then
        v_found := false;
      else
        select s.revision into v_current from es_streams s where s.stream_id = ${stream} for update;
        v_found := found;
      end if;
      if not v_found then
        if ${createsStream(expected)} then
          insert into es_streams as s (stream_id, revision) values (${stream}, json_array_length(${events}) - 1) on conflict (stream_id) do nothing;
          v_created := found;
        else
          insert into es_streams as s (stream_id, revision) values (${stream}, -1) on conflict (stream_id) do nothing;
        end if;
        if v_created then
          v_current := -1;
        else
          select s.revision into v_current from es_streams s where s.stream_id = ${stream} for update;
        end if;
      end if;
      if (${expected} = 'no_stream' and v_current <> -1)
         or (${expected} = 'stream_exists' and v_current = -1)
         or (${expected} not in ('any', 'no_stream', 'stream_exists') and v_current <> ${expected}::bigint) then
        ${mismatch}
      end if;`;

/** insertEvents without the row's update when the append created the stream at its final revision. */
const insertEventsOnce = (stream: string, events: string) => `${insertEventRows(stream, events)}
      if not v_created then
        update es_streams s set revision = v_current + v_count where s.stream_id = ${stream};
      end if;`;

const newStreamRowsOnce = `
  create or replace function es_append_multi(p_parts json, p_serialize boolean default false)
  returns table (item integer, last_revision bigint, transaction_id xid8, last_position bigint)
  language plpgsql as $$
  #variable_conflict use_column
  declare
    v_item record;
    v_count integer;
    v_current bigint;
    v_last_position bigint;
    v_found boolean;
    v_created boolean;
    v_tx xid8 := pg_current_xact_id();
  begin
    if p_serialize then
      perform pg_advisory_xact_lock(7239001);
    end if;
    for v_item in
      select b.stream, b.expected, b.events, b.ord
        from rows from (json_to_recordset(p_parts) as ("stream" text, "expected" text, "events" json))
             with ordinality as b(stream, expected, events, ord)
       order by b.stream collate "C", b.ord
    loop
      ${lockOrCreateStreamAndCheck('v_item.stream', 'v_item.expected', 'v_item.events', `raise exception 'wrong expected version for stream %', v_item.stream
        using errcode = '${WRONG_EXPECTED_VERSION_SQLSTATE}', detail = v_current::text, hint = v_item.stream;`)}
      ${insertEventsOnce('v_item.stream', 'v_item.events')}
      return query select (v_item.ord - 1)::integer, v_current + v_count, v_tx, v_last_position;
    end loop;
  end $$;

  create or replace function es_append_batch(p_batch json, p_serialize boolean default false)
  returns table (item integer, ok boolean, last_revision bigint, transaction_id xid8, last_position bigint)
  language plpgsql as $$
  #variable_conflict use_column
  declare
    v_item record;
    v_count integer;
    v_current bigint;
    v_last_position bigint;
    v_found boolean;
    v_created boolean;
    v_tx xid8 := pg_current_xact_id();
  begin
    if p_serialize then
      perform pg_advisory_xact_lock(7239001);
    end if;
    for v_item in
      select b.stream, b.expected, b.events, b.ord
        from rows from (json_to_recordset(p_batch) as ("stream" text, "expected" text, "events" json))
             with ordinality as b(stream, expected, events, ord)
       order by b.ord
    loop
      ${lockOrCreateStreamAndCheck('v_item.stream', 'v_item.expected', 'v_item.events', `return query select (v_item.ord - 1)::integer, false, v_current, v_tx, null::bigint;
          continue;`)}
      ${insertEventsOnce('v_item.stream', 'v_item.events')}
      return query select (v_item.ord - 1)::integer, true, v_current + v_count, v_tx, v_last_position;
    end loop;
  end $$;
`;

export const newStreamRowsOnceMigration = {
  name: '0150_event_store_new_stream_rows_once',
  async up(knex: Knex) {
    await knex.raw(newStreamRowsOnce);
  },
  async down(knex: Knex) {
    await appendMultiMigration.up(knex);
    await knex.raw(appendBatchJson);
  },
};
