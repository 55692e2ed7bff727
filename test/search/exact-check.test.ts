import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { episodeEvent } from '../fixtures/events.ts';
import type { Engine } from '../support/db.ts';
import { ada } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// The exact 5-line check on the positions of candidate rows (docs/search.md, "Index design"):
// rows of 24 lines at stride 20, so lines 20–23 of a row are lines 0–3 of the next.
const SEARCH = '/v1/podcasts/episodes/search';

/** An episode of `count` filler lines with `at` (position → text) in place. */
const episode = (id: string, count: number, at: Record<number, string>) =>
  episodeEvent({
    id,
    publishedAt: '2026-10-05T08:00:00Z',
    lines: Array.from({ length: count }, (_, i) => at[i] ?? `Filler ${i}.`),
  });
const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');

const events = [
  ada,
  // alpha and beta 4 lines apart across the first row boundary (lines 16–20 of row 0); kappa and
  // lambda 4 apart ending on the row's last line; mu and beta 5 apart in row 0; Ada on lines 2 and 21.
  episode('ep-cross', 45, {
    2: 'Ada Lovelace wrote it.',
    15: 'mu here',
    16: 'alpha here',
    19: 'kappa here',
    20: 'beta here',
    21: 'As Ada Lovelace said.',
    23: 'lambda here',
  }),
  episode('ep-four', 30, { 3: 'gamma', 7: 'delta' }),
  episode('ep-five', 30, { 3: 'gamma', 8: 'delta', 18: 'gamma again', 23: 'and delta' }),
  episode('ep-split', 30, { 10: 'we discuss supply', 11: 'chain today' }),
  // Passages that share lines across the row boundary count once: eta and theta on lines 19 and 21.
  episode('ep-merge', 45, { 19: 'eta theta', 21: 'theta eta' }),
  // Two groups of passages in one row: lines 8 and 10, then line 18 with line 22.
  episode('ep-groups', 30, { 8: 'eta', 10: 'theta', 18: 'eta', 22: 'theta' }),
  // A word more than 256 times in the row's first lines, then again with numbat further on; a line
  // longer than the 681 words indexed.
  episode('ep-long', 45, {
    0: Array(300).fill('wombat').join(' '),
    1: Array(300).fill('wombat').join(' '),
    12: 'a wombat',
    14: 'a numbat',
    30: `${words('x', 680)} emu ${words('y', 10)} quokka`,
  }),
  // A phrase after its first word's 10th use in a line (a long line of speech), and in a row that
  // holds that word more than 256 times.
  episode('ep-repeats', 45, {
    5: `${Array(12).fill('ibis and').join(' ')} ibis heron`,
    20: Array(130).fill('crane').join(' '),
    21: Array(130).fill('crane').join(' '),
    22: `${Array(30).fill('crane and').join(' ')} crane stork`,
  }),
];

describe.each<Engine>(['postgres', 'pglite'])('the exact passage check (%s)', (engine) => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness(engine);
    await h.ingest(events);
  });
  afterAll(() => h?.close());

  const search = async (keyword_search: string) => {
    const { status, body } = await h.json(SEARCH, { keyword_search });
    expect(status).toBe(200);
    return new Map<string, number[]>(
      body.data.map(
        (item: {
          episode: { id: string };
          windows: { lines: { number: number; is_match: boolean }[] }[];
        }) => [
          item.episode.id,
          item.windows.flatMap((w) => w.lines.filter((l) => l.is_match).map((l) => l.number)),
        ],
      ),
    );
  };
  const mentions = async (episode_id: string, keyword_search: string) => {
    const { body } = await h.json('/v1/podcasts/episodes/timeseries', {
      keyword_search,
      episode_id,
      interval: 'month',
      since: '2026-10-01',
      until: '2026-11-01',
    });
    return body.total_mentions;
  };

  it('finds a passage that crosses a row boundary, in the lines the rows share', async () => {
    expect(await search('alpha beta')).toEqual(new Map([['ep-cross', [17, 21]]]));
    expect(await search('kappa lambda')).toEqual(new Map([['ep-cross', [20, 24]]]));
    expect(await mentions('ep-cross', 'alpha beta')).toBe(1);
  });

  it('matches terms 4 lines apart and not 5', async () => {
    expect([...(await search('gamma delta')).keys()]).toEqual(['ep-four']);
    expect(await search('mu beta')).toEqual(new Map());
    expect((await search('gamma delta')).get('ep-four')).toEqual([4, 8]);
  });

  it('does not match a phrase split across two lines', async () => {
    expect(await search('"supply chain"')).toEqual(new Map());
    expect(await search('supply chain')).toEqual(new Map([['ep-split', [11, 12]]]));
  });

  it('counts passages that share lines once, across the row boundary too', async () => {
    expect(await mentions('ep-merge', 'eta theta')).toBe(1);
    expect(await mentions('ep-groups', 'eta theta')).toBe(2);
    expect((await search('eta theta')).get('ep-groups')).toEqual([9, 11, 19, 23]);
  });

  it('counts each detected mention line once, also a line two rows hold', async () => {
    const { body } = await h.json('/v1/podcasts/mentions', { entity_id: 'ent-ada', episode_id: 'ep-cross' });
    expect(body.data[0]).toMatchObject({ mention_count: 2, truncated: false });
    const series = await h.json('/v1/podcasts/mentions/timeseries', {
      entity_id: 'ent-ada',
      interval: 'month',
      since: '2026-10-01',
      until: '2026-11-01',
    });
    expect(series.body.total_mentions).toBe(2);
  });

  it('finds words past 256 occurrences of a word in a row and up to the 681st word of a line', async () => {
    expect(await search('wombat numbat')).toEqual(new Map([['ep-long', [13, 15]]]));
    expect(await search('"x679 emu"')).toEqual(new Map([['ep-long', [31]]]));
    // Words past the 681st of a line are not indexed (docs/search.md, "Index design").
    expect(await search('quokka')).toEqual(new Map());
  });

  it('finds a phrase after its first word was said more than 10 times in the line', async () => {
    expect(await search('"ibis heron"')).toEqual(new Map([['ep-repeats', [6]]]));
    expect(await search('"crane stork"')).toEqual(new Map([['ep-repeats', [23]]]));
  });
});
