import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityEvent } from '../fixtures/events.ts';
import { companyReferences } from '../support/company-refs.ts';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

const URL = '/v1/podcasts/advertising/timeseries';
const ACME = { id: 'c-acme', slug: 'acme', domain: 'acme.com' };
let h: AdvertisingHarness;

interface Series {
  interval: string;
  start: string;
  end: string;
  company_id?: string;
  company_slug?: string;
  buckets: { start: string; count: number; host_read_count: number; pre_recorded_count: number }[];
  total_ads: number;
  host_read_count: number;
  pre_recorded_count: number;
  distinct_episodes: number;
  distinct_podcasts: number;
}
const series = async (query: Record<string, string>) => {
  const response = await h.get(URL, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Series;
};
const counts = (s: Series) => s.buckets.map((b) => [b.start, b.count]);

beforeAll(async () => {
  h = await advertisingHarness();
  await h.ingest([
    entityEvent({
      id: 'c-acme',
      name: 'Acme',
      slug: 'acme',
      entity_type: 'COMPANY',
      company: { domain: 'acme.com' },
    }),
    // 2026-11-02 and 2026-11-09 are Mondays; sp-a and sp-b are aliases of Acme.
    episodeWith({
      id: 'e1',
      podcast: 'p1',
      publishedAt: '2026-11-02T10:00:00Z',
      ads: [{ sponsor: 'sp-a', company: 'c-acme', read: 'HOST_READ', placement: 'PRE_ROLL' }],
    }),
    episodeWith({
      id: 'e2',
      podcast: 'p1',
      publishedAt: '2026-11-03T10:00:00Z',
      ads: [{ sponsor: 'sp-a', company: 'c-acme', read: 'HOST_READ', promo: true }],
    }),
    episodeWith({
      id: 'e3',
      podcast: 'p1',
      publishedAt: '2026-11-08T23:59:00Z',
      ads: [{ sponsor: 'sp-a', company: 'c-acme', read: 'PRE_RECORDED', placement: 'MID_ROLL' }],
    }),
    episodeWith({
      id: 'e4',
      podcast: 'p1',
      publishedAt: '2026-11-09T00:00:00Z',
      ads: [
        { sponsor: 'sp-b', name: 'Acme Inc', company: 'c-acme', read: 'HOST_READ', placement: 'POST_ROLL' },
      ],
    }),
    episodeWith({
      id: 'e5',
      podcast: 'p2',
      publisher: 'pub-y',
      publishedAt: '2026-11-20T05:00:00Z',
      ads: [
        { sponsor: 'sp-b', name: 'Acme Inc', company: 'c-acme' },
        { sponsor: 'sp-other', name: 'Other' },
      ],
    }),
  ]);
});
afterAll(() => h.close());

describe('advertising timeseries', () => {
  it('aggregates every sponsor alias of a company into contiguous, zero-filled weeks from Monday', async () => {
    const s = await series({
      company_id: 'acme.com',
      since: '2026-11-01',
      until: '2026-11-20',
      interval: 'week',
    });
    expect(counts(s)).toEqual([
      ['2026-10-26', 0],
      ['2026-11-02', 2],
      ['2026-11-09', 1],
      ['2026-11-16', 1],
    ]);
    expect(s).toMatchObject({
      interval: 'week',
      start: '2026-10-26',
      end: '2026-11-21',
      company_id: 'c-acme',
      company_slug: 'acme',
      total_ads: 4,
      host_read_count: 2,
      pre_recorded_count: 1,
      distinct_episodes: 4,
      distinct_podcasts: 2,
    });
    expect(s.buckets[1]).toEqual({
      start: '2026-11-02',
      count: 2,
      host_read_count: 1,
      pre_recorded_count: 1,
    });
  });

  it('counts a bare until date whole, and a date-time until only before it', async () => {
    const whole = await series({
      company_id: 'acme',
      since: '2026-11-20',
      until: '2026-11-20',
      interval: 'day',
    });
    expect(counts(whole)).toEqual([['2026-11-20', 1]]);
    const before = await series({
      company_id: 'acme',
      since: '2026-11-20',
      until: '2026-11-20T05:00:00Z',
      interval: 'day',
    });
    expect(before).toMatchObject({ end: '2026-11-20', total_ads: 0 });
    const after = await series({
      company_id: 'acme',
      since: '2026-11-20',
      until: '2026-11-20T05:00:01Z',
      interval: 'day',
    });
    expect(after.total_ads).toBe(1);
  });

  it('puts an ad at 23:59 Sunday and one at 00:00 Monday in different weeks and days', async () => {
    const days = await series({
      company_id: 'c-acme',
      since: '2026-11-08',
      until: '2026-11-10',
      interval: 'day',
    });
    expect(counts(days)).toEqual([
      ['2026-11-08', 1],
      ['2026-11-09', 1],
      ['2026-11-10', 0],
    ]);
  });

  it('buckets by calendar month, zero-filling empty months', async () => {
    const months = await series({
      company_id: 'c-acme',
      since: '2026-09-15',
      until: '2026-11-30',
      interval: 'month',
    });
    expect(counts(months)).toEqual([
      ['2026-09-01', 0],
      ['2026-10-01', 0],
      ['2026-11-01', 4],
    ]);
  });

  it('follows one sponsor alone, and scopes to a podcast or a publisher', async () => {
    expect((await series({ sponsor_id: 'sp-a', since: '2026-11-01', until: '2026-11-30' })).total_ads).toBe(
      2,
    );
    expect(
      (await series({ company_id: 'acme', podcast_id: 'p2', since: '2026-11-01', until: '2026-11-30' }))
        .total_ads,
    ).toBe(1);
    expect(
      (await series({ company_id: 'acme', publisher_id: 'pub-y', since: '2026-11-01', until: '2026-11-30' }))
        .total_ads,
    ).toBe(1);
  });

  it('starts at the first ad when since is omitted', async () => {
    const s = await series({ sponsor_id: 'sp-b', until: '2026-11-20', interval: 'week' });
    expect(s.start).toBe('2026-11-09');
    expect(counts(s)).toEqual([
      ['2026-11-09', 1],
      ['2026-11-16', 1],
    ]);
  });

  it('requires exactly one of sponsor_id and company_id, naming both', async () => {
    for (const query of [{}, { sponsor_id: 'sp-a', company_id: 'acme' }] as Record<string, string>[]) {
      const response = await h.get(URL, query);
      expect(response.statusCode).toBe(422);
      expect(response.json().errors.map((e: { location: string }) => e.location)).toEqual([
        'query.sponsor_id',
        'query.company_id',
      ]);
    }
  });

  it('answers unknown references with 422 unresolved_reference and too many buckets with 422 naming interval', async () => {
    const unknown = await h.get(URL, { sponsor_id: 'sp-nobody' });
    expect(unknown.json()).toMatchObject({
      error_code: 'unresolved_reference',
      errors: [{ location: 'query.sponsor_id' }],
    });
    const tooMany = await h.get(URL, {
      company_id: 'acme',
      since: '1990-01-01',
      until: '2026-01-01',
      interval: 'day',
    });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json()).toMatchObject({
      error_code: 'too_many_buckets',
      errors: [{ location: 'query.interval' }],
    });
    const interval = await h.get(URL, { company_id: 'acme', interval: 'year' });
    expect(interval.statusCode).toBe(400);
  });
});

