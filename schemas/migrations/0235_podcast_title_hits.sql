-- A search's title matches, scored, in one function whose plans are kept per connection
-- (docs/catalog.md, "Forgiving search"). SQL functions with SET clauses are planned again at every
-- call, and planning a trigram condition costs about as much as running it on a catalog's titles.
-- PL/pgSQL keeps the plans of its statements for the session.

-- A title's score for q: 1 when it is q, else the best of the similarity either way round, each
-- weighed by how much of the other text it covers. One expression, so PostgreSQL inlines it.
create function podcast_title_score(title text, q text) returns float8
language sql immutable
as $$
  select case when title = q then 1.0
              else greatest(
                similarity(title, q),
                word_similarity(q, title) * (0.7 + 0.3 * least(1.0, length(q)::float8 / greatest(length(title), 1))),
                word_similarity(title, q) * (0.6 + 0.4 * least(1.0, length(title)::float8 / greatest(length(q), 1))))
         end
$$;

-- The title candidates of 0130 (the shared words counted per title, not by a join over every
-- title's words: a third less time), scored: quality exact (the title is q), prefix (it starts with q and
-- a space) or fuzzy, score podcast_title_score. With enough > 0, the titles equal to q or
-- starting with it come first, and when there are at least `enough` of them the other candidates
-- are not looked for: exact and prefix matches rank before any other, so they fill a page that
-- needs `enough` rows. (They are then returned twice; the caller keeps each show's best.)
create function podcast_title_hits(q text, words text[], all_words text[], enough integer)
returns table (podcast_id text, quality text, score float8, popularity float8)
language plpgsql stable
set enable_seqscan = off
set pg_trgm.similarity_threshold = 0.4
as $$
declare
  found_rows integer;
begin
  if enough > 0 then
    return query
      select p.id, case when p.search_title = q then 'exact' else 'prefix' end,
             podcast_title_score(p.search_title, q),
             p.popularity
        from podcasts p
       where (p.search_title = q or (p.search_title ~>=~ (q || ' ') and p.search_title ~<~ (q || '!')))
         -- a title starting with q holds all of q's trigrams: q <% title; checked all the same
         and (q <% p.search_title or p.id in (select podcast_title_candidates(q, words, all_words)));
    get diagnostics found_rows = row_count;
    if found_rows >= enough then
      return;
    end if;
  end if;
  return query
    select p.id,
           case when p.search_title = q then 'exact'
                when left(p.search_title, length(q) + 1) = q || ' ' then 'prefix' else 'fuzzy' end,
           podcast_title_score(p.search_title, q),
           p.popularity
      from podcasts p
     where p.id in (select c.id from podcasts c where c.search_title % q
                    union select c.id from podcasts c where q <% c.search_title
                    -- at least half of the title's words in q (all_words: q's distinct words)
                    union select c.id from podcasts c,
                                 lateral (select count(*) as n from unnest(all_words) a
                                           where a = any(c.search_words)) shared
                           where c.search_words && words and 2 * shared.n >= cardinality(c.search_words));
end
$$;

-- The shows of pasted episode titles (0053), with its plan kept.
create or replace function podcast_episode_title_matches(q text, min_similarity real)
returns table (podcast_id text, score real)
language plpgsql stable
set enable_seqscan = off
as $$
begin
  return query
    select e.podcast_id, max(similarity(e.search_title, q))
      from catalog_episodes e
     where to_tsvector('simple', e.search_title) @@ plainto_tsquery('simple', q)
       and similarity(e.search_title, q) >= min_similarity
     group by e.podcast_id;
end
$$;
