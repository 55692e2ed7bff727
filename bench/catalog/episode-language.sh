#!/bin/bash
# The episodes list's statement with and without the show's language fallback (docs/catalog.md,
# "An episode's language"): 200,000 episodes of 10,000 shows, half naming no language, in a schema
# of its own (dropped at the end); the median execution time of 11 EXPLAIN ANALYZE runs each.
# Run it under the bench lock.
set -euo pipefail
P="psql ${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} -Atq"
$P <<'SQL'
drop schema if exists bench_episode_language cascade;
create schema bench_episode_language;
set search_path = bench_episode_language;
create table podcasts (id text primary key, language text, title text);
create table catalog_episodes (id text primary key, podcast_id text not null, language text,
  published_at timestamptz not null, title text);
create index catalog_episodes_published on catalog_episodes (published_at desc, id);
insert into podcasts select 'pod-' || i, (array['en','en-US','fr','de','es'])[1 + i % 5], 'Show ' || i
  from generate_series(0, 9999) i;
insert into catalog_episodes select 'ep-' || i, 'pod-' || (i % 10000), case when i % 2 = 0 then 'en' end,
  timestamptz '2026-11-01' - make_interval(mins => i), 'Episode ' || i from generate_series(0, 199999) i;
analyze;
SQL
LANGUAGE_OF="coalesce(e.language, (select lp.language from podcasts lp where lp.id = e.podcast_id))"
median() { # label, statement
  for _ in $(seq 11); do
    $P -c "set search_path = bench_episode_language; explain (analyze, timing off, format json) $2" |
      python3 -c "import json,sys; print(json.load(sys.stdin)[0]['Execution Time'])"
  done | sort -n | sed -n 6p | xargs printf '%-24s %8.3f ms\n' "$1"
}
for round in A B; do
  for code in none en pt; do
    before='' after=''
    if [ "$code" != none ]; then
      before="where lower(split_part(e.language, '-', 1)) = '$code'"
      after="where lower(split_part(replace($LANGUAGE_OF, '_', '-'), '-', 1)) = '$code'"
    fi
    median "$round before $code" "select id, language from catalog_episodes e $before order by published_at desc, id desc limit 26"
    median "$round after $code" "select id, $LANGUAGE_OF as language from catalog_episodes e $after order by published_at desc, id desc limit 26"
  done
done
uptime
$P -c 'drop schema bench_episode_language cascade'
