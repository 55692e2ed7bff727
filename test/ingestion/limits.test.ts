import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { entityMentionsProjection } from '../../projections/entity_mentions/projection.ts';
import { podcastLinksProjection } from '../../projections/podcast-links/projection.ts';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { type EpisodeTranscribed, episodeStream } from '../../src/ingestion/events.ts';
import { ingestionRoutes } from '../../src/ingestion/routes.ts';
import { createKey } from '../../src/platform/keys.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from '../catalog/support.ts';
import { catchUp } from '../support/projections.ts';

/** The largest value an integer column holds (docs/ingestion.md, Limits). */
const INT4 = 2_147_483_647;
/** n characters of four UTF-8 bytes each, ending in `last`. */
const wide = (n: number, last = '') => '𝔘'.repeat(n - last.length) + last;
/** The longest id: 200 characters, or 100 of four bytes (400 bytes of UTF-8). */
const longId = (last: string) => 'x'.repeat(200 - last.length) + last;
const wideId = (last: string) => wide(100, last);
/** A URL of 4,000 characters, the longest the schemas take. */
const MAX_URL = `https://a.example/${'a'.repeat(3982)}`;

const PROJECTIONS = [
  entitiesProjection,
  ...catalogProjections,
  entityMentionsProjection,
  searchPassagesProjection,
  podcastLinksProjection,
];

/** An episode with one transcript line (so mentions may name line 1), changed by `edit`. */
function episode(id: string, edit: (event: EpisodeTranscribed) => void = () => {}): EpisodeTranscribed {
  const event = episodeOf({ id, podcastId: 'pod-limits', roles: ['HOST'] });
  edit(event);
  return event;
}

