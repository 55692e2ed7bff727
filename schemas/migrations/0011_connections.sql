-- Webhook and chat-workspace connections of a project. Secrets are sealed by src/crypto/secret-box.ts.
create table webhook_connections (
  id text primary key,
  project_id text not null references projects (id),
  url text not null,
  secret_sealed text not null,
  secret_prefix text not null,
  surface text not null check (surface in ('PLATFORM', 'SECOND_SURFACE')),
  name text,
  created_by_id text,
  created_by_name text,
  created_at timestamptz not null default now(),
  secret_rotated_at timestamptz,
  revoked_at timestamptz
);
create index webhook_connections_project_page on webhook_connections (project_id, created_at desc, id desc);

create table chat_connections (
  id text primary key,
  project_id text not null references projects (id),
  team_id text not null,
  team_name text not null,
  bot_token_sealed text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
-- One live connection per workspace and project: installing again replaces the token.
create unique index chat_connections_live_team on chat_connections (project_id, team_id) where deleted_at is null;
create index chat_connections_project_page on chat_connections (project_id, created_at desc, id desc);
