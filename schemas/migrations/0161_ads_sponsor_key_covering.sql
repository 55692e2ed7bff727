-- A sponsor's ads counted from the index alone (the total_ads and last_ad_at of a sponsor
-- recommendation, docs/advertising.md, "Recommendations"): ads_sponsor_key (0080) also holds the
-- two columns its key is computed from, so reading them no longer visits every ad's row (a
-- popular sponsor's thousands of ads cost a page each).
-- Built first under another name: the build holds off writes to ads until this migration commits,
-- but reads go on; only dropping the old index locks them out, for the moment before the commit.
create index ads_sponsor_key_covering on ads ((coalesce(sponsor_id, sponsor_name)), published_at)
  include (podcast_id, episode_id, read_type, sponsor_id, sponsor_name) where not is_network_promo;
drop index ads_sponsor_key;
alter index ads_sponsor_key_covering rename to ads_sponsor_key;
