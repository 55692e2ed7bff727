-- Projection "ad_facts" (docs/advertising.md, "Read models"): one row per (episode, sponsor) with
-- its ads, network promos excluded, keyed by small integers: the leaderboard groups tens of
-- thousands of these per window, and integer keys group several times faster than text.
create table ad_keys (
  no integer generated always as identity primary key,
  kind text not null,
  key text not null,
  unique (kind, key)
);

create table ad_facts (
  episode_id text not null,
  sponsor_no integer not null,
  podcast_no integer not null,
  published_at timestamptz not null,
  company_id text,
  ads integer not null,
  primary key (episode_id, sponsor_no)
);
create index ad_facts_published on ad_facts (published_at) include (sponsor_no, podcast_no, ads);
create index ad_facts_company on ad_facts (company_id, published_at) include (sponsor_no, podcast_no, ads);
create index ad_facts_podcast on ad_facts (podcast_no, published_at) include (sponsor_no, ads);
