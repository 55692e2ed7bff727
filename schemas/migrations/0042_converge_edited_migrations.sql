-- Brings a database migrated before 0002, 0003 and 0030 were last edited to the state those files
-- now create (docs/operations.md, "Migrations"). Every statement is idempotent: on a database
-- migrated with the current files it changes nothing. Migrations are never edited again; a
-- change to the schema is a new file.

-- 0002: events store json, not jsonb (rewrites the table once on an older database).
do $$
begin
  if exists (select 1 from information_schema.columns
              where table_schema = current_schema() and table_name = 'events'
                and column_name = 'data' and data_type = 'jsonb') then
    alter table events alter column metadata drop default;
    alter table events alter column data type json using data::json,
                       alter column metadata type json using metadata::json;
    alter table events alter column metadata set default '{}';
  end if;
end
$$;
do $$
begin
  alter table events alter column data set compression lz4, alter column metadata set compression lz4;
exception when feature_not_supported then
  null;
end
$$;

-- 0002: append_events takes JSON arrays now; the jsonb[] overload goes.
do $$
begin
  execute format('drop function if exists %I.append_events(text, text, bigint, text[], text[], jsonb[], jsonb[], boolean)',
                 current_schema());
end
$$;

-- One call appends a batch: lock the stream, skip a batch whose ids are all stored (a retry),
-- check the expected revision, insert, notify. Returns a status instead of raising for the
-- outcomes a caller handles, so a caller's own transaction stays usable.
-- p_expected: 'any' | 'no_stream' | 'stream_exists' | 'exact' (p_expected_revision). p_data and
-- p_metadata are JSON arrays, one element per event.
-- p_notify: NOTIFY inside the transaction. A notifying commit holds a cluster-wide lock through
-- its WAL flush, which serialises such commits, so the adapter's own appends notify right after
-- commit instead and only appends inside a caller's transaction notify here.
create or replace function append_events(
  p_stream_id text,
  p_expected text,
  p_expected_revision bigint,
  p_event_ids text[],
  p_types text[],
  p_data json,
  p_metadata json,
  p_notify boolean
) returns table (status text, revision bigint, transaction_id text, global_position bigint)
-- Planned for each call: a plan cached while the table was small keeps scanning it whole for the
-- duplicate check as it grows.
language plpgsql set plan_cache_mode = force_custom_plan as $$
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
        from rows from (unnest(p_event_ids), unnest(p_types), json_array_elements(p_data),
                        json_array_elements(p_metadata)) with ordinality
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

