-- Projection "transcripts" too: the same lines in chunks of 16 (positions 16·chunk … 16·chunk + 15
-- of the episode's lines in number order), so a result reads only the lines it shows without
-- parsing the whole transcript (docs/search.md, "Lines are not copied").
create table transcript_chunks (
  episode_id text not null,
  chunk integer not null,
  lines json not null,
  primary key (episode_id, chunk)
);

insert into transcript_chunks (episode_id, chunk, lines)
select t.episode_id, (l.n - 1) / 16, json_agg(l.line order by l.n)
  from transcripts t
  cross join lateral json_array_elements(t.lines) with ordinality as l(line, n)
 group by t.episode_id, (l.n - 1) / 16;
