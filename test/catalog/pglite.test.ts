import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSrt } from './subtitles.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

describe('the catalog on the embedded PGlite default', () => {
  let h: CatalogHarness;

  beforeAll(async () => {
    h = await catalogHarness('pglite');
    await h.ingest([
      podcastEvent({
        id: 'pod-1',
        title: 'Café Crème',
        slug: 'cafe-creme',
        directory_ids: { apple: '77' },
        popularity: 0.4,
      }),
      podcastEvent({
        id: 'pod-2',
        title: 'Night Owls',
        description: 'Stories for insomniacs',
        popularity: 0.7,
      }),
      episodeOf({
        id: 'ep-1',
        podcastId: 'pod-1',
        podcastTitle: 'Café Crème',
        title: 'Espresso and the art of waiting',
        roles: ['HOST', 'GUEST'],
        ads: 1,
        topics: [{ id: 't', name: 'Coffee', ancestry: 'food/coffee' }],
        extra: {
          clips: [{ id: 'c1', title: 'Hook', start_seconds: 0, end_seconds: 15, engagement_score: 90 }],
        },
      }),
    ]);
  });
  afterAll(() => h.close());

  it('searches forgivingly, filters, serves formats, episodes, clips and subtitles', async () => {
    const search = (await h.get('/v1/podcasts/search', { q: 'cafe creme' })).json();
    expect(search.data[0]).toMatchObject({ id: 'pod-1', match_quality: 'exact' });
    const typo = (await h.get('/v1/podcasts/search', { q: 'nigth owls' })).json();
    expect(typo.data[0]).toMatchObject({ id: 'pod-2', match_quality: 'fuzzy' });
    const described = (await h.get('/v1/podcasts/search', { q: 'insomniacs' })).json();
    expect(described.data).toEqual([expect.objectContaining({ id: 'pod-2', match_quality: 'description' })]);
    const pasted = (await h.get('/v1/podcasts/search', { q: 'Espresso and the art of waiting' })).json();
    expect(pasted.data[0].id).toBe('pod-1');
    expect(
      (await h.get('/v1/podcasts', { topic_id: 'food' })).json().data.map((p: { id: string }) => p.id),
    ).toEqual(['pod-1']);
    expect((await h.get('/v1/podcasts/77/format')).json()).toMatchObject({ episode_count: 1, has_ads: true });
    expect((await h.get('/v1/podcasts/cafe-creme/episodes')).json().data[0].id).toBe('ep-1');
    expect((await h.get('/v1/podcasts/clips', { podcast_id: '77' })).json().data[0].id).toBe('c1');
    expect(
      parseSrt((await h.get('/v1/podcasts/episodes/ep-1/transcript', { format: 'srt' })).body),
    ).toHaveLength(2);
  });
});
