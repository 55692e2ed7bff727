-- A slug belongs to the entity that claimed it first, until that entity moves to another slug
-- (docs/matching.md, Entities and slugs). slug_claim orders the claims: the projection draws a new
-- number when an entity takes a slug, in store order, and keeps it while the slug stays.
create sequence entity_slug_claims;
alter table entities add column slug_claim bigint;
update entities e set slug_claim = o.n
  from (select id, row_number() over (order by occurred_at, id) as n from entities) o
 where o.id = e.id;
select setval('entity_slug_claims', coalesce((select max(slug_claim) from entities), 0) + 1, false);
alter table entities alter column slug_claim set default nextval('entity_slug_claims');
alter table entities alter column slug_claim set not null;
drop index entities_slug;
create index entities_slug on entities (slug, slug_claim);
