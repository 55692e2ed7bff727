import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogEpisodesByIds } from '../../projections/catalog-episodes/queries.ts';
import type { ClipRow } from '../../projections/clips/queries.ts';
import type { PodcastRow } from '../../projections/podcasts/queries.ts';
import { PASSAGE_LINES } from '../../projections/search-passages/passages.ts';
import type { SegmentRow } from '../../projections/segments/queries.ts';
import type { StoredLine } from '../../projections/transcripts/projection.ts';
import { linesAt, transcriptsByIds } from '../../projections/transcripts/queries.ts';
import { speakerEntities } from '../../src/catalog/references.ts';
import type { Queryable } from '../../src/db/db.ts';
import { around, entityMentions, mentionItem, nameDetector, searchItem } from '../../src/search/items.ts';
import { type EpisodeParts, loadEpisodes } from '../../src/search/parts.ts';
import { episodeEvent } from '../fixtures/events.ts';
import type { Engine } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';
import { entities } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// A page's episodes are read in one statement (src/search/parts.ts); before, five reads at once
// (episodes, podcasts, segments, clips, lines). The old reads are kept here as they were, and both
// must give the same parts and the same items, byte for byte, for sparse and whole transcripts.
// (The old segments read names the columns added since, 0254's audio_url and read_type, as the
// segments projection's own query does.)
// The clips' speakers' entities, read with the page since, are read here as the catalog reads them.

/** The reads of a page as they were until the one statement (each projection's own query). */
async function oldParts(
  db: Queryable,
  ids: readonly string[],
  wanted: ReadonlyMap<string, readonly number[]>,
) {
  const whole = ids.filter((id) => !wanted.has(id));
  const [episodes, podcasts, transcripts, some, segments, clips] = await Promise.all([
    catalogEpisodesByIds(db, ids),
    db
      .query<PodcastRow>(
        `select p.id, p.title, p.slug, p.description, p.url, p.image_url, p.language, p.explicit,
                p.popularity, p.bias, p.political_context, p.suitability_tier, p.has_video, p.feed_url, p.apple_id,
                p.directory_ids, p.publisher, coalesce(fm.episode_count, 0) as episode_count
           from podcasts p left join podcast_formats fm on fm.podcast_id = p.id
          where p.id in (select e.podcast_id from catalog_episodes e where e.id = any($1::text[]))`,
        [ids],
      )
      .then((r) => new Map(r.rows.map((p) => [p.id, p]))),
    whole.length ? transcriptsByIds(db, whole) : [],
    linesAt(db, wanted),
    db
      .query<SegmentRow>(
        `select id, episode_id, podcast_id, published_at, number, title, type, description, summary,
                audio_url, read_type, start_line, end_line, start_seconds, end_seconds
           from segments where episode_id = any($1::text[]) order by episode_id, number, id`,
        [ids],
      )
      .then((r) => r.rows),
    db
      .query<ClipRow>(
        `select id, episode_id, podcast_id, published_at, title, type, start_seconds, end_seconds,
                engagement_score, description, intro_statement, audio_url, segment_id, speaker
           from clips where episode_id = any($1::text[]) order by engagement_score desc, id`,
        [ids],
      )
      .then((r) => r.rows),
  ]);
  // The clips' speakers' entities as the catalog's clip routes read them (one read of their ids).
  const entities = await speakerEntities(
    db,
    clips.flatMap((c) => [c.speaker?.entity_id, c.speaker?.person_id]),
  );
  const linesOf = new Map<string, StoredLine[]>([
    ...transcripts.map((t) => [t.episode_id, t.lines] as const),
    ...some,
  ]);
  return new Map(
    episodes.map((episode) => [
      episode.id,
      {
        episode,
        podcast: podcasts.get(episode.podcast_id),
        lines: linesOf.get(episode.id) ?? [],
        segments: segments.filter((s) => s.episode_id === episode.id),
        clips: clips.filter((c) => c.episode_id === episode.id),
        speakerEntities: entities,
      },
    ]),
  );
}

