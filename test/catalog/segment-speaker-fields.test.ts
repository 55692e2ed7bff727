import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import { catalogCapability, catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { type EpisodeTranscribed, episodeStream } from '../../src/ingestion/events.ts';
import { ingestionRoutes } from '../../src/ingestion/routes.ts';
import { decodeMessage } from '../../src/kafka/messages.ts';
import { createKey } from '../../src/platform/keys.ts';
import { searchCapability } from '../../src/search/capability.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { createDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { NOW } from './support.ts';

/** Segment audio_url and read_type, speaker description and descriptor (docs/catalog.md, Ingestion). */

const PROJECTIONS = [entitiesProjection, ...catalogProjections, searchPassagesProjection];
const AUDIO = 'https://a.example/ep-fields/ad.mp3';

type Edit = (event: EpisodeTranscribed) => void;
/** A producer's object, to give a field a value of the wrong type. */
const loose = (value: object) => value as Record<string, unknown>;

/** Two segments (an ad read by the host, then a talk without the new fields) and two speakers. */
function fieldsEpisode(edit: Edit = () => {}, occurredAt = '2026-11-20T10:00:00Z'): EpisodeTranscribed {
  const event: EpisodeTranscribed = {
    type: 'episode.transcribed',
    event_id: randomUUID(),
    occurred_at: occurredAt,
    podcast: { id: 'pod-fields', title: 'Fields Show' },
    episode: {
      id: 'ep-fields',
      title: 'Fields',
      slug: 'fields',
      published_at: '2026-11-18T06:00:00Z',
      duration_seconds: 600,
    },
    speakers: [
      {
        id: 'h',
        name: 'Hannah Host',
        role: 'HOST',
        description: 'Hannah has hosted the show since 2019.',
        descriptor: 'Host of Fields Show',
      },
      { id: 'g', name: 'Gus Guest', role: 'GUEST' },
    ],
    transcript: {
      language: 'en',
      lines: [
        {
          number: 1,
          speaker_id: 'h',
          start_seconds: 0,
          end_seconds: 5,
          text: 'This show is sponsored by quokkas.',
        },
        { number: 2, speaker_id: 'h', start_seconds: 5, end_seconds: 10, text: 'Quokkas are the best.' },
        { number: 3, speaker_id: 'g', start_seconds: 10, end_seconds: 15, text: 'Now about marmots.' },
        { number: 4, speaker_id: 'g', start_seconds: 15, end_seconds: 20, text: 'Marmots whistle loudly.' },
      ],
    },
    segments: [
      {
        id: 'seg-fields-ad',
        title: 'Quokka ad',
        type: 'AD',
        number: 1,
        start_line: 1,
        end_line: 2,
        audio_url: AUDIO,
        read_type: 'HOST_READ',
      },
      {
        id: 'seg-fields-talk',
        title: 'Marmots',
        type: 'TOPIC_DISCUSSION',
        number: 2,
        start_line: 3,
        end_line: 4,
      },
    ],
  };
  edit(event);
  return event;
}

describe('segment audio_url and read_type, speaker description and descriptor', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let headers: Record<string, string>;
  let ingestKey: string;

  /** Catalog, search and ingestion routes on a fresh response cache. */
  const buildApp = async () =>
    buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 7),
      routes: [
        ...(catalogCapability({ now: () => NOW }).routes ?? []),
        ...(searchCapability({ now: () => NOW }).routes ?? []),
        ingestionRoutes(store, () => NOW),
      ],
    });
  const post = (events: unknown[]) =>
    app.inject({
      method: 'POST',
      url: '/v1/ingest/events',
      headers: { 'x-api-key': ingestKey },
      payload: { events },
    });
  const ingest = async (events: unknown[]) => {
    const response = await post(events);
    expect(response.statusCode, response.body).toBe(202);
    for (const projection of PROJECTIONS) await catchUp(db, store, projection);
  };
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are read as loose JSON
  const json = async (url: string, query: Record<string, string> = {}, on = app): Promise<any> => {
    const response = await on.inject({ url, query, headers });
    expect(response.statusCode, `${url} ${response.body}`).toBe(200);
    return response.json();
  };

  /** Every route that shows a Segment or an episode speaker, each answer's segments and speakers. */
  const answers = async (on = app) => {
    const episode = await json('/v1/podcasts/episodes/ep-fields', { include: 'segments,speakers' }, on);
    const list = await json('/v1/podcasts/segments', { episode_id: 'ep-fields' }, on);
    const byPodcast = await json('/v1/podcasts/segments', { podcast_id: 'pod-fields' }, on);
    const byType = await json('/v1/podcasts/segments', { type: 'AD' }, on);
    const ofEpisode = await json('/v1/podcasts/episodes/ep-fields/segments', {}, on);
    const ad = await json('/v1/podcasts/segments/seg-fields-ad', {}, on);
    const talk = await json('/v1/podcasts/segments/seg-fields-talk', {}, on);
    const quokkas = await json('/v1/podcasts/episodes/search', { keyword_search: 'quokkas' }, on);
    const marmots = await json('/v1/podcasts/episodes/search', { keyword_search: 'marmots whistle' }, on);
    const withoutEpisode = ({ episode: _, ...segment }: Record<string, unknown>) => segment;
    return {
      speakers: episode.speakers,
      included: episode.segments,
      list: list.data.map(withoutEpisode),
      byPodcast: byPodcast.data.map(withoutEpisode),
      byType: byType.data.map(withoutEpisode),
      ofEpisode: ofEpisode.data.map(withoutEpisode),
      ad: withoutEpisode(ad),
      talk: withoutEpisode(talk),
      searched: [
        quokkas.data.map((i: { segment: unknown }) => i.segment),
        marmots.data.map((i: { segment: unknown }) => i.segment),
      ],
    };
  };

  beforeAll(async () => {
    ({ db, drop } = await createDb('postgres'));
    store = createPostgresEventStore(db);
    app = await buildApp();
    ({ headers } = await createTenant(db));
    ({ key: ingestKey } = await createKey(db, { kind: 'ingest' }));
    await ingest([fieldsEpisode()]);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    await drop();
  });

  const AD_SEGMENT = {
    id: 'seg-fields-ad',
    title: 'Quokka ad',
    type: 'AD',
    number: 1,
    start_seconds: 0,
    end_seconds: 10,
    duration_seconds: 10,
    audio_url: AUDIO,
    read_type: 'HOST_READ',
    start_line: 1,
    end_line: 2,
  };
  const TALK_SEGMENT = {
    id: 'seg-fields-talk',
    title: 'Marmots',
    type: 'TOPIC_DISCUSSION',
    number: 2,
    start_seconds: 10,
    end_seconds: 20,
    duration_seconds: 10,
    start_line: 3,
    end_line: 4,
  };

  it('serves them on every route that shows a segment or a speaker, and omits them when not sent', async () => {
    const a = await answers();
    expect(a.speakers).toEqual([
      {
        association_id: 'h',
        name: 'Hannah Host',
        description: 'Hannah has hosted the show since 2019.',
        descriptor: 'Host of Fields Show',
        role: 'HOST',
      },
      { association_id: 'g', name: 'Gus Guest', role: 'GUEST' },
    ]);
    // toEqual with exact objects: a field not sent is absent, never null.
    for (const segments of [a.included, a.list, a.byPodcast, a.ofEpisode])
      expect(segments).toEqual([AD_SEGMENT, TALK_SEGMENT]);
    expect(a.byType).toEqual([AD_SEGMENT]);
    expect(a.ad).toEqual(AD_SEGMENT);
    expect(a.talk).toEqual(TALK_SEGMENT);
    expect(a.searched).toEqual([[AD_SEGMENT], [TALK_SEGMENT]]);
    const listed = await json('/v1/podcasts/segments', { type: 'AD' });
    expect(listed.data[0].episode).toMatchObject({ id: 'ep-fields', podcast: { id: 'pod-fields' } });
  });

  it('gives the same answers after a rebuild of every read model', async () => {
    const before = await answers();
    for (const projection of PROJECTIONS) await rebuildProjection(db, store, projection);
    expect((await db.query('select subscription, error from parked_events')).rows).toEqual([]);
    const fresh = await buildApp();
    try {
      expect(await answers(fresh)).toEqual(before);
    } finally {
      await fresh.close();
    }
  });

  it.each<[string, Edit, string[]]>([
    [
      'a segment audio_url past 4,000 characters',
      (e) => {
        e.segments![0]!.audio_url = `https://a.example/${'a'.repeat(4000)}`;
      },
      ['/events/1/segments/0/audio_url'],
    ],
    [
      'a segment audio_url that is not a URI, and one that is a number',
      (e) => {
        e.segments![0]!.audio_url = 'not a uri';
        loose(e.segments![1]!).audio_url = 42;
      },
      ['/events/1/segments/0/audio_url', '/events/1/segments/1/audio_url'],
    ],
    [
      'a read_type outside HOST_READ and PRE_RECORDED, lower case, or not a string',
      (e) => {
        loose(e.segments![0]!).read_type = 'LIVE_READ';
        loose(e.segments![1]!).read_type = 'host_read';
        e.segments!.push({ id: 'seg-fields-3', title: 'Three', read_type: 7 as never });
      },
      ['/events/1/segments/0/read_type', '/events/1/segments/1/read_type', '/events/1/segments/2/read_type'],
    ],
    [
      'a speaker description past 2,000 characters and a descriptor past 500',
      (e) => {
        e.speakers![0]!.description = 'd'.repeat(2001);
        e.speakers![1]!.descriptor = 'd'.repeat(501);
      },
      ['/events/1/speakers/0/description', '/events/1/speakers/1/descriptor'],
    ],
    [
      'a speaker description and descriptor that are not strings',
      (e) => {
        loose(e.speakers![0]!).description = { text: 'x' };
        loose(e.speakers![1]!).descriptor = ['x'];
      },
      ['/events/1/speakers/0/description', '/events/1/speakers/1/descriptor'],
    ],
  ])('rejects the whole batch with 422 for %s, naming each path', async (_name, edit, locations) => {
    const valid = fieldsEpisode((e) => {
      e.episode.id = 'ep-fields-batch';
      e.episode.slug = 'fields-batch';
      e.segments = [];
    });
    const invalid = fieldsEpisode(edit);
    const response = await post([valid, invalid]);
    expect(response.statusCode).toBe(422);
    expect(response.json().error_code).toBe('invalid_events');
    const named = response.json().errors.map((e: { location: string }) => e.location);
    expect([...new Set(named)].sort()).toEqual([...locations].sort());
    expect(await store.readStream(episodeStream('ep-fields-batch'))).toHaveLength(0);
    // Kafka validates with the same function: the same problems, located in the message.
    const decoded = decodeMessage(
      {
        topic: 'earshot.episodes',
        key: Buffer.from('ep-fields'),
        value: Buffer.from(JSON.stringify(invalid)),
      },
      undefined,
      NOW,
    );
    expect(decoded.ok).toBe(false);
    const kafkaNamed = decoded.ok ? [] : decoded.errors.map((e) => e.location);
    expect([...new Set(kafkaNamed)].sort()).toEqual(locations.map((l) => l.replace('/events/1', '')).sort());
  });

  it('takes the fields through Kafka decoding as sent', () => {
    const event = fieldsEpisode();
    const decoded = decodeMessage(
      { topic: 'earshot.episodes', key: Buffer.from('ep-fields'), value: Buffer.from(JSON.stringify(event)) },
      undefined,
      NOW,
    );
    expect(decoded).toEqual({ ok: true, event });
  });

  it('replaces them with a re-sent episode, and removes those it leaves out', async () => {
    await ingest([
      fieldsEpisode((e) => {
        e.speakers = [
          { id: 'h', name: 'Hannah Host', role: 'HOST', descriptor: 'Former host' },
          { id: 'g', name: 'Gus Guest', role: 'GUEST', description: 'Gus studies marmots.' },
        ];
        delete e.segments![0]!.audio_url;
        e.segments![0]!.read_type = 'PRE_RECORDED';
        e.segments![1]!.audio_url = 'https://a.example/talk.mp3';
      }, '2026-11-20T11:00:00Z'),
    ]);
    const a = await answers();
    expect(a.speakers).toEqual([
      { association_id: 'h', name: 'Hannah Host', descriptor: 'Former host', role: 'HOST' },
      { association_id: 'g', name: 'Gus Guest', description: 'Gus studies marmots.', role: 'GUEST' },
    ]);
    const { audio_url: _, ...adWithout } = AD_SEGMENT;
    const ad = { ...adWithout, read_type: 'PRE_RECORDED' };
    const talk = { ...TALK_SEGMENT, audio_url: 'https://a.example/talk.mp3' };
    for (const segments of [a.included, a.list, a.ofEpisode]) expect(segments).toEqual([ad, talk]);
    expect(a.ad).toEqual(ad);
    expect(a.talk).toEqual(talk);
    expect(a.searched).toEqual([[ad], [talk]]);

    // An older version arriving later changes nothing.
    await ingest([fieldsEpisode(() => {}, '2026-11-20T09:00:00Z')]);
    expect(await answers()).toEqual(a);
  });
});
