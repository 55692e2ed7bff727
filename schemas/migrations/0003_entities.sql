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
-- Search answers each kind of match from its own index (see searchEntities).
create index entities_search_trgm on entities using gin (search_text gin_trgm_ops);
create index entities_slug on entities (slug);
create index entities_ticker on entities (lower(company->>'ticker'));
create index entities_domain on entities (lower(company->>'domain'));

-- One row per folded name or alias of an entity (its search_names), kept by the projection:
-- a btree cannot look up a prefix inside an array, so exact and prefix matches read this.
create table entity_names (
  entity_id text not null references entities (id) on delete cascade,
  name text not null,
  primary key (entity_id, name)
);
create index entity_names_name on entity_names (name text_pattern_ops);

-- The ids of entities whose search_text is trigram-similar to q, best first, at most n.
-- The planner prices the trigram operators as cheap and seq-scans once a query matches a few
-- percent of rows, which costs ~10x the GIN bitmap scan; a function can pin the plan.
create function entity_fuzzy_matches(q text, type_filter text, n int) returns setof text
language sql stable
set enable_seqscan = off
as $$
  select e.id from entities e
   where (e.search_text % q or q <% e.search_text)
     and (type_filter is null or e.entity_type = type_filter)
   order by similarity(e.search_text, q) desc, e.name, e.id
   limit n
$$;