/** What items read of the parts, old or new (the rows' other columns are not read). */
function shown(parts: ReadonlyMap<string, Pick<EpisodeParts, 'lines'> & Record<string, unknown>>) {
  const pick = (row: unknown, drop: string[]) =>
    row && Object.fromEntries(Object.entries(row).filter(([k]) => !drop.includes(k)));
  const place = ['episode_id', 'podcast_id', 'published_at'];
  return new Map(
    [...parts].map(([id, p]) => {
      const e = p.episode as EpisodeParts['episode'];
      const podcast = p.podcast as EpisodeParts['podcast'];
      return [
        id,
        {
          episode: {
            id: e.id,
            podcast_id: e.podcast_id,
            slug: e.slug,
            title: e.title,
            audio_url: e.audio_url,
            image_url: e.image_url,
            explicit: e.explicit,
            duration_seconds: e.duration_seconds,
            published_at: e.published_at,
            speakers: e.speakers,
          },
          podcast: podcast && {
            title: podcast.title,
            slug: podcast.slug,
            image_url: podcast.image_url,
            popularity: podcast.popularity,
            bias: podcast.bias,
            explicit: podcast.explicit,
          },
          lines: p.lines,
          segments: (p.segments as unknown[]).map((s) => pick(s, place)),
          clips: (p.clips as unknown[]).map((c) => pick(c, place)),
          // Of the page's entities (old), those of the episode's clips (new).
          speakerEntities: [...(p.speakerEntities as EpisodeParts['speakerEntities'])]
            .filter(([id]) =>
              (p.clips as EpisodeParts['clips']).some(
                (c) => c.speaker?.entity_id === id || c.speaker?.person_id === id,
              ),
            )
            .sort(([a], [b]) => a.localeCompare(b)),
        },
      ];
    }),
  );
}

const next = prng(31);
const text = (n: number) =>
  Array.from({ length: n }, (_, k) =>
    k % 7 === 3 ? `Jensen Huang said ${k} things.` : `filler ${k} ${next() < 0.5 ? 'ça' : 'ok'} "quoted"`,
  );

const events = [
  // Segments by line range and by time, clips overlapping, a speaker with an entity.
  episodeEvent({
    id: 'ep-rich',
    publishedAt: '2026-10-05T08:00:00.123456Z',
    lines: text(70),
    podcast: { id: 'pod-a', title: 'Chip Talk', slug: 'chip-talk', language: 'en', popularity: 0.1 + 0.2 },
    speakers: [
      { id: 'spk-host', name: 'Hannah Host', role: 'HOST' },
      { id: 'g', name: 'Jensen Huang', role: 'guest', entity_id: 'ent-jensen' },
    ],
    segments: [
      { id: 'seg-b', title: 'Second', type: 'INTRO', number: 2, start_line: 20, end_line: 40 },
      { id: 'seg-a', title: 'First', number: 1, start_seconds: 0, end_seconds: 190.5, summary: 'Ça va' },
      {
        id: 'seg-c',
        title: 'Tied',
        number: 2,
        start_seconds: 400,
        end_seconds: 700,
        description: 'd',
        audio_url: 'https://example.com/seg-c.mp3',
        read_type: 'HOST_READ',
      },
    ],
    clips: [
      { id: 'clip-2', title: 'Two', start_seconds: 30.25, end_seconds: 95, engagement_score: 80 },
      { id: 'clip-1', title: 'One', start_seconds: 0, end_seconds: 9, engagement_score: 80, speaker_id: 'g' },
      {
        id: 'clip-3',
        title: 'Three',
        type: 'HIGHLIGHT',
        start_seconds: 200,
        end_seconds: 260,
        engagement_score: 95,
        description: 'x',
        intro_statement: 'y',
        audio_url: 'https://example.com/a.mp3',
        segment_id: 'seg-b',
      },
    ],
    mentions: [{ entity_id: 'ent-nvidia', lines: [4, 11, 99], variants: ['NVIDIA'], relevance: 'on_target' }],
  }),
  // Another podcast with other fields; no segments, no clips; a producer mention of Jensen.
  episodeEvent({
    id: 'ep-plain',
    publishedAt: '2026-11-02T23:30:00Z',
    lines: text(35),
    podcast: { id: 'pod-b', title: 'Marchés', language: 'fr', bias: 'LEFT' },
    mentions: [
      { entity_id: 'ent-jensen', lines: [4, 18], variants: ['Jensen Huang'], relevance: 'on_target' },
    ],
  }),
  episodeEvent({ id: 'ep-short', lines: ['Only one line.'] }),
];

