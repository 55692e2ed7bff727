-- Valid filters of the catalog's reads that read every row of their table (docs/catalog.md, "What
-- a page reads"): GET /v1/podcasts/clips with a speaker (projections/clips/queries.ts, SPEAKER_IDS)
-- or a type few clips have, GET /v1/podcasts/lookup on a platform other than apple, and
-- GET /v1/podcasts/episodes with a duration few episodes have.
create index clips_speaker_ids on clips
  using gin ((array[speaker->>'entity_id', speaker->>'person_id', speaker->>'id']));
create index clips_type on clips (type, engagement_score desc, id);
create index podcasts_directory_ids on podcasts using gin (directory_ids jsonb_path_ops);
create index catalog_episodes_duration on catalog_episodes (duration_seconds);
