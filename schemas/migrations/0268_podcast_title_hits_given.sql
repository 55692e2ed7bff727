-- A search's title matches found and scored in the api process (docs/catalog.md, "Title matches in
-- memory"): it holds every show's title with pg_trgm's trigrams and computes the same matches and
-- scores, from a snapshot of the catalog (`seen`, a pg_snapshot as text). The shows written since,
-- and those whose titles hold characters whose class pg_trgm takes from the database's locale, are
-- left to podcast_title_hits_among: checking a few titles costs a fraction of the trigram index's
-- candidates, which for common trigrams are much of the catalog.
-- The word similarity threshold is pinned here, as the similarity threshold already was: the api
-- process applies both (src/catalog/title-trigrams.ts).

-- The shows whose list rows a snapshot did not see: written since, or by a transaction open then.
create function podcasts_written_since(seen text) returns setof text
language sql stable
as $$
  select l.podcast_id from podcast_list l
   where l.ancestry = ''
     and l.changed >= pg_snapshot_xmin(seen::pg_snapshot)
     and not pg_visible_in_snapshot(l.changed, seen::pg_snapshot)
$$;

-- podcast_title_hits of 0235 with the word similarity threshold pinned as the similarity one is.
alter function podcast_title_hits(text, text[], text[], integer) set pg_trgm.word_similarity_threshold = 0.6;

-- The title matches among the given shows and those written since `seen`, scored as
-- podcast_title_hits scores them. Each show is read by its key (offset 0: the conditions are not
-- pushed down to the trigram index, whose candidates are what this avoids), and the plan is the
-- generic one: a custom plan would estimate the trigram conditions on the column's statistics
-- (pg_trgm's selectivity runs the operator on them), which costs more than the query.
create function podcast_title_hits_among(q text, words text[], all_words text[], candidates text[], seen text)
returns table (podcast_id text, quality text, score float8, popularity float8)
language plpgsql stable
set pg_trgm.similarity_threshold = 0.4
set pg_trgm.word_similarity_threshold = 0.6
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select p.id,
           case when p.search_title = q then 'exact'
                when left(p.search_title, length(q) + 1) = q || ' ' then 'prefix' else 'fuzzy' end,
           podcast_title_score(p.search_title, q),
           p.popularity
      from (select unnest(candidates) as id union select podcasts_written_since(seen)) c,
           lateral (select t.id, t.search_title, t.search_words, t.popularity
                      from podcasts t where t.id = c.id offset 0) p
     where p.search_title % q or q <% p.search_title
        or (p.search_words && words
            and 2 * (select count(*) from unnest(all_words) a where a = any(p.search_words))
                >= cardinality(p.search_words));
end
$$;
