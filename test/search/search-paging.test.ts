import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { episodeEvent } from '../fixtures/events.ts';
import { type SearchHarness, searchHarness } from './support.ts';

const SEARCH = '/v1/podcasts/episodes/search';
let h: SearchHarness;

// 40 episodes in few distinct scores (1 to 4 lines naming the wombat) and few distinct times.
beforeAll(async () => {
  h = await searchHarness('postgres');
  await h.ingest(
    Array.from({ length: 40 }, (_, i) =>
      episodeEvent({
        id: `ep-${String(i).padStart(2, '0')}`,
        lines: Array.from({ length: 12 }, (_, k) => (k < (i % 4) + 1 ? 'The wombat fund grew.' : 'Nothing.')),
        publishedAt: `2026-0${(i % 3) + 1}-01T00:00:00Z`,
      }),
    ),
  );
  // Ties: the koala at line 3 and again at line 30 (in another segment), once or twice there.
  const koalas = (at30: string) =>
    Array.from({ length: 36 }, (_, k) => (k === 2 ? 'A koala.' : k === 29 ? at30 : 'Nothing.'));
  const segments = [
    { id: 'seg-first', title: 'First', number: 1, start_line: 1, end_line: 12 },
    { id: 'seg-second', title: 'Second', number: 2, start_line: 25, end_line: 36 },
  ];
  await h.ingest(
    ['ep-tie-a', 'ep-tie-c', 'ep-tie-b', 'ep-tie-later'].map((id) =>
      episodeEvent({
        id,
        lines: koalas(id === 'ep-tie-later' ? 'A koala, a koala.' : 'A koala.'),
        publishedAt: '2026-04-01T00:00:00Z',
        segments: segments.map((s) => ({ ...s, id: `${id}-${s.id}` })),
      }),
    ),
  );
});
afterAll(() => h?.close());

interface Item {
  episode: { id: string; published_at: string };
  match: { relevance_score: number };
}

async function allPages(query: Record<string, string>, limit: number) {
  const seen: Item[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const { status, body } = await h.json(SEARCH, {
      ...query,
      limit: String(limit),
      ...(cursor ? { cursor } : {}),
    });
    expect(status).toBe(200);
    seen.push(...body.data);
    if (!body.has_more) break;
    cursor = body.cursor;
  }
  return seen;
}

describe('search paging', () => {
  it.each([
    ['relevance', 1],
    ['relevance', 7],
    ['recency', 3],
  ] as const)('by %s in pages of %i lists the one-page order exactly', async (sort, limit) => {
    const query = { keyword_search: 'wombat fund', sort };
    const whole = await allPages(query, 100);
    expect(whole).toHaveLength(40);
    const paged = await allPages(query, limit);
    expect(paged.map((item) => item.episode.id)).toEqual(whole.map((item) => item.episode.id));
    const keys = whole.map((item) =>
      sort === 'relevance' ? -item.match.relevance_score : -Date.parse(item.episode.published_at),
    );
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
    expect(new Set(keys).size).toBeGreaterThan(1);
  });

  it('orders equal scores and times by id, newest id first, in every sort and page size', async () => {
    for (const sort of ['relevance', 'recency'])
      for (const limit of [1, 2, 100]) {
        const ids = (await allPages({ keyword_search: 'koala', sort }, limit)).map((item) => item.episode.id);
        // By relevance ep-tie-later ranks first; by recency all four tie and it is the greatest id.
        expect(ids).toEqual(['ep-tie-later', 'ep-tie-c', 'ep-tie-b', 'ep-tie-a']);
      }
  });

  it('takes the best passage from the first of the best-ranked rows', async () => {
    const { body } = await h.json(SEARCH, { keyword_search: 'koala', limit: '100' });
    const segmentOf = new Map(
      body.data.map((item: { episode: { id: string }; segment?: { id: string } }) => [
        item.episode.id,
        item.segment?.id,
      ]),
    );
    expect(Object.fromEntries(segmentOf)).toEqual({
      'ep-tie-a': 'ep-tie-a-seg-first',
      'ep-tie-b': 'ep-tie-b-seg-first',
      'ep-tie-c': 'ep-tie-c-seg-first',
      'ep-tie-later': 'ep-tie-later-seg-second',
    });
  });
});
