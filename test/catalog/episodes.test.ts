import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityEvent } from '../fixtures/events.ts';
import { companyReferences } from '../support/company-refs.ts';
import { parseSrt, parseVtt } from './subtitles.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

const LINES = [
  { number: 1, speaker_id: 'h', start_seconds: 0, end_seconds: 4.5, text: 'Welcome back to the show.' },
  { number: 2, speaker_id: 'h', start_seconds: 4.5, end_seconds: 9, text: 'Today: chips & <markup>.' },
  {
    number: 3,
    speaker_id: 'g',
    start_seconds: 9,
    end_seconds: 15.25,
    text: 'Thanks for having me --> really.',
  },
  { number: 4, speaker_id: 'g', start_seconds: 15.25, end_seconds: 20, text: 'Line one\nline two' },
  { number: 5, speaker_id: 'h', start_seconds: 3601, end_seconds: 3605, text: 'That is all.' },
];

const fullEpisode = (occurredAt = '2026-11-20T10:00:00Z') =>
  episodeOf({
    id: 'ep-full',
    podcastId: 'pod-1',
    podcastTitle: 'Chip Talk',
    title: 'Chips with Jensen',
    publishedAt: '2026-11-15T06:00:00Z',
    occurredAt,
    topics: [{ id: 'top-chips', name: 'Chips', slug: 'chips', ancestry: 'technology/chips' }],
    videos: 1,
    extra: {
      speakers: [
        { id: 'h', name: 'Hannah Host', role: 'co_host' },
        {
          id: 'g',
          name: 'Jensen Huang',
          role: 'GUEST',
          entity_id: 'ent-jensen',
          speaking_duration_seconds: 900.4,
        },
      ],
      transcript: { language: 'en', lines: LINES },
      mentions: [{ entity_id: 'ent-nvidia', lines: [2] }],
      segments: [
        { id: 'seg-intro', title: 'Intro', type: 'INTRO', number: 1, start_line: 1, end_line: 2 },
        {
          id: 'seg-talk',
          title: 'The talk',
          type: 'INTERVIEW',
          number: 2,
          start_line: 3,
          end_line: 5,
          summary: 'Chips.',
        },
      ],
      clips: [
        {
          id: 'clip-a',
          title: 'On chips',
          type: 'INSIGHTFUL',
          start_seconds: 9,
          end_seconds: 20,
          engagement_score: 82,
          speaker_id: 'g',
          segment_id: 'seg-talk',
          audio_url: 'https://a.example/clip-a.mp3',
        },
        {
          id: 'clip-b',
          title: 'Welcome',
          type: 'FUNNY',
          start_seconds: 0,
          end_seconds: 9,
          engagement_score: 40,
          speaker_id: 'h',
        },
      ],
      ads: [
        {
          id: 'ad-1',
          sponsor: { id: 'sp-sq', name: 'Squarespace' },
          read_type: 'HOST_READ',
          placement_type: 'PRE_ROLL',
          start_seconds: 0,
          end_seconds: 30,
        },
      ],
    },
    episode: { slug: 'chips-with-jensen', episode_number: 42, audio_url: 'https://a.example/ep.mp3' },
  });

const NVIDIA = { id: 'ent-nvidia', slug: 'nvidia', companyId: 'c-nvidia', domain: 'nvidia.com' };

/** ent-jensen as GET /v1/entities/{id} answers it: a speaker's entity is the Knowledge-graph entity. */
const JENSEN = {
  id: 'ent-jensen',
  name: 'Jensen Huang',
  slug: 'jensen-huang',
  entity_type: 'PERSON',
  aliases: [],
  type: { name: 'Person', slug: 'person' },
};

