-- OAuth 2.1 for MCP clients (docs/agents.md). Security state, not event sourced: the authorization
-- server owns these tables alone, and a grant's revocation must take effect at once on every
-- process. Only hashes of client secrets, codes and refresh tokens are kept.
create table oauth_clients (
  id text primary key,
  name text not null,
  redirect_uris text[] not null,
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')),
  secret_sha256 bytea,
  created_at timestamptz not null default now(),
  check ((token_endpoint_auth_method = 'none') = (secret_sha256 is null))
);

-- One human approval: a client acting on one project with some scopes, until revoked.
create table oauth_grants (
  id text primary key,
  client_id text not null references oauth_clients (id),
  project_id text not null references projects (id),
  -- the API key the human signed in with on the consent page
  approved_by_key_id text not null,
  scope text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  revoked_reason text
);
create index oauth_grants_project on oauth_grants (project_id, created_at desc);

-- Codes live 60 seconds and are spent once; a second use revokes the grant they started.
create table oauth_codes (
  code_sha256 bytea primary key,
  client_id text not null references oauth_clients (id),
  project_id text not null references projects (id),
  approved_by_key_id text not null,
  redirect_uri text not null,
  scope text not null,
  code_challenge text not null,
  expires_at timestamptz not null,
  grant_id text references oauth_grants (id)
);
create index oauth_codes_expiry on oauth_codes (expires_at);

-- A refresh token is spent once (rotation); presenting a spent one revokes its grant.
create table oauth_refresh_tokens (
  token_sha256 bytea primary key,
  grant_id text not null references oauth_grants (id),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index oauth_refresh_tokens_grant on oauth_refresh_tokens (grant_id);
create index oauth_refresh_tokens_expiry on oauth_refresh_tokens (expires_at);
