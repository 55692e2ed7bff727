-- People and companies are the PERSON and COMPANY rows of the entities read model
-- (docs/knowledge-graph.md); these are the columns and indexes their endpoints need.
alter table entities add column external_links jsonb not null default '[]';
create index entities_cik on entities (ltrim(company->>'cik', '0')) where entity_type = 'COMPANY';
create index entities_qid on entities ((company->>'qid')) where entity_type = 'COMPANY';
create index entities_company_id on entities ((company->>'id')) where entity_type = 'COMPANY';
create index entities_type_name on entities (entity_type, name, id);

-- The entity mentions read model (projection "entity_mentions"): which entities each episode's
-- newest version mentions, for entity search's mentions.podcast_episodes.
create table entity_mention_episodes (
  episode_id text primary key,
  occurred_at timestamptz not null
);
create table entity_mentions (
  entity_id text not null,
  episode_id text not null references entity_mention_episodes (episode_id) on delete cascade,
  primary key (entity_id, episode_id)
);
create index entity_mentions_episode on entity_mentions (episode_id);
