-- The list read model's locks (0223) were keyed (221, bucket): advisory locks belong to the
-- database, not to a schema, so installations in different schemas of one database (and test files)
-- waited for each other's refreshes of unrelated shows of the same bucket, and a rebuild in one held
-- up the list refreshes of all. Now the first key is the schema's, as the names of the other
-- advisory locks include it (docs/operations.md, "Roles"); within a schema the buckets are still
-- taken in one order, so two such statements still never deadlock.
-- A batch that began before this migration may hold the old keys while a later one takes the new:
-- the list's sources are first locked against writes (SHARE ROW EXCLUSIVE) until the commit, which
-- waits out every batch that wrote one of them; a batch that wrote none yet refreshes after the
-- commit, under the new keys.
lock table podcasts, podcast_formats, podcast_topic_shares in share row exclusive mode;

create or replace function lock_podcast_list(ids text[]) returns void
language sql
as $$
  select count(pg_advisory_xact_lock(hashtext(current_schema() || ':podcast_list'), bucket))
    from (select distinct hashtext(id) & 1023 as bucket from unnest(ids) id order by 1) b;
$$;
