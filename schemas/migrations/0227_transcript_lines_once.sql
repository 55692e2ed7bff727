-- Projection "transcripts" stores each transcript's lines once, in transcript_chunks, which 0170
-- filled from these rows and the projection has kept in step since; whole transcripts are read by
-- joining their chunks (docs/catalog.md, "Read models"). A transcript a process older than 0170
-- wrote without chunks during a rolling upgrade gets them here, before its lines go.
insert into transcript_chunks (episode_id, chunk, lines)
select t.episode_id, (l.n - 1) / 16, json_agg(l.line order by l.n)
  from transcripts t
  cross join lateral json_array_elements(t.lines) with ordinality as l(line, n)
 where not exists (select from transcript_chunks c where c.episode_id = t.episode_id)
 group by t.episode_id, (l.n - 1) / 16;
alter table transcripts drop column lines;
-- The chunks become text: written without PostgreSQL parsing them as JSON, cast where SQL reads
-- inside them. The table is rewritten (json to text is an I/O conversion); a new type drops the
-- column's compression, so lz4 is set in the same statement, for the rows rewritten too, where the
-- server has it (as 0220; PGlite keeps pglz).
do $$
begin
  alter table transcript_chunks alter column lines type text, alter column lines set compression lz4;
exception when feature_not_supported then
  alter table transcript_chunks alter column lines type text;
end
$$;
