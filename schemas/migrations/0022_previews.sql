-- Alert previews (contracts §5): one row per deterministic preview id, kept one hour. Not event
-- sourced: a preview is a disposable estimate, swept again after it expires.
create table previews (
  id text primary key,
  project_id text not null,
  organization_id text not null,
  -- {entityType, entityId, kind, languages, speakerRoles}: what the sweep needs
  request jsonb not null,
  window_days integer not null check (window_days between 1 and 30),
  status text not null check (status in ('in_progress', 'completed', 'failed')),
  started_at timestamptz not null,
  completed_at timestamptz,
  expires_at timestamptz not null,
  -- a sweeping process holds the preview until then and extends it while it works
  claimed_until timestamptz,
  total_matches integer,
  by_day jsonb,
  sample jsonb,
  error text
);
create index previews_unclaimed on previews (claimed_until) where status = 'in_progress';
create index previews_expiry on previews (expires_at);
