-- The realtime matcher's snapshot also holds its alerts (docs/matching-pipeline.md, "Restart"), so a
-- restart replays only the alert events stored after `alerts_position` instead of every one.
-- `alerts_position` is the position the rows of matcher_snapshot_alerts are as of: written with
-- `position`, in the same compare-and-set. Null (a snapshot written before this migration, or by a
-- matcher that does not know alerts): the alert events are replayed whole and the rows written.
alter table matcher_snapshot add column alerts_position text;

-- Per alert the matcher follows: the last stream revision folded, the position of its AlertCreated
-- (the backfill rule) and what it keeps of the alerts decider's state after that revision: the
-- status and {projectId, organizationId, kind, deliveryCadence, entity, filters}
-- (src/matching/engine/live-watchlist.ts, KeptAlert).
create table matcher_snapshot_alerts (
  alert_id text primary key,
  revision bigint not null,
  created_position text not null,
  kept json not null
);
