import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type EpisodeHit,
  type EpisodeScope,
  type KeywordFilter,
  searchEpisodes,
} from '../../projections/search-passages/queries.ts';
import { episodeEvent } from '../fixtures/events.ts';
import type { Engine } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// The best rows first (docs/search.md, "Ranking the best rows first") against the full ranking on
// a seeded random corpus: the recency sort always ranks every row, so its hits re-sorted by
// relevance are the reference for every page, every scope and every count of rows checked first.

const next = prng(12);
const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
const WORDS = ['alpha', 'beta', 'gamma'];

const events = Array.from({ length: 24 }, (_, i) => {
  const text = Array.from({ length: 30 + Math.floor(next() * 60) }, (_, k) => `filler${k % 9} word`);
  // Every eighth episode has the same matching lines (the same rank) as the others of its kind;
  // five days for all, so equal ranks are told apart by the date, then the id.
  const copy = i % 8 === 7;
  for (let n = copy ? 0 : 1 + Math.floor(next() * 6); n > 0; n--) {
    const at = Math.floor(next() * (text.length - 10));
    const gap = pick([0, 0, 1, 2, 3, 4, 5, 7, 12]);
    text[at] = `${pick(['', 'so ', 'and the '])}${pick(WORDS)} ${pick(['', 'alpha beta ', 'beta '])}`;
    text[at + gap] = `${text[at + gap]} ${pick(WORDS)} ${pick(['', 'gamma'])}`;
  }
  if (copy) text.splice(0, 6, 'alpha beta', 'gamma', 'x', 'x', 'x', 'beta alpha gamma');
  return episodeEvent({
    id: `ep-${String(i).padStart(2, '0')}`,
    publishedAt: `2026-10-${String(1 + (i % 5)).padStart(2, '0')}T08:00:00Z`,
    language: i % 3 === 0 ? 'de' : 'en-US',
    lines: text,
    ...(i % 2 ? { podcast: { id: 'pod-2', title: 'Other Talk', language: 'en' } } : {}),
  });
});

// Two rows of one episode with the same rank: the best passage is the first row's.
events.push(
  episodeEvent({
    id: 'ep-twin',
    publishedAt: '2026-10-02T08:00:00Z',
    lines: Array.from({ length: 70 }, (_, k) =>
      k === 3 || k === 43 ? 'alpha so beta gamma' : `filler${k % 9} word`,
    ),
  }),
);

const FILTERS: KeywordFilter[] = [
  { terms: [['alpha'], ['beta']], all: true },
  { terms: [['alpha'], ['beta'], ['gamma']], all: true },
  { terms: [['alpha', 'beta'], ['gamma']], all: true },
  { terms: [['beta'], ['gamma']], all: true },
];
const SCOPES: EpisodeScope[] = [
  {},
  { language: 'en' },
  { since: new Date('2026-10-02T00:00:00Z'), until: new Date('2026-10-05T00:00:00Z') },
  { episodeId: 'ep-07' },
  { podcastId: 'pod-2', since: new Date('2026-10-02T00:00:00Z') },
];

/** Every matching episode by relevance, from the full ranking (the recency sort's hits). */
async function reference(h: SearchHarness, scope: EpisodeScope, keywords: KeywordFilter) {
  const hits = await searchEpisodes(h.db, scope, keywords, 'recency', 1000, 0);
  return hits.sort(
    (a, b) =>
      b.score - a.score ||
      b.published_at.getTime() - a.published_at.getTime() ||
      (a.episode_id < b.episode_id ? 1 : -1),
  );
}

describe.each<Engine>(['postgres', 'pglite'])('best rows first against the full ranking (%s)', (engine) => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness(engine);
    await h.ingest(events);
  }, 240_000);
  afterAll(() => h?.close());

  it('gives every page of every scope as the full ranking does, item for item', {
    timeout: 240_000,
  }, async () => {
    let compared = 0;
    for (const keywords of FILTERS)
      for (const scope of SCOPES) {
        const all = await reference(h, scope, keywords);
        if (scope.episodeId === undefined) expect(all.length, JSON.stringify(keywords)).toBeGreaterThan(5);
        for (const checkedRows of [0, 1, 2, 5, 13, 1000])
          for (const [limit, offset] of [
            [1, 0],
            [3, 0],
            [3, 3],
            [4, 5],
            [7, 7],
            [all.length + 1, 0],
          ] as const) {
            const page: EpisodeHit[] = await searchEpisodes(
              h.db,
              scope,
              keywords,
              'relevance',
              limit,
              offset,
              checkedRows,
            );
            expect(page, `${JSON.stringify({ keywords, scope, checkedRows, limit, offset })}`).toEqual(
              all.slice(offset, offset + limit),
            );
            compared++;
          }
      }
    expect(compared).toBe(FILTERS.length * SCOPES.length * 6 * 6);
  });
});
