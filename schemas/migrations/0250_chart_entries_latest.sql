-- The entries of each chart's latest capture, marked, for a show's best rank on podcast references
-- (docs/catalog-rankings.md, "best_rank"): the projection "chart_captures" keeps the mark in step
-- with charts.latest_captured_at as captures arrive, in any order.
alter table chart_entries add column latest boolean not null default false;
update chart_entries e set latest = true
  from charts c
 where c.chart_key = e.chart_key and c.latest_captured_at = e.captured_at;
create index chart_entries_latest_podcast on chart_entries (podcast_id) where latest and podcast_id is not null;
create index chart_entries_latest_external on chart_entries (external_id) where latest and podcast_id is null;
create index chart_entries_latest_chart on chart_entries (chart_key) where latest;
