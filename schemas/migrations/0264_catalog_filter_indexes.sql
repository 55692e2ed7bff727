-- Valid filters of the catalog's reads that read every row of their table (docs/catalog.md, "What
-- a page reads"): GET /v1/podcasts/clips with a speaker (projections/clips/queries.ts, SPEAKER_IDS)
-- or a type few clips have, GET /v1/podcasts/lookup on a platform other than apple, and
-- GET /v1/podcasts/episodes with a duration few episodes have.
create index clips_speaker_ids on clips
  using gin ((array[speaker->>'entity_id', speaker->>'person_id', speaker->>'id']));
create index clips_type on clips (type, engagement_score desc, id);
create index podcasts_directory_ids on podcasts using gin (directory_ids jsonb_path_ops);
create index catalog_episodes_duration on catalog_episodes (duration_seconds);

-- GET /v1/people with company_id read every person: the companies a person holds or held (its
-- company, its current role's and its roles', lower case) as one indexed array
-- (projections/entities/knowledge.ts, listPeople).
create function person_companies(person jsonb) returns text[]
language sql immutable parallel safe cost 1000
as $$
  select array(select lower(held.company)
                 from (select person->>'company'
                       union all select person->'current_role'->>'company'
                       union all select r->>'company' from jsonb_array_elements(coalesce(person->'roles', '[]')) r
                      ) held(company)
                where held.company is not null)
$$;
create index entities_person_companies on entities using gin (person_companies(person))
 where entity_type = 'PERSON';
