-- Segments, clips, ads and format profiles (docs/catalog.md, "Read models").

-- Projection "segments". podcast_id and published_at are the episode's, for the list filters.
create table segments (
  id text primary key,
  episode_id text not null,
  podcast_id text not null,
  published_at timestamptz not null,
  number integer not null,
  title text not null,
  type text,
  description text,
  summary text,
  start_line integer,
  end_line integer,
  start_seconds double precision not null,
  end_seconds double precision not null
);
create index segments_episode on segments (episode_id, number, id);
create index segments_podcast on segments (podcast_id, published_at desc, id);
create index segments_type on segments (type, published_at desc, id);

-- Projection "clips". speaker holds the clip's speaker as the episode names it.
create table clips (
  id text primary key,
  episode_id text not null,
  podcast_id text not null,
  published_at timestamptz not null,
  title text not null,
  type text,
  start_seconds double precision not null,
  end_seconds double precision not null,
  engagement_score integer not null,
  description text,
  intro_statement text,
  audio_url text,
  segment_id text,
  speaker jsonb
);
create index clips_engagement on clips (engagement_score desc, id);
create index clips_episode on clips (episode_id, engagement_score desc, id);
create index clips_podcast on clips (podcast_id, engagement_score desc, id);

-- Projection "ads": each detected ad read (read by the advertising surface).
create table ads (
  id text primary key,
  episode_id text not null,
  podcast_id text not null,
  published_at timestamptz not null,
  sponsor_id text,
  sponsor_name text not null,
  sponsor_company_id text,
  product text,
  offer_description text,
  sponsor_url text,
  read_type text,
  placement_type text,
  start_seconds double precision,
  end_seconds double precision,
  is_network_promo boolean not null
);
create index ads_episode on ads (episode_id, start_seconds, id);
create index ads_podcast on ads (podcast_id, published_at desc);
create index ads_sponsor on ads (sponsor_id, published_at desc);

-- Projection "podcast_formats": the facts of each episode the profile is computed from, and each
-- show's time-independent aggregate. What depends on today (episodes per week, publishing status)
-- is computed when read.
create table podcast_format_episodes (
  episode_id text primary key,
  podcast_id text not null,
  published_at timestamptz not null,
  duration_seconds integer not null,
  analyzed boolean not null,
  has_guest boolean not null,
  has_panel boolean not null,
  has_caller boolean not null,
  has_ads boolean not null,
  solo boolean not null,
  has_video boolean not null
);
create index podcast_format_episodes_podcast on podcast_format_episodes (podcast_id, published_at);

create table podcast_formats (
  podcast_id text primary key,
  episode_count integer not null,
  analyzed_episodes integer not null,
  ad_episode_rate double precision not null,
  call_in_episode_rate double precision not null,
  guest_episode_rate double precision not null,
  panel_episode_rate double precision not null,
  solo_episode_rate double precision not null,
  has_video boolean not null,
  publish_days jsonb not null,
  avg_episode_minutes double precision,
  episode_minutes_median double precision,
  episode_minutes_p25 double precision,
  episode_minutes_p75 double precision,
  first_episode_published_at timestamptz not null,
  latest_episode_published_at timestamptz not null,
  guest_frequency text,
  has_ads boolean,
  signals text[] not null,
  computed_at timestamptz not null
);
create index podcast_formats_avg_minutes on podcast_formats (avg_episode_minutes);
