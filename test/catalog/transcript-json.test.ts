import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTranscript } from '../../projections/transcripts/queries.ts';
import { compact } from '../../src/catalog/compact.ts';
import { transcriptSchema } from '../../src/catalog/schemas.ts';
import { publicLine, turnsOf } from '../../src/catalog/transcript-format.ts';
import { parseSrt, parseVtt } from './subtitles.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

/** Text JSON escapes, or that a serializer might escape otherwise. */
const TEXTS = [
  'She said "no" \\ then\tleft.',
  'Line\u2028separator and\u2029paragraph',
  'Emoji 🎙️ and accents: café, naïve, 中文',
  '</script><script>alert(1)</script>',
  'Control \u0001\u001f chars',
  'x'.repeat(200),
];

describe('whole transcripts joined from kept JSON', () => {
  let h: CatalogHarness;
  /** The transcript schema's own serializer, as the routes used before the lines were kept. */
  const bySchema = Fastify();

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    const event = episodeOf({ id: 'ep-odd', podcastId: 'pod-1', durationSeconds: 125 });
    await h.ingest([
      podcastEvent({ id: 'pod-1', title: 'Odd Show' }),
      {
        ...event,
        speakers: [{ id: 's1', name: 'Ann "A" Lee', role: 'HOST' }],
        transcript: {
          lines: TEXTS.map((text, i) => ({
            number: i + 1,
            // Every other line without a speaker, so without speaker and role.
            ...(i % 2 ? {} : { speaker_id: 's1' }),
            start_seconds: i * 1.25,
            end_seconds: i * 1.25 + 1.125,
            text,
          })),
        },
        segments: [{ id: 'seg-odd', title: 'Intro', type: 'INTRO', start_seconds: 0, end_seconds: 3 }],
      },
    ]);
    bySchema.get('/', { schema: { response: { 200: transcriptSchema } } }, async () => {
      const row = await findTranscript(h.db, 'ep-odd');
      const lines = row?.lines ?? [];
      return compact({
        episode_id: 'ep-odd',
        language: row?.language,
        duration_seconds: 125,
        excerpt: false,
        lines: lines.map(publicLine),
        turns: turnsOf(lines),
      });
    });
  });
  afterAll(async () => {
    await bySchema.close();
    await h.close();
  });

  it('answers the dialogue of a whole transcript as the response schema would', async () => {
    const want = (await bySchema.inject({ url: '/' })).json();
    expect(want.lines).toHaveLength(TEXTS.length);
    expect(want.lines[1].speaker).toBeUndefined();
    for (const query of [{}, { format: 'dialogue' }, { start: '0' }] as Record<string, string>[]) {
      // Twice: the first answer renders, the second is the kept rendering.
      for (const _ of [1, 2]) {
        const res = await h.get('/v1/podcasts/episodes/ep-odd/transcript', query);
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.json()).toEqual(want);
      }
    }
  });

  it('joins the lines of include=transcript to the episode as its schema would, with other sections', async () => {
    const want = (await bySchema.inject({ url: '/' })).json();
    const { turns: _, ...transcript } = want;
    for (const include of ['transcript', 'transcript,segments', 'segments,transcript,speakers,topics']) {
      for (const _ of [1, 2]) {
        const res = await h.get('/v1/podcasts/episodes/ep-odd', { include });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        const episode = res.json();
        expect(episode.transcript).toEqual(transcript);
        expect(episode.id).toBe('ep-odd');
        if (include.includes('segments'))
          expect(episode.segments.map((s: { id: string }) => s.id)).toEqual(['seg-odd']);
        else expect(episode.segments).toBeUndefined();
      }
    }
  });

  it('keeps subtitles parseable, and answers HEAD with the GET headers', async () => {
    const srt = await h.get('/v1/podcasts/episodes/ep-odd/transcript', { format: 'srt' });
    expect(parseSrt(srt.body)).toHaveLength(TEXTS.length);
    const vtt = await h.get('/v1/podcasts/episodes/ep-odd/transcript', { format: 'vtt' });
    expect(parseVtt(vtt.body)).toHaveLength(TEXTS.length);
    for (const [url, query] of [
      ['/v1/podcasts/episodes/ep-odd/transcript', 'format=srt'],
      ['/v1/podcasts/episodes/ep-odd/transcript', 'format=text'],
      ['/v1/podcasts/episodes/ep-odd/transcript', ''],
      ['/v1/podcasts/episodes/ep-odd', 'include=transcript'],
    ] as const) {
      // HEAD first: the answer it computes is kept for the GET after it.
      const head = await h.app.inject({ method: 'HEAD', url: `${url}?${query}&head`, headers: h.headers });
      const get = await h.app.inject({ method: 'GET', url: `${url}?${query}&head`, headers: h.headers });
      expect(get.body.length).toBeGreaterThan(0);
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
      expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(get.body));
    }
  });
});
