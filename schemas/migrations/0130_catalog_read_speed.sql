-- Catalog reads at speed (docs/catalog.md, "Read models" and "Benchmark").

-- A show's topics minus those its episodes carry: looked up by (show, topic), not by hashing all rows.
-- Built first: its lock holds off the catalog_episodes projection's writes until this migration
-- commits, so the topic shares filled below miss none (reads go on).
create index catalog_episode_topics_podcast_topic on catalog_episode_topics (podcast_id, topic_id);

-- The shows q may name by title (0053), with the "at least half of the title's words in q" test as
-- a join over the title's words: the same shows, without a subquery per show sharing a word (a
-- word common in titles made that 20 ms).
create or replace function podcast_title_candidates(q text, words text[], all_words text[]) returns setof text
language sql stable
set enable_seqscan = off
set pg_trgm.similarity_threshold = 0.4
as $$
  select id from podcasts where search_title % q
  union select id from podcasts where q <% search_title
  union select p.id from podcasts p cross join lateral unnest(p.search_words) w
         where p.search_words && words and w = any(all_words)
         group by p.id
        having 2 * count(distinct w) >= max(cardinality(p.search_words))
$$;

-- The ancestries a topic_id can name to match a topic: each topic's own and every one above it
-- ('technology/ai/agents' → technology, technology/ai, technology/ai/agents). Built-in functions
-- only: index expressions are evaluated with a search_path of pg_catalog alone.
create function topic_prefixes(ancestries text[]) returns text[]
language sql immutable parallel safe
as $$
  select coalesce(array_agg(distinct prefix), '{}')
    from unnest(ancestries) a,
         lateral (select left(a, i - 1) from generate_series(1, length(a)) i where substr(a, i, 1) = '/'
                  union all select a) as p(prefix)
$$;

-- The ancestries of a show's declared topics (podcasts.topics), as an episode's are taken.
create function declared_topic_ancestries(topics jsonb) returns text[]
language sql immutable parallel safe
as $$
  select array(select coalesce(d->>'ancestry', d->>'slug', d->>'id') from jsonb_array_elements(coalesce(topics, '[]')) d)
$$;
create index podcasts_declared_topic_prefixes on podcasts
  using gin (topic_prefixes(declared_topic_ancestries(topics)));
create index podcasts_topics on podcasts using gin (topics jsonb_path_ops);

-- Projection "catalog_episodes": per show and ancestry, the episodes with a topic at or below it,
-- so topic_id reads each show's share from one row instead of counting its episodes' topics.
create table podcast_topic_shares (
  ancestry text not null,
  podcast_id text not null,
  episode_count integer not null,
  primary key (ancestry, podcast_id)
);
create index podcast_topic_shares_podcast on podcast_topic_shares (podcast_id);
insert into podcast_topic_shares (ancestry, podcast_id, episode_count)
select prefix, t.podcast_id, count(distinct t.episode_id)
  from catalog_episode_topics t, unnest(topic_prefixes(array[t.ancestry])) prefix
 group by prefix, t.podcast_id;

-- When a time-derived value (episodes per week, publishing status, briefly tracked) next changes:
-- the response cache keeps an answer until then at most (docs/catalog.md, "Response cache").
create index podcast_format_episodes_published on podcast_format_episodes (published_at);
create index podcast_formats_first_episode on podcast_formats (first_episode_published_at);

-- GIN indexes the catalog searches through take each new entry straight into the index. With the
-- default pending list, a bulk ingest leaves thousands of unsorted entries that every search scans
-- until a vacuum merges them (a pasted-title search took 13 ms instead of 0.1 ms).
-- Last, because changing fastupdate and dropping an index lock out every read of their tables until
-- this migration commits; the pending lists are merged before (the long part) and after (what came
-- in meanwhile).
select gin_clean_pending_list('podcasts_search_title_trgm'::regclass),
       gin_clean_pending_list('podcasts_description_fts'::regclass),
       gin_clean_pending_list('podcasts_search_words'::regclass),
       gin_clean_pending_list('catalog_episodes_title_words'::regclass),
       gin_clean_pending_list('catalog_episodes_entity_ids'::regclass);
alter index podcasts_search_title_trgm set (fastupdate = off);
alter index podcasts_description_fts set (fastupdate = off);
alter index podcasts_search_words set (fastupdate = off);
alter index catalog_episodes_title_words set (fastupdate = off);
alter index catalog_episodes_entity_ids set (fastupdate = off);
select gin_clean_pending_list('podcasts_search_title_trgm'::regclass),
       gin_clean_pending_list('podcasts_description_fts'::regclass),
       gin_clean_pending_list('podcasts_search_words'::regclass),
       gin_clean_pending_list('catalog_episodes_title_words'::regclass),
       gin_clean_pending_list('catalog_episodes_entity_ids'::regclass);
drop index catalog_episode_topics_podcast;
