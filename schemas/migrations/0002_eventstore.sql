-- The event store (docs/event-store.md): one append-only table read in (transaction_id,
-- global_position) order below the oldest running transaction, one lockable row per stream, and
-- the checkpoints of the projections built from it.

-- Writers of one stream lock its row. transaction_id is the last appender's xid: a writer whose
-- own xid is older must not append after it, or "all" would list the stream's revisions out of order.
create table streams (
  stream_id text primary key,
  revision bigint not null default -1,
  transaction_id xid8
);

create table events (
  global_position bigint generated always as identity,
  transaction_id xid8 not null default pg_current_xact_id(),
  stream_id text not null,
  stream_revision bigint not null,
  event_id text not null,
  type text not null,
  data jsonb not null,
  metadata jsonb not null default '{}',
  recorded_at timestamptz not null default now(),
  primary key (transaction_id, global_position),
  constraint events_event_id_key unique (event_id),
  constraint events_stream_revision_key unique (stream_id, stream_revision)
);
-- readAll with eventTypes: one ordered index range per type, merged.
create index events_type on events (type, transaction_id, global_position);

-- One call appends a batch: lock the stream, skip a batch whose ids are all stored (a retry),
-- check the expected revision, insert, notify. Returns a status instead of raising for the
-- outcomes a caller handles, so a caller's own transaction stays usable.
-- p_expected: 'any' | 'no_stream' | 'stream_exists' | 'exact' (p_expected_revision).
-- p_notify: NOTIFY inside the transaction. A notifying commit holds a cluster-wide lock through
-- its WAL flush, which serialises such commits, so the adapter's own appends notify right after
-- commit instead and only appends inside a caller's transaction notify here.
create function append_events(
  p_stream_id text,
  p_expected text,
  p_expected_revision bigint,
  p_event_ids text[],
  p_types text[],
  p_data jsonb[],
  p_metadata jsonb[],
  p_notify boolean
) returns table (status text, revision bigint, transaction_id text, global_position bigint)
language plpgsql as $$
#variable_conflict use_column
declare
  v_count integer := cardinality(p_event_ids);
  v_revision bigint;
  v_last_xid xid8;
  v_stored integer;
  v_inserted integer;
  v_last_position bigint;
begin
  insert into streams as s (stream_id) values (p_stream_id) on conflict (stream_id) do nothing;
  select s.revision, s.transaction_id into v_revision, v_last_xid
    from streams s where s.stream_id = p_stream_id for update;

  select count(*) into v_stored from events e where e.event_id = any (p_event_ids);
  if v_stored = v_count then
    return query select 'duplicate'::text, e.stream_revision, e.transaction_id::text, e.global_position
      from events e where e.event_id = p_event_ids[v_count];
    return;
  elsif v_stored > 0 then
    return query select 'partial_duplicate'::text, v_revision, null::text, null::bigint;
    return;
  end if;

  if (p_expected = 'no_stream' and v_revision <> -1)
     or (p_expected = 'stream_exists' and v_revision = -1)
     or (p_expected = 'exact' and v_revision <> p_expected_revision) then
    return query select 'wrong_revision'::text, v_revision, null::text, null::bigint;
    return;
  end if;

  if v_last_xid is not null and v_last_xid > pg_current_xact_id() then
    return query select 'reordered'::text, v_revision, null::text, null::bigint;
    return;
  end if;

  -- A concurrent append of the same ids to another stream commits first: skip them, then decide.
  with inserted as (
    insert into events (stream_id, stream_revision, event_id, type, data, metadata)
      select p_stream_id, v_revision + u.n, u.event_id, u.type, u.data, u.metadata
        from unnest(p_event_ids, p_types, p_data, p_metadata) with ordinality
          as u(event_id, type, data, metadata, n)
      on conflict (event_id) do nothing
      returning events.global_position
  )
  select count(*), max(i.global_position) into v_inserted, v_last_position from inserted i;
  if v_inserted = 0 then
    return query select 'duplicate'::text, e.stream_revision, e.transaction_id::text, e.global_position
      from events e where e.event_id = p_event_ids[v_count];
    return;
  elsif v_inserted < v_count then
    raise exception 'some event ids of this batch were stored concurrently by another append'
      using errcode = '23505', constraint = 'events_event_id_key';
  end if;

  update streams s set revision = v_revision + v_count, transaction_id = pg_current_xact_id()
    where s.stream_id = p_stream_id;
  if p_notify then
    perform pg_notify('earshot_events', '');
  end if;
  return query select 'appended'::text, v_revision + v_count, pg_current_xact_id()::text, v_last_position;
end
$$;

create table projection_checkpoints (
  name text primary key,
  position text not null,
  updated_at timestamptz not null default now()
);
