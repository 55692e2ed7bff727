import { afterAll, describe, expect, it } from 'vitest';
import { podcastTitle } from '../../bench/catalog/synthetic.ts';
import { distinctiveWords } from '../../projections/podcasts/queries.ts';
import { searchKey } from '../../src/catalog/search-key.ts';
import type { Queryable } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createDb, ENGINES } from '../support/db.ts';

const HITS = 235;
// Typos, dropped and extra words, as the catalog benchmark searches, and a title's first word.
const QUERIES = [
  'happy mind weekly with ravi',
  'the weekly',
  'quiet startup files podcast episodes',
  'the',
  'deep',
];

interface Hit {
  id: string;
  quality: string;
  score: number;
  popularity: number | null;
}
const byId = (hits: Hit[]) => [...hits].sort((a, b) => a.id.localeCompare(b.id));
const args = (q: string) => [q, distinctiveWords(q), [...new Set(q.split(' '))]];

/** The title hits as the page's statement computed them before 0235: 0130's candidates, scored. */
async function formerHits(db: Queryable, q: string): Promise<Hit[]> {
  const { rows } = await db.query<Hit>(
    `select p.id,
            case when p.search_title = $1 then 'exact'
                 when p.search_title like $1 || ' %' then 'prefix' else 'fuzzy' end as quality,
            case when p.search_title = $1 then 1.0
                 else greatest(
                   similarity(p.search_title, $1),
                   word_similarity($1, p.search_title)
                     * (0.7 + 0.3 * least(1.0, length($1)::float8 / greatest(length(p.search_title), 1))),
                   word_similarity(p.search_title, $1)
                     * (0.6 + 0.4 * least(1.0, length(p.search_title)::float8 / greatest(length($1), 1))))
            end as score,
            p.popularity
       from podcasts p
      where p.id in (select podcast_title_candidates($1, $2, $3))`,
    args(q),
  );
  return byId(rows);
}

const hits = async (db: Queryable, q: string, enough: number) =>
  byId(
    (
      await db.query<Hit>(
        `select podcast_id as id, quality, score, popularity from podcast_title_hits($1, $2, $3, $4)`,
        [...args(q), enough],
      )
    ).rows,
  );

describe.each(ENGINES)('migration 0235 (title hits) on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('scores the title candidates as before; with enough exact and prefix titles, returns those only', {
    timeout: 120_000,
  }, async () => {
    const made = await createDb(engine, { migratedBefore: HITS });
    drop = made.drop;
    const { db } = made;
    await db.query(
      `insert into podcasts (id, title, search_title, field_times, popularity)
       select 'pod-' || n, t, t, '{}', case when n % 4 = 0 then null else n / 300.0 end
         from unnest($1::text[]) with ordinality as titles(t, n)`,
      [Array.from({ length: 300 }, (_, i) => searchKey(podcastTitle(i)))],
    );
    const before = new Map<string, Hit[]>();
    for (const q of QUERIES) before.set(q, await formerHits(db, q));
    expect(before.get('the weekly')?.length).toBeGreaterThan(20);

    expect(await migrate(db)).toContain('0235_podcast_title_hits');
    for (const q of QUERIES) {
      const former = before.get(q)!;
      expect(await hits(db, q, 0), q).toEqual(former);
      // With enough > 0 the titles equal to q or starting with it come first (then, when they
      // are too few, every candidate again): each row is the candidate's.
      const starts = former.filter((h) => h.quality !== 'fuzzy');
      const gated = await hits(db, q, starts.length);
      if (starts.length > 0) expect(gated, q).toEqual(starts);
      expect(new Set((await hits(db, q, starts.length + 1)).map((h) => h.id))).toEqual(
        new Set(former.map((h) => h.id)),
      );
    }
  });
});
