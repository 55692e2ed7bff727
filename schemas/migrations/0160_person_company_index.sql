-- The people at a company (contactsOf in src/advertising/companies.ts, docs/advertising.md,
-- "Recommendations"): looked up by the company their current role names, not by reading every
-- person for each company (over a second with 200,000 people; GET /v1/podcasts/{id} asks for it).
create index entities_person_company
    on entities ((lower(coalesce(person->'current_role'->>'company', person->>'company'))))
 where entity_type = 'PERSON';
