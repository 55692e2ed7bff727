import { openPostgres } from '../../src/db/postgres.ts';
import { searchEpisodes, keywordQuery } from '../../projections/search-passages/queries.ts';
import { around, loadEpisodes, searchItem } from '../../src/search/items.ts';
import { parseKeywords } from '../../src/search/keywords.ts';
const db = openPostgres({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', schema: 'bench_search_big', max: 4 });
const kw = { terms: parseKeywords('"supply chain"'), all: true };
console.log(keywordQuery(kw));
for (let i = 0; i < 3; i++) {
  let t = performance.now();
  const hits = await searchEpisodes(db, {}, kw, 'relevance', 26, 0);
  console.log('sql', (performance.now() - t).toFixed(0), hits.length);
  t = performance.now();
  const wanted = new Map(hits.slice(0,25).map((h) => [h.episode_id, around((h.starts ?? []).slice(0, 20), 2, 7)]));
  const parts = await loadEpisodes(db, hits.slice(0, 25).map((h) => h.episode_id), wanted);
  console.log('load', (performance.now() - t).toFixed(0));
  t = performance.now();
  for (const h of hits.slice(0, 25)) searchItem(parts.get(h.episode_id)!, { keywords: kw, starts: h.starts!.slice(0, 20), bestStart: h.best_start, score: h.score });
  console.log('items', (performance.now() - t).toFixed(0));
}
const r = await db.query(`explain analyze select w.episode_id, ts_rank('{1,1,1,1}', w.words, q, 32) from search_passages w join catalog_episodes e on e.id = w.episode_id, cast($1 as tsquery) q where w.words @@ q`, [keywordQuery(kw)]);
console.log(r.rows.map((x: any) => x['QUERY PLAN']).join('\n'));
await db.close();
