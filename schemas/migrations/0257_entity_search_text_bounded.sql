-- An entity's search_text (its folded name and aliases, for fuzzy and substring search) could reach
-- about 900,000 characters (100 aliases of 500 characters that fold to 18 each); every entity, people
-- and company search then scored that row, 0.2–2 s a search for every tenant. It is now cut at 2,000
-- characters, as the entities projection writes it (docs/knowledge-graph.md, "Entity search").
update entities set search_text = left(search_text, 2000) where length(search_text) > 2000;
