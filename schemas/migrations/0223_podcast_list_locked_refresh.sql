-- Three projections write the list's sources on connections of their own (podcasts,
-- podcast_formats, podcast_topic_shares): a refresh (0221) read the sources as its statement began,
-- so it did not see a refresh of the same show in another transaction not yet committed, and the
-- later one kept its stale view of the other's source (or failed on the primary key). Now a refresh
-- first takes a transaction lock per show (by buckets of shows), then computes the rows in
-- statements that begin once it holds them, which read what the refreshes it waited for committed.
-- The locks of these shows' list rows, held to the end of the transaction: by 1,024 buckets of shows,
-- not one lock a show (a refresh of every show, a rebuild, would take more locks than the server's
-- lock table holds), taken in one order (two such statements never deadlock). A projection that
-- writes several sources' statements in a batch takes them for all its shows first
-- (src/catalog/podcast-list-locks.ts): taking more in a later statement could deadlock.
create or replace function lock_podcast_list(ids text[]) returns void
language sql
as $$
  select count(pg_advisory_xact_lock(221, bucket))
    from (select distinct hashtext(id) & 1023 as bucket from unnest(ids) id order by 1) b;
$$;

create or replace function refresh_podcast_list(ids text[]) returns void
language sql
as $$
  select lock_podcast_list(ids);
  -- a statement of its own: under READ COMMITTED it reads what a refresh it waited for committed
  delete from podcast_list where podcast_id in (select unnest(ids));
  insert into podcast_list (podcast_id, ancestry, share, slug, language, suitability_tier, popularity,
         has_video, guest_frequency, signals, has_ads, avg_episode_minutes, first_episode_published_at,
         latest_episode_published_at, topics)
  select p.id, a.ancestry, a.share, p.slug, lower(split_part(p.language, '-', 1)), p.suitability_tier,
         p.popularity, coalesce(fm.has_video, false) or coalesce(p.has_video, false), fm.guest_frequency,
         fm.signals, fm.has_ads, fm.avg_episode_minutes, fm.first_episode_published_at,
         fm.latest_episode_published_at,
         case when a.ancestry = '' then coalesce((
           select json_agg(json_build_object('podcast_id', p.id, 'id', tp.id, 'name', tp.name, 'slug', tp.slug,
                                             'ancestry', tp.ancestry, 'ancestry_path', tp.ancestry_path,
                                             'episode_count', tp.episode_count)
                           order by tp.episode_count desc, tp.name, tp.id)
             from (select t.topic_id as id, min(t.name) as name, min(t.slug) as slug,
                          min(t.ancestry) as ancestry, min(t.ancestry_path) as ancestry_path,
                          count(*)::int as episode_count -- (episode, topic) is the key: one row an episode
                     from catalog_episode_topics t where t.podcast_id = p.id
                    group by t.topic_id
                   union all
                   select d->>'id', d->>'name', d->>'slug', coalesce(d->>'ancestry', d->>'slug', d->>'id'), null, 0
                     from jsonb_array_elements(coalesce(p.topics, '[]')) d
                    where not exists (select 1 from catalog_episode_topics t
                                       where t.podcast_id = p.id and t.topic_id = d->>'id')) tp), '[]') end
    from podcasts p
    left join podcast_formats fm on fm.podcast_id = p.id
    cross join lateral (
      select '' as ancestry, null::float8 as share
      union all
      select s.ancestry, s.episode_count::float8 / fm.episode_count
        from podcast_topic_shares s where s.podcast_id = p.id and fm.podcast_id is not null
      union all
      -- no tagged episodes (read from the shares, which the catalog_episodes projection writes after
      -- the episodes' topics: a trigger between the two never counts a topic twice)
      select prefix, 1.0::float8 from unnest(topic_prefixes(declared_topic_ancestries(p.topics))) prefix
       where not exists (select 1 from podcast_topic_shares s where s.podcast_id = p.id)) a
   where p.id in (select unnest(ids));
$$;
