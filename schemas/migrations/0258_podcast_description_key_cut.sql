-- A podcast's search_description (its folded description) is kept to its first 100,000 characters
-- (projections/podcasts/projection.ts, DESCRIPTION_KEY_CHARS; docs/catalog.md, "Forgiving search"):
-- folding can make a description of 100,000 characters many times longer, and each such key cost
-- its full-text index and every query that read it. Keys written before the cut are cut the same
-- way. octet_length reads a stored value's size without decompressing it, and a key of more than
-- 100,000 characters has more than 100,000 bytes.
update podcasts
   set search_description = rtrim(left(search_description, 100000), ' ')
 where octet_length(search_description) > 100000
   and length(search_description) > 100000;
