-- The catalog read models (docs/catalog.md, "Read models"). Each table belongs to one projection.

-- Which version (occurred_at) of each episode a catalog projection holds, so a late redelivery
-- of an older version changes nothing even after the rows it wrote were replaced or removed.
create table episode_versions (
  projection text not null,
  episode_id text not null,
  occurred_at timestamptz not null,
  primary key (projection, episode_id)
);

-- Projection "podcasts": show metadata merged from podcast.upserted and the podcast blocks of
-- episodes. field_times holds, per field, the occurred_at of the event its value came from: the
-- later one wins field by field.
create table podcasts (
  id text primary key,
  title text not null,
  slug text,
  description text,
  url text,
  image_url text,
  language text,
  explicit boolean,
  popularity double precision,
  bias text,
  political_context text,
  suitability_tier text,
  has_video boolean,
  feed_url text,
  apple_id text,
  directory_ids jsonb,
  publisher jsonb,
  topics jsonb,
  -- folded (lower case, accents dropped) title and description, for search
  search_title text not null,
  search_description text,
  field_times jsonb not null,
  updated_at timestamptz not null default now()
);
create index podcasts_slug on podcasts (slug);
create index podcasts_apple_id on podcasts (apple_id);
create index podcasts_popularity on podcasts (popularity desc nulls last, id);
create index podcasts_search_title on podcasts (search_title text_pattern_ops);
create index podcasts_search_title_trgm on podcasts using gin (search_title gin_trgm_ops);
create index podcasts_description_fts on podcasts
  using gin (to_tsvector('simple', coalesce(search_description, '')));

-- Projection "catalog_episodes": the catalog's view of each episode (the "episodes" read model
-- stays the matcher's own: whole payloads for backfill sweeps).
create table catalog_episodes (
  id text primary key,
  podcast_id text not null,
  slug text,
  title text not null,
  search_title text not null,
  description text,
  audio_url text,
  image_url text,
  url text,
  language text,
  explicit boolean,
  episode_number integer,
  duration_seconds integer not null,
  published_at timestamptz not null,
  has_transcript boolean not null,
  entity_count integer not null,
  clip_count integer not null,
  segment_count integer not null,
  -- entities mentioned or speaking, for the entity and company filters
  entity_ids text[] not null,
  speakers jsonb not null,
  topics jsonb not null,
  videos jsonb not null,
  updated_at timestamptz not null default now()
);
create index catalog_episodes_podcast on catalog_episodes (podcast_id, published_at desc, id);
create index catalog_episodes_published on catalog_episodes (published_at desc, id);
create index catalog_episodes_slug on catalog_episodes (slug);
create index catalog_episodes_entity_ids on catalog_episodes using gin (entity_ids);

-- One row per topic of an episode (same projection), for the topic_id filter and podcast topics.
create table catalog_episode_topics (
  episode_id text not null references catalog_episodes (id) on delete cascade,
  podcast_id text not null,
  topic_id text not null,
  name text not null,
  slug text,
  ancestry text not null,
  ancestry_path text not null,
  primary key (episode_id, topic_id)
);
create index catalog_episode_topics_ancestry on catalog_episode_topics (ancestry text_pattern_ops, podcast_id);
create index catalog_episode_topics_podcast on catalog_episode_topics (podcast_id);

-- Projection "transcripts": the lines of each transcribed episode, in line-number order. json, not
-- jsonb: the lines are only ever read whole, and json is returned as stored, without re-rendering.
create table transcripts (
  episode_id text primary key,
  podcast_id text not null,
  language text,
  lines json not null
);
