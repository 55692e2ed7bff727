-- The list read model (0221) walked by language too: a page with `language` reads only that
-- language's rows of the ancestry in the page's order, instead of every row of the ancestry until
-- it has its shows (a language with a fifth of the shows read thousands of rows a page).
create index podcast_list_language_share on podcast_list (ancestry, language, share desc, popularity desc nulls last, podcast_id);
create index podcast_list_language_popularity on podcast_list (ancestry, language, popularity desc nulls last, podcast_id);