-- Many appends in one call and one transaction, all or nothing (docs/event-store.md, appendMany).
-- Appends are described by p_stream_ids, p_expected and p_expected_revisions, in input order;
-- events by p_appends (1-based index of their append; an append's events are contiguous),
-- p_event_streams (their append's stream), p_event_ids, p_types and the JSON arrays p_data and
-- p_metadata, in input order, which is also their order in "all". Returns one row per append, in
-- input order. Each append is decided as append_events decides it, after the appends before it in
-- the call (several may target one stream); when any is refused (partial_duplicate,
-- wrong_revision, reordered) nothing is written. Never notifies: only standalone appends call it,
-- and the adapter notifies after commit. Text arrays are only unnested, never subscripted (a
-- subscript walks the array).
create or replace function append_events_many(
  p_stream_ids text[],
  p_expected text[],
  p_expected_revisions bigint[],
  p_appends integer[],
  p_event_streams text[],
  p_event_ids text[],
  p_types text[],
  p_data json,
  p_metadata json
) returns table (status text, revision bigint, transaction_id text, global_position bigint)
-- Planned for each call: a plan cached while the table was small keeps scanning it whole for the
-- duplicate check as it grows.
language plpgsql set plan_cache_mode = force_custom_plan as $$
#variable_conflict use_column
declare
  v_xid xid8 := pg_current_xact_id();
  -- Per append, in input order.
  v_status text[];
  v_revision bigint[];
  v_count bigint[];
  v_stored_xid text[];
  v_stored_position bigint[];
  v_writes boolean[];
  v_offset bigint[]; -- added to an event's ordinal in the call, gives its revision
  v_to_insert bigint;
  v_refused boolean;
  -- Positions of the inserted events, in input order.
  v_positions bigint[];
  v_inserted bigint;
begin
  -- Lock every stream, creating the missing ones, in one order for every writer: no deadlock. The
  -- rows this transaction just created are its own already; locking them again would only log.
  insert into streams as s (stream_id)
    select distinct u.stream_id collate "C" from unnest(p_stream_ids) as u(stream_id) order by 1
    on conflict (stream_id) do nothing;
  perform from streams s where s.stream_id = any (p_stream_ids) and s.xmin <> v_xid::xid
    order by s.stream_id collate "C" for update;

  -- A new statement, so a new snapshot: it sees what the writers waited for above committed.
  with probed as (
    select u.a, u.ord, e.event_id is not null as stored, e.stream_revision, e.transaction_id,
           e.global_position, lead(u.a) over (order by u.ord) is distinct from u.a as last
      from unnest(p_appends, p_event_ids) with ordinality as u(a, event_id, ord)
      left join events e on e.event_id = u.event_id
  ), counted as (
    -- A duplicate reports where its last event is stored.
    select c.a, count(*) as n, count(*) filter (where c.stored) as n_stored, min(c.ord) as first_ord,
           max(c.stream_revision) filter (where c.last) as stored_revision,
           max(c.transaction_id::text) filter (where c.last) as stored_xid,
           max(c.global_position) filter (where c.last) as stored_position
      from probed c
      group by c.a
  ), placed as (
    -- Revision before each append: the stream's, plus the events of the call's earlier appends to
    -- it that write (a duplicate writes nothing; any other outcome refuses the whole call).
    select ap.a, ap.expected, ap.expected_revision, c.n, c.n_stored, c.first_ord, c.stored_revision,
           c.stored_xid, c.stored_position, s.transaction_id as stream_xid,
           s.revision + coalesce(sum(c.n) filter (where c.n_stored = 0) over (
             partition by ap.stream_id collate "C" order by ap.a
             rows between unbounded preceding and 1 preceding), 0) as before
      from unnest(p_stream_ids, p_expected, p_expected_revisions) with ordinality
             as ap(stream_id, expected, expected_revision, a)
      join counted c on c.a = ap.a
      join streams s on s.stream_id = ap.stream_id
  ), decided as (
    select p.*,
      case
        when p.n_stored = p.n then 'duplicate'
        when p.n_stored > 0 then 'partial_duplicate'
        when (p.expected = 'no_stream' and p.before <> -1)
          or (p.expected = 'stream_exists' and p.before = -1)
          or (p.expected = 'exact' and p.before <> p.expected_revision) then 'wrong_revision'
        when p.stream_xid is not null and p.stream_xid > v_xid then 'reordered'
        else 'appended'
      end as status
      from placed p
  )
  select array_agg(d.status order by d.a),
         array_agg(case d.status
                     when 'appended' then d.before + d.n
                     when 'duplicate' then d.stored_revision
                     else d.before end order by d.a),
         array_agg(d.n order by d.a),
         array_agg(d.stored_xid order by d.a),
         array_agg(d.stored_position order by d.a),
         array_agg(d.status = 'appended' order by d.a),
         array_agg(d.before + 1 - d.first_ord order by d.a),
         coalesce(sum(d.n) filter (where d.status = 'appended'), 0),
         coalesce(bool_or(d.status not in ('appended', 'duplicate')), false)
    into v_status, v_revision, v_count, v_stored_xid, v_stored_position, v_writes, v_offset,
         v_to_insert, v_refused
    from decided d;

  if v_refused then
    return query select u.status, u.revision, null::text, null::bigint
      from unnest(v_status, v_revision) as u(status, revision);
    return;
  end if;

  -- One pass over the events in input order, no join and no sort: identities follow input order.
  with inserted as (
    insert into events (stream_id, stream_revision, event_id, type, data, metadata)
      select u.stream_id, v_offset[u.a] + u.ord, u.event_id, u.type, u.data, u.metadata
        from rows from (unnest(p_appends), unnest(p_event_streams), unnest(p_event_ids), unnest(p_types),
                        json_array_elements(p_data), json_array_elements(p_metadata)) with ordinality
               as u(a, stream_id, event_id, type, data, metadata, ord)
        where v_writes[u.a]
      -- A concurrent call stored one of these ids first: skipped here, counted below.
      on conflict (event_id) do nothing
      returning events.global_position
  )
  select array_agg(i.global_position order by i.global_position), count(*)
    into v_positions, v_inserted
    from inserted i;
  if v_inserted < v_to_insert then
    raise exception 'some event ids of this batch were stored concurrently by another append'
      using errcode = '23505', constraint = 'events_event_id_key';
  end if;

  update streams s set revision = w.last_revision, transaction_id = v_xid
    from (select u.stream_id, max(u.revision) as last_revision
            from unnest(p_stream_ids, v_writes, v_revision) as u(stream_id, writes, revision)
            where u.writes
            group by u.stream_id) w
    where s.stream_id = w.stream_id;

  return query select u.status, u.revision,
      case when u.writes then v_xid::text else u.stored_xid end,
      case when u.writes
        then v_positions[sum(u.n) filter (where u.writes) over (order by u.k)]
        else u.stored_position end
    from unnest(v_status, v_revision, v_writes, v_count, v_stored_xid, v_stored_position) with ordinality
      as u(status, revision, writes, n, stored_xid, stored_position, k)
    order by u.k;
end
$$;

-- 0003: search reads entity_names and the ticker and domain indexes; the array and name-prefix
-- indexes it no longer uses go.
do $$
begin
  execute format('drop index if exists %I.entities_search_names', current_schema());
  execute format('drop index if exists %I.entities_name_prefix', current_schema());
end
$$;
create index if not exists entities_ticker on entities (lower(company->>'ticker'));
create index if not exists entities_domain on entities (lower(company->>'domain'));

create table if not exists entity_names (
  entity_id text not null references entities (id) on delete cascade,
  name text not null,
  primary key (entity_id, name)
);
create index if not exists entity_names_name on entity_names (name text_pattern_ops);
-- What the entities projection would have written: one row per folded name of each entity.
insert into entity_names (entity_id, name)
  select distinct e.id, n.name from entities e, unnest(e.search_names) as n(name)
  on conflict do nothing;


-- The ids of entities whose search_text is trigram-similar to q, best first, at most n.
-- The planner prices the trigram operators as cheap and seq-scans once a query matches a few
-- percent of rows, which costs ~10x the GIN bitmap scan; a function can pin the plan.
create or replace function entity_fuzzy_matches(q text, type_filter text, n int) returns setof text
language sql stable
set enable_seqscan = off
as $$
  select e.id from entities e
   where (e.search_text % q or q <% e.search_text)
     and (type_filter is null or e.entity_type = type_filter)
   order by similarity(e.search_text, q) desc, e.name, e.id
   limit n
$$;

-- 0030: closing a digest window finds the alerts with matches in it by time alone.
create index if not exists delivery_match_copies_window on delivery_match_copies (digest_cadence, detected_at)
  where digest_cadence is not null;
