import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import { catalogCapability } from '../../src/catalog/capability.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { searchCapability } from '../../src/search/capability.ts';
import { entityEvent } from '../fixtures/events.ts';
import { catchUp } from '../support/projections.ts';
import { type CatalogHarness, catalogHarness, episodeOf, NOW, podcastEvent } from './support.ts';

// Every answer built from stored transcript lines, byte for byte as recorded before the lines were
// stored once (docs/catalog.md, "Read models"): whole transcripts in every format, narrowed ones,
// segments, clips, the embed route, include=transcript, and the windows of search and mention pages.

const TEXTS = [
  'She said "no" \\ then\tleft.',
  'Line\u2028separator and\u2029paragraph',
  'Emoji 🎙️ and accents: café, naïve, 中文',
  '</script><script>alert(1)</script> & <b>bold</b> --> arrow',
  'Control \u0001\u001f chars\nand a break',
  'The Wombat Fund bought chips.',
  'x'.repeat(300),
];

/** 40 lines over three chunks, numbered with gaps and sent out of order, speakers given three ways. */
function transcribed(id: string, withMentions: boolean): EpisodeTranscribed {
  const base = episodeOf({ id, podcastId: 'pod-1', podcastTitle: 'Odd Show', durationSeconds: 500 });
  const lines = Array.from({ length: 40 }, (_, i) => ({
    number: i * 3 + 1,
    ...(i % 3 === 0 ? { speaker_id: 's1' } : i % 3 === 1 ? { speaker: 'Bo "B" Ray', role: 'guest' } : {}),
    start_seconds: i * 12.5,
    end_seconds: i * 12.5 + 11.125,
    text: `${TEXTS[i % TEXTS.length]} (${id} ${i})`,
  })).reverse();
  return {
    ...base,
    speakers: [
      { id: 's1', name: 'Ann "A" Lee', role: 'HOST' },
      { id: 's2', name: 'Bo "B" Ray', role: 'GUEST' },
    ],
    transcript: { language: 'en', lines },
    segments: [
      { id: `${id}-seg-lines`, title: 'By lines', type: 'INTRO', start_line: 10, end_line: 61 },
      { id: `${id}-seg-seconds`, title: 'By seconds', type: 'OUTRO', start_seconds: 300, end_seconds: 420 },
    ],
    clips: [{ id: `${id}-clip`, title: 'Best bit', start_seconds: 100, end_seconds: 260, speaker_id: 's1' }],
    ...(withMentions ? { mentions: [{ entity_id: 'ent-wombat', lines: [16, 58] }] } : {}),
  };
}

const FORMATS = ['dialogue', 'text', 'srt', 'vtt'];

/** Every URL whose answer is rendered from stored lines. */
const URLS = [
  ...['ep-a', 'ep-b'].flatMap((id) => [
    `/v1/podcasts/episodes/${id}?include=transcript`,
    `/v1/podcasts/episodes/${id}?include=transcript,segments,clips,speakers`,
    ...FORMATS.flatMap((format) => [
      `/v1/podcasts/episodes/${id}/transcript?format=${format}`,
      `/v1/podcasts/episodes/${id}/transcript?format=${format}&speaker=s1`,
      `/v1/podcasts/episodes/${id}/transcript?format=${format}&start=100&end=250`,
      `/v1/podcasts/segments/${id}-seg-lines/transcript?format=${format}`,
      `/v1/podcasts/segments/${id}-seg-seconds/transcript?format=${format}&speaker=Bo%20%22B%22%20Ray`,
      `/v1/podcasts/clips/${id}-clip/transcript?format=${format}`,
      `/v1/embed/clips/${id}-clip/transcript?format=${format}`,
    ]),
  ]),
  '/v1/podcasts/episodes/search?keyword_search=wombat%20fund',
  '/v1/podcasts/episodes/search?keyword_search=%22bought%20chips%22&keyword_match=ranked',
  '/v1/podcasts/mentions?entity_id=ent-wombat',
  '/v1/podcasts/mentions?entity_id=ent-wombat&context_lines=5',
];

describe.each(['postgres', 'pglite'] as const)('transcript answers on %s', (engine) => {
  let h: CatalogHarness;
  let app: FastifyInstance;

  beforeAll(async () => {
    h = await catalogHarness(engine);
    const search = searchCapability({ now: () => NOW });
    app = await buildHttpApp({
      db: h.db,
      cursorKey: Buffer.alloc(32, 3),
      routes: [
        ...(catalogCapability({ now: () => NOW, cacheBytes: 0 }).routes ?? []),
        ...(search.routes ?? []),
      ],
    });
    await h.ingest([
      podcastEvent({ id: 'pod-1', title: 'Odd Show' }),
      entityEvent({ id: 'ent-wombat', name: 'Wombat Fund', entity_type: 'COMPANY' }),
      transcribed('ep-a', false),
      transcribed('ep-b', true),
    ]);
    await catchUp(h.db, h.store, searchPassagesProjection);
  });
  afterAll(async () => {
    await app?.close();
    await h?.close();
  });

  it('answers every transcript rendering as recorded', async () => {
    const answers: string[] = [];
    for (const url of URLS) {
      // Twice: the first answer reads the lines, the second comes from the kept transcript.
      const [first, again] = [
        await app.inject({ url, headers: h.headers }),
        await app.inject({ url, headers: h.headers }),
      ];
      expect(again.body).toBe(first.body);
      answers.push(`${url}\n${first.statusCode} ${first.headers['content-type']}\n${first.body}\n`);
    }
    await expect(answers.join('\n')).toMatchFileSnapshot('./transcript-bytes.recorded.txt');
  });

  it('answers requests of one episode that arrive together (one read shared) as it answers each alone', async () => {
    const urls = URLS.filter((url) => url.startsWith('/v1/podcasts/episodes/ep-'));
    const alone = new Map<string, string>();
    for (const url of urls) alone.set(url, (await app.inject({ url, headers: h.headers })).body);
    // every URL of both episodes five times over, all at once
    const together = await Promise.all(
      [...urls, ...urls, ...urls, ...urls, ...urls].map(async (url) => ({
        url,
        body: (await app.inject({ url, headers: h.headers })).body,
      })),
    );
    for (const { url, body } of together) expect(body, url).toBe(alone.get(url));
  });
});
