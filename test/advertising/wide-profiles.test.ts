import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILE_CAPS } from '../../projections/podcast-links/queries.ts';
import { relatedEpisodes, relatedShows } from '../../src/advertising/related.ts';
import { rowsRead } from '../support/rows-read.ts';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

// Shows and episodes past the profile caps (docs/advertising.md, "Scores"): valid events at the
// ingestion schema's limits (500 speakers, 1,000 ads, 200 topics an episode), through the real
// ingestion path and projections. Their top keys decide what relates, and what scoring reads does
// not grow with the keys past the caps.

let h: AdvertisingHarness;
const at = '2026-11-10T06:00:00Z';
const keys = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `${prefix}${String(from + i).padStart(4, '0')}`);
const ads = (sponsors: string[]) => sponsors.map((sponsor) => ({ sponsor }));

/**
 * Shows: W and V carry the same core on both their episodes (guests g0000–g0099, sponsors
 * s0000–s0099, topics t0000–t0049: their profiles); W-1 also the rest of what one episode may
 * carry (499 guests, 1,000 sponsors, 200 topics), V-1 a tenth of that. A shares three guests with
 * W's tail only; B shares the core guest g0000, the tail guest g0150 and has a guest of its own.
 *
 * Episodes: E carries 499 guests h…, 1,000 sponsors p… and 200 topics u… (its profile: the first
 * 100, 100 and 50 by key); E2 the same first keys and a few more; F two guests past E's profile;
 * G one guest of E's profile and one past it.
 */
beforeAll(async () => {
  h = await advertisingHarness();
  const core = { guests: keys('g', 0, 100), ads: ads(keys('s', 0, 100)), topics: keys('t', 0, 50) };
  await h.ingest([
    episodeWith({
      id: 'W-1',
      podcast: 'W',
      publishedAt: at,
      guests: keys('g', 0, 499),
      ads: ads(keys('s', 0, 1000)),
      topics: keys('t', 0, 200),
    }),
    episodeWith({ id: 'W-2', podcast: 'W', publishedAt: at, ...core }),
    episodeWith({
      id: 'V-1',
      podcast: 'V',
      publishedAt: at,
      guests: keys('g', 0, 200),
      ads: ads(keys('s', 0, 200)),
      topics: keys('t', 0, 70),
    }),
    episodeWith({ id: 'V-2', podcast: 'V', publishedAt: at, ...core }),
    episodeWith({ id: 'A-1', podcast: 'A', publishedAt: at, guests: keys('g', 100, 103) }),
    episodeWith({ id: 'B-1', podcast: 'B', publishedAt: at, guests: ['g0000', 'g0150', 'gnew'] }),
    episodeWith({
      id: 'E',
      podcast: 'ES',
      publishedAt: at,
      guests: keys('h', 0, 499),
      ads: ads(keys('p', 0, 1000)),
      topics: keys('u', 0, 200),
    }),
    episodeWith({
      id: 'E2',
      podcast: 'E2S',
      publishedAt: at,
      guests: keys('h', 0, 110),
      ads: ads(keys('p', 0, 110)),
      topics: keys('u', 0, 55),
    }),
    episodeWith({ id: 'F', podcast: 'FS', publishedAt: at, guests: ['h0200', 'h0201'] }),
    episodeWith({ id: 'G', podcast: 'GS', publishedAt: at, guests: ['h0000', 'h0300'] }),
  ]);
});
afterAll(() => h.close());

const json = async (url: string) => {
  const response = await h.get(url, { limit: '100' });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
};
const heldBy = async (table: string, column: string, id: string) =>
  (await h.db.query<{ n: number }>(`select count(*)::int as n from ${table} where ${column} = $1`, [id]))
    .rows[0]!.n;

