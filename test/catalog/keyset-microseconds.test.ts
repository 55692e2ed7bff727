import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

// Fourteen episodes of one podcast inside one millisecond, apart by microseconds only, with ties of
// four and three on one microsecond; two more a millisecond apart around them. Two segments each.
const MICROS = [
  '999',
  '500',
  '500',
  '500',
  '500',
  '400',
  '301',
  '300',
  '300',
  '300',
  '200',
  '002',
  '001',
  '000',
];
const published = [
  '2026-10-01T06:00:00.124Z',
  ...MICROS.map((us) => `2026-10-01T06:00:00.123${us}Z`),
  '2026-10-01T06:00:00.122Z',
];
const EPISODES = published.map((at, i) => ({
  id: `ep-${String(i).padStart(2, '0')}`,
  at,
}));

let h: CatalogHarness;

beforeAll(async () => {
  h = await catalogHarness('postgres');
  await h.ingest([
    podcastEvent({ id: 'pod-1', title: 'Chip Talk', slug: 'chip-talk' }),
    ...EPISODES.map(({ id, at }) =>
      episodeOf({
        id,
        podcastId: 'pod-1',
        podcastTitle: 'Chip Talk',
        publishedAt: at,
        extra: {
          segments: [1, 2].map((number) => ({
            id: `${id}-seg${number}`,
            title: `Segment ${number}`,
            type: 'INTRO' as const,
            number,
            start_seconds: number * 10,
            end_seconds: number * 10 + 9,
          })),
        },
      }),
    ),
  ]);
});
afterAll(() => h?.close());

/** Every id of a list, page after page of `limit`. */
async function paged(url: string, query: Record<string, string>, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const response = await h.get(url, {
      ...query,
      limit: String(limit),
      ...(cursor ? { cursor } : {}),
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    seen.push(...body.data.map((item: { id: string }) => item.id));
    if (!body.has_more) break;
    cursor = body.cursor;
  }
  return seen;
}

async function onePage(url: string, query: Record<string, string>): Promise<string[]> {
  const body = (await h.get(url, { ...query, limit: '100' })).json();
  expect(body.has_more).toBe(false);
  return body.data.map((item: { id: string }) => item.id);
}

describe('keyset pages of times apart by microseconds', () => {
  const lists: [string, Record<string, string>, number][] = [
    ['/v1/podcasts/episodes', {}, EPISODES.length],
    ['/v1/podcasts/pod-1/episodes', {}, EPISODES.length],
    ['/v1/podcasts/segments', { podcast_id: 'pod-1' }, EPISODES.length * 2],
  ];
  it.each(lists)(
    '%s lists every row once in the one-page order, at any page size',
    async (url, query, count) => {
      const expected = await onePage(url, query);
      expect(expected).toHaveLength(count);
      expect(new Set(expected).size).toBe(count);
      for (const limit of [1, 2, 3, 4, 5, 7]) expect(await paged(url, query, limit)).toEqual(expected);
    },
  );

  it('the one-page order is newest first to the microsecond, then id descending', async () => {
    const order = [...EPISODES].sort((a, b) =>
      a.at === b.at ? b.id.localeCompare(a.id) : `${b.at}`.localeCompare(`${a.at}`),
    );
    expect(await onePage('/v1/podcasts/episodes', {})).toEqual(order.map((e) => e.id));
  });

  it('still accepts a cursor issued with the time to the millisecond', async () => {
    const old = h.app.cursors.encode({
      p: '2026-10-01T06:00:00.124Z',
      i: 'ep-00',
    });
    const next = (await h.get('/v1/podcasts/episodes', { limit: '2', cursor: old })).json();
    expect(next.data.map((e: { id: string }) => e.id)).toEqual(['ep-01', 'ep-05']);
    const segments = h.app.cursors.encode({
      p: '2026-10-01T06:00:00.124Z',
      e: 'ep-00',
      n: 1,
      i: 'ep-00-seg1',
    });
    const rest = (
      await h.get('/v1/podcasts/segments', {
        podcast_id: 'pod-1',
        limit: '2',
        cursor: segments,
      })
    ).json();
    expect(rest.data.map((s: { id: string }) => s.id)).toEqual(['ep-00-seg2', 'ep-01-seg1']);
  });
});
