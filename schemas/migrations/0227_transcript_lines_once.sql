-- Projection "transcripts" stores each transcript's lines once, in transcript_chunks, which 0170
-- filled from these rows and the projection has kept in step since; whole transcripts are read by
-- joining their chunks (docs/catalog.md, "Read models"). The chunks become text: written without
-- PostgreSQL parsing them as JSON, cast where SQL reads inside them. json to text is binary
-- coercible, so the rows are not rewritten; the dropped column's values are freed as rows are
-- rewritten (or by VACUUM FULL). A new type drops the column's compression: lz4 again where the
-- server has it (as 0220; PGlite keeps pglz).
alter table transcripts drop column lines;
alter table transcript_chunks alter column lines type text;
do $$
begin
  alter table transcript_chunks alter column lines set compression lz4;
exception when feature_not_supported then
  null;
end
$$;
