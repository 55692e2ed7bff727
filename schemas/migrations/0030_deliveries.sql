-- Deliveries (docs/delivery.md). The truth is the `delivery-<id>` event streams; these tables are
-- the deliverer's working state (queue, match copies, digest bookkeeping) and the read model.

-- Pending work: one row per delivery that still has an attempt to make. Claimed with
-- FOR UPDATE SKIP LOCKED and leased, so several deliverer processes share it and a killed
-- process's rows come back when its lease runs out (lease_until, in the database's clock).
create table delivery_queue (
  delivery_id text primary key,
  due_at timestamptz not null,
  -- attempts made so far, for observation only: the stream decides
  attempts integer not null default 0,
  lease_owner text,
  lease_until timestamptz,
  enqueued_at timestamptz not null default now()
);
create index delivery_queue_due on delivery_queue (due_at);

-- The deliverer's copy of each non-backfilled AlertMatched event (exact event data), with the
-- summary once AlertMatchSummarized arrives. digest_cadence is set for matches of DAILY and WEEKLY
-- alerts: they wait for their digest instead of being sent at once.
create table delivery_match_copies (
  match_id text primary key,
  alert_id text not null,
  detected_at timestamptz not null,
  digest_cadence text check (digest_cadence in ('DAILY', 'WEEKLY')),
  data jsonb not null,
  summary text
);
create index delivery_match_copies_digest on delivery_match_copies (digest_cadence, alert_id, detected_at)
  where digest_cadence is not null;
-- Closing a digest window finds the alerts with matches in it by time alone.
create index delivery_match_copies_window on delivery_match_copies (digest_cadence, detected_at)
  where digest_cadence is not null;

-- One row per (alert, channel, cadence, window) once its digest exists (delivery_id null when the
-- window had nothing to send): with the deterministic digest id, exactly one digest per window.
create table digest_windows (
  alert_id text not null,
  channel_key text not null,
  cadence text not null check (cadence in ('DAILY', 'WEEKLY')),
  window_start timestamptz not null,
  delivery_id text,
  created_at timestamptz not null default now(),
  primary key (alert_id, channel_key, cadence, window_start)
);

-- The next window each cadence's scheduler will close.
create table digest_cursors (
  cadence text primary key check (cadence in ('DAILY', 'WEEKLY')),
  next_window_start timestamptz not null
);

-- Read model (projection "deliveries"): one row per delivery stream.
create table deliveries (
  id text primary key,
  alert_id text not null,
  project_id text not null,
  organization_id text not null,
  alert_title text not null,
  alert_kind text not null,
  channel text not null check (channel in ('EMAIL', 'CHAT', 'WEBHOOK')),
  target jsonb not null,
  type text not null check (type in ('alert.match', 'alert.digest')),
  cadence text not null check (cadence in ('REALTIME', 'DAILY', 'WEEKLY')),
  window_start timestamptz,
  window_end timestamptz,
  status text not null check (status in ('PENDING', 'SENT', 'FAILED', 'SKIPPED', 'ABANDONED')),
  -- true once the status can no longer change
  is_final boolean not null,
  created_at timestamptz not null,
  sent_at timestamptz,
  error_message text,
  attempts integer not null,
  next_attempt_at timestamptz,
  match_count integer not null,
  revision integer not null
);
create index deliveries_alert_page on deliveries (alert_id, created_at desc, id desc);

create table delivery_matches (
  delivery_id text not null,
  ordinal integer not null,
  match_id text not null,
  primary key (delivery_id, ordinal)
);
create index delivery_matches_match on delivery_matches (match_id);

-- Every attempt, for the audit.
create table delivery_attempts (
  delivery_id text not null,
  attempt integer not null,
  attempted_at timestamptz not null,
  outcome text not null check (outcome in ('sent', 'failed')),
  status_code integer,
  response text,
  error text,
  duration_ms integer,
  payload_sha256 text,
  recipients jsonb,
  primary key (delivery_id, attempt)
);
