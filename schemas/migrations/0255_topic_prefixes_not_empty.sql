-- A topic's ancestry may be '' or begin with '/' (the schemas allow both): topic_prefixes (0130) then
-- gave the prefix '', which is the key of a show's own row in the list read model (0221), so a
-- refresh of that show failed on the primary key and the event that caused it was parked
-- (docs/catalog.md, "The list read model"). An empty prefix names no topic: it is left out.
create or replace function topic_prefixes(ancestries text[]) returns text[]
language sql immutable parallel safe
as $$
  select coalesce(array_agg(distinct prefix), '{}')
    from unnest(ancestries) a,
         lateral (select left(a, i - 1) from generate_series(1, length(a)) i where substr(a, i, 1) = '/'
                  union all select a) as p(prefix)
   where prefix <> ''
$$;
reindex index podcasts_declared_topic_prefixes;
-- Shares written under the old rule: '' is no ancestry (the trigger on the shares refreshes their shows).
delete from podcast_topic_shares where ancestry = '';
