import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { podcastStream } from '../../src/ingestion/events.ts';
import { ingestionRoutes } from '../../src/ingestion/routes.ts';
import { decodeMessage, encodeEvent } from '../../src/kafka/messages.ts';
import { TOPICS, topicsToCreate } from '../../src/kafka/topics.ts';
import { createKey } from '../../src/platform/keys.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { createTestDb } from '../support/db.ts';
import { catchUp } from '../support/projections.ts';
import { episodeOf, podcastEvent } from './support.ts';

const message = (topic: string, key: string | null, value: unknown) => ({
  topic,
  key: key === null ? null : Buffer.from(key),
  value: Buffer.from(JSON.stringify(value)),
});

describe('catalog events through the Kafka topics', () => {
  it('routes podcast.upserted to earshot.podcasts keyed by podcast id, and decodes it back', () => {
    const event = podcastEvent({ id: 'pod-1', title: 'Chip Talk' });
    const { topic, message: encoded } = encodeEvent(event);
    expect(topic).toBe('earshot.podcasts');
    expect(encoded.key).toBe('pod-1');
    expect(decodeMessage(message(topic, 'pod-1', event))).toEqual({ ok: true, event });
    expect(topicsToCreate().map((t) => t.topic)).toContain('earshot.podcasts');
  });

  it('dead-letters a podcast event with the wrong key or on the wrong topic, and an invalid one', () => {
    const event = podcastEvent({ id: 'pod-1', title: 'Chip Talk' });
    const wrongKey = decodeMessage(message(TOPICS.podcasts!, 'pod-2', event));
    expect(wrongKey).toMatchObject({ ok: false, errors: [{ location: '/podcast/id' }] });
    const wrongTopic = decodeMessage(message(TOPICS.episodes, 'pod-1', event));
    expect(wrongTopic).toMatchObject({
      ok: false,
      errors: [{ location: '/type', message: expect.stringContaining('earshot.podcasts') }],
    });
    const invalid = decodeMessage(
      message(TOPICS.podcasts!, 'pod-1', {
        ...event,
        podcast: { id: 'pod-1', title: 'x', suitability_tier: 'OK' },
      }),
    );
    expect(invalid).toMatchObject({ ok: false, errors: [{ location: '/podcast/suitability_tier' }] });
  });
});

describe('catalog events through POST /v1/ingest/events and the read models', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let post: (events: unknown[]) => Promise<LightMyRequestResponse>;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await createTestDb());
    store = createPostgresEventStore(db);
    const app = await buildHttpApp({ db, cursorKey: Buffer.alloc(32, 1), routes: [ingestionRoutes(store)] });
    const { key } = await createKey(db, { kind: 'ingest' });
    post = (events) =>
      app.inject({
        method: 'POST',
        url: '/v1/ingest/events',
        headers: { 'x-api-key': key },
        payload: { events },
      });
    close = async () => {
      await app.close();
      await store.close();
      await drop();
    };
  });
  afterAll(() => close());

  it('accepts podcast.upserted and episodes with topics, videos, clip speakers and ads', async () => {
    const podcast = podcastEvent({
      id: 'pod-1',
      title: 'Chip Talk',
      suitability_tier: 'SAFE',
      directory_ids: { apple: '123' },
      topics: [{ id: 't1', name: 'Chips', ancestry: 'technology/chips' }],
    });
    const episode = episodeOf({
      id: 'ep-1',
      podcastId: 'pod-1',
      roles: ['HOST', 'GUEST'],
      videos: 1,
      ads: 1,
      topics: [{ id: 't1', name: 'Chips' }],
      extra: {
        clips: [
          {
            id: 'c1',
            title: 'Clip',
            start_seconds: 0,
            end_seconds: 5,
            speaker_id: 'ep-1-s1',
            segment_id: 's1',
            audio_url: 'https://a.example/c.mp3',
          },
        ],
      },
    });
    const response = await post([podcast, episode]);
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ accepted: 2, duplicates: 0 });
    expect(await store.readStream(podcastStream('pod-1'))).toMatchObject([
      { type: 'PodcastUpserted', data: podcast },
    ]);
    expect((await post([podcast])).json()).toEqual({ accepted: 0, duplicates: 1 });
  });

  it('rejects the whole batch with 422 and one error per problem in the new blocks', async () => {
    const good = podcastEvent({ id: 'pod-2', title: 'Fine' });
    const badPodcast = podcastEvent({ id: 'pod-3', title: '' });
    const badEpisode = episodeOf({ id: 'ep-2', podcastId: 'pod-2' }) as unknown as Record<string, unknown>;
    badEpisode.ads = [{ id: 'a', sponsor: { name: 'S' }, read_type: 'LIVE' }];
    (badEpisode.episode as Record<string, unknown>).videos = [{ platform: 'youtube' }];
    const response = await post([good, badPodcast, badEpisode]);
    expect(response.statusCode).toBe(422);
    expect(
      response
        .json()
        .errors.map((e: { location: string }) => e.location)
        .sort(),
    ).toEqual(['/events/1/podcast/title', '/events/2/ads/0/read_type', '/events/2/episode/videos/0/url']);
    expect(await store.readStream(podcastStream('pod-2'))).toHaveLength(0);
  });

  it('rebuilds every catalog read model to the same rows', async () => {
    for (const projection of catalogProjections) await catchUp(db, store, projection);
    const snapshot = async () => ({
      podcasts: (await db.query('select id, title, apple_id, topics from podcasts order by id')).rows,
      episodes: (await db.query('select id, has_transcript, videos from catalog_episodes order by id')).rows,
      transcripts: (await db.query('select episode_id, chunk, lines from transcript_chunks order by 1, 2'))
        .rows,
      clips: (await db.query('select id, speaker, audio_url, segment_id from clips order by id')).rows,
      ads: (await db.query('select id, sponsor_name from ads order by id')).rows,
      formats: (await db.query('select podcast_id, episode_count, has_ads, has_video from podcast_formats'))
        .rows,
      topicShares: (await db.query('select * from podcast_topic_shares order by ancestry, podcast_id')).rows,
    });
    const before = await snapshot();
    expect(before.clips).toEqual([
      {
        id: 'c1',
        speaker: { id: 'ep-1-s1', name: 'Speaker 1', role: 'GUEST' },
        audio_url: 'https://a.example/c.mp3',
        segment_id: 's1',
      },
    ]);
    // The episode's topic has no ancestry of its own: its id stands for it.
    expect(before.topicShares).toEqual([{ ancestry: 't1', podcast_id: 'pod-1', episode_count: 1 }]);
    expect(before.formats).toEqual([
      { podcast_id: 'pod-1', episode_count: 1, has_ads: true, has_video: true },
    ]);
    for (const projection of catalogProjections) await rebuildProjection(db, store, projection);
    expect(await snapshot()).toEqual(before);
    // Catching up waits out transactions still open anywhere on the server (other test files).
  }, 120_000);
});
