-- The podcast_links projection counts a batch's changes into the shows' rows instead of recounting
-- every link of each show it touches (docs/advertising.md, "Read models and worker"); the few
-- (show, kind, key) it must still recount are found by this index, which also serves every read by
-- show the (podcast_id) index it replaces served.
create index podcast_link_episodes_show_key on podcast_link_episodes (podcast_id, kind, key);
drop index podcast_link_episodes_podcast;
