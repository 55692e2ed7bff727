-- Related shows and recommendations score a show by its profile: at most a fixed number of keys of
-- each kind, those on most of its episodes, ties to the smaller key (docs/advertising.md, "Scores",
-- Profiles). Each kind's profile is the first rows of this index, read without touching the show's
-- other keys (a valid show may hold thousands). It also serves every read by show, and a
-- whole profile from the index alone, which the (podcast_id, kind, key) index it replaces served.
-- The build holds off writes to podcast_links until this migration commits, but reads go on; only
-- dropping the old index locks them out, for the moment before the commit.
create index podcast_links_top on podcast_links (podcast_id, kind, episode_count desc, key);
drop index podcast_links_profile;
