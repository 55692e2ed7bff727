import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

let h: AdvertisingHarness;
const at = '2026-11-10T06:00:00Z';
const b = (i: number) => `B${String(i).padStart(2, '0')}`;
/** Ids that JavaScript's string order (UTF-16 code units) and byte order (UTF-8) put the other way round. */
const astral = 'X\u{1F600}';
const bmp = 'X\u{FF61}';

/**
 * A (topic t1, guest g1) and 60 shows B00–B59 holding t1 alone; C also holds g1. The first pass
 * (docs/advertising.md, "Scores") gives every B the same score and C more: the 50 shows scored
 * fully are C and the 49 Bs with the smallest ids. D (topics t2, t3, guest g2) is in the same
 * spot: F holds t2 and g2, and 50 tied shows hold t2 alone: E00–E47, `astral` and `bmp`.
 */
beforeAll(async () => {
  h = await advertisingHarness();
  await h.ingest([
    episodeWith({ id: 'A1', podcast: 'A', publishedAt: at, guests: ['g1'], topics: ['t1'] }),
    episodeWith({ id: 'C1', podcast: 'C', publishedAt: at, guests: ['g1'], topics: ['t1'] }),
    ...Array.from({ length: 60 }, (_, i) =>
      episodeWith({ id: `${b(i)}-1`, podcast: b(i), publishedAt: at, topics: ['t1'] }),
    ),
    episodeWith({ id: 'D1', podcast: 'D', publishedAt: at, guests: ['g2'], topics: ['t2', 't3'] }),
    episodeWith({ id: 'F1', podcast: 'F', publishedAt: at, guests: ['g2'], topics: ['t2'] }),
    ...[...Array.from({ length: 48 }, (_, i) => `E${String(i).padStart(2, '0')}`), astral, bmp].map((id) =>
      episodeWith({ id: `${id}-1`, podcast: id, publishedAt: at, topics: ['t2'] }),
    ),
  ]);
});
afterAll(() => h.close());

const relatedIds = async (id: string) => {
  const response = await h.get(`/v1/podcasts/${encodeURIComponent(id)}/related`, { limit: '100' });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.map((r: { podcast: { id: string } }) => r.podcast.id) as string[];
};

it('scores fully the 50 best shows of the first pass, ties going to the smaller id', async () => {
  expect(await relatedIds('A')).toEqual(['C', ...Array.from({ length: 49 }, (_, i) => b(i))]);
});

it('breaks first-pass ties in the order the answer itself lists shows in', async () => {
  // F and 50 tied shows for 50 places: the one left out is the last of them in the answer's order.
  const ids = await relatedIds('D');
  expect(ids).toHaveLength(50);
  expect(ids.slice(-2)).toEqual(['E47', astral]);
});
