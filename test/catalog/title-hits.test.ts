// A search's title matches found and scored in memory (src/catalog/title-trigrams.ts, docs/catalog.md
// "Title matches in memory") are those podcast_title_hits finds with its trigram index, to the bit:
// pg_trgm's trigrams, similarity and word similarity in single precision, podcast_title_score in
// double; titles of other characters and shows written since are left to it (migration 0268).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podcastTitle } from '../../bench/catalog/synthetic.ts';
import { titleQuery } from '../../projections/podcasts/queries.ts';
import { searchKey } from '../../src/catalog/search-key.ts';
import {
  type TitleHits,
  TitleTrigrams,
  trigramSequence,
  wordSimilarity,
} from '../../src/catalog/title-trigrams.ts';
import type { Queryable } from '../../src/db/db.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';

const WORDS = [
  'the',
  'daily',
  'kitchen',
  'kitchn',
  'stories',
  'a',
  'b',
  '7',
  '42',
  'x1',
  'lab',
  'video',
  'history',
  'science',
  'podcast',
  'with',
  'mind',
  'weekly',
  'straße',
  '東京',
  'ümlaut',
];

interface Hit {
  podcast_id: string;
  quality: string;
  score: number;
  popularity: number | null;
}

async function hits(db: Queryable, q: string) {
  const t = titleQuery(q);
  const { rows } = await db.query<Hit>(
    'select * from podcast_title_hits($1, $2, $3, 0) order by podcast_id, quality',
    [q, t.words, t.allWords],
  );
  return rows;
}

/** The matches as a search's statement takes them with the index's: its own, less the shows written since, and the function's for the rest. */
async function combined(db: Queryable, q: string, found: TitleHits, seen: string) {
  const { rows: popular } = await db.query<{ id: string; popularity: number | null }>(
    'select id, popularity from podcasts where id = any($1::text[]) and id not in (select podcasts_written_since($2))',
    [found.ids, seen],
  );
  const popularity = new Map(popular.map((r) => [r.id, r.popularity]));
  const own = found.ids.flatMap((id, i) =>
    popularity.has(id)
      ? [
          {
            podcast_id: id,
            quality: found.qualities[i] as string,
            score: found.scores[i] as number,
            popularity: popularity.get(id) ?? null,
          },
        ]
      : [],
  );
  const t = titleQuery(q);
  const { rows: rest } = await db.query<Hit>('select * from podcast_title_hits_among($1, $2, $3, $4, $5)', [
    q,
    t.words,
    t.allWords,
    found.others,
    seen,
  ]);
  return [...own, ...rest].sort((a, b) =>
    a.podcast_id < b.podcast_id ? -1 : a.podcast_id > b.podcast_id ? 1 : a.quality < b.quality ? -1 : 1,
  );
}

/** The index as an api process would hold it, and the snapshot it was read in. */
async function indexOf(db: Queryable) {
  const titles = new TitleTrigrams();
  const { rows } = await db.query<{ id: string; search_title: string; seen: string }>(
    'select id, search_title, pg_current_snapshot()::text as seen from podcasts',
  );
  for (const row of rows) titles.set(row.id, row.search_title);
  const { rows: head } = await db.query<{ seen: string }>('select pg_current_snapshot()::text as seen');
  return { titles, seen: (head[0] as { seen: string }).seen };
}

const randomTitle = (random: () => number) =>
  Array.from(
    { length: 1 + Math.floor(random() * 5) },
    () => WORDS[Math.floor(random() * WORDS.length)] as string,
  ).join(' ');

/** pg_trgm's trigrams of a plain text (show_trgm), undefined for other text. */
const trigramsOf = (text: string) => {
  const sequence = trigramSequence(text);
  return sequence && [...new Set(sequence)];
};

describe('trigramSequence', () => {
  it('leaves text of other characters than a–z, digits and spaces to PostgreSQL', () => {
    expect(trigramsOf('cafe 42')).toBeDefined();
    for (const text of ['straße', '東京', 'Cafe', 'a-b', 'tab\there'])
      expect(trigramsOf(text)).toBeUndefined();
  });
});

