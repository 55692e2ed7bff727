-- What changed in the list read model (0221) since a reader last looked, for the list index each api
-- process keeps (docs/catalog.md, "The list index"): every row carries the transaction that wrote it
-- (a refresh writes all of a show's rows again, in one transaction), and a show deleted from
-- `podcasts` (a rebuild's reset) leaves a note with the transaction that deleted it. A reader that
-- saw the snapshot S reads again the shows written by transactions S did not see (all at or after
-- S's xmin; 64-bit ids: they never come round again).
alter table podcast_list add column changed xid8 not null default pg_current_xact_id();
create index podcast_list_changed on podcast_list (changed);

create table podcast_list_removed (
  podcast_id text primary key,
  changed xid8 not null
);
create index podcast_list_removed_changed on podcast_list_removed (changed);

create function note_podcasts_removed() returns trigger
language plpgsql
as $$
begin
  insert into podcast_list_removed (podcast_id, changed)
  select distinct id, pg_current_xact_id() from removed
  on conflict (podcast_id) do update set changed = excluded.changed;
  return null;
end
$$;

create trigger podcast_list_removed_podcasts after delete on podcasts
  referencing old table as removed for each statement execute function note_podcasts_removed();
