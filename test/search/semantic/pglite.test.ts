import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProvider } from '../../../src/search/semantic/word-vectors.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { type SearchHarness, searchHarness } from '../support.ts';

describe('semantic search on the embedded PGlite default', () => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness('pglite', builtinProvider);
    await h.ingest([
      episodeEvent({
        id: 'ep-ev',
        publishedAt: '2026-10-01T08:00:00Z',
        lines: [
          'My new EV drives four hundred miles between charges.',
          'The lithium pack makes that possible.',
        ],
      }),
      episodeEvent({
        id: 'ep-bread',
        publishedAt: '2026-10-02T08:00:00Z',
        lines: ['I keep a starter going in my kitchen.', 'The loaf comes out with a crackling crust.'],
      }),
    ]);
  }, 120_000);
  afterAll(() => h?.close());

  it('embeds transcripts, ranks by meaning and counts a semantic timeseries', async () => {
    const search = await h.json('/v1/podcasts/episodes/search', {
      semantic_search: 'electric car battery range',
    });
    expect(search.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-ev']);
    const hybrid = await h.json('/v1/podcasts/episodes/search', {
      semantic_search: 'baking bread at home',
      keyword_search: 'loaf',
    });
    expect(hybrid.body.data.map((i: { match: { source: string } }) => i.match.source)).toEqual(['hybrid']);
    const series = await h.json('/v1/podcasts/episodes/timeseries', {
      semantic_search: 'electric car battery range',
      since: '2026-09-01',
      until: '2026-11-01',
      interval: 'month',
    });
    expect(series.body.buckets.map((b: { episode_count: number }) => b.episode_count)).toEqual([0, 1]);
  });
});
