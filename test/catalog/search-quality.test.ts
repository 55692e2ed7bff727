import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { CASES, random, SHOWS } from './search-quality.cases.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

describe('forgiving podcast search over 600 generated shows', () => {
  let h: CatalogHarness;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    const events: IngestEvent[] = SHOWS.flatMap((show, n) => [
      podcastEvent({ id: show.id, title: show.title, popularity: Math.round(random() * 1000) / 1000 }),
      ...show.episodes.map((title, e) =>
        episodeOf({
          id: `${show.id}-ep${e}`,
          podcastId: show.id,
          podcastTitle: show.title,
          title,
          publishedAt: `2026-0${(n % 9) + 1}-1${e}T06:00:00Z`,
        }),
      ),
    ]);
    await h.ingest(events);
  }, 300_000);
  afterAll(() => h.close());

  it(`ranks the expected show first for at least 90% of ${CASES.length} queries (typos, extra and missing words, pasted episode titles, accents)`, async () => {
    const misses: string[] = [];
    for (const c of CASES) {
      const res = await h.get('/v1/podcasts/search', { q: c.query, limit: '5' });
      expect(res.statusCode).toBe(200);
      const ids = res.json().data.map((p: { id: string }) => p.id);
      if (ids[0] !== c.expected)
        misses.push(
          `${c.kind}: "${c.query}" → ${ids.slice(0, 3).join(', ')} (expected ${c.expected} "${SHOWS.find((s) => s.id === c.expected)?.title}")`,
        );
    }
    const share = 1 - misses.length / CASES.length;
    console.info(
      `forgiving search: ${Math.round(share * 1000) / 10}% of ${CASES.length} queries rank the expected show first`,
    );
    if (misses.length) console.info(misses.join('\n'));
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    expect(share).toBeGreaterThanOrEqual(0.9);
  });
});