describe.each(ENGINES)('title candidates on %s', (engine) => {
  let db: Queryable;
  let drop: (() => Promise<void>) | undefined;
  const random = prng(268);
  const queries = [
    ...Array.from({ length: 40 }, (_, i) => searchKey(podcastTitle(i * 7))),
    ...Array.from({ length: 80 }, () => randomTitle(random)),
    'happy mind weekly with rav',
    'the',
    'a',
    '7',
    'kitchen stories podcast episodes',
  ];

  beforeAll(async () => {
    const made = await createDb(engine);
    db = made.db;
    drop = made.drop;
    const titles = [
      ...Array.from({ length: 300 }, (_, i) => searchKey(podcastTitle(i))),
      ...Array.from({ length: 300 }, () => randomTitle(random)),
      '',
      'a',
      'the the the',
    ];
    await db.query(
      `insert into podcasts (id, title, search_title, field_times, popularity)
       select 'pod-' || n, t, t, '{}', case when n % 4 = 0 then null else n / 600.0 end
         from unnest($1::text[]) with ordinality as titles(t, n)`,
      [titles],
    );
  }, 120_000);
  afterAll(() => drop?.());

  it('makes the trigrams pg_trgm makes', async () => {
    for (const text of ['kitchen stories', 'a b 7', 'x1 42 the', 'the the the', 'aa', '']) {
      const { rows } = await db.query<{ t: string[] }>('select show_trgm($1) as t', [text]);
      expect([...(trigramsOf(text) ?? [])].sort(), text).toEqual([...(rows[0]?.t ?? [])].sort());
    }
  });

  it('computes similarity and word similarity as pg_trgm does, to the bit', async () => {
    const texts = [...queries.slice(0, 60), 'a', 'the the the', 'kitchen kitchen stories', ''].filter(
      (text) => trigramsOf(text) !== undefined,
    );
    const pairs = texts.flatMap((a, i) =>
      texts.slice(i, i + 12).flatMap((b) => [
        [a, b],
        [b, a],
      ]),
    );
    const { rows } = await db.query<{ w: number }>(
      'select word_similarity(a, b)::float8 as w from unnest($1::text[], $2::text[]) as p(a, b)',
      [pairs.map(([a]) => a), pairs.map(([, b]) => b)],
    );
    for (const [i, [a, b]] of pairs.entries())
      expect(
        wordSimilarity(trigramSequence(a as string) ?? [], trigramSequence(b as string) ?? []),
        `${a} / ${b}`,
      ).toBe(rows[i]?.w);
  });

  it('finds and scores what the trigram index finds', async () => {
    const { titles, seen } = await indexOf(db);
    let given = 0;
    for (const q of queries) {
      const found = titles.hits(titleQuery(q));
      if (!found) {
        // only a q of other characters is left to the trigram index
        expect(trigramsOf(q), q).toBeUndefined();
        continue;
      }
      given++;
      expect(await combined(db, q, found, seen), q).toEqual(await hits(db, q));
    }
    expect(given).toBeGreaterThan(queries.length * 0.8);
  });

  it('leaves the shows written after its snapshot to the statement', async () => {
    const { titles, seen } = await indexOf(db);
    const q = 'kitchen stories';
    const found = titles.hits(titleQuery(q)) as TitleHits;
    // a show renamed to match, one renamed away, one added
    await db.query(`update podcasts set search_title = 'kitchen stories daily' where id = 'pod-3'`);
    const [first] = await hits(db, q);
    await db.query(`update podcasts set search_title = 'nothing alike' where id = $1`, [first?.podcast_id]);
    await db.query(
      `insert into podcasts (id, title, search_title, field_times) values ('pod-new', 'x', 'the kitchen stories', '{}')`,
    );
    const now = await combined(db, q, found, seen);
    expect(now).toEqual(await hits(db, q));
    expect(now.map((h) => h.podcast_id)).toEqual(expect.arrayContaining(['pod-3', 'pod-new']));
    expect(now.map((h) => h.podcast_id)).not.toContain(first?.podcast_id);
  });

  it('follows titles as they change and compacts what it no longer needs', () => {
    const titles = new TitleTrigrams();
    for (let round = 0; round < 5; round++)
      for (let i = 0; i < 1_000; i++)
        titles.set(`pod-${i}`, i % 2 === round % 2 ? 'kitchen stories' : 'video lab');
    expect(new Set(titles.hits(titleQuery('kitchen stories'))?.ids)).toEqual(
      new Set(Array.from({ length: 500 }, (_, i) => `pod-${2 * i}`)),
    );
    titles.set('pod-0', null);
    expect(titles.hits(titleQuery('kitchen stories'))?.ids).not.toContain('pod-0');
    // a catalog of many titles whose letters pg_trgm classes by locale is left to the trigram index
    for (let i = 0; i < 200; i++) titles.set(`other-${i}`, `straße ${i}`);
    expect(titles.hits(titleQuery('kitchen stories'))?.others).toHaveLength(200);
    titles.set('other-200', '東京');
    expect(titles.hits(titleQuery('kitchen stories'))).toBeUndefined();
  });
});
