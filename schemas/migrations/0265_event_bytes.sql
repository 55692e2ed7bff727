-- Each event's size as appended (its data and metadata as JSON text, in bytes), so that a page of
-- "all" stops at a byte budget (docs/event-store.md, "Pages by size"): by count alone, a page of
-- the largest events the schemas accept held gigabytes in the memory of each reader at once.
-- Events appended before this migration have none; a read counts their stored size instead.
alter table events add column data_bytes integer;

create function events_data_bytes() returns trigger
language plpgsql
as $$
begin
  new.data_bytes := octet_length(new.data::text) + octet_length(new.metadata::text);
  return new;
end
$$;

create trigger events_data_bytes before insert on events
  for each row execute function events_data_bytes();
