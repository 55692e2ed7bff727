-- The list read model (docs/catalog.md, "The list read model"): what a page of GET /v1/podcasts
-- filters and sorts by, one row per show (ancestry '') and one per show and topic ancestry (with
-- the show's share of it), so a page reads its own rows through one index instead of joining every
-- show's topic shares, format profile and row. Kept by the triggers below in the transactions that
-- write its sources (podcasts, podcast_formats, podcast_topic_shares; catalog_episode_topics for the
-- topics): a rebuild of any of their projections rebuilds it too. Nothing in it depends on the time of reading.
create table podcast_list (
  podcast_id text not null,
  -- '' for the show's own row; else an ancestry at or above one of its topics (or declared ones)
  ancestry text not null,
  -- its episodes at or below the ancestry over its episodes (1 for a declared topic); null on ''
  share double precision,
  slug text,
  -- the primary subtag of the language, lower case
  language text,
  suitability_tier text,
  popularity double precision,
  -- an episode has a video, or the show says so
  has_video boolean not null,
  -- from the format profile (null while the show has none)
  guest_frequency text,
  signals text[],
  has_ads boolean,
  avg_episode_minutes double precision,
  first_episode_published_at timestamptz,
  latest_episode_published_at timestamptz,
  -- on '' only: the item's topics, most episodes first (its episodes' topics, then its declared ones)
  topics json,
  primary key (podcast_id, ancestry)
);
create index podcast_list_popularity on podcast_list (ancestry, popularity desc nulls last, podcast_id);
create index podcast_list_share on podcast_list (ancestry, share desc, popularity desc nulls last, podcast_id);

-- Computes again the rows of these shows from the sources: each show's row, then its rows for the
-- ancestries of its topics, every one read through the show's keys (a backfill of every show too).
create function refresh_podcast_list(ids text[]) returns void
language sql
as $$
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

-- After each statement that changes a source, the shows of its changed rows (the key column named
-- by the trigger's argument; `changed` is the statement's transition table).
create function refresh_podcast_list_of_changed() returns trigger
language plpgsql
as $$
begin
  execute format('select refresh_podcast_list(array(select distinct %I from changed))', tg_argv[0]);
  return null;
end
$$;

create trigger podcast_list_podcasts_insert after insert on podcasts
  referencing new table as changed for each statement execute function refresh_podcast_list_of_changed('id');
create trigger podcast_list_podcasts_update after update on podcasts
  referencing new table as changed for each statement execute function refresh_podcast_list_of_changed('id');
create trigger podcast_list_podcasts_delete after delete on podcasts
  referencing old table as changed for each statement execute function refresh_podcast_list_of_changed('id');
create trigger podcast_list_formats_insert after insert on podcast_formats
  referencing new table as changed for each statement execute function refresh_podcast_list_of_changed('podcast_id');
create trigger podcast_list_formats_delete after delete on podcast_formats
  referencing old table as changed for each statement execute function refresh_podcast_list_of_changed('podcast_id');
create trigger podcast_list_formats_update after update on podcast_formats
  referencing new table as changed for each statement execute function refresh_podcast_list_of_changed('podcast_id');
-- Not on catalog_episode_topics: the catalog_episodes projection writes a show's topic shares again
-- after every change of its episodes' topics, so these also carry the shows whose topics changed.
create trigger podcast_list_topic_shares_insert after insert on podcast_topic_shares
  referencing new table as changed for each statement execute function refresh_podcast_list_of_changed('podcast_id');
create trigger podcast_list_topic_shares_delete after delete on podcast_topic_shares
  referencing old table as changed for each statement execute function refresh_podcast_list_of_changed('podcast_id');

select refresh_podcast_list(array(select id from podcasts));
