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
});
