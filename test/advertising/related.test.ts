import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityEvent } from '../fixtures/events.ts';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

let h: AdvertisingHarness;
const at = '2026-11-10T06:00:00Z';

/**
 * The graph (docs/advertising.md, "Scores"): P is the show asked about.
 *   P: episodes P1 (guest g1, sponsor s1, topics t1 t2) and P2 (guest g2, topic t1); publisher pub1
 *   Q: Q1 (guests g1 g2 g3, sponsors s1 s2, topics t1 t2); publisher pub1
 *   R: R1 (guest g1, topic t1)
 *   S: S1 (guest g5, topic t9); publisher pub1
 *   T: T1 (sponsors s1 s9, topic t8)
 *   U: U1 (guest g4, topic t7): shares nothing
 * Expected related to P, by hand:
 *   Q = 0.3·2/3 + 0.2·1/5 + 0.2·1 (Jaccard) + 0.2·3/√10 (cosine of (2,1),(1,1)) + 0.1 = 0.7297 strong
 *   R = 0.3·1/3 + 0.2·0.5 + 0.2·2/√5 = 0.3789 moderate
 *   S = 0.1 (same publisher) weak;  T = 0.2·1/5 = 0.04 weak;  U absent
 */
beforeAll(async () => {
  h = await advertisingHarness();
  await h.ingest([
    entityEvent({ id: 'g3', name: 'Gina Three', slug: 'gina-three' }),
    entityEvent({
      id: 'c-two',
      name: 'Two Corp',
      slug: 'two-corp',
      entity_type: 'COMPANY',
      company: { domain: 'two.example' },
    }),
    entityEvent({
      id: 'maria',
      name: 'Maria Marketer',
      person: { company: 'Two Corp', title: 'Head of Marketing' },
    }),
    entityEvent({ id: 'carl', name: 'Carl Chief', person: { company: 'two.example', title: 'CEO' } }),
    episodeWith({
      id: 'P1',
      podcast: 'P',
      publisher: 'pub1',
      publishedAt: at,
      guests: ['g1'],
      topics: ['t1', 't2'],
      ads: [{ sponsor: 's1' }],
    }),
    episodeWith({
      id: 'P2',
      podcast: 'P',
      publisher: 'pub1',
      publishedAt: '2026-11-11T06:00:00Z',
      guests: ['g2'],
      topics: ['t1'],
    }),
    episodeWith({
      id: 'Q1',
      podcast: 'Q',
      publisher: 'pub1',
      publishedAt: at,
      guests: ['g1', 'g2', 'g3'],
      topics: ['t1', 't2'],
      ads: [
        { sponsor: 's1' },
        { sponsor: 's2', name: 'Two', company: 'c-two' },
        { sponsor: 's3', promo: true },
      ],
    }),
    episodeWith({ id: 'R1', podcast: 'R', publishedAt: at, guests: ['g1'], topics: ['t1'] }),
    episodeWith({
      id: 'S1',
      podcast: 'S',
      publisher: 'pub1',
      publishedAt: at,
      guests: ['g5'],
      topics: ['t9'],
    }),
    episodeWith({
      id: 'T1',
      podcast: 'T',
      publishedAt: at,
      topics: ['t8'],
      ads: [{ sponsor: 's1' }, { sponsor: 's9' }],
    }),
    episodeWith({ id: 'U1', podcast: 'U', publishedAt: at, guests: ['g4'], topics: ['t7'] }),
  ]);
});
afterAll(() => h.close());

interface Item {
  score: number;
  band: string;
  shared_show_count: number;
  podcast: { id: string };
  episode: { id: string };
  person: { id: string };
  sponsor: { id: string };
  contacts: unknown[];
  basis: { components: Record<string, number> };
}

