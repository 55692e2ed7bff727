-- The entities read model (projection "entities"), built from EntityUpserted events.
create table entities (
  id text primary key,
  slug text not null,
  name text not null,
  entity_type text not null,
  aliases text[] not null default '{}',
  description text,
  image_url text,
  wikipedia_url text,
  company jsonb,
  person jsonb,
  occurred_at timestamptz not null,
  -- lower-cased name and aliases, for exact and prefix matching and the trigram index
  search_names text[] not null,
  search_text text not null,
  updated_at timestamptz not null default now()
);
create index entities_search_trgm on entities using gin (search_text gin_trgm_ops);
create index entities_search_names on entities using gin (search_names);
create index entities_name_prefix on entities (lower(name) text_pattern_ops);
create index entities_slug on entities (slug);
