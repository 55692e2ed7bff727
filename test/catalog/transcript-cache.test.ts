import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { transcriptsProjection } from '../../projections/transcripts/projection.ts';
import { findTranscript } from '../../projections/transcripts/queries.ts';
import { catalogCapability, catalogProjections } from '../../src/catalog/capability.ts';
import { rendering, transcriptCache } from '../../src/catalog/transcript-cache.ts';
import { toSrt } from '../../src/catalog/transcript-format.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { createDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { parseSrt } from './subtitles.ts';
import { episodeOf, podcastEvent } from './support.ts';

const EPISODES = ['ep-1', 'ep-2', 'ep-3', 'ep-4', 'ep-5'];

describe('the transcripts kept per process', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let headers: Record<string, string>;
  /** Statements that read a whole transcript, since the last reset. */
  let reads = 0;
  let counting: Db;

  beforeAll(async () => {
    ({ db, drop } = await createDb('postgres'));
    store = createPostgresEventStore(db);
    ({ headers } = await createTenant(db));
    counting = {
      ...db,
      query: (text, params) => {
        if (/from transcript_chunks c where/.test(text)) reads++;
        return db.query(text, params);
      },
    };
    await ingestEvents(store, [
      podcastEvent({ id: 'pod-1', title: 'Harbor Lights' }),
      ...EPISODES.map((id) =>
        episodeOf({
          id,
          podcastId: 'pod-1',
          roles: Array.from({ length: 200 }, () => 'HOST'),
        }),
      ),
    ]);
    for (const projection of [entitiesProjection, ...catalogProjections])
      await catchUp(db, store, projection);
  });

  afterAll(async () => {
    await store.close();
    await drop();
  });

  /** What one of the (equally long) transcripts holds with its srt rendering. */
  const entryBytes = async () => {
    const one = transcriptCache(2 ** 30);
    const row = await one(db, 'ep-1');
    rendering(row?.lines ?? [], 'srt', () => toSrt(row?.lines ?? []));
    return one.heldBytes();
  };

  it('holds no more than its bytes, least recently used out, and reads an evicted transcript again as it is', async () => {
    const maxBytes = Math.floor(4.5 * (await entryBytes()));
    const cached = transcriptCache(maxBytes);
    for (const id of EPISODES) {
      const row = await cached(counting, id);
      rendering(row?.lines ?? [], 'srt', () => toSrt(row?.lines ?? []));
      expect(cached.heldBytes()).toBeGreaterThan(0);
      expect(cached.heldBytes()).toBeLessThanOrEqual(maxBytes);
    }
    reads = 0;
    expect(await cached(counting, 'ep-5')).toEqual(await findTranscript(db, 'ep-5'));
    expect(reads).toBe(0); // ep-5 was kept
    reads = 0;
    const again = await cached(counting, 'ep-1');
    expect(reads).toBe(1); // ep-1 was evicted first
    expect(again).toEqual(await findTranscript(db, 'ep-1'));
    expect(again?.lines).toHaveLength(200);
    expect(cached.heldBytes()).toBeLessThanOrEqual(maxBytes);
  });

  it('keeps no transcript over a quarter of its bytes, nor any with 0', async () => {
    for (const maxBytes of [Math.floor(3 * (await entryBytes())), 0]) {
      const cached = transcriptCache(maxBytes);
      reads = 0;
      await cached(counting, 'ep-2');
      const row = await cached(counting, 'ep-2');
      expect(reads).toBe(2);
      expect(row?.lines).toHaveLength(200);
      expect(cached.heldBytes()).toBe(0);
    }
  });

  it('serves the same subtitles from transcripts evicted and read again as with none kept', async () => {
    const appWith = (transcriptsBytes: number) =>
      buildHttpApp({
        db,
        cursorKey: Buffer.alloc(32, 3),
        routes:
          catalogCapability({
            now: () => new Date(),
            cacheBytes: 0,
            transcriptsBytes,
          }).routes ?? [],
      });
    const bounded = await appWith(Math.floor(4.5 * (await entryBytes())));
    const none = await appWith(0);
    try {
      for (const id of [...EPISODES, 'ep-1', 'ep-2', ...EPISODES]) {
        const url = `/v1/podcasts/episodes/${id}/transcript`;
        for (const format of ['srt', 'vtt', 'text', 'dialogue']) {
          const got = await bounded.inject({ url, query: { format }, headers });
          const want = await none.inject({ url, query: { format }, headers });
          expect(got.statusCode).toBe(200);
          expect(got.body).toBe(want.body);
          expect(got.headers['content-type']).toBe(want.headers['content-type']);
        }
        const srt = await bounded.inject({
          url,
          query: { format: 'srt' },
          headers,
        });
        expect(parseSrt(srt.body)).toHaveLength(200);
      }
    } finally {
      await bounded.close();
      await none.close();
    }
  });

  it('serves a re-sent version with the same occurred_at, and a rebuild by other code, never a kept one', async () => {
    const app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 3),
      routes: catalogCapability({ now: () => new Date(), cacheBytes: 0 }).routes ?? [],
    });
    const url = '/v1/podcasts/episodes/ep-same/transcript';
    const texts = async (format: string) => {
      const res = await app.inject({ url, query: { format }, headers });
      return format === 'dialogue'
        ? res.json().lines.map((l: { text: string }) => l.text)
        : parseSrt(res.body).map((c) => c.text.replace(/^Speaker \d: /, ''));
    };
    const include = async () =>
      (await app.inject({ url: '/v1/podcasts/episodes/ep-same', query: { include: 'transcript' }, headers }))
        .json()
        .transcript.lines.map((l: { text: string }) => l.text);
    const ingest = async (event: EpisodeTranscribed) => {
      await ingestEvents(store, [event]);
      for (const projection of [entitiesProjection, ...catalogProjections])
        await catchUp(db, store, projection);
    };
    try {
      const first = episodeOf({ id: 'ep-same', podcastId: 'pod-1', roles: ['HOST', 'GUEST'] });
      await ingest(first);
      expect(await texts('srt')).toEqual(['Line 1 of ep-same.', 'Line 2 of ep-same.']);
      expect(await texts('dialogue')).toEqual(['Line 1 of ep-same.', 'Line 2 of ep-same.']);
      expect(await include()).toEqual(['Line 1 of ep-same.', 'Line 2 of ep-same.']);

      // The same occurred_at, a new event: it replaces the transcript (docs/catalog.md, Versions).
      const resent = episodeOf({ id: 'ep-same', podcastId: 'pod-1', roles: ['HOST'] });
      await ingest(resent);
      expect(await texts('srt')).toEqual(['Line 1 of ep-same.']);
      expect(await texts('dialogue')).toEqual(['Line 1 of ep-same.']);
      expect(await include()).toEqual(['Line 1 of ep-same.']);

      // A rebuild by code that stores other lines ends with the same versions.
      const shouting = {
        ...transcriptsProjection,
        apply: (
          tx: Parameters<typeof transcriptsProjection.apply>[0],
          events: Parameters<typeof transcriptsProjection.apply>[1],
        ) =>
          transcriptsProjection.apply(
            tx,
            events.map((e) => {
              const data = e.data as EpisodeTranscribed;
              const lines = data.transcript?.lines?.map((l) => ({ ...l, text: l.text.toUpperCase() }));
              return lines ? { ...e, data: { ...data, transcript: { ...data.transcript, lines } } } : e;
            }),
          ),
      };
      await rebuildProjection(db, store, shouting);
      expect(await texts('srt')).toEqual(['LINE 1 OF EP-SAME.']);
      expect(await texts('dialogue')).toEqual(['LINE 1 OF EP-SAME.']);
      expect(await include()).toEqual(['LINE 1 OF EP-SAME.']);
    } finally {
      await app.close();
    }
  });
});
