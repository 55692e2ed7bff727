import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { entityStream, episodeStream } from '../../src/ingestion/events.ts';
import { ingestionRoutes } from '../../src/ingestion/routes.ts';
import { createKey } from '../../src/platform/keys.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

describe.each(ENGINES)('POST /v1/ingest/events on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let ingestKey: string;
  let clock = new Date('2026-11-20T12:00:00Z');

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 1),
      routes: [ingestionRoutes(store, () => clock)],
    });
    ingestKey = (await createKey(db, { kind: 'ingest' })).key;
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    await drop();
  });

  const post = (events: unknown[], key = ingestKey) =>
    app.inject({
      method: 'POST',
      url: '/v1/ingest/events',
      headers: { 'x-api-key': key },
      payload: { events },
    });

  it('stores valid events in their streams and answers 202 with the counts', async () => {
    const entity = entityEvent({ id: 'ent-nvidia', name: 'NVIDIA', entity_type: 'COMPANY' });
    const episode = episodeEvent();
    const response = await post([entity, episode]);
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ accepted: 2, duplicates: 0 });
    const [storedEntity] = await store.readStream(entityStream('ent-nvidia'));
    expect(storedEntity).toMatchObject({ type: 'EntityUpserted', data: entity });
    const [storedEpisode] = await store.readStream(episodeStream(episode.episode.id));
    expect(storedEpisode).toMatchObject({ type: 'EpisodeTranscribed', data: episode });
    expect(storedEpisode!.metadata.correlationId).toBe(storedEpisode!.id);
  });

  it('treats a repeated event_id as a no-op', async () => {
    const episode = episodeEvent();
    await post([episode]);
    const again = await post([episode, episode]);
    expect(again.json()).toEqual({ accepted: 0, duplicates: 2 });
    expect(await store.readStream(episodeStream(episode.episode.id))).toHaveLength(1);
  });

  it('stores a re-sent episode with a new event_id as a new version', async () => {
    const first = episodeEvent();
    const resent = {
      ...first,
      event_id: 'resend-1',
      episode: { ...first.episode, title: 'Corrected title' },
    };
    expect((await post([first, resent])).json()).toEqual({ accepted: 2, duplicates: 0 });
    expect(await store.readStream(episodeStream(first.episode.id))).toHaveLength(2);
  });

  it('rejects an invalid batch whole, with one error per problem located by JSON pointer', async () => {
    const good = episodeEvent();
    const bad = episodeEvent();
    (bad.episode as { published_at: unknown }).published_at = 'yesterday';
    const noTitle = entityEvent({ id: 'ent-x', name: 'X' }) as unknown as { entity: Record<string, unknown> };
    delete noTitle.entity.name;
    const badRole = episodeEvent({ speakers: [{ id: 's', name: 'S', role: 'DJ' }] });
    const response = await post([good, bad, noTitle, badRole, { type: 'episode.deleted' }]);
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body.error_code).toBe('invalid_events');
    expect(body.errors).toEqual([
      expect.objectContaining({ location: '/events/1/episode/published_at', value: 'yesterday' }),
      expect.objectContaining({ location: '/events/2/entity/name' }),
      expect.objectContaining({ location: '/events/3/speakers/0/role', value: 'DJ' }),
      expect.objectContaining({ location: '/events/4/type', value: 'episode.deleted' }),
    ]);
    expect(await store.readStream(episodeStream(good.episode.id))).toHaveLength(0);
  });

  it('rejects a transcript with repeated line numbers or lines that end before they start', async () => {
    const episode = episodeEvent({ lines: ['a', 'b'] });
    episode.transcript!.lines![1]!.number = 1;
    episode.transcript!.lines![0]!.end_seconds = -0;
    episode.transcript!.lines![0]!.start_seconds = 5;
    const response = await post([episode]);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.map((e: { location: string }) => e.location)).toEqual([
      '/events/0/transcript/lines/0/end_seconds',
      '/events/0/transcript/lines/1/number',
    ]);
  });

  it('rejects a NUL character anywhere in an event, naming where', async () => {
    const episode = episodeEvent({ lines: ['fine', 'not \u0000 fine'] });
    const response = await post([episode]);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([
      expect.objectContaining({
        location: '/events/0/transcript/lines/1/text',
        message: expect.stringMatching(/NUL/),
      }),
    ]);
  });

  it('rejects date-times PostgreSQL cannot store: year 0, offsets beyond ±15:59, impossible dates', async () => {
    for (const publishedAt of [
      '0000-01-01T00:00:00Z',
      '2026-11-20T10:00:00+23:00',
      '2026-02-30T10:00:00Z',
      '2026-11-20',
    ]) {
      const response = await post([episodeEvent({ publishedAt })]);
      expect(response.statusCode).toBe(422);
      expect(response.json().errors[0]).toMatchObject({ location: '/events/0/episode/published_at' });
    }
    expect((await post([episodeEvent({ publishedAt: '2026-11-20T10:00:00.250+05:30' })])).statusCode).toBe(
      202,
    );
  });

  it('rejects date-times whose UTC instant falls outside years 1–9999, in every timestamp of every event', async () => {
    const early = episodeEvent({ publishedAt: '0001-01-01T00:00:00+01:00' });
    const late = episodeEvent({ publishedAt: '9999-12-31T23:59:59-15:59' });
    const leap = episodeEvent({ publishedAt: '9999-12-31T23:59:60Z' });
    const entity = entityEvent({ id: 'ent-old', name: 'Old' }, '0001-01-01T00:59:59+01:00');
    const response = await post([early, late, leap, entity]);
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body.error_code).toBe('invalid_events');
    expect(body.errors).toEqual([
      expect.objectContaining({
        location: '/events/0/episode/published_at',
        message: expect.stringMatching(/0001.*9999/),
      }),
      expect.objectContaining({ location: '/events/1/episode/published_at' }),
      expect.objectContaining({ location: '/events/2/episode/published_at' }),
      expect.objectContaining({ location: '/events/3/occurred_at' }),
    ]);
    expect(await store.readStream(episodeStream(early.episode.id))).toHaveLength(0);
    const edges = [
      episodeEvent({ publishedAt: '0001-01-01T00:00:00Z' }),
      episodeEvent({ publishedAt: '9999-12-31T23:59:59.999Z' }),
      episodeEvent({ publishedAt: '0001-01-01T00:00:00-01:00' }),
    ];
    expect((await post(edges)).statusCode).toBe(202);
  });

  it('rejects an occurred_at more than one day ahead of the server clock', async () => {
    clock = new Date('2026-11-20T12:00:00Z');
    const ahead = { ...episodeEvent(), occurred_at: '2026-11-21T12:00:01Z' };
    const farAhead = entityEvent({ id: 'ent-future', name: 'Future' }, '9999-12-31T23:59:59Z');
    const justWithin = { ...episodeEvent(), occurred_at: '2026-11-21T13:00:00+01:00' };
    const response = await post([ahead, farAhead, justWithin]);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([
      expect.objectContaining({ location: '/events/0/occurred_at', message: expect.stringMatching(/ahead/) }),
      expect.objectContaining({ location: '/events/1/occurred_at', message: expect.stringMatching(/ahead/) }),
    ]);
    clock = new Date('2026-11-21T00:00:01Z');
    expect((await post([ahead])).statusCode).toBe(202);
  });

  it('rejects mentions of lines the transcript does not have, naming the mention', async () => {
    const episode = episodeEvent({ lines: ['only line'] });
    episode.mentions = [
      { entity_id: 'ent-a', lines: [1] },
      { entity_id: 'ent-b', lines: [1, 2] },
    ];
    const response = await post([episode]);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([
      expect.objectContaining({ location: '/events/0/mentions/1/lines/1', value: 2 }),
    ]);
    const noTranscript = episodeEvent();
    delete noTranscript.transcript;
    noTranscript.mentions = [{ entity_id: 'ent-a', lines: [1] }];
    expect((await post([noTranscript])).json().errors).toEqual([
      expect.objectContaining({ location: '/events/0/mentions/0/lines/0', value: 1 }),
    ]);
  });

  it('caps the lists inside an event', async () => {
    const episode = episodeEvent({ lines: ['only line'] });
    episode.mentions = [{ entity_id: 'ent-a', lines: Array.from({ length: 1001 }, () => 1) }];
    const response = await post([episode]);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[0]).toMatchObject({ location: '/events/0/mentions/0/lines' });
  });

  it('rejects event types named like Object.prototype members', async () => {
    const response = await post(
      ['toString', 'constructor', 'hasOwnProperty', '__proto__'].map((type) => ({ type })),
    );
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.map((e: { location: string }) => e.location)).toEqual([
      '/events/0/type',
      '/events/1/type',
      '/events/2/type',
      '/events/3/type',
    ]);
  });

  it('rejects more than 500 events in one batch', async () => {
    const response = await post(Array.from({ length: 501 }, () => ({ type: 'entity.upserted' })));
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[0]).toMatchObject({ location: '/events' });
  });

  it('needs an ingest key: none is 401, a project key is 403', async () => {
    const tenant = await createTenant(db);
    expect(
      (await app.inject({ method: 'POST', url: '/v1/ingest/events', payload: { events: [] } })).statusCode,
    ).toBe(401);
    const response = await post([episodeEvent()], tenant.key);
    expect(response.statusCode).toBe(403);
    expect(response.json().error_code).toBe('ingest_key_required');
  });
});