describe('a company reference', () => {
  it('names the company in any form on the timeseries and the presence endpoint', async () => {
    for (const company of companyReferences(ACME)) {
      const s = await series({ company_id: company, since: '2026-11-01', until: '2026-11-20' });
      expect(s, company).toMatchObject({ company_id: 'c-acme', total_ads: 4 });
      const presence = await h.get(`/v1/companies/${encodeURIComponent(company)}/podcast/advertising`);
      expect(presence.statusCode, company).toBe(200);
      expect(presence.json()).toMatchObject({ company_id: 'c-acme', total_ads: 4 });
    }
    const unknown = await h.get(URL, { company_id: 'https://www.nobody.example/' });
    expect(unknown.json()).toMatchObject({
      status: 422,
      error_code: 'unresolved_reference',
      errors: [{ location: 'query.company_id' }],
    });
  });
});

describe('advertising presence', () => {
  it("sums a company's ads (promos excluded) with reach, read types, placements and recent ads (company slug beside id)", async () => {
    const response = await h.get('/v1/companies/acme.com/podcast/advertising');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      company_id: 'c-acme',
      company_slug: 'acme',
      total_ads: 4,
      podcast_reach: 2,
      episode_reach: 4,
      read_type_breakdown: { host_read: 2, pre_recorded: 1 },
      placement_breakdown: { pre_roll: 1, mid_roll: 1, post_roll: 1 },
    });
    expect(body.recent_ads[0]).toMatchObject({
      id: 'e5-ad0',
      company: { id: 'c-acme', slug: 'acme', name: 'Acme' },
    });
    expect(body.recent_ads[0].episode).toMatchObject({ id: 'e5' });
    expect((await h.get('/v1/companies/nobody/podcast/advertising')).json()).toMatchObject({
      status: 404,
      error_code: 'company_not_found',
    });
  });

  it("lists a podcast's sponsors by ads with first and last seen", async () => {
    const body = (await h.get('/v1/podcasts/p1/advertising')).json();
    expect(body).toMatchObject({ podcast_id: 'p1', total_ads: 3 });
    expect(body.sponsors).toEqual([
      {
        sponsor: {
          id: 'sp-a',
          name: 'Sponsor sp-a',
          company: expect.objectContaining({ id: 'c-acme', slug: 'acme' }),
        },
        ad_count: 2,
        first_seen_at: '2026-11-02T10:00:00.000Z',
        last_seen_at: '2026-11-08T23:59:00.000Z',
      },
      {
        sponsor: { id: 'sp-b', name: 'Acme Inc', company: expect.objectContaining({ id: 'c-acme' }) },
        ad_count: 1,
        first_seen_at: '2026-11-09T00:00:00.000Z',
        last_seen_at: '2026-11-09T00:00:00.000Z',
      },
    ]);
  });

  it("pages an episode's ads in play order with company id, slug and name", async () => {
    const first = (await h.get('/v1/podcasts/episodes/e5/ads', { limit: '1' })).json();
    expect(first.data).toEqual([
      expect.objectContaining({ id: 'e5-ad0', company: { id: 'c-acme', slug: 'acme', name: 'Acme' } }),
    ]);
    expect(first.has_more).toBe(true);
    const second = (await h.get('/v1/podcasts/episodes/e5/ads', { limit: '1', cursor: first.cursor })).json();
    expect(second.data.map((a: { id: string }) => a.id)).toEqual(['e5-ad1']);
    expect(second.data[0].company).toBeUndefined();
    expect((await h.get('/v1/podcasts/episodes/nope/ads')).statusCode).toBe(404);
  });

  it('embeds the same ads, company included, in an episode read with include=ads', async () => {
    const listed = (await h.get('/v1/podcasts/episodes/e5/ads', { limit: '100' })).json().data;
    const embedded = (await h.get('/v1/podcasts/episodes/e5', { include: 'ads' })).json().ads;
    expect(embedded[0].company).toEqual({ id: 'c-acme', slug: 'acme', name: 'Acme' });
    expect(embedded).toEqual(listed);
  });
});
