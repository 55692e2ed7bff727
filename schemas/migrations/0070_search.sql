-- The search read models (docs/search.md, "Index design"). Each table belongs to one projection.

-- Projection "search_passages": the passage index. One row per transcript window of 6 lines
-- starting at every second line (positions 0, 2, 4, … of the episode's lines in number order).
-- words is the folded text of the window as a tsvector built by the application (never parsed by
-- PostgreSQL), its weights naming where each line sits: the first line B, the second D, the next
-- three A, the sixth C. "Every word in lines start..start+4" is then `word:ABD`, "in lines
-- start+1..start+5" is `word:ACD`, and "in line start" / "in line start+1" is `word:B` / `word:D`:
-- each line is B or D in exactly one row, so per-line counts stay exact. lines holds the row's own
-- two lines (start, start+1) as the transcript stores them, so a result reads only the lines it shows.
create table search_passages (
  episode_id text not null,
  start integer not null,
  words tsvector not null,
  lines jsonb not null,
  primary key (episode_id, start)
);
create index search_passages_words on search_passages using gin (words);

-- Projection "search_passages" too: the producer's mentions of each entity in each episode, as the
-- matcher counts them (distinct lines, plus mentions sent without lines).
create table search_mentions (
  episode_id text not null,
  entity_id text not null,
  mention_count integer not null,
  lines integer[] not null,
  variants text[] not null,
  primary key (entity_id, episode_id)
);
create index search_mentions_episode on search_mentions (episode_id);