describe.each<Engine>(['postgres', 'pglite'])('a page read in one statement (%s)', (engine) => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness(engine);
    await h.ingest([...entities, ...events]);
  }, 120_000);
  afterAll(() => h?.close());

  const ids = ['ep-rich', 'ep-plain', 'ep-short', 'ep-unknown'];
  const cases: [string, Map<string, number[]>][] = [
    ['every transcript whole', new Map()],
    ['nothing read', new Map(ids.map((id) => [id, []]))],
    [
      'some lines, past the end too',
      new Map([
        ['ep-rich', [0, 1, 2, 15, 16, 17, 33, 69, 70, 200]],
        ['ep-plain', [3, 4, 5, 6, 7, 34]],
        ['ep-short', [0, 1]],
        ['ep-unknown', [0]],
      ]),
    ],
    ['some whole, some sparse', new Map([['ep-rich', [22, 23, 24, 25, 26, 27, 28, 29]]])],
  ];

  it.each(cases)('gives the parts the five reads gave: %s', async (_name, wanted) => {
    const old = await oldParts(h.db, ids, wanted);
    const parts = await loadEpisodes(h.db, ids, wanted);
    expect([...parts.keys()].sort()).toEqual(['ep-plain', 'ep-rich', 'ep-short']);
    expect(shown(parts as never)).toEqual(shown(old as never));
    // The sparse arrays hold their lines at the same positions, holes included.
    for (const [id, p] of parts) expect(Object.keys(p.lines)).toEqual(Object.keys(old.get(id)!.lines));
  });

  // Items read only lines their reads named (as the routes do): the passages and mention lines of
  // each episode within its length, their context read or the whole transcript.
  const length = { 'ep-rich': 70, 'ep-plain': 35, 'ep-short': 1 } as Record<string, number>;
  const within = (id: string, at: number[]) => at.filter((i) => i < length[id]!);
  const starts = [0, 1, 14, 15, 30, 66];
  const lines = [0, 3, 10, 17, 24, 31];
  const context = (id: string) => [
    ...around(within(id, starts), 2, PASSAGE_LINES + 1),
    ...around(within(id, lines), 2, 2),
  ];
  it.each([
    ['whole transcripts', new Map<string, number[]>()],
    ['the lines around', new Map(Object.keys(length).map((id) => [id, context(id)]))],
  ])('builds the same items, byte for byte: %s', async (_name, wanted) => {
    const old = await oldParts(h.db, ids, wanted);
    const parts = await loadEpisodes(h.db, ids, wanted);
    const keywords = { terms: [['jensen'], ['filler']], all: true };
    const nvidia = {
      parameter: 'entity_id' as const,
      entity: entityRow('ent-nvidia', 'Nvidia'),
      names: [['nvidia']],
    };
    const jensen = {
      parameter: 'entity_id' as const,
      entity: entityRow('ent-jensen', 'Jensen Huang'),
      names: [['jensen', 'huang']],
    };
    for (const id of Object.keys(length)) {
      const items = (p: EpisodeParts) => {
        const produced = { episode_id: id, mention_count: 3, lines: [4, 11, 99], variants: ['NVIDIA'] };
        return JSON.stringify([
          searchItem(p, { keywords, starts: within(id, starts), bestStart: 14, score: 0.5 }),
          searchItem(p, {
            starts: [],
            bestStart: 3,
            score: 0,
            mentions: { indexes: within(id, lines), lost: false },
          }),
          mentionItem(p, entityMentions(p, nameDetector(nvidia), produced, []), 2),
          mentionItem(p, entityMentions(p, nameDetector(jensen), undefined, within(id, lines)), 2),
        ]);
      };
      expect(items(parts.get(id)!)).toBe(items(old.get(id)! as unknown as EpisodeParts));
      if (id === 'ep-rich') expect(items(parts.get(id)!)).toMatch(/seg-b.*clip-3/);
    }
  });
});

function entityRow(id: string, name: string) {
  return { id, name, slug: id, entity_type: 'COMPANY', aliases: [] } as never;
}