describe('ingestion limits: each column takes the schema maximum, and one past it is refused', () => {
  let h: CatalogHarness;
  let post: (events: unknown[]) => Promise<LightMyRequestResponse>;
  let closeIngest: () => Promise<void>;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    const app = await buildHttpApp({
      db: h.db,
      cursorKey: Buffer.alloc(32, 1),
      routes: [ingestionRoutes(h.store)],
    });
    const { key } = await createKey(h.db, { kind: 'ingest' });
    post = (events) =>
      app.inject({
        method: 'POST',
        url: '/v1/ingest/events',
        headers: { 'x-api-key': key },
        payload: { events },
      });
    closeIngest = () => app.close();
  });
  afterAll(async () => {
    await closeIngest();
    await h.close();
  });

  const refused = async (event: unknown, locations: string[]) => {
    const response = await post([event]);
    expect(response.statusCode).toBe(422);
    expect(response.json().error_code).toBe('invalid_events');
    const named = new Set(response.json().errors.map((e: { location: string }) => e.location));
    expect([...named].sort()).toEqual(locations.sort());
  };

  it.each([
    [
      'episode.duration_seconds',
      (e: EpisodeTranscribed) => {
        e.episode.duration_seconds = INT4 + 1;
      },
      ['/events/0/episode/duration_seconds'],
    ],
    [
      'episode.duration_seconds 1e12',
      (e: EpisodeTranscribed) => {
        e.episode.duration_seconds = 1e12;
      },
      ['/events/0/episode/duration_seconds'],
    ],
    [
      'episode.episode_number',
      (e: EpisodeTranscribed) => {
        e.episode.episode_number = 3e9;
      },
      ['/events/0/episode/episode_number'],
    ],
    [
      'segments[].number and end_line',
      (e: EpisodeTranscribed) => {
        e.segments = [{ id: 's', title: 'S', number: 3e9, start_line: 1, end_line: 3e9 }];
      },
      ['/events/0/segments/0/number', '/events/0/segments/0/end_line'],
    ],
    [
      'transcript line number',
      (e: EpisodeTranscribed) => {
        e.transcript!.lines![0]!.number = INT4 + 1;
      },
      ['/events/0/transcript/lines/0/number'],
    ],
    [
      'mentions[].entity_id',
      (e: EpisodeTranscribed) => {
        e.mentions = [{ entity_id: 'x'.repeat(20_000), lines: [1] }];
      },
      ['/events/0/mentions/0/entity_id'],
    ],
    [
      'clips[].id',
      (e: EpisodeTranscribed) => {
        e.clips = [{ id: wide(201), title: 'C', start_seconds: 0, end_seconds: 1 }];
      },
      ['/events/0/clips/0/id'],
    ],
    [
      'segments[].id',
      (e: EpisodeTranscribed) => {
        e.segments = [{ id: 'x'.repeat(20_000), title: 'S' }];
      },
      ['/events/0/segments/0/id'],
    ],
    [
      'speakers[].entity_id',
      (e: EpisodeTranscribed) => {
        e.speakers![0]!.entity_id = wide(201);
      },
      ['/events/0/speakers/0/entity_id'],
    ],
    [
      'an id of 101 four-byte characters',
      (e: EpisodeTranscribed) => {
        e.speakers![0]!.person_id = wide(101);
      },
      ['/events/0/speakers/0/person_id'],
    ],
    [
      'ads[].sponsor.name past 800 bytes',
      (e: EpisodeTranscribed) => {
        e.ads = [{ id: 'a', sponsor: { name: wide(201) } }];
      },
      ['/events/0/ads/0/sponsor/name'],
    ],
    [
      'speakers[].description and descriptor',
      (e: EpisodeTranscribed) => {
        e.speakers![0]!.description = wide(2001);
        e.speakers![0]!.descriptor = wide(501);
      },
      ['/events/0/speakers/0/description', '/events/0/speakers/0/descriptor'],
    ],
    [
      'segments[].audio_url',
      (e: EpisodeTranscribed) => {
        e.segments = [{ id: 's', title: 'S', audio_url: `https://a.example/${'a'.repeat(3983)}` }];
      },
      ['/events/0/segments/0/audio_url'],
    ],
    [
      'podcast.publisher',
      (e: EpisodeTranscribed) => {
        e.podcast.publisher = { id: wide(201), name: wide(501), slug: wide(501) };
      },
      [
        '/events/0/podcast/publisher/id',
        '/events/0/podcast/publisher/name',
        '/events/0/podcast/publisher/slug',
      ],
    ],
  ])('refuses %s past its limit with 422 naming the field', async (_name, edit, locations) => {
    await refused(episode('ep-over', edit), locations);
  });

  it('refuses a podcast.upserted whose publisher fields are past their limits', async () => {
    const big = 'x'.repeat(20_000);
    await refused(
      podcastEvent({ id: 'pod-over', title: 'Over', publisher: { id: big, name: big, slug: big } }),
      [
        '/events/0/podcast/publisher/id',
        '/events/0/podcast/publisher/name',
        '/events/0/podcast/publisher/slug',
      ],
    );
  });

  it('refuses an id repeated within one event’s clips, segments or ads, naming the repeat', async () => {
    const event = episode('ep-dup', (e) => {
      e.clips = [
        { id: 'c', title: 'A', start_seconds: 0, end_seconds: 1 },
        { id: 'c2', title: 'B', start_seconds: 1, end_seconds: 2 },
        { id: 'c', title: 'C', start_seconds: 2, end_seconds: 3 },
      ];
      e.segments = [
        { id: 's', title: 'A' },
        { id: 's', title: 'B' },
      ];
      e.ads = [
        { id: 'a', sponsor: { name: 'X' } },
        { id: 'a', sponsor: { name: 'Y' } },
      ];
    });
    await refused(event, ['/events/0/clips/2/id', '/events/0/segments/1/id', '/events/0/ads/1/id']);
    const valid = episode('ep-valid');
    const response = await post([valid, event]);
    expect(response.statusCode).toBe(422);
    expect(await h.store.readStream(episodeStream(valid.episode.id))).toHaveLength(0);
  });

  it('accepts each maximum, and every read model stores it and serves it back', async () => {
    const entityId = wideId('m');
    const publisher = { id: wideId('b'), name: wide(500), slug: wide(500) };
    const max = episode('ep-max', (e) => {
      e.episode.duration_seconds = INT4;
      e.episode.episode_number = INT4;
      e.podcast.publisher = publisher;
      e.speakers![0]!.entity_id = longId('e');
      e.speakers![0]!.person_id = wideId('p');
      e.speakers![0]!.description = wide(2000);
      e.speakers![0]!.descriptor = wide(500);
      e.mentions = [{ entity_id: entityId, lines: [1] }];
      e.segments = [
        {
          id: wideId('s'),
          title: 'S',
          number: INT4,
          start_line: 1,
          end_line: INT4,
          audio_url: MAX_URL,
          read_type: 'PRE_RECORDED',
        },
      ];
      e.clips = [{ id: longId('c'), title: 'C', start_seconds: 0, end_seconds: 1, segment_id: wideId('s') }];
      e.ads = [{ id: wideId('a'), sponsor: { id: longId('o'), name: wide(200) } }];
    });
    const podcast = podcastEvent({ id: 'pod-limits', title: 'Limits', publisher }, '2026-11-20T11:00:00Z');
    const response = await post([max, podcast]);
    expect(response.statusCode).toBe(202);
    for (const projection of PROJECTIONS) await catchUp(h.db, h.store, projection);
    expect((await h.db.query('select subscription, error from parked_events')).rows).toEqual([]);

    const full = await h.get('/v1/podcasts/episodes/ep-max', { include: 'segments,clips,ads,speakers' });
    expect(full.statusCode).toBe(200);
    const body = full.json();
    expect(body).toMatchObject({ duration_seconds: INT4, episode_number: INT4 });
    expect(body.segments).toMatchObject([
      { id: wideId('s'), number: INT4, end_line: INT4, audio_url: MAX_URL, read_type: 'PRE_RECORDED' },
    ]);
    expect(body.speakers).toMatchObject([{ description: wide(2000), descriptor: wide(500) }]);
    expect(body.clips).toMatchObject([{ id: longId('c') }]);
    expect(body.ads).toMatchObject([{ id: wideId('a') }]);

    const byEntity = await h.get('/v1/podcasts/episodes', {
      entity_id: entityId,
      min_duration: String(INT4),
    });
    expect(byEntity.json().data.map((e: { id: string }) => e.id)).toEqual(['ep-max']);
    const show = await h.get('/v1/podcasts/pod-limits');
    expect(show.json().publisher).toEqual(publisher);
    const format = await h.get('/v1/podcasts/pod-limits/format');
    expect(format.statusCode).toBe(200);
    expect(format.json().avg_episode_minutes).toBeCloseTo(INT4 / 60, 0);
  });

  it.each(['min_duration', 'max_duration'])(
    'answers 400 invalid_parameter for %s past an integer column',
    async (name) => {
      for (const value of ['2147483648', 'Infinity', '1e309', '9007199254740993']) {
        const response = await h.get('/v1/podcasts/episodes', { [name]: value });
        expect(response.statusCode, value).toBe(400);
        expect(response.json()).toMatchObject({
          error_code: 'invalid_parameter',
          errors: [{ location: `query.${name}` }],
        });
      }
      expect((await h.get('/v1/podcasts/episodes', { [name]: String(INT4) })).statusCode).toBe(200);
    },
  );
});