const page = async (url: string, query: Record<string, string> = {}) => {
  const response = await h.get(url, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { data: Item[]; has_more: boolean; cursor?: string };
};

describe('related shows', () => {
  it('orders Q, R, S, T with the hand-computed scores and bands; U shares nothing and is absent', async () => {
    const related = await page('/v1/podcasts/P/related');
    expect(related.data.map((r) => [r.podcast.id, r.score, r.band])).toEqual([
      ['Q', 0.7297, 'strong'],
      ['R', 0.3789, 'moderate'],
      ['S', 0.1, 'weak'],
      ['T', 0.04, 'weak'],
    ]);
  });

  it('explains every score: the basis lists each part, and the weighted components sum to the score', async () => {
    const [q] = (await page('/v1/podcasts/P/related')).data;
    expect(q!.basis).toMatchObject({
      same_publisher: true,
      shared_guest_count: 2,
      shared_sponsor_count: 1,
      shared_category_count: 1,
      topic_overlap: 1,
      content_similarity: 0.9487,
      shared_guests: [{ id: 'g1' }, { id: 'g2' }],
      shared_topics: [
        { id: 't1', name: 'Topic t1' },
        { id: 't2', name: 'Topic t2' },
      ],
    });
    const sum = Object.values(q!.basis.components as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(Math.abs(sum - q!.score)).toBeLessThan(0.0002);
  });

  it('answers the same order on every call, across pages', async () => {
    const first = await page('/v1/podcasts/P/related', { limit: '2' });
    const second = await page('/v1/podcasts/P/related', { limit: '2', cursor: first.cursor! });
    expect([...first.data, ...second.data].map((r) => r.podcast.id)).toEqual(['Q', 'R', 'S', 'T']);
    expect(second.has_more).toBe(false);
  });

  it('relates episodes: Q1 0.625, P2 0.35, R1 0.325, T1 0.05', async () => {
    const related = await page('/v1/podcasts/episodes/P1/related');
    expect(related.data.map((r) => [r.episode.id, r.score])).toEqual([
      ['Q1', 0.625],
      ['P2', 0.35],
      ['R1', 0.325],
      ['T1', 0.05],
    ]);
    expect(related.data[1]!.basis).toMatchObject({
      same_podcast: true,
      same_publisher: true,
      topic_overlap: 0.5,
    });
  });
});

describe('recommendations', () => {
  it('recommends guests of related shows who never appeared on the show, pooled over those shows', async () => {
    const guests = await page('/v1/podcasts/P/recommendations/guests');
    expect(guests.data.map((g) => [g.person.id, g.score, g.shared_show_count])).toEqual([
      ['g3', 0.7297, 1],
      ['g5', 0.1, 1],
    ]);
    expect(guests.data[0]).toMatchObject({
      band: 'strong',
      person: { name: 'Gina Three', slug: 'gina-three' },
      via: [{ id: 'Q' }],
    });
  });

  it('recommends sponsors of related shows not on the show, with contacts at their company, marketing first', async () => {
    const sponsors = await page('/v1/podcasts/P/recommendations/sponsors');
    expect(sponsors.data.map((s) => [s.sponsor.id, s.score])).toEqual([
      ['s2', 0.7297],
      ['s9', 0.04],
    ]);
    expect(sponsors.data[0]).toMatchObject({
      total_ads: 1,
      shared_show_count: 1,
      sponsor: { name: 'Two', company: { id: 'c-two', slug: 'two-corp' } },
      contacts: [
        { person: { id: 'maria' }, role: 'marketing', title: 'Head of Marketing' },
        { person: { id: 'carl' }, role: 'executive', title: 'CEO' },
      ],
      via: [{ id: 'Q' }],
    });
    expect(sponsors.data[1]!.contacts).toEqual([]);
  });

  it('recommends to a guest the shows related to theirs, minus theirs: for g3 (on Q) P, R, S, T', async () => {
    const shows = await page('/v1/podcasts/guests/gina-three/recommendations/podcasts');
    expect(shows.data.map((s) => [s.podcast.id, s.score])).toEqual([
      ['P', 0.7297],
      ['R', 0.3414],
      ['S', 0.1],
      ['T', 0.04],
    ]);
    expect((await h.get('/v1/podcasts/guests/nobody/recommendations/podcasts')).statusCode).toBe(404);
  });

  it('fills related, recommended_guests and recommended_sponsors on GET /v1/podcasts/{id}', async () => {
    const podcast = (await h.get('/v1/podcasts/P')).json();
    expect(podcast.related.map((r: { podcast: { id: string } }) => r.podcast.id)).toEqual([
      'Q',
      'R',
      'S',
      'T',
    ]);
    expect(podcast.recommended_guests.map((g: { person: { id: string } }) => g.person.id)).toEqual([
      'g3',
      'g5',
    ]);
    expect(podcast.recommended_sponsors.map((s: { sponsor: { id: string } }) => s.sponsor.id)).toEqual([
      's2',
      's9',
    ]);
  });

  it("reads a person's current role (person.current_role.company) once entities carry it", async () => {
    // entity.upserted gains current_role with the people read models; written here as that model will hold it.
    await h.db.query(
      `insert into entities (id, slug, name, entity_type, person, occurred_at, search_names, search_text)
       values ('pat', 'pat-partner', 'Pat Partner', 'PERSON',
               '{"current_role": {"company": "c-two", "title": "VP Partnerships"}, "company": "Old Corp"}',
               now(), '{pat partner}', 'pat partner')`,
    );
    const [two] = (await page('/v1/podcasts/P/recommendations/sponsors')).data;
    expect(two!.contacts).toEqual([
      expect.objectContaining({ person: expect.objectContaining({ id: 'maria' }), role: 'marketing' }),
      expect.objectContaining({
        person: expect.objectContaining({ id: 'pat' }),
        role: 'marketing',
        title: 'VP Partnerships',
      }),
      expect.objectContaining({ person: expect.objectContaining({ id: 'carl' }), role: 'executive' }),
    ]);
  });

  it('lists every route in /openapi.json', async () => {
    const paths = Object.keys((await h.app.inject({ url: '/openapi.json' })).json().paths);
    for (const path of [
      '/v1/podcasts/advertising/leaderboard',
      '/v1/podcasts/advertising/timeseries',
      '/v1/companies/{id}/podcast/advertising',
      '/v1/podcasts/{id}/advertising',
      '/v1/podcasts/episodes/{id}/ads',
      '/v1/podcasts/{id}/related',
      '/v1/podcasts/episodes/{id}/related',
      '/v1/podcasts/{id}/recommendations/guests',
      '/v1/podcasts/{id}/recommendations/sponsors',
      '/v1/podcasts/guests/{id}/recommendations/podcasts',
    ])
      expect(paths).toContain(path);
  });
});
