-- A sponsor's ads counted from the index alone (the total_ads and last_ad_at of a sponsor
-- recommendation, docs/advertising.md, "Recommendations"): ads_sponsor_key (0080) also holds the
-- two columns its key is computed from, so reading them no longer visits every ad's row (a
-- popular sponsor's thousands of ads cost a page each).
drop index ads_sponsor_key;
create index ads_sponsor_key on ads ((coalesce(sponsor_id, sponsor_name)), published_at)
  include (podcast_id, episode_id, read_type, sponsor_id, sponsor_name) where not is_network_promo;
