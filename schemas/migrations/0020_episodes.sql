-- The episodes read model (projection "episodes"): the newest version of each episode, whole,
-- for backfill and preview sweeps, and the columns the match episode block and filters need.
create table episodes (
  id text primary key,
  podcast_id text not null,
  published_at timestamptz not null,
  language text,
  occurred_at timestamptz not null,
  event_id text not null,
  payload jsonb not null,
  updated_at timestamptz not null default now()
);
create index episodes_published_at on episodes (published_at desc, id);
