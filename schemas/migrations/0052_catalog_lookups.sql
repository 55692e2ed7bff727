-- Lookups of the catalog endpoints (docs/catalog.md): topics by id or ancestry path hash.
create index catalog_episode_topics_topic_id on catalog_episode_topics (topic_id);
create index catalog_episode_topics_ancestry_path on catalog_episode_topics (ancestry_path);
