-- The podcast_links projection counts a batch's changes into the shows' rows instead of recounting
-- every link of each show it touches (docs/advertising.md, "Read models and worker"); the few
-- (show, kind, key) it must still recount are found by this index, which also serves every read by
-- show the (podcast_id) index it replaces served.
create index podcast_link_episodes_show_key on podcast_link_episodes (podcast_id, kind, key);
drop index podcast_link_episodes_podcast;

-- The show an Apple id names is the most popular of the shows sharing it, then the least id
-- (docs/catalog-rankings.md, "Which show an entry belongs to"): read as the first row of this
-- index, not by sorting every show with that id, which every podcast reference's best_rank does
-- (valid events may give thousands of shows one Apple id). It serves every lookup by Apple id the
-- (apple_id) index it replaces served.
create index podcasts_apple_owner on podcasts (apple_id, popularity desc nulls last, id);
drop index podcasts_apple_id;

-- A sponsor's company is that of its latest ad naming one (docs/advertising.md, "Read models and
-- worker"): read as the first row of this index, not by walking back through every ad of the
-- sponsor until one names a company (a sponsor whose ads name none was read whole, every time).
create index ads_sponsor_company on ads ((coalesce(sponsor_id, sponsor_name)), published_at)
  include (sponsor_company_id) where not is_network_promo and sponsor_company_id is not null;