describe('a show past the caps', () => {
  it('is scored by its profile: the keys on most of its episodes, at most the caps of each kind', async () => {
    const related = (await json('/v1/podcasts/W/related')).data;
    // A shares three of W's guests, all past its profile: uncapped, it was related at 0.3.
    expect(related.map((r: { podcast: { id: string }; score: number }) => [r.podcast.id, r.score])).toEqual([
      ['V', 0.9],
      ['B', 0.1],
    ]);
    expect(related[0].basis).toMatchObject({
      shared_guest_count: PROFILE_CAPS.guest,
      shared_sponsor_count: PROFILE_CAPS.sponsor,
      topic_overlap: 1,
      content_similarity: 1,
    });
  });

  it('relates to an ordinary show by its profile from either side', async () => {
    // B shares g0000 (in W's profile) and g0150 (past it) with W; V holds g0150 past its profile too.
    const related = (await json('/v1/podcasts/B/related')).data;
    expect(
      related.map((r: { podcast: { id: string }; basis: { shared_guest_count: number } }) => [
        r.podcast.id,
        r.basis.shared_guest_count,
      ]),
    ).toEqual([
      ['V', 1],
      ['W', 1],
    ]);
    expect((await json('/v1/podcasts/A/related')).data).toEqual([]);
  });

  it('is never recommended a guest it holds past its profile', async () => {
    // B's guests: g0000 (W's profile), g0150 (W's, past its profile) and gnew.
    const guests = (await json('/v1/podcasts/W/recommendations/guests')).data;
    expect(guests.map((g: { person: { id: string } }) => g.person.id)).toEqual(['gnew']);
  });

  it('costs reads that do not grow with its keys past the caps', async () => {
    const w = await rowsRead(h.db, 'podcast_links', (db) => relatedShows(db, 'W'));
    const v = await rowsRead(h.db, 'podcast_links', (db) => relatedShows(db, 'V'));
    expect(w.answer.shows.map((s) => s.podcast_id)).toEqual(['V', 'B']);
    expect(v.answer.shows.map((s) => s.podcast_id)).toEqual(['W', 'B']);
    // W holds 1,700 links and V 471, yet both read the same 1,257 rows: their profiles (251 rows,
    // twice), the holders of each key of it and the profiles of the two shows scored. Uncapped,
    // W's links were read twice (its own and the first pass's) and V's all: 5,575 and 3,587 rows.
    expect(await heldBy('podcast_links', 'podcast_id', 'W')).toBe(1700);
    expect(await heldBy('podcast_links', 'podcast_id', 'V')).toBe(471);
    expect(w.read).toBe(v.read);
    expect(w.read).toBeLessThan(1700);
  });
});

describe('an episode past the caps', () => {
  const relatedIds = async (id: string) =>
    (await json(`/v1/podcasts/episodes/${id}/related`)).data.map(
      (r: { episode: { id: string }; score: number }) => [r.episode.id, r.score],
    );

  it('is scored by its profile: the first keys of each kind by key, at most the caps', async () => {
    // F shares two of E's guests, both past its profile: uncapped, it was related at 0.35.
    expect(await relatedIds('E')).toEqual([
      ['E2', 0.8],
      ['G', 0.175],
    ]);
    expect(await relatedIds('F')).toEqual([]);
    expect(await relatedIds('G')).toEqual([
      ['E', 0.175],
      ['E2', 0.175],
    ]);
  });

  it('costs reads that do not grow with its keys past the caps', async () => {
    const e = await rowsRead(h.db, 'podcast_link_episodes', (db) => relatedEpisodes(db, 'E'));
    const e2 = await rowsRead(h.db, 'podcast_link_episodes', (db) => relatedEpisodes(db, 'E2'));
    expect(e.answer.map((x) => x.episode_id)).toEqual(['E2', 'G']);
    expect(e2.answer.map((x) => x.episode_id)).toEqual(['E', 'G']);
    // E holds 1,700 links and E2 276, yet both read the same 1,001 rows: their profiles (250
    // rows), the holders of each key of it and the profiles of the two episodes scored. Uncapped,
    // all their guests, sponsors and topics and the holders of each: 3,677 and 2,526 rows.
    expect(await heldBy('podcast_link_episodes', 'episode_id', 'E')).toBe(1700);
    expect(await heldBy('podcast_link_episodes', 'episode_id', 'E2')).toBe(276);
    expect(e.read).toBe(e2.read);
    expect(e.read).toBeLessThan(1700);
  });
});
