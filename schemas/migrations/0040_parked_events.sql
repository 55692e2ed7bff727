-- Events a subscription (projection or consumer) could not handle after its retries: parked here
-- so the subscription moves on; `earshot projections retry-parked` replays them (docs/event-store.md).
create table parked_events (
  subscription text not null,
  position text not null,
  event_id text not null,
  type text not null,
  stream_id text not null,
  error text not null,
  attempts integer not null,
  parked_at timestamptz not null default now(),
  last_attempt_at timestamptz not null default now(),
  primary key (subscription, position)
);
