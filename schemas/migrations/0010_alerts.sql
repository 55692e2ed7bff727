-- The alerts read model (projection "alerts"): one row per alert stream, the fold of its events.
create table alerts (
  id text primary key,
  project_id text not null,
  organization_id text not null,
  title text not null,
  description text,
  kind text not null check (kind in ('ENTITY_MENTION', 'PODCAST_SPEAKER')),
  delivery_cadence text not null check (delivery_cadence in ('REALTIME', 'DAILY', 'WEEKLY')),
  entity_type text not null,
  entity_id text not null,
  -- As in the events (camelCase): [{type: 'EMAIL', email} | {type: 'CHAT', chatConnectionId, chatChannelId} | {type: 'WEBHOOK', webhookConnectionId}]
  notifications jsonb not null,
  -- {languages?, relevance?, sourcePopularity?, speakerRoles?}; {} = no filtering
  filters jsonb not null,
  -- {email: {email, tokenId, tokenSha256}} of the current EMAIL recipients
  disable_tokens jsonb not null,
  status text not null check (status in ('active', 'paused', 'disabled', 'deleted')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  paused_at timestamptz,
  disabled_at timestamptz,
  disabled_by text,
  deleted_at timestamptz,
  -- stream revision of the last event folded in: a replayed event is skipped
  revision integer not null
);
create index alerts_project_page on alerts (project_id, created_at desc, id desc) where status <> 'deleted';
create index alerts_entity_active on alerts (entity_id) where status = 'active';

-- Footer-token lookup: sha256 of each current recipient's token (the token itself is never stored).
create table alert_disable_tokens (
  token_sha256 text primary key,
  alert_id text not null,
  email text not null,
  token_id text not null
);
create index alert_disable_tokens_alert on alert_disable_tokens (alert_id);
