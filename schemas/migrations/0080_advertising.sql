-- Advertising and recommendations (docs/advertising.md).

-- The leaderboard and the timeseries aggregate the catalog's ads; network promos never count.
create index ads_counted_published on ads (published_at)
  include (sponsor_id, sponsor_name, podcast_id, episode_id) where not is_network_promo;
create index ads_sponsor_key on ads ((coalesce(sponsor_id, sponsor_name)), published_at)
  include (podcast_id, episode_id, read_type) where not is_network_promo;
create index ads_company on ads (sponsor_company_id, published_at)
  include (read_type, episode_id, podcast_id) where not is_network_promo;
create index podcasts_publisher_id on podcasts ((publisher->>'id'));
create index podcasts_publisher_slug on podcasts ((publisher->>'slug'));

-- Projection "podcast_links": what each episode links its show to (guests, sponsors, topics and
-- topic categories), and per show the same links counted over its episodes. Related shows and
-- recommendations are scored from these.
create table podcast_link_episodes (
  episode_id text not null,
  podcast_id text not null,
  kind text not null,
  key text not null,
  label text,
  published_at timestamptz not null,
  primary key (episode_id, kind, key)
);
create index podcast_link_episodes_key on podcast_link_episodes (kind, key, published_at desc, episode_id);
create index podcast_link_episodes_podcast on podcast_link_episodes (podcast_id);

create table podcast_links (
  podcast_id text not null,
  kind text not null,
  key text not null,
  label text,
  episode_count integer not null,
  last_at timestamptz not null,
  primary key (podcast_id, kind, key)
);
create index podcast_links_key on podcast_links (kind, key, episode_count desc, podcast_id);
-- A show's whole profile from the index alone (related-show scoring reads a hundred at a time).
create index podcast_links_profile on podcast_links (podcast_id, kind, key) include (episode_count);

-- Leaderboard snapshots of the three snapshot windows, refreshed every EARSHOT_SNAPSHOT_INTERVAL.
create table ad_leaderboard_snapshots (
  window_name text primary key,
  since timestamptz,
  until timestamptz,
  refreshed_at timestamptz not null,
  sponsor_count integer not null
);

create table ad_leaderboard_rows (
  window_name text not null,
  sponsor_key text not null,
  -- the sponsor's name and company as its latest ad gives them, at the refresh
  name text not null,
  company_id text,
  ad_count integer not null,
  podcast_reach integer not null,
  episode_reach integer not null,
  first_seen_at timestamptz not null,
  last_seen_at timestamptz not null,
  rank_ad_count integer not null,
  rank_podcast_reach integer not null,
  rank_episode_reach integer not null,
  primary key (window_name, sponsor_key)
);
create index ad_leaderboard_rows_ad_count on ad_leaderboard_rows (window_name, rank_ad_count);
create index ad_leaderboard_rows_podcast_reach on ad_leaderboard_rows (window_name, rank_podcast_reach);
create index ad_leaderboard_rows_episode_reach on ad_leaderboard_rows (window_name, rank_episode_reach);
