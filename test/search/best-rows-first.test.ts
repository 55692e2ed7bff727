import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KeywordFilter, searchEpisodes } from '../../projections/search-passages/queries.ts';
import type { Queryable } from '../../src/db/db.ts';
import { episodeEvent } from '../fixtures/events.ts';
import type { Engine } from '../support/db.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// A relevance search on several required terms ranks every candidate row, sorts the best ranked
// as episodes rank and checks them in that order until it has the page, and ranks every row only
// when those do not settle the page (docs/search.md, "Ranking the best rows first"): the page is
// the same either way.
const ALL: KeywordFilter = { terms: [['alpha'], ['beta']], all: true };

/** alpha and beta `gap` lines apart at line `at` (both in line `at`, at % 7 words apart, when gap is 0); fillers elsewhere. */
const lines = (pairs: [at: number, gap: number][]) => {
  const text = Array.from({ length: 60 }, (_, i) => `filler ${i}`);
  for (const [at, gap] of pairs) {
    text[at] = gap === 0 ? `alpha ${'x '.repeat(at % 7)}beta` : 'alpha';
    if (gap > 0) text[at + gap] = 'beta';
  }
  return text;
};

const events = [
  // Close pairs rank high; a pair 8 lines apart is a candidate row with no passage.
  ...[0, 1, 2, 3, 4, 5].map((i) =>
    episodeEvent({
      id: `ep-near-${i}`,
      publishedAt: `2026-10-0${i + 1}T08:00:00Z`,
      lines: lines([[i * 3, 0]]),
    }),
  ),
  ...[0, 1, 2].map((i) =>
    episodeEvent({
      id: `ep-far-${i}`,
      publishedAt: `2026-09-0${i + 1}T08:00:00Z`,
      lines: lines([[2, 8 + i]]),
    }),
  ),
  // Equal ranks, told apart by the date, then the id.
  ...['a', 'b', 'c'].map((s) =>
    episodeEvent({ id: `ep-tie-${s}`, publishedAt: '2026-08-01T08:00:00Z', lines: lines([[5, 3]]) }),
  ),
  episodeEvent({
    id: 'ep-mixed',
    publishedAt: '2026-07-01T08:00:00Z',
    lines: lines([
      [1, 9],
      [30, 2],
      [45, 0],
    ]),
  }),
  episodeEvent({ id: 'ep-four', publishedAt: '2026-06-01T08:00:00Z', lines: lines([[10, 4]]) }),
];

/** `db` counting its queries. */
function counting(db: Queryable) {
  const counted = {
    queries: 0,
    db: {
      query(text: string, params?: readonly unknown[]) {
        counted.queries++;
        return db.query(text, params);
      },
    } as Queryable,
  };
  return counted;
}

describe.each<Engine>(['postgres', 'pglite'])('ranking the best rows first (%s)', (engine) => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness(engine);
    await h.ingest(events);
  });
  afterAll(() => h?.close());

  it('gives every page as when every candidate row is checked, whatever rows it checks first', async () => {
    const everyRow = await searchEpisodes(h.db, {}, ALL, 'relevance', 100, 0, 1000);
    expect(everyRow.map((e) => e.episode_id)).not.toContain('ep-far-0');
    expect(everyRow).toHaveLength(11);
    for (const checkedRows of [0, 1, 2, 3, 5, 8, 13])
      for (const [limit, offset] of [
        [1, 0],
        [2, 0],
        [3, 2],
        [5, 4],
        [11, 0],
      ] as const) {
        const page = await searchEpisodes(h.db, {}, ALL, 'relevance', limit, offset, checkedRows);
        expect(page, `${checkedRows} rows, limit ${limit} offset ${offset}`).toEqual(
          everyRow.slice(offset, offset + limit),
        );
      }
  });

  it('settles a first page from the best rows alone, and ranks every row when they do not', async () => {
    const settled = counting(h.db);
    const first = await searchEpisodes(settled.db, {}, ALL, 'relevance', 1, 0, 2);
    expect(first.map((e) => e.episode_id)).toHaveLength(1);
    // The best rows and the page's passages, in one statement.
    expect(settled.queries).toBe(1);
    const unsettled = counting(h.db);
    await searchEpisodes(unsettled.db, {}, ALL, 'relevance', 11, 0, 2);
    // The best rows, then every row ranked with the page's passages.
    expect(unsettled.queries).toBe(2);
    const checkedAll = counting(h.db);
    await searchEpisodes(checkedAll.db, {}, ALL, 'relevance', 11, 0, 1000);
    // Every candidate among the rows checked: their passages are known.
    expect(checkedAll.queries).toBe(1);
  });
});
