-- A segment's own audio and, for an ad segment, how it is read (docs/catalog.md, "Segments and
-- clips"). No event could carry them before (the schema refused them), so every stored row has
-- neither and a rebuild gives the same rows: nothing to fill in.
alter table segments add column audio_url text, add column read_type text;
