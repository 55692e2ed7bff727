import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podcastLinksProjection } from '../../projections/podcast-links/projection.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { entityEvent } from '../fixtures/events.ts';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

let h: AdvertisingHarness;
const at = '2026-11-10T06:00:00Z';

/** An episode whose guests go by the given names (the labels the links keep). */
const withNames = (episode: ReturnType<typeof episodeWith>, names: Record<string, string>) => ({
  ...episode,
  speakers: episode.speakers?.map((s) =>
    s.person_id && names[s.person_id] ? { ...s, name: names[s.person_id] } : s,
  ),
});

/**
 * A is the show asked about. Z shares its guest ga, its sponsor s1 and its topic t1; C shares only
 * t1, so Z is the closer show. Both had guest gx on, whom no entity names: Z calls them
 * "Xavier Zed", C "X. from C". Both had sponsor s2 on. Guest gn is an entity, on Z only.
 */
beforeAll(async () => {
  h = await advertisingHarness();
  await h.ingest([
    entityEvent({ id: 'gn', name: 'Nora Named', slug: 'nora-named' }),
    episodeWith({
      id: 'A1',
      podcast: 'A',
      publishedAt: at,
      guests: ['ga'],
      topics: ['t1'],
      ads: [{ sponsor: 's1' }],
    }),
    withNames(
      episodeWith({
        id: 'Z1',
        podcast: 'Z',
        publishedAt: at,
        guests: ['ga', 'gx', 'gn'],
        topics: ['t1'],
        ads: [{ sponsor: 's1' }, { sponsor: 's2' }],
      }),
      { gx: 'Xavier Zed' },
    ),
    withNames(
      episodeWith({
        id: 'C1',
        podcast: 'C',
        publishedAt: at,
        guests: ['gx'],
        topics: ['t1', 't2'],
        ads: [{ sponsor: 's2' }],
      }),
      { gx: 'X. from C' },
    ),
  ]);
});
afterAll(() => h.close());

const json = async (url: string, query: Record<string, string> = {}) => {
  const response = await h.get(url, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
};

describe('GET /v1/podcasts/{id} related and recommended fields', () => {
  it('gives the first five of /related, /recommendations/guests and /recommendations/sponsors', async () => {
    const podcast = await json('/v1/podcasts/A');
    const first = { limit: '5' };
    expect(podcast.related.map((r: { podcast: { id: string } }) => r.podcast.id)).toEqual(['Z', 'C']);
    expect(podcast.related).toEqual((await json('/v1/podcasts/A/related', first)).data);
    expect(podcast.recommended_guests).toEqual(
      (await json('/v1/podcasts/A/recommendations/guests', first)).data,
    );
    expect(podcast.recommended_sponsors).toEqual(
      (await json('/v1/podcasts/A/recommendations/sponsors', first)).data,
    );
    expect(podcast.recommended_guests.map((g: { person: { id: string } }) => g.person.id)).toEqual([
      'gx',
      'gn',
    ]);
    expect(podcast.recommended_sponsors.map((s: { sponsor: { id: string } }) => s.sponsor.id)).toEqual([
      's2',
    ]);
  });

  it('names a guest no entity knows as the closest related show does', async () => {
    const [gx, gn] = (await json('/v1/podcasts/A')).recommended_guests;
    expect(gx).toMatchObject({ person: { id: 'gx', name: 'Xavier Zed' }, via: [{ id: 'Z' }, { id: 'C' }] });
    expect(gn).toMatchObject({ person: { id: 'gn', name: 'Nora Named', slug: 'nora-named' } });
  });

  it('serves a kept answer only while the links it was computed from are unchanged', async () => {
    // A URL no other test asks for, so its first answer is computed here.
    const url = '/v1/podcasts/A?topic_limit=1';
    const related = async () =>
      (await json(url)).related.map((r: { podcast: { id: string } }) => r.podcast.id) as string[];
    // Rows that earlier code of the links projection wrote wrongly; a rebuild puts them right
    // and ends at the same position, so only the time it was written tells the cache.
    await h.db.query("delete from podcast_links where podcast_id = 'Z'");
    expect(await related()).toEqual(['C']);
    await rebuildProjection(h.db, h.store, podcastLinksProjection);
    expect(await related()).toEqual(['Z', 'C']);
  });
});
