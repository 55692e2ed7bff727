import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTranscript } from '../../projections/transcripts/queries.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { quokka } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// The passage index and the transcripts read model advance on their own checkpoints: a result may
// find a line in the index that the transcript no longer (or not yet) holds (docs/search.md,
// "Lines are not copied").
let h: SearchHarness;

const long = Array.from({ length: 30 }, (_, i) =>
  i % 7 === 3 ? `Line ${i}: Quokka Labs and the wombat fund.` : `Line ${i}: nothing here.`,
);

beforeAll(async () => {
  h = await searchHarness('postgres');
  await h.ingest([
    quokka,
    episodeEvent({
      id: 'ep-shrunk',
      lines: long,
      publishedAt: '2026-10-05T00:00:00Z',
    }),
    episodeEvent({
      id: 'ep-rewritten',
      lines: long,
      publishedAt: '2026-10-04T00:00:00Z',
    }),
    episodeEvent({
      id: 'ep-missing',
      lines: long,
      publishedAt: '2026-10-03T00:00:00Z',
    }),
    episodeEvent({
      id: 'ep-produced',
      lines: long,
      publishedAt: '2026-10-02T00:00:00Z',
      mentions: [
        {
          entity_id: 'ent-quokka',
          lines: [4, 25],
          variants: ['Quokka Labs'],
          relevance: 'on_target',
        },
      ],
    }),
  ]);
  // The transcripts model moved on (or fell behind) while the index still holds the old lines:
  // the episodes re-sent, applied to the transcripts model only.
  const resent = (id: string, lines: string[]) =>
    episodeEvent({ id, lines, occurred_at: '2026-11-21T10:00:00Z' });
  await h.ingest(
    [
      resent('ep-shrunk', long.slice(0, 12)),
      resent('ep-produced', long.slice(0, 12)),
      resent(
        'ep-rewritten',
        Array.from({ length: 30 }, () => 'Completely different words.'),
      ),
      resent('ep-missing', []),
    ],
    ['transcripts'],
  );
});
afterAll(() => h?.close());

interface Line {
  number: number;
  text: string;
}
interface Item {
  episode: { id: string };
  windows: { lines: Line[] }[];
  truncated: boolean;
}
const transcriptLines = async (id: string, on = h): Promise<Line[]> =>
  (await findTranscript(on.db, id))?.lines ?? [];

/** Every line an item shows is a line the transcript holds now, with its current text. */
async function expectExistingLines(items: Item[], on = h) {
  for (const item of items) {
    const held = new Map((await transcriptLines(item.episode.id, on)).map((l) => [l.number, l.text]));
    for (const window of item.windows)
      for (const line of window.lines) expect(held.get(line.number)).toBe(line.text);
  }
}

const byId = (items: Item[]) => new Map(items.map((item) => [item.episode.id, item]));

describe('results when the index and the transcripts disagree', () => {
  it.each<Record<string, string>>([
    { keyword_search: 'quokka wombat' },
    { keyword_search: 'quokka wombat', keyword_match: 'ranked' },
    { keyword_search: '"quokka labs"', sort: 'recency' },
    { entity_id: 'ent-quokka' },
  ])('search %o shows only lines that exist and marks what it lost', async (query) => {
    const { status, body } = await h.json('/v1/podcasts/episodes/search', query);
    expect(status).toBe(200);
    await expectExistingLines(body.data);
    const items = byId(body.data);
    for (const id of ['ep-rewritten', 'ep-missing']) {
      const item = items.get(id);
      if (item === undefined) continue;
      expect(item.windows).toEqual([]);
      expect(item.truncated).toBe(true);
    }
    expect(items.get('ep-shrunk')?.truncated).toBe(true);
    expect(items.get('ep-shrunk')?.windows.length).toBeGreaterThan(0);
  });

  it.each(['0', '2', '20'])('mentions with context_lines %s show only existing lines', async (context) => {
    const { status, body } = await h.json('/v1/podcasts/mentions', {
      entity_id: 'ent-quokka',
      context_lines: context,
    });
    expect(status).toBe(200);
    expect(body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual([
      'ep-shrunk',
      'ep-rewritten',
      'ep-missing',
      'ep-produced',
    ]);
    await expectExistingLines(body.data);
    const items = byId(body.data);
    for (const id of ['ep-shrunk', 'ep-rewritten', 'ep-missing', 'ep-produced'])
      expect(items.get(id)?.truncated).toBe(true);
    expect(items.get('ep-rewritten')?.windows).toEqual([]);
    expect(items.get('ep-missing')?.windows).toEqual([]);
    // The lines shown are the ones still held; each window holds a mention line.
    for (const id of ['ep-shrunk', 'ep-produced'])
      expect(
        items.get(id)?.windows.flatMap((w: { lines: { number: number }[] }) => w.lines.map((l) => l.number)),
      ).toContain(4);
  });

  it('timeseries answer from the index alone', async () => {
    for (const url of ['/v1/podcasts/episodes/timeseries', '/v1/podcasts/mentions/timeseries']) {
      const { status, body } = await h.json(url, {
        entity_id: 'ent-quokka',
        interval: 'month',
        since: '2026-10-01',
        until: '2026-11-01',
      });
      expect(status).toBe(200);
      expect(body.total_episodes).toBe(4);
    }
  });
});

describe('an episode re-sent with other lines, applied to one projection before the other', () => {
  let r: SearchHarness;
  // The episode as re-sent on `day` of November, its only mention in line `at` (a position).
  const resent = (day: number, at: number) =>
    episodeEvent({
      id: 'ep-resent',
      publishedAt: '2026-10-01T00:00:00Z',
      occurred_at: `2026-11-${day}T10:00:00Z`,
      lines: Array.from({ length: 8 }, (_, i) => (i === at ? 'Quokka Labs, now.' : 'Nothing new.')),
    });
  beforeAll(async () => {
    r = await searchHarness('postgres');
    await r.ingest([
      quokka,
      episodeEvent({ id: 'ep-resent', lines: long, publishedAt: '2026-10-01T00:00:00Z' }),
    ]);
  });
  afterAll(() => r?.close());

  const queries: [string, Record<string, string>][] = [
    ['/v1/podcasts/mentions', { entity_id: 'ent-quokka', context_lines: '0' }],
    ['/v1/podcasts/episodes/search', { keyword_search: '"quokka labs"' }],
  ];

  /** Both endpoints list the episode, show only lines it holds now, and mark `truncated` as given. */
  async function expectItems(truncated: boolean) {
    for (const [url, query] of queries) {
      const { status, body } = await r.json(url, query);
      expect(status).toBe(200);
      expect(body.data.map((item: Item) => [item.episode.id, item.truncated])).toEqual([
        ['ep-resent', truncated],
      ]);
      await expectExistingLines(body.data, r);
    }
  }

  it.each([
    ['the index', ['search_passage_rows'], ['transcripts'], 21, 5],
    ['the transcripts model', ['transcripts'], ['search_passage_rows'], 22, 2],
  ])('shows only lines that exist while only %s has the re-sent episode', async (_, first, then, day, at) => {
    await r.ingest([resent(day, at)], first);
    await expectItems(true);
    await r.ingest([], then);
    await expectItems(false);
    const { body } = await r.json(...queries[0]!);
    expect(
      body.data[0].windows.flatMap((w: Item['windows'][number]) => w.lines.map((l) => l.number)),
    ).toEqual([at + 1]);
  });
});
