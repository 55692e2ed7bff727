import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ada, entities, epFox, epNear, epSg } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

describe('search on the embedded PGlite default', () => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness('pglite');
    await h.ingest([...entities, epFox, epSg, epNear, ada]);
  });
  afterAll(() => h?.close());

  it('answers keyword search, mentions and timeseries from the same index', async () => {
    const search = await h.json('/v1/podcasts/episodes/search', { keyword_search: 'SOCIÉTÉ "generale"' });
    expect(search.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-sg']);
    const mentions = await h.json('/v1/podcasts/mentions', { entity_id: 'ent-ada' });
    expect(mentions.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual([
      'ep-sg',
      'ep-near',
    ]);
    const series = await h.json('/v1/podcasts/mentions/timeseries', {
      entity_id: 'ent-ada',
      interval: 'month',
      since: '2026-09-01',
      until: '2026-12-01',
    });
    expect(series.body.buckets.map((b: { mention_count: number }) => b.mention_count)).toEqual([1, 0, 1]);
  });

  it("replaces an episode's rows when it is re-sent", async () => {
    await h.ingest([
      { ...epNear, event_id: 'resend-near', occurred_at: '2026-11-21T10:00:00Z', transcript: { lines: [] } },
    ]);
    const search = await h.json('/v1/podcasts/episodes/search', { keyword_search: 'chips market' });
    expect(search.body.data).toEqual([]);
  });
});
