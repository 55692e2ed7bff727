-- The realtime matcher's snapshot (docs/matching-pipeline.md, "Restart"): the shows' languages and
-- the entities' names as of `position` in its feed, the latest version of each, so a restart
-- replays only the podcast and entity events stored after it (a catalog re-sends both on every
-- crawl). Rows and position are written in one transaction, compare-and-set on the position.
create table matcher_snapshot (
  name text primary key,
  position text not null,
  written_at timestamptz not null default now()
);

-- kind 'show': value {"language"}; kind 'entity': value {"names"} (name, then aliases). `at` is the
-- version's occurred_at in epoch ms, as the matcher compares them.
create table matcher_snapshot_entries (
  kind text not null,
  key text not null,
  at double precision not null,
  value json not null,
  primary key (kind, key)
);
