-- lz4 for the transcripts' lines where the server has it (as 0002 does for events): pglz, the
-- default, doubles the cost of storing a 2,000-line transcript and its chunks (docs/search.md,
-- "Where the targets stand"). Rows already stored keep pglz until rewritten; both read the same.
-- PGlite has no lz4 and keeps pglz.
do $$
begin
  alter table transcripts alter column lines set compression lz4;
  alter table transcript_chunks alter column lines set compression lz4;
exception when feature_not_supported then
  null;
end
$$;
