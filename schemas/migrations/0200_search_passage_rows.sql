-- The passage index in rows of 24 lines at stride 20, each word stored about once (docs/search.md,
-- "Index design"): row `start` holds lines start … start + 23 of the episode (in number order),
-- line k of the row at positions 682·k + 1 … 682·k + 681, no weights. A query finds candidate rows
-- from the GIN index (every term in the row) and checks the 5-line passages on their positions.
--
-- The rows are built by the application (its text folding), so this migration cannot fill them:
-- the projection that writes them has a new name, "search_passage_rows", and starts from the
-- beginning of the event log, filling the table in the background like a rebuild
-- (docs/operations.md, "Migrations", 0200). search_passages stays for processes of the previous
-- version during a rolling upgrade; nothing reads it any more, and a later release drops it.
--
-- A row's words (about 3 KB for 24 lines of speech) stay in the row, uncompressed: a query reads
-- `words` of each candidate row up to three times (rank and the terms' positions), and a value
-- moved to the TOAST table or compressed is fetched and expanded again each time (2–3× slower on
-- common words). Only a row past 8 KB is compressed or moved out.
create table search_passage_rows (
  episode_id text not null,
  start integer not null,
  words tsvector not null,
  primary key (episode_id, start)
) with (toast_tuple_target = 8160);
alter table search_passage_rows alter column words set storage main;
create index search_passage_rows_words on search_passage_rows using gin (words);
