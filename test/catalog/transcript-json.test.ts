import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCatalogEpisode } from '../../projections/catalog-episodes/queries.ts';
import { podcastsByIds } from '../../projections/podcasts/queries.ts';
import { findTranscript } from '../../projections/transcripts/queries.ts';
import { catalogCapability } from '../../src/catalog/capability.ts';
import { compact } from '../../src/catalog/compact.ts';
import { episodeSchema, transcriptSchema } from '../../src/catalog/schemas.ts';
import { publicLine, turnsOf } from '../../src/catalog/transcript-format.ts';
import { toEpisode, toEpisodeTopic, toPodcastReference } from '../../src/catalog/views.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { parseSrt, parseVtt } from './subtitles.ts';
import { type CatalogHarness, catalogHarness, episodeOf, NOW, podcastEvent } from './support.ts';

/** Text JSON escapes, or that a serializer might escape otherwise. */
/** A show whose reference in an episode carries every field, one of them a float and one quoted. */
const ODD_SHOW = {
  id: 'pod-1',
  title: 'Odd Show',
  slug: 'odd-show',
  image_url: 'https://img.example/odd.png',
  popularity: 0.1 + 0.2,
  publisher: { id: 'pub-1', name: 'Pub "Q" ✓', slug: 'pub-q' },
};

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
  /** The catalog's routes without the response cache, which would answer a repeated request itself. */
  let uncached: FastifyInstance;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    uncached = await buildHttpApp({
      db: h.db,
      cursorKey: Buffer.alloc(32, 3),
      routes: catalogCapability({ now: () => NOW, cacheBytes: 0 }).routes ?? [],
    });
    const event = episodeOf({
      id: 'ep-odd',
      podcastId: 'pod-1',
      podcastTitle: 'Odd Show',
      durationSeconds: 125,
    });
    await h.ingest([
      podcastEvent(ODD_SHOW),
      {
        ...event,
        episode: {
          ...event.episode,
          topics: [{ id: 't-1', name: 'Tech', slug: 'tech', ancestry: 'technology/tech' }],
        },
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
    // The episode as its response schema serializes it, from the read models queried one by one;
    // with its transcript when asked.
    bySchema.get<{ Querystring: { topics?: string; transcript?: string } }>(
      '/episode',
      { schema: { response: { 200: episodeSchema } } },
      async (request) => {
        const episode = (await findCatalogEpisode(h.db, 'ep-odd'))!;
        const [podcast] = await podcastsByIds(h.db, [episode.podcast_id]);
        return {
          ...toEpisode(episode, podcast && toPodcastReference(podcast)),
          ...(request.query.topics ? { topics: episode.topics.map(toEpisodeTopic) } : {}),
          ...(request.query.transcript ? { transcript: await transcriptOf(episode.duration_seconds) } : {}),
        };
      },
    );
  });
  afterAll(async () => {
    await bySchema.close();
    await uncached.close();
    await h.close();
  });

  const transcriptOf = async (durationSeconds: number) => {
    const row = (await findTranscript(h.db, 'ep-odd'))!;
    return compact({
      episode_id: 'ep-odd',
      language: row.language,
      duration_seconds: durationSeconds,
      excerpt: false,
      lines: row.lines.map(publicLine),
    });
  };

  /**
   * include=transcript (with topics) as the route answers it, and the bytes it must be: the episode
   * serialized by its schema, then its transcript's JSON (the kept lines are JSON.stringify'd; the
   * schema's serializer would put required fields first, an equal JSON value, checked too).
   */
  const episodeBodies = async (include: string) => {
    const query: Record<string, string> = include.includes('topics') ? { topics: '1' } : {};
    const episode = await bySchema.inject({ url: '/episode', query });
    const transcript = await transcriptOf(episode.json().duration_seconds);
    const got = await uncached.inject({
      url: '/v1/podcasts/episodes/ep-odd',
      query: { include },
      headers: h.headers,
    });
    expect(got.statusCode).toBe(200);
    const whole = await bySchema.inject({ url: '/episode', query: { ...query, transcript: '1' } });
    expect(got.json()).toEqual(whole.json());
    const want = `${episode.body.slice(0, -1)},"transcript":${JSON.stringify(transcript)}}`;
    return { got: got.rawPayload, want: Buffer.from(want) };
  };

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

  it('answers include=transcript byte for byte as the episode schema would, also once its body is joined', async () => {
    for (const include of ['transcript', 'topics,transcript']) {
      // Three times: rendered, then joined again to a kept rendering, then the joined body kept.
      for (const _ of [1, 2, 3]) {
        const { got, want } = await episodeBodies(include);
        expect(got.equals(want)).toBe(true);
      }
    }
    const { got } = await episodeBodies('transcript');
    expect(JSON.parse(got.toString()).podcast).toEqual(ODD_SHOW);
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

  it('answers a show changed since, with the same transcript version, at once in include=transcript', async () => {
    const before = JSON.parse((await episodeBodies('transcript')).got.toString());
    expect(before.podcast.title).toBe('Odd Show');
    await h.ingest([podcastEvent({ id: 'pod-1', title: 'Renamed Show' }, '2026-11-20T11:00:00Z')]);
    const { got, want } = await episodeBodies('transcript');
    expect(got.equals(want)).toBe(true);
    const after = JSON.parse(got.toString());
    expect(after.podcast.title).toBe('Renamed Show');
    expect(after.transcript).toEqual(before.transcript);
  });
});
