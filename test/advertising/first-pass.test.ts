import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

let h: AdvertisingHarness;
const at = '2026-11-10T06:00:00Z';
const b = (i: number) => `B${String(i).padStart(2, '0')}`;

/**
 * A (topic t1, guest g1) and 60 shows B00–B59 holding t1 alone; C also holds g1. The first pass
 * (docs/advertising.md, "Scores") gives every B the same score and C more: the 50 shows scored
 * fully are C and the 49 Bs with the smallest ids.
 */
beforeAll(async () => {
  h = await advertisingHarness();
  await h.ingest([
    episodeWith({ id: 'A1', podcast: 'A', publishedAt: at, guests: ['g1'], topics: ['t1'] }),
    episodeWith({ id: 'C1', podcast: 'C', publishedAt: at, guests: ['g1'], topics: ['t1'] }),
    ...Array.from({ length: 60 }, (_, i) =>
      episodeWith({ id: `${b(i)}-1`, podcast: b(i), publishedAt: at, topics: ['t1'] }),
    ),
  ]);
});
afterAll(() => h.close());

it('scores fully the 50 best shows of the first pass, ties going to the smaller id', async () => {
  const response = await h.get('/v1/podcasts/A/related', { limit: '100' });
  expect(response.statusCode, response.body).toBe(200);
  const ids = response.json().data.map((r: { podcast: { id: string } }) => r.podcast.id);
  expect(ids).toEqual(['C', ...Array.from({ length: 49 }, (_, i) => b(i))]);
});
