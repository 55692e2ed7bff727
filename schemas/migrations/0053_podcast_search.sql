-- Forgiving podcast search from indexes only (docs/catalog.md, "Forgiving search").
alter table podcasts add column search_words text[] generated always as (string_to_array(search_title, ' ')) stored;
create index podcasts_search_words on podcasts using gin (search_words);

-- The shows q may name by title: trigram-similar either way round, or sharing a distinctive word
-- with at least half of the title's words in q (a query with extra words: the title is inside q).
-- Scored by the caller. As with entity_fuzzy_matches, the planner prices trigram operators as
-- cheap and would seq-scan; the function pins the index plans.
create function podcast_title_candidates(q text, words text[], all_words text[]) returns setof text
language sql stable
set enable_seqscan = off
set pg_trgm.similarity_threshold = 0.4
as $$
  select id from podcasts where search_title % q
  union select id from podcasts where q <% search_title
  union select id from podcasts
         where search_words && words
           and 2 * cardinality(array(select unnest(search_words) intersect select unnest(all_words)))
               >= cardinality(search_words)
$$;

-- The shows with an episode whose title holds every word of q and is at least min_similarity
-- similar to it (a pasted episode title). Words, not trigrams: a long q's trigrams are in most
-- episode titles, its words in few.
create index catalog_episodes_title_words on catalog_episodes using gin (to_tsvector('simple', search_title));

create function podcast_episode_title_matches(q text, min_similarity real)
returns table (podcast_id text, score real)
language sql stable
set enable_seqscan = off
as $$
  select e.podcast_id, max(similarity(e.search_title, q))
    from catalog_episodes e
   where to_tsvector('simple', e.search_title) @@ plainto_tsquery('simple', q)
     and similarity(e.search_title, q) >= min_similarity
   group by e.podcast_id
$$;
