-- The passage index stores only its words (docs/search.md, "Index design"): results read the lines
-- they show from the transcripts read model, so each line is no longer kept twice.
alter table search_passages drop column lines;
