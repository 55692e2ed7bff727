-- The matches read model (projection "matches"): one row per AlertMatched, with the columns the
-- per-alert list filters and pages on, the whole event data, and the summary written later.
create table matches (
  id text primary key,
  alert_id text not null,
  project_id text not null,
  organization_id text not null,
  kind text not null,
  entity_id text not null,
  source_id text not null,
  detected_at timestamptz not null,
  published_at timestamptz,
  relevance text not null,
  -- primary subtag of the episode language, lowercased ('en' for 'en-US'); null when unknown
  language text,
  podcast_popularity double precision,
  roles text[] not null,
  is_backfilled boolean not null,
  -- AlertMatchedEventData as appended (camelCase), episode block and windows included
  data jsonb not null,
  llm_summary text,
  summarized_at timestamptz
);
create index matches_alert_page on matches (alert_id, detected_at desc, id desc);
