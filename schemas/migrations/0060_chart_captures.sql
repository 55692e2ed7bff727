-- The chart captures read model (projection "chart_captures"), built from RankingCaptured events.
-- Each capture is kept whole; previous_rank, is_current and movers are computed when read
-- (docs/catalog-rankings.md), so a capture arriving out of order changes nothing stored.
create table charts (
  chart_key text primary key,
  source text not null,
  chart_type text not null,
  country text not null,
  -- '' for a chart without a category, so the defaults of GET /v1/podcasts/rankings find it by equality
  category_slug text not null,
  category jsonb,
  latest_captured_at timestamptz not null
);
create index charts_lookup on charts (source, chart_type, country, category_slug);

create table chart_captures (
  chart_key text not null references charts (chart_key) on delete cascade,
  captured_at timestamptz not null,
  occurred_at timestamptz not null,
  entry_count int not null,
  primary key (chart_key, captured_at)
);

create table chart_entries (
  chart_key text not null,
  captured_at timestamptz not null,
  rank int not null,
  -- what identifies a show from one capture to the next: its podcast id, else its directory id
  show_key text not null,
  podcast_id text,
  external_id text not null,
  entry jsonb not null,
  primary key (chart_key, captured_at, rank),
  foreign key (chart_key, captured_at) references chart_captures (chart_key, captured_at) on delete cascade
);
create index chart_entries_podcast on chart_entries (podcast_id, captured_at) where podcast_id is not null;
create index chart_entries_external on chart_entries (external_id);
create index chart_entries_show on chart_entries (chart_key, show_key, captured_at);