describe('episodes, transcripts, segments and clips', () => {
  let h: CatalogHarness;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    await h.ingest([
      entityEvent({ id: 'ent-jensen', slug: 'jensen-huang', name: 'Jensen Huang' }),
      entityEvent({
        id: 'ent-nvidia',
        slug: 'nvidia',
        name: 'NVIDIA',
        entity_type: 'COMPANY',
        company: { id: 'c-nvidia', domain: 'nvidia.com' },
      }),
      podcastEvent({ id: 'pod-1', title: 'Chip Talk', slug: 'chip-talk', directory_ids: { apple: '42' } }),
      fullEpisode(),
      ...Array.from({ length: 6 }, (_, i) =>
        episodeOf({
          id: `ep-${i}`,
          podcastId: i % 2 ? 'pod-1' : 'pod-2',
          podcastTitle: i % 2 ? 'Chip Talk' : 'Other Show',
          publishedAt: `2026-10-0${i + 1}T06:00:00Z`,
          durationSeconds: 600 * (i + 1),
          roles: i < 3 ? ['HOST'] : [],
          extra: {
            segments: [
              {
                id: `seg-${i}`,
                title: `Segment ${i}`,
                type: i % 2 ? 'AD' : 'INTRO',
                start_seconds: 0,
                end_seconds: 30,
              },
            ],
            clips: [
              {
                id: `clip-${i}`,
                title: `Clip ${i}`,
                start_seconds: 0,
                end_seconds: 10,
                engagement_score: 50 + i,
              },
            ],
          },
        }),
      ),
    ]);
  });
  afterAll(() => h.close());

  it('serves an episode by id or slug, with each include section', async () => {
    const bySlug = await h.get('/v1/podcasts/episodes/chips-with-jensen');
    expect(bySlug.statusCode).toBe(200);
    expect(bySlug.json()).toMatchObject({
      id: 'ep-full',
      title: 'Chips with Jensen',
      duration_seconds: 3600,
      has_transcript: true,
      episode_number: 42,
      entity_count: 1,
      clip_count: 2,
      segment_count: 2,
      podcast: { id: 'pod-1', title: 'Chip Talk', slug: 'chip-talk' },
      videos: [{ url: 'https://v.example/ep-full/0' }],
    });
    expect(bySlug.json().transcript).toBeUndefined();
    const full = (
      await h.get('/v1/podcasts/episodes/ep-full', {
        include: 'transcript,segments,clips,speakers,topics,ads',
      })
    ).json();
    expect(full.speakers).toEqual([
      { association_id: 'h', name: 'Hannah Host', role: 'HOST' },
      {
        association_id: 'g',
        name: 'Jensen Huang',
        role: 'GUEST',
        speaking_duration_seconds: 900,
        entity: JENSEN,
      },
    ]);
    expect(full.topics).toEqual([expect.objectContaining({ id: 'top-chips', ancestry: 'technology/chips' })]);
    expect(full.segments.map((s: { id: string }) => s.id)).toEqual(['seg-intro', 'seg-talk']);
    expect(full.clips.map((c: { id: string }) => c.id)).toEqual(['clip-a', 'clip-b']);
    expect(full.clips[0].segment).toEqual({ id: 'seg-talk', title: 'The talk', type: 'INTERVIEW' });
    expect(full.ads).toEqual([
      {
        id: 'ad-1',
        sponsor: { id: 'sp-sq', name: 'Squarespace' },
        read_type: 'HOST_READ',
        placement_type: 'PRE_ROLL',
        start_seconds: 0,
        end_seconds: 30,
        is_network_promo: false,
      },
    ]);
    expect(full.transcript).toMatchObject({ episode_id: 'ep-full', language: 'en', excerpt: false });
    expect(full.transcript.duration_seconds).toBe(full.duration_seconds);
    expect(full.transcript.lines).toHaveLength(5);
    expect(full.transcript.lines[0]).toEqual({
      number: 1,
      speaker: 'Hannah Host',
      role: 'HOST',
      start_seconds: 0,
      end_seconds: 4.5,
      text: 'Welcome back to the show.',
    });
  });

  it('gives each clip its segment whatever else is included, cached or not', async () => {
    const listed = (await h.get('/v1/podcasts/clips', { episode_id: 'ep-full' })).json().data;
    const expected = listed
      .map(({ episode: _episode, ...clip }: { episode: unknown }) => clip)
      .sort((a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id));
    expect(expected.find((c: { id: string }) => c.id === 'clip-a').segment).toEqual({
      id: 'seg-talk',
      title: 'The talk',
      type: 'INTERVIEW',
    });
    for (const include of [
      'clips',
      'clips,speakers',
      'transcript,clips',
      'segments,clips',
      'clips,segments,ads',
    ]) {
      // The second request is answered from the response cache.
      for (const round of [1, 2]) {
        const clips = (await h.get('/v1/podcasts/episodes/ep-full', { include })).json().clips;
        expect({ include, round, clips }).toEqual({ include, round, clips: expected });
      }
    }
  });

  it('rejects an unknown include value with 400 invalid_parameter, and an unknown episode with 404', async () => {
    const bad = await h.get('/v1/podcasts/episodes/ep-full', { include: 'transcript,comments' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      error_code: 'invalid_parameter',
      errors: [{ location: 'query.include' }],
    });
    const missing = await h.get('/v1/podcasts/episodes/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error_code).toBe('episode_not_found');
  });

  it('lists episodes across podcasts with each filter and pages through them', async () => {
    const ids = async (query: Record<string, string>) =>
      (await h.get('/v1/podcasts/episodes', query)).json().data.map((e: { id: string }) => e.id);
    expect(await ids({})).toEqual(['ep-full', 'ep-5', 'ep-4', 'ep-3', 'ep-2', 'ep-1', 'ep-0']);
    expect(await ids({ podcast_id: '42' })).toEqual(['ep-full', 'ep-5', 'ep-3', 'ep-1']);
    expect(await ids({ podcast_id: 'unknown' })).toEqual([]);
    expect(await ids({ entity_id: 'jensen-huang' })).toEqual(['ep-full']);
    for (const company of companyReferences(NVIDIA))
      expect(await ids({ company_id: company }), company).toEqual(['ep-full']);
    expect(await ids({ company_id: 'nvidia', entity_id: 'ent-nvidia' })).toEqual(['ep-full']);
    expect(await ids({ company_id: 'nvidia', entity_id: 'jensen-huang' })).toEqual([]);
    expect(await ids({ company_id: 'jensen-huang' })).toEqual([]);
    expect(await ids({ company_id: 'nobody.example' })).toEqual([]);
    expect(await ids({ has_transcript: 'false' })).toEqual(['ep-5', 'ep-4', 'ep-3']);
    expect(await ids({ min_duration: '1800', max_duration: '3000' })).toEqual(['ep-4', 'ep-3', 'ep-2']);
    expect(await ids({ published_after: '2026-10-03', published_before: '2026-10-05' })).toEqual([
      'ep-3',
      'ep-2',
    ]);
    expect(await ids({ language: 'de' })).toEqual([]);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (
        await h.get('/v1/podcasts/episodes', { limit: '3', ...(cursor ? { cursor } : {}) })
      ).json();
      seen.push(...page.data.map((e: { id: string }) => e.id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual(['ep-full', 'ep-5', 'ep-4', 'ep-3', 'ep-2', 'ep-1', 'ep-0']);
    const range = await h.get('/v1/podcasts/episodes', { min_duration: '10', max_duration: '5' });
    expect(range.statusCode).toBe(422);
    expect((await h.get('/v1/podcasts/episodes', { cursor: 'forged.cursor' })).json().error_code).toBe(
      'invalid_cursor',
    );
  });

  it('serves a transcript as dialogue turns, text, srt and vtt, narrowed by speaker and time', async () => {
    const dialogue = await h.get('/v1/podcasts/episodes/ep-full/transcript');
    expect(dialogue.statusCode).toBe(200);
    expect(dialogue.headers['content-type']).toContain('application/json');
    expect(dialogue.json()).toMatchObject({
      episode_id: 'ep-full',
      language: 'en',
      excerpt: false,
      duration_seconds: 3600,
    });
    expect(dialogue.json().turns).toEqual([
      {
        speaker: 'Hannah Host',
        role: 'HOST',
        start_seconds: 0,
        end_seconds: 9,
        first_line: 1,
        last_line: 2,
        text: 'Welcome back to the show. Today: chips & <markup>.',
      },
      {
        speaker: 'Jensen Huang',
        role: 'GUEST',
        start_seconds: 9,
        end_seconds: 20,
        first_line: 3,
        last_line: 4,
        text: 'Thanks for having me --> really. Line one\nline two',
      },
      {
        speaker: 'Hannah Host',
        role: 'HOST',
        start_seconds: 3601,
        end_seconds: 3605,
        first_line: 5,
        last_line: 5,
        text: 'That is all.',
      },
    ]);

    const text = await h.get('/v1/podcasts/episodes/ep-full/transcript', { format: 'text' });
    expect(text.headers['content-type']).toContain('text/plain');
    expect(text.body.split('\n\n')[0]).toBe(
      'Hannah Host: Welcome back to the show. Today: chips & <markup>.',
    );

    const srt = await h.get('/v1/podcasts/episodes/ep-full/transcript', { format: 'srt' });
    expect(srt.headers['content-type']).toContain('application/x-subrip');
    const srtCues = parseSrt(srt.body);
    expect(srtCues).toHaveLength(5);
    expect(srtCues[4]).toEqual({ id: '5', start: 3601, end: 3605, text: 'Hannah Host: That is all.' });
    expect(srtCues[3]!.text).toBe('Jensen Huang: Line one line two');

    const vtt = await h.get('/v1/podcasts/episodes/ep-full/transcript', { format: 'vtt' });
    expect(vtt.headers['content-type']).toContain('text/vtt');
    const vttCues = parseVtt(vtt.body);
    expect(vttCues.map((c) => c.start)).toEqual([0, 4.5, 9, 15.25, 3601]);
    expect(vttCues[1]!.text).toBe('<v Hannah Host>Today: chips &amp; &lt;markup&gt;.');
    expect(vttCues[2]!.text).not.toContain('-->');

    const guest = (
      await h.get('/v1/podcasts/episodes/ep-full/transcript', { speaker: 'jensen huang' })
    ).json();
    expect(guest.lines.map((l: { number: number }) => l.number)).toEqual([3, 4]);
    const window = (
      await h.get('/v1/podcasts/episodes/ep-full/transcript', { start: '5', end: '16' })
    ).json();
    expect(window.lines.map((l: { number: number }) => l.number)).toEqual([2, 3, 4]);
    expect((await h.get('/v1/podcasts/episodes/ep-full/transcript', { format: 'pdf' })).statusCode).toBe(400);
    expect((await h.get('/v1/podcasts/episodes/ep-4/transcript')).json().error_code).toBe(
      'transcript_not_found',
    );
  });

  it("lists an episode's segments in order and serves a segment with its transcript lines", async () => {
    const page = (await h.get('/v1/podcasts/episodes/ep-full/segments')).json();
    expect(page.data.map((s: { id: string }) => s.id)).toEqual(['seg-intro', 'seg-talk']);
    expect(page.data[1]).toMatchObject({
      title: 'The talk',
      type: 'INTERVIEW',
      number: 2,
      start_line: 3,
      end_line: 5,
      start_seconds: 9,
      end_seconds: 3605,
      duration_seconds: 3596,
      summary: 'Chips.',
      episode: { id: 'ep-full', slug: 'chips-with-jensen', podcast: { id: 'pod-1' } },
    });
    const one = await h.get('/v1/podcasts/segments/seg-talk');
    expect(one.json().id).toBe('seg-talk');
    expect((await h.get('/v1/podcasts/segments/nope')).json().error_code).toBe('segment_not_found');
    const transcript = (await h.get('/v1/podcasts/segments/seg-talk/transcript')).json();
    expect(transcript).toMatchObject({
      excerpt: true,
      segment_id: 'seg-talk',
      segment_start_seconds: 9,
      segment_end_seconds: 3605,
    });
    expect(transcript.lines.map((l: { number: number }) => l.number)).toEqual([3, 4, 5]);
    expect(
      parseSrt((await h.get('/v1/podcasts/segments/seg-intro/transcript', { format: 'srt' })).body),
    ).toHaveLength(2);
  });

  it('lists segments by episode, podcast or type (one required), with publish dates, across pages', async () => {
    const ids = async (query: Record<string, string>) =>
      (await h.get('/v1/podcasts/segments', query)).json().data.map((s: { id: string }) => s.id);
    expect(await ids({ episode_id: 'chips-with-jensen' })).toEqual(['seg-intro', 'seg-talk']);
    expect(await ids({ podcast_id: 'chip-talk' })).toEqual([
      'seg-intro',
      'seg-talk',
      'seg-5',
      'seg-3',
      'seg-1',
    ]);
    expect(await ids({ type: 'AD' })).toEqual(['seg-5', 'seg-3', 'seg-1']);
    expect(await ids({ type: 'INTRO', published_before: '2026-10-04' })).toEqual(['seg-2', 'seg-0']);
    expect(await ids({ podcast_id: 'nope' })).toEqual([]);
    const none = await h.get('/v1/podcasts/segments');
    expect(none.statusCode).toBe(422);
    expect(none.json().error_code).toBe('filter_required');
    expect((await h.get('/v1/podcasts/segments', { type: 'MONOLOGUE' })).statusCode).toBe(400);
    const first = (await h.get('/v1/podcasts/segments', { podcast_id: 'pod-1', limit: '3' })).json();
    const second = (
      await h.get('/v1/podcasts/segments', { podcast_id: 'pod-1', limit: '3', cursor: first.cursor })
    ).json();
    expect([...first.data, ...second.data].map((s: { id: string }) => s.id)).toEqual([
      'seg-intro',
      'seg-talk',
      'seg-5',
      'seg-3',
      'seg-1',
    ]);
    expect(second.has_more).toBe(false);
  });

  it('refuses with 400 invalid_cursor a cursor another list issued, on each episode, segment and clip list', async () => {
    // What GET /v1/projects/{id}/alerts issues (src/http/pagination.ts): also a `p` and an `i`.
    const alerts = h.app.cursors.encode({
      p: 'ePsB3h7PGAowQfpa7Sfnah',
      c: '2026-11-28T20:54:41.802Z',
      i: 'ChdjH1WKdgrgR4gU4JLW52',
    });
    const episodes = (await h.get('/v1/podcasts/episodes', { limit: '1' })).json().cursor;
    const segments = (await h.get('/v1/podcasts/segments', { podcast_id: 'pod-1', limit: '1' })).json()
      .cursor;
    const lists = [
      ['/v1/podcasts/episodes', {}, [alerts, segments]],
      ['/v1/podcasts/pod-1/episodes', {}, [alerts, segments]],
      ['/v1/podcasts/segments', { podcast_id: 'pod-1' }, [alerts, episodes]],
      ['/v1/podcasts/episodes/ep-full/segments', {}, [alerts, episodes]],
      ['/v1/podcasts/clips', {}, [alerts, episodes, segments]],
    ] as const;
    for (const [url, query, foreign] of lists)
      for (const cursor of foreign) {
        const response = await h.get(url, { ...query, cursor });
        expect(response.statusCode, `${url} ${cursor}`).toBe(400);
        expect(response.json()).toMatchObject({
          error_code: 'invalid_cursor',
          errors: [{ location: 'query.cursor', message: 'issued for another list' }],
        });
      }
  });

  it('lists clips by engagement with episode, podcast, speaker, type and minimum engagement filters', async () => {
    const ids = async (query: Record<string, string>) =>
      (await h.get('/v1/podcasts/clips', query)).json().data.map((c: { id: string }) => c.id);
    expect(await ids({})).toEqual([
      'clip-a',
      'clip-5',
      'clip-4',
      'clip-3',
      'clip-2',
      'clip-1',
      'clip-0',
      'clip-b',
    ]);
    expect(await ids({ episode_id: 'ep-full' })).toEqual(['clip-a', 'clip-b']);
    expect(await ids({ podcast_id: '42', min_engagement: '52' })).toEqual(['clip-a', 'clip-5', 'clip-3']);
    expect(await ids({ speaker: 'jensen-huang' })).toEqual(['clip-a']);
    expect(await ids({ speaker: 'ent-jensen' })).toEqual(['clip-a']);
    expect(await ids({ speaker: 'nobody' })).toEqual([]);
    expect(await ids({ podcast_id: 'nobody' })).toEqual([]);
    expect(await ids({ type: 'FUNNY' })).toEqual(['clip-b']);
    const first = (await h.get('/v1/podcasts/clips', { limit: '5' })).json();
    const second = (await h.get('/v1/podcasts/clips', { limit: '5', cursor: first.cursor })).json();
    expect(second.data.map((c: { id: string }) => c.id)).toEqual(['clip-1', 'clip-0', 'clip-b']);
    expect((await h.get('/v1/podcasts/clips', { min_engagement: '101' })).statusCode).toBe(400);
  });

  it('serves a clip with its episode, segment and speaker, and its transcript in private and public embeds', async () => {
    const clip = (await h.get('/v1/podcasts/clips/clip-a')).json();
    expect(clip).toEqual({
      id: 'clip-a',
      title: 'On chips',
      start_seconds: 9,
      end_seconds: 20,
      duration_seconds: 11,
      engagement_score: 82,
      audio_url: 'https://a.example/clip-a.mp3',
      type: 'INSIGHTFUL',
      episode: expect.objectContaining({ id: 'ep-full', podcast: expect.objectContaining({ id: 'pod-1' }) }),
      segment: { id: 'seg-talk', title: 'The talk', type: 'INTERVIEW' },
      speaker: {
        name: 'Jensen Huang',
        role: 'GUEST',
        entity: JENSEN,
      },
    });
    expect((await h.get('/v1/podcasts/clips/nope')).json().error_code).toBe('clip_not_found');
    const transcript = (await h.get('/v1/podcasts/clips/clip-a/transcript')).json();
    expect(transcript).toMatchObject({ excerpt: true, clip_id: 'clip-a' });
    expect(transcript.lines.map((l: { number: number }) => l.number)).toEqual([3, 4]);
    const embed = await h.app.inject({
      url: '/v1/embed/clips/clip-a/transcript',
      query: { format: 'dialogue' },
    });
    expect(embed.statusCode).toBe(200);
    expect(embed.json().lines.map((l: { number: number }) => l.number)).toEqual([3, 4]);
    const vtt = await h.app.inject({ url: '/v1/embed/clips/clip-a/transcript', query: { format: 'vtt' } });
    expect(parseVtt(vtt.body)).toHaveLength(2);
    expect((await h.app.inject({ url: '/v1/podcasts/clips/clip-a/transcript' })).statusCode).toBe(401);
  });

  it('replaces the transcript, segments, clips, speakers and ads of a re-sent episode, and ignores an older version', async () => {
    const resent = fullEpisode('2026-11-21T10:00:00Z');
    resent.transcript = { language: 'en', lines: [LINES[0]!] };
    resent.segments = [{ id: 'seg-new', title: 'Only segment', start_line: 1, end_line: 1 }];
    resent.clips = [];
    resent.ads = [];
    resent.speakers = [{ id: 'h', name: 'Hannah Host', role: 'HOST' }];
    await h.ingest([resent, fullEpisode('2026-11-19T10:00:00Z')]);
    const ep = (
      await h.get('/v1/podcasts/episodes/ep-full', { include: 'transcript,segments,clips,speakers,ads' })
    ).json();
    expect(ep.transcript.lines).toHaveLength(1);
    const srt = await h.get('/v1/podcasts/episodes/ep-full/transcript', { format: 'srt' });
    expect(parseSrt(srt.body)).toHaveLength(1);
    const dialogue = (await h.get('/v1/podcasts/episodes/ep-full/transcript')).json();
    expect(dialogue.lines).toHaveLength(1);
    expect(dialogue.turns).toHaveLength(1);
    expect(ep.segments.map((s: { id: string }) => s.id)).toEqual(['seg-new']);
    expect(ep.clips).toEqual([]);
    expect(ep.ads).toEqual([]);
    expect(ep.speakers).toEqual([{ association_id: 'h', name: 'Hannah Host', role: 'HOST' }]);
    expect(ep).toMatchObject({ clip_count: 0, segment_count: 1 });
    expect((await h.get('/v1/podcasts/segments/seg-talk')).statusCode).toBe(404);
    expect((await h.get('/v1/podcasts/clips/clip-a')).statusCode).toBe(404);
  });
});

describe('a clip whose segment id another episode has taken since', () => {
  let h: CatalogHarness;
  beforeAll(async () => {
    h = await catalogHarness('postgres');
    const segment = {
      id: 'seg-shared',
      number: 1,
      title: 'Shared',
      type: 'INTERVIEW',
      start_seconds: 0,
      end_seconds: 60,
    };
    await h.ingest([
      podcastEvent({ id: 'pod-x', title: 'Show X' }),
      episodeOf({
        id: 'ep-first',
        podcastId: 'pod-x',
        extra: {
          segments: [segment],
          clips: [
            {
              id: 'clip-first',
              title: 'A clip',
              start_seconds: 1,
              end_seconds: 20,
              segment_id: 'seg-shared',
            },
          ],
        } as never,
      }),
      episodeOf({ id: 'ep-second', podcastId: 'pod-x', extra: { segments: [segment] } as never }),
    ]);
  }, 120_000);
  afterAll(() => h.close());

  it('shows no segment on either clip route: the segment is now another episode’s', async () => {
    const segment = (await h.get('/v1/podcasts/segments/seg-shared')).json();
    expect(segment.episode?.id ?? segment.episode_id).toBe('ep-second');
    const listed = (await h.get('/v1/podcasts/clips', { episode_id: 'ep-first' })).json().data;
    expect(listed.map((c: { id: string; segment?: unknown }) => [c.id, c.segment])).toEqual([
      ['clip-first', undefined],
    ]);
    const included = (await h.get('/v1/podcasts/episodes/ep-first', { include: 'clips' })).json().clips;
    expect(included.map((c: { id: string; segment?: unknown }) => [c.id, c.segment])).toEqual([
      ['clip-first', undefined],
    ]);
  });
});
