-- A topic counts under its whole ancestry and under the first 8 levels above it (docs/catalog.md,
-- "Topics"). Every level used to count: one episode with 200 topics of 150-level ancestries (within
-- the schema) gave its show 29,901 list rows and as many topic shares, which every later episode of
-- the show computed again (7–9 s of the catalog projections a batch, shared by every tenant).
create or replace function topic_prefixes(ancestries text[]) returns text[]
language sql immutable parallel safe
as $$
  select coalesce(array_agg(distinct prefix), '{}')
    from unnest(ancestries) a,
         lateral (select string_to_array(a, '/') as parts) s,
         lateral (select array_to_string(s.parts[1:n], '/')
                    from generate_series(1, least(cardinality(s.parts) - 1, 8)) n
                  union all select a) as p(prefix)
   where prefix <> ''
$$;
reindex index podcasts_declared_topic_prefixes;

-- Shows with an ancestry deeper than 9 levels count their shares again (the trigger on the shares
-- refreshes their list rows); shows with such a declared topic refresh their list rows.
create temporary table deep_topic_shows on commit drop as
  select distinct podcast_id as id from catalog_episode_topics where cardinality(string_to_array(ancestry, '/')) > 9;
select lock_podcast_list(array(select id from deep_topic_shows));
delete from podcast_topic_shares where podcast_id in (select id from deep_topic_shows);
insert into podcast_topic_shares (ancestry, podcast_id, episode_count)
select prefix, t.podcast_id, count(distinct t.episode_id)
  from catalog_episode_topics t, unnest(topic_prefixes(array[t.ancestry])) prefix
 where t.podcast_id in (select id from deep_topic_shows)
 group by prefix, t.podcast_id;
select refresh_podcast_list(array(
  select id from podcasts
   where exists (select 1 from unnest(declared_topic_ancestries(topics)) a
                  where cardinality(string_to_array(a, '/')) > 9)));
