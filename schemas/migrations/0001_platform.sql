-- Organizations, projects, credentials: the tenancy every other table hangs from.
create extension if not exists pg_trgm with schema public;

create table organizations (
  id text primary key,
  name text not null,
  plan text not null check (plan in ('STARTER', 'GROWTH', 'TEAM', 'BUSINESS', 'ENTERPRISE')),
  alert_packs integer not null default 0 check (alert_packs >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table organization_emails (
  organization_id text not null references organizations (id),
  email text not null,
  verified_at timestamptz not null default now(),
  primary key (organization_id, email)
);

create table projects (
  id text primary key,
  organization_id text not null references organizations (id),
  name text not null,
  created_at timestamptz not null default now()
);
create index projects_organization on projects (organization_id);

-- A key is ek_<id>_<secret>; only sha256(secret) is kept. kind 'project' keys are bound to one
-- project; 'ingest' keys reach /v1/ingest/* only.
create table api_keys (
  id text primary key,
  kind text not null check (kind in ('project', 'ingest')),
  project_id text references projects (id),
  secret_sha256 bytea not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  check ((kind = 'project') = (project_id is not null))
);
