import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshLeaderboardSnapshots } from '../../src/advertising/leaderboard.ts';
import { entityEvent } from '../fixtures/events.ts';
import { companyReferences } from '../support/company-refs.ts';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

const URL = '/v1/podcasts/advertising/leaderboard';
let h: AdvertisingHarness;

interface Entry {
  rank: number;
  sponsor: {
    id: string;
    name: string;
    ad_count: number;
    podcast_reach: number;
    episode_reach: number;
    company?: Record<string, unknown>;
  };
}
const board = async (query: Record<string, string> = {}) => {
  const response = await h.get(URL, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { data: Entry[]; has_more: boolean; cursor?: string };
};
const ids = (page: { data: Entry[] }) => page.data.map((e) => e.sponsor.id);

// The clock reads 2026-11-20T12:00Z: the trailing 7 days start 2026-11-13, the window 30 days
// ago runs 2026-10-14 to 2026-10-21.
beforeAll(async () => {
  h = await advertisingHarness();
  await h.ingest([
    entityEvent({
      id: 'c-acme',
      name: 'Acme',
      slug: 'acme',
      entity_type: 'COMPANY',
      company: { domain: 'acme.com', ticker: 'ACME' },
    }),
    // sp-a and sp-b are two sponsor aliases of one company.
    episodeWith({
      id: 'e1',
      podcast: 'p1',
      publishedAt: '2026-11-15T06:00:00Z',
      ads: [
        { sponsor: 'sp-a', company: 'c-acme' },
        { sponsor: 'sp-a', company: 'c-acme' },
        { sponsor: 'sp-a', company: 'c-acme' },
        { sponsor: 'sp-c', promo: true },
        ...Array.from({ length: 5 }, () => ({ sponsor: 'sp-d', promo: true })),
      ],
    }),
    episodeWith({
      id: 'e2',
      podcast: 'p2',
      publishedAt: '2026-11-16T06:00:00Z',
      ads: [{ sponsor: 'sp-a', company: 'c-acme' }],
    }),
    episodeWith({
      id: 'e3',
      podcast: 'p1',
      publishedAt: '2026-11-17T06:00:00Z',
      ads: [{ sponsor: 'sp-b', name: 'Acme Inc', company: 'c-acme' }],
    }),
    episodeWith({
      id: 'e4',
      podcast: 'p2',
      publishedAt: '2026-11-18T06:00:00Z',
      ads: [{ sponsor: 'sp-b', name: 'Acme Inc', company: 'c-acme' }],
    }),
    episodeWith({
      id: 'e5',
      podcast: 'p3',
      publisher: 'pub-x',
      publishedAt: '2026-11-19T06:00:00Z',
      ads: [{ sponsor: 'sp-b', name: 'Acme Inc', company: 'c-acme' }],
    }),
    episodeWith({
      id: 'e6',
      podcast: 'p1',
      publishedAt: '2026-10-15T06:00:00Z',
      ads: [{ sponsor: 'sp-c' }, { sponsor: 'sp-c' }],
    }),
    episodeWith({
      id: 'e7',
      podcast: 'p3',
      publisher: 'pub-x',
      publishedAt: '2025-01-01T06:00:00Z',
      ads: [{ sponsor: 'sp-g' }, { sponsor: 'sp-f' }, { sponsor: 'sp-e' }],
    }),
  ]);
});
afterAll(() => h.close());

describe('advertising leaderboard', () => {
  it('ranks all-time sponsors by ad count, ties broken by the other counts then the sponsor id', async () => {
    const page = await board();
    expect(page.data.map((e) => [e.rank, e.sponsor.id, e.sponsor.ad_count])).toEqual([
      [1, 'sp-a', 4],
      [2, 'sp-b', 3],
      [3, 'sp-c', 2],
      [4, 'sp-e', 1],
      [5, 'sp-f', 1],
      [6, 'sp-g', 1],
    ]);
  });

  it('never counts network promos: a promo-only sponsor is absent and promo reads add nothing', async () => {
    const page = await board();
    expect(ids(page)).not.toContain('sp-d');
    expect(page.data.find((e) => e.sponsor.id === 'sp-c')?.sponsor).toMatchObject({
      ad_count: 2,
      episode_reach: 1,
    });
  });

  it('ranks by podcast reach and by episode reach', async () => {
    const byShows = await board({ metric: 'podcast_reach' });
    expect(byShows.data.slice(0, 3).map((e) => [e.sponsor.id, e.sponsor.podcast_reach])).toEqual([
      ['sp-b', 3],
      ['sp-a', 2],
      ['sp-c', 1],
    ]);
    const byEpisodes = await board({ metric: 'episode_reach' });
    expect(byEpisodes.data.slice(0, 2).map((e) => [e.sponsor.id, e.sponsor.episode_reach])).toEqual([
      ['sp-b', 3],
      ['sp-a', 2],
    ]);
  });

  it('gives each sponsor its company as a CompanyCompact with image_mode', async () => {
    const page = await board();
    expect(page.data[1]!.sponsor).toMatchObject({
      id: 'sp-b',
      name: 'Acme Inc',
      company: {
        id: 'c-acme',
        name: 'Acme',
        domain: 'acme.com',
        slug: 'acme',
        ticker: 'ACME',
        image_mode: 'AUTOMATIC',
      },
    });
  });

  it('keeps ranks dense across pages: each page continues the previous one', async () => {
    const seen: [number, string][] = [];
    let cursor: string | undefined;
    do {
      const page = await board({ limit: '2', ...(cursor ? { cursor } : {}) });
      seen.push(...page.data.map((e): [number, string] => [e.rank, e.sponsor.id]));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual([
      [1, 'sp-a'],
      [2, 'sp-b'],
      [3, 'sp-c'],
      [4, 'sp-e'],
      [5, 'sp-f'],
      [6, 'sp-g'],
    ]);
  });

  it('counts a window: since inclusive, until exclusive', async () => {
    const page = await board({ since: '2026-11-16', until: '2026-11-18' });
    expect(page.data.map((e) => [e.sponsor.id, e.sponsor.ad_count])).toEqual([
      ['sp-a', 1],
      ['sp-b', 1],
    ]);
  });

  it('narrows to one company (by any company reference) and to one publisher', async () => {
    for (const company of companyReferences({ id: 'c-acme', slug: 'acme', domain: 'acme.com' }))
      expect(ids(await board({ company_id: company })), company).toEqual(['sp-a', 'sp-b']);
    expect(ids(await board({ publisher_id: 'pub-x' }))).toEqual(['sp-b', 'sp-e', 'sp-f', 'sp-g']);
  });

  it('answers unknown company and publisher references with 422 unresolved_reference naming the parameter', async () => {
    for (const [parameter, value] of [
      ['company_id', 'nobody.example'],
      ['publisher_id', 'no-publisher'],
    ] as const) {
      const response = await h.get(URL, { [parameter]: value });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({
        error_code: 'unresolved_reference',
        errors: [{ location: `query.${parameter}`, value }],
      });
    }
  });

  it('rejects an unknown metric, a limit over 100 and since after until with problems naming the parameter', async () => {
    const metric = await h.get(URL, { metric: 'reach' });
    expect(metric.statusCode).toBe(400);
    expect(JSON.stringify(metric.json().errors)).toContain('metric');
    const limit = await h.get(URL, { limit: '101' });
    expect(limit.statusCode).toBe(400);
    expect(JSON.stringify(limit.json().errors)).toContain('limit');
    const range = await h.get(URL, { since: '2026-11-10', until: '2026-11-01' });
    expect(range.statusCode).toBe(422);
    expect(range.json()).toMatchObject({
      error_code: 'invalid_range',
      errors: [{ location: 'query.since' }],
    });
  });

  it('is premium: STARTER, GROWTH and TEAM keys get 402 premium_required with resolve; ENTERPRISE passes', async () => {
    for (const plan of ['STARTER', 'GROWTH', 'TEAM'] as const) {
      const response = await h.get(URL, {}, await h.keyOf(plan));
      expect(response.statusCode).toBe(402);
      expect(response.json()).toMatchObject({
        error_code: 'premium_required',
        resolve: { message: expect.any(String) },
      });
    }
    expect((await h.get(URL, {}, await h.keyOf('ENTERPRISE'))).statusCode).toBe(200);
    expect((await h.get(URL, {}, {})).statusCode).toBe(401);
  });

  it('serves the snapshot windows from snapshots until the next refresh, on the injected clock', async () => {
    await refreshLeaderboardSnapshots(h.db, h.clock.now);
    // Snapshot rows carry the sponsor's name and company as of the refresh.
    expect((await board()).data[1]!.sponsor).toMatchObject({
      id: 'sp-b',
      name: 'Acme Inc',
      company: { id: 'c-acme', slug: 'acme', image_mode: 'AUTOMATIC' },
    });
    // The window 30 days ago holds only sp-c.
    expect(ids(await board({ since: '2026-10-14', until: '2026-10-21' }))).toEqual(['sp-c']);
    await h.ingest([
      episodeWith({
        id: 'e8',
        podcast: 'p1',
        publishedAt: '2026-11-19T08:00:00Z',
        ads: Array.from({ length: 10 }, () => ({ sponsor: 'sp-g' })),
      }),
    ]);
    // Snapshot windows still show the refreshed counts; any other window is counted now.
    expect(ids(await board({ since: '2026-11-13' }))).toEqual(['sp-a', 'sp-b']);
    expect((await board()).data[0]!.sponsor.id).toBe('sp-a');
    expect((await board({ since: '2026-11-12' })).data[0]!.sponsor).toMatchObject({
      id: 'sp-g',
      ad_count: 10,
    });

    await refreshLeaderboardSnapshots(h.db, h.clock.now);
    expect((await board({ since: '2026-11-13' })).data[0]!.sponsor).toMatchObject({
      id: 'sp-g',
      ad_count: 10,
    });
    expect((await board()).data[0]!.sponsor).toMatchObject({ id: 'sp-g', ad_count: 11 });

    // A day later the stored trailing window is not today's: the request is counted, not read.
    h.clock.now = new Date('2026-11-21T12:00:00Z');
    await h.ingest([
      episodeWith({
        id: 'e9',
        podcast: 'p2',
        publishedAt: '2026-11-21T08:00:00Z',
        ads: Array.from({ length: 20 }, () => ({ sponsor: 'sp-f' })),
      }),
    ]);
    expect((await board({ since: '2026-11-14' })).data[0]!.sponsor).toMatchObject({
      id: 'sp-f',
      ad_count: 20,
    });
    await refreshLeaderboardSnapshots(h.db, h.clock.now);
    const rows = await h.db.query<{ window_name: string; since: Date | null }>(
      'select window_name, since from ad_leaderboard_snapshots order by window_name',
    );
    expect(rows.rows.map((r) => [r.window_name, r.since?.toISOString() ?? null])).toEqual([
      ['all_time', null],
      ['ending_30d_ago', '2026-10-15T00:00:00.000Z'],
      ['trailing_7d', '2026-11-14T00:00:00.000Z'],
    ]);
  });
});
